package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leaselab/leaselab/web/play/scenario"
)

// postPlan posts the plan's form action with lesson, as the page's forms do (Accept: HTML).
func (tu *testUI) postPlan(tb testing.TB, action, lesson string) *httptest.ResponseRecorder {
	tb.Helper()
	r := httptest.NewRequest(http.MethodPost, "/ui/plan/"+action, strings.NewReader(url.Values{"lesson": {lesson}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Accept", "text/html")
	return tu.do(tb, r)
}

// shownPlan is the plan /scenarios shows: the lessons' names, and each one's start.
func shownPlan(tb testing.TB, tu *testUI) (names, starts []string, doc *goquery.Document) {
	tb.Helper()
	doc = tu.mustGetDoc(tb, "/scenarios", http.StatusOK)
	doc.Find(`[data-testid=session-plan] li`).Each(func(_ int, s *goquery.Selection) {
		names = append(names, s.AttrOr("data-name", ""))
		starts = append(starts, s.AttrOr("data-starts", ""))
	})
	return names, starts, doc
}

// TestPlanEditing: the instructor adds a lesson to the session plan, moves one, removes one
// and resets it with the forms of /scenarios (each answered with a redirect back to the plan);
// every entry starts on the session's clock when the ones before it end, and the total
// follows. A bad edit (an unknown lesson, one in the plan already, one not in it) answers 400
// with the reason on the page and changes nothing.
func TestPlanEditing(t *testing.T) {
	tu := mustNewUI(t, time.Now())
	suggested, starts, doc := shownPlan(t, tu)
	if len(suggested) < 8 || suggested[0] != "leader-crash" || starts[0] != "0:00" {
		t.Fatalf("the suggested plan: %v %v", suggested, starts)
	}
	if doc.Find(`[data-testid=plan-add]`).Length() != 1 || doc.Find(`[data-testid=plan-remove]`).Length() != len(suggested) ||
		doc.Find(`[data-testid=plan-up][disabled]`).Length() != 1 || doc.Find(`[data-testid=plan-down][disabled]`).Length() != 1 {
		t.Fatal("the instructor is not offered the plan's forms (add, remove, up and down but at the ends)")
	}
	if doc.Find(`[data-testid=plan-lesson] option[value="leader-crash"]`).Length() != 0 ||
		doc.Find(`[data-testid=plan-lesson] option[value="identity-collision"]`).Length() != 1 {
		t.Error("the lessons offered to add are not those outside the plan")
	}
	edit := func(action, lesson string) {
		t.Helper()
		if w := tu.postPlan(t, action, lesson); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/scenarios#session" {
			t.Fatalf("%s %s: %d %q %s", action, lesson, w.Code, w.Header().Get("Location"), w.Body.String())
		}
	}
	edit("add", "identity-collision")
	edit("down", "leader-crash")
	edit("remove", "fencing")
	edit("up", "identity-collision")
	names, starts, doc := shownPlan(t, tu)
	want := slices.Clone(suggested)
	want[0], want[1] = want[1], want[0]
	want = slices.DeleteFunc(want, func(n string) bool { return n == "fencing" })
	want = slices.Insert(want, len(want)-1, "identity-collision")
	if !slices.Equal(names, want) {
		t.Fatalf("after the edits the plan is %v, want %v", names, want)
	}
	var items []scenario.SessionItem
	for _, n := range names {
		items = append(items, scenario.SessionItem{Lesson: scenario.Find(n), Talk: scenario.DefaultTalk})
		for _, it := range scenario.Session() {
			if it.Lesson.Name == n {
				items[len(items)-1].Talk = it.Talk
			}
		}
	}
	at, total := scenario.Starts(items)
	for i := range at {
		if starts[i] != clockMinutes(at[i]) {
			t.Errorf("%s starts at %s, want %s", names[i], starts[i], clockMinutes(at[i]))
		}
	}
	if got := doc.Find(`[data-testid=session-total]`).AttrOr("data-total", ""); got != clockMinutes(total) {
		t.Errorf("total %s, want %s", got, clockMinutes(total))
	}

	for _, bad := range []struct{ action, lesson, says string }{
		{"add", "no-such-lesson", `There is no lesson "no-such-lesson": the plan is unchanged.`},
		{"add", "<b>x</b>", `There is no lesson "<b>x</b>"`},
		{"add", "", `There is no lesson ""`},
		{"add", "gc-pause", `"gc-pause" is in the plan already`},
		{"remove", "fencing", `"fencing" is not in the plan`},
		{"up", "no-such-lesson", `"no-such-lesson" is not in the plan`},
	} {
		w := tu.postPlan(t, bad.action, bad.lesson)
		d, _ := goquery.NewDocumentFromReader(w.Body)
		if w.Code != http.StatusBadRequest || !strings.Contains(d.Text(), bad.says) || d.Find("b").FilterFunction(func(_ int, s *goquery.Selection) bool { return s.Text() == "x" }).Length() != 0 {
			t.Errorf("%s %q: %d, want 400 saying %q:\n%s", bad.action, bad.lesson, w.Code, bad.says, d.Text())
		}
	}
	if w := tu.postPlan(t, "shuffle", "gc-pause"); w.Code != http.StatusNotFound {
		t.Errorf("an unknown action: %d", w.Code)
	}
	if after, _, _ := shownPlan(t, tu); !slices.Equal(after, names) {
		t.Errorf("refused edits changed the plan: %v, was %v", after, names)
	}
	edit("reset", "")
	if after, _, _ := shownPlan(t, tu); !slices.Equal(after, suggested) {
		t.Errorf("after reset: %v, want %v", after, suggested)
	}
}

// TestPlanIsTheInstructors: in workshop mode a participant sees the plan without its forms,
// and the plan's routes refuse them with 403, changing nothing.
func TestPlanIsTheInstructors(t *testing.T) {
	tu := mustNewUI(t, time.Now(), func(o *Options) { o.MayCommandTabs = func(*http.Request) bool { return false } })
	before, _, doc := shownPlan(t, tu)
	if len(before) == 0 || doc.Find(`.session form`).Length() != 0 {
		t.Fatalf("a participant's plan: %v, %d forms", before, doc.Find(`.session form`).Length())
	}
	for _, action := range []string{"add", "remove", "up", "down", "reset"} {
		if w := tu.postPlan(t, action, "fencing"); w.Code != http.StatusForbidden {
			t.Errorf("%s by a participant: %d", action, w.Code)
		}
	}
	if after, _, _ := shownPlan(t, tu); !slices.Equal(after, before) {
		t.Errorf("a participant changed the plan: %v", after)
	}
}

// TestFollowWatchSaysPlanEdits: every edit of the session plan is said on /follow/watch, so
// that open /follow pages show the plan as it is without a reload.
func TestFollowWatchSaysPlanEdits(t *testing.T) {
	tu := mustNewUI(t, time.Now())
	srv := httptest.NewServer(tu.echo)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := dialAs(t, ctx, srv, "/follow/watch", "")
	read := func(what string) string {
		t.Helper()
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return string(b)
	}
	first := read("the first word of /follow/watch")
	for i, action := range []string{"down", "up", "down", "up"} {
		if w := tu.postPlan(t, action, "leader-crash"); w.Code != http.StatusSeeOther {
			t.Fatalf("%s: %d %s", action, w.Code, w.Body.String())
		}
		if got := read("after plan edit " + strconv.Itoa(i+1)); got == first {
			t.Fatalf("after plan edit %d /follow/watch said %s again", i+1, got)
		}
	}
}

// TestPlanTalkTime: the instructor sets a lesson's time to talk it over in whole minutes; its
// length, the starts after it and the total follow. Minutes outside 0 to 120, or not a whole
// number, answer 400 saying so and change nothing.
func TestPlanTalkTime(t *testing.T) {
	tu := mustNewUI(t, time.Now())
	post := func(lesson, minutes string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, "/ui/plan/talk", strings.NewReader(url.Values{"lesson": {lesson}, "minutes": {minutes}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Accept", "text/html")
		return tu.do(t, r)
	}
	talkOf := func(doc *goquery.Document, name string) string {
		return doc.Find(`[data-testid=session-plan] li[data-name="`+name+`"] [data-testid=plan-talk]`).AttrOr("value", "")
	}
	_, starts, doc := shownPlan(t, tu)
	before := doc.Find(`[data-testid=session-total]`).AttrOr("data-total", "")
	old, err := strconv.Atoi(talkOf(doc, "leader-crash"))
	if err != nil {
		t.Fatalf("leader-crash's talk time on the form: %q", talkOf(doc, "leader-crash"))
	}
	if w := post("leader-crash", strconv.Itoa(old+10)); w.Code != http.StatusSeeOther {
		t.Fatalf("set the talk time: %d %s", w.Code, w.Body.String())
	}
	_, after, doc := shownPlan(t, tu)
	if got := talkOf(doc, "leader-crash"); got != strconv.Itoa(old+10) {
		t.Errorf("the talk time is %s, want %d", got, old+10)
	}
	if starts[0] != after[0] || starts[1] == after[1] {
		t.Errorf("starts %v, then %v: want the first the same and the second 10 minutes later", starts, after)
	}
	total := doc.Find(`[data-testid=session-total]`).AttrOr("data-total", "")
	if total == before {
		t.Errorf("the total stayed %s", total)
	}
	for _, bad := range []string{"-1", "121", "5.5", "ten", ""} {
		w := post("leader-crash", bad)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "0 to 120") {
			t.Errorf("minutes %q: %d %s", bad, w.Code, w.Body.String())
		}
	}
	if w := post("no-such-lesson", "5"); w.Code != http.StatusBadRequest {
		t.Errorf("a lesson not in the plan: %d", w.Code)
	}
	if _, again, _ := shownPlan(t, tu); !slices.Equal(again, after) {
		t.Errorf("refused edits changed the plan: %v, was %v", again, after)
	}
}
