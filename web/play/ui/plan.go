package ui

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/play/scenario"
)

// planView is the session plan as the pages show it, in lang: each lesson's start on the
// session's clock and its length; followed names the lesson the room follows ("" for none),
// which is marked; mayEdit offers the instructor's forms.
func planView(lang i18n.Lang, plan *scenario.Plan, followed string, mayEdit bool) templates.SessionPlan {
	items := plan.Items()
	starts, total := scenario.Starts(items)
	v := templates.SessionPlan{Total: clockMinutes(total), TotalMinutes: strconv.Itoa(int(total.Round(time.Minute) / time.Minute)), MayEdit: mayEdit,
		TalkMax: strconv.Itoa(scenario.MaxTalkMinutes)}
	if sc := scenario.Find(followed); sc != nil {
		v.Followed = sc.Title.In(lang)
	}
	in := map[string]bool{}
	for i, it := range items {
		in[it.Lesson.Name] = true
		e := templates.PlanEntry{N: i + 1, Name: it.Lesson.Name, URL: "/scenarios/" + it.Lesson.Name, Title: it.Lesson.Title.In(lang),
			Starts: clockMinutes(starts[i]), Minutes: minutesText(it.Length()), TalkMinutes: strconv.Itoa(int(it.Talk / time.Minute)),
			Current: it.Lesson.Name == followed}
		if e.Current {
			v.Current = e.N
		}
		v.Entries = append(v.Entries, e)
	}
	if mayEdit {
		for _, sc := range scenario.Library() {
			if !in[sc.Name] {
				v.Addable = append(v.Addable, templates.PlanChoice{Name: sc.Name, Title: sc.Title.In(lang)})
			}
		}
	}
	return v
}

// planAction serves POST /ui/plan/{add,remove,up,down,talk,reset} (the instructor's, in
// workshop mode; never on a replay): a form naming a lesson (lesson=), and for talk its time to
// talk it over in whole minutes (minutes=), answered with a redirect to the plan on /scenarios.
// An edit refused (a lesson unknown, in the plan already or not in it, minutes outside 0 to
// 120) changes nothing and answers 400 saying why.
func (u *scenarioScreen) planAction(c echo.Context) error {
	if ok, err := u.instructorOnly(c); !ok {
		return err
	}
	name := strings.TrimSpace(c.FormValue("lesson"))
	var err error
	switch action := c.Param("action"); action {
	case "add":
		err = u.plan.Add(name)
	case "remove":
		err = u.plan.Remove(name)
	case "up":
		err = u.plan.Move(name, -1)
	case "down":
		err = u.plan.Move(name, 1)
	case "talk":
		err = scenario.ErrBadTalk // unless the minutes are a whole number
		if m, perr := strconv.Atoi(strings.TrimSpace(c.FormValue("minutes"))); perr == nil {
			err = u.plan.SetTalk(name, m)
		}
	case "reset":
		u.plan.Reset()
	default:
		return u.fail(c, http.StatusNotFound, "no such action: "+action) //said:english only the page's forms make this request
	}
	if errors.Is(err, scenario.ErrBadTalk) {
		return u.failSays(c, http.StatusBadRequest, i18n.Say("scn.plan.badTalk", strconv.Itoa(scenario.MaxTalkMinutes), strconv.Quote(c.FormValue("minutes"))))
	}
	if err != nil {
		key := "scn.plan.notInPlan"
		switch {
		case errors.Is(err, scenario.ErrUnknownLesson):
			key = "scn.plan.unknown"
		case errors.Is(err, scenario.ErrInPlan):
			key = "scn.plan.inPlan"
		}
		return u.failSays(c, http.StatusBadRequest, i18n.Say(key, strconv.Quote(name)))
	}
	u.log.Info("session plan changed", slog.String("action", c.Param("action")), slog.String("lesson", name))
	u.scenarios.bump() // open /follow pages show the new plan
	return c.Redirect(http.StatusSeeOther, "/scenarios#session")
}
