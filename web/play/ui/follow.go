package ui

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/api/outage"
	"github.com/leaselab/leaselab/web/play/scenario"
)

// followPage serves /follow: a participant's page that shows what the instructor shows, the
// lesson last started or stepped on this server, its step as the instructor shows it and its
// stage, and moves when the instructor does (follow.js, over /follow/watch).
func (u *scenarioScreen) followPage(c echo.Context) error {
	ctx := c.Request().Context()
	v, err := u.followView(ctx, c.Request())
	if err != nil {
		return err
	}
	if v.Key != "" {
		// The stage is the page's first paint only: stage.js keeps it live on its own.
		if v.Stage, err = u.stage.stageView(ctx, v.Namespace, v.Lease, moment{}); err != nil {
			return err
		}
	}
	v.Page = u.pageSays(i18n.Say("follow.title"), "follow")
	v.Plan = u.followedPlan(ctx, v.Key)
	return u.render(c, 200, templates.FollowView(v))
}

// followLive serves /follow/live: the part of /follow that moves with the instructor.
func (u *scenarioScreen) followLive(c echo.Context) error {
	v, err := u.followView(c.Request().Context(), c.Request())
	if err != nil {
		return err
	}
	return u.render(c, 200, templates.FollowLiveView(v))
}

// followPlan serves /follow/plan: the session plan as /follow shows it, where the room is in it.
func (u *scenarioScreen) followPlan(c echo.Context) error {
	key, _, _, _ := u.scenarios.followed()
	return u.render(c, 200, templates.FollowPlanView(u.followedPlan(c.Request().Context(), key)))
}

// followedPlan is the session plan as /follow shows it, with the lesson of the run under key
// (the one followed) marked.
func (u *scenarioScreen) followedPlan(ctx context.Context, key string) templates.SessionPlan {
	followed, _, _ := strings.Cut(key, "/")
	return planView(i18n.FromContext(ctx), u.plan, followed, false)
}

// followView is what /follow shows now, to the reader of r: a question open on the
// instructor's step is theirs to answer, its tally theirs once the answer is out.
func (u *scenarioScreen) followView(ctx context.Context, r *http.Request) (templates.Follow, error) {
	key, run, _, _ := u.scenarios.followed()
	name, seed, ok := parseScenarioKey(key)
	sc := scenario.Find(name)
	if run == nil || sc == nil || !ok {
		return templates.Follow{}, nil
	}
	lang := i18n.FromContext(ctx)
	ns := scenarioNamespace(sc.Name, seed)
	l := u.scenarioLive(ctx, sc, run, ns, liveFor{seed: strconv.FormatUint(seed, 10), voter: u.voterOf(r), back: "follow"})
	v := templates.Follow{Key: key, Title: sc.Title.In(lang), URL: scenarioURL(sc.Name, seed, run.Speed(), nil),
		Total: l.Total, Waiting: l.Waiting, Question: l.Question, Namespace: ns, Lease: sc.Lease,
		StageLiveURL:  "/stage/live?" + url.Values{"namespace": {ns}, "lease": {sc.Lease}}.Encode(),
		StageWatchURL: "/stage/watch?" + url.Values{"namespace": {ns}, "lease": {sc.Lease}}.Encode()}
	if l.Shown < len(l.Steps) {
		v.Step = l.Steps[l.Shown]
	}
	return v, nil
}

// followWatch serves /follow/watch: a WebSocket that says {"v":n} whenever what /follow shows
// changed (the instructor stepped, started another lesson or edited the session plan), at most a
// few times a second.
func (u *scenarioScreen) followWatch(c echo.Context) error {
	s, cancel, ok := u.openChangeStream(c)
	if !ok {
		return nil
	}
	defer cancel()
	ctx := s.ctx
	sent := ""
	for {
		// Subscribed before the state is read: a step taken in between still wakes us.
		key, run, bumps, bumped := u.scenarios.followed()
		var changed <-chan struct{}
		unsubscribe := func() {}
		if run != nil {
			changed, unsubscribe = run.Subscribe()
		}
		if now := followSignature(bumps, key, run); now != sent {
			sent = now
			if s.tell() != nil {
				unsubscribe()
				return nil
			}
		}
		select {
		case <-ctx.Done():
		case <-bumped: // another lesson, or the plan changed
		case <-changed:
			// The run changes with every report of its members: only a new step, or its
			// waiting ending, moves /follow (the stage follows the members on its own).
			time.Sleep(50 * time.Millisecond)
		}
		unsubscribe()
		if ctx.Err() != nil {
			s.end()
			return nil
		}
	}
}

// followSignature is what /follow shows of run, the one under key, after bumps changes beside
// it (scenarioRuns.followed): it changes when the instructor steps, a step's waiting ends, its
// question closes, the run stops, or the session plan is edited.
func followSignature(bumps uint64, key string, run *scenario.Run) string {
	head := strconv.FormatUint(bumps, 10) + " " + key
	if run == nil {
		return head
	}
	st := run.State()
	return head + " " + strconv.Itoa(st.Shown) + " " + strconv.Itoa(st.Step) + " " + strconv.FormatBool(st.Ready) + " " + strconv.FormatBool(st.Stopped) +
		" " + strconv.FormatBool(st.Question != nil && st.Question.Open)
}

// setOutage serves POST /ui/outage (the instructor's, from the dashboard): mode hang or fail
// starts an API-server outage, for the whole server or the form's namespace; off ends it.
func (u *scenarioScreen) setOutage(c echo.Context) error {
	ctx := c.Request().Context()
	if u.opts.Outage == nil || !u.mayRunScenarios(c.Request()) {
		return u.fail(c, http.StatusForbidden, i18n.T(ctx, "scn.instructor"))
	}
	ns := strings.TrimSpace(c.FormValue("namespace"))
	if ns != "" && len(validation.IsDNS1123Label(ns)) > 0 {
		return u.fail(c, http.StatusBadRequest, i18n.T(ctx, "play.badNamespace", strconv.Quote(ns), strings.Join(validation.IsDNS1123Label(ns), "; ")))
	}
	switch mode := outage.Mode(c.FormValue("mode")); mode {
	case outage.Hang, outage.Fail:
		u.opts.Outage.Set(outage.State{Mode: mode, Namespace: ns})
		u.log.Warn("API-server outage injected", slog.String("mode", string(mode)), slog.String("namespace", ns))
	case "off":
		u.opts.Outage.Set(outage.State{})
		u.log.Info("API-server outage ended")
	default:
		return u.fail(c, http.StatusBadRequest, i18n.T(ctx, "dash.outageBadMode", c.FormValue("mode")))
	}
	return c.Redirect(http.StatusSeeOther, dashboardURL(ns))
}
