package main

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// postPlan posts one of the session plan's forms, as /scenarios does.
func postPlan(t *testing.T, base, action, lesson string) {
	t.Helper()
	resp, err := noRedirects.PostForm(base+"/ui/plan/"+action, url.Values{"lesson": {lesson}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("%s %s: %d", action, lesson, resp.StatusCode)
	}
}

// followPlan is what /follow says of the plan: where the room is, and the lesson marked as
// the current step.
func followPlan(t *testing.T, base string) (where, current string) {
	t.Helper()
	doc := getDoc(t, noRedirects, base+"/follow", http.StatusOK)
	return strings.Join(strings.Fields(doc.Find(`[data-testid="follow-plan-where"]`).Text()), " "),
		doc.Find(`[data-testid="follow-plan"] li[aria-current="step"]`).AttrOr("data-name", "")
}

// TestFollowShowsThePlan: /follow shows the session plan and where the room is in it: before
// any lesson, its length; then the lesson the instructor started, marked, with its number and
// start on the session's clock, both following the instructor's edits of the plan; and, once
// taken out of the plan, that it is not in it.
func TestFollowShowsThePlan(t *testing.T) {
	srv := mustStartServer(t, "")
	if where, cur := followPlan(t, srv.URL); !strings.HasPrefix(where, "No lesson is being followed yet; the plan lasts 1:") || cur != "" {
		t.Errorf("/follow before any lesson: %q, current %q", where, cur)
	}
	// The plan's second lesson, clean-release, starts when leader-crash (its run, the reading
	// of its steps and its talk) is over.
	doc := getDoc(t, noRedirects, srv.URL+"/scenarios", http.StatusOK)
	second := doc.Find(`[data-testid="session-plan"] li[data-name="clean-release"]`).AttrOr("data-starts", "?")
	total := doc.Find(`[data-testid="session-total"]`).AttrOr("data-total", "?")
	n := doc.Find(`[data-testid="session-plan"] li`).Length()
	if code, body := postLesson(t, srv.URL, "clean-release", "start", "1"); code != http.StatusSeeOther {
		t.Fatalf("start: %d %s", code, body)
	}
	want := "Lesson 2 of " + strconv.Itoa(n) + " · starts at " + second + " of " + total
	poll.Until(t, 30*time.Second, "/follow at the lesson started", func() (bool, string) {
		where, cur := followPlan(t, srv.URL)
		return where == want && cur == "clean-release", where + " | " + cur
	})
	postPlan(t, srv.URL, "up", "clean-release")
	if where, cur := followPlan(t, srv.URL); where != "Lesson 1 of "+strconv.Itoa(n)+" · starts at 0:00 of "+total || cur != "clean-release" {
		t.Errorf("after moving it up: %q, current %q", where, cur)
	}
	postPlan(t, srv.URL, "remove", "clean-release")
	if where, cur := followPlan(t, srv.URL); where != "Clean release is not in the session plan." || cur != "" {
		t.Errorf("after taking it out: %q, current %q", where, cur)
	}
}
