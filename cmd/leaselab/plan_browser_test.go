package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestBrowserSessionPlan: the instructor moves a lesson down the session plan on /scenarios
// with its form (no script needed), starts it, and a participant's /follow shows the plan with
// that lesson marked as the current step, and where it is in the session; a later edit of the
// plan reaches the open /follow without a reload.
func TestBrowserSessionPlan(t *testing.T) {
	browserTest(t)
	srv := mustStartServer(t, "")
	browser := mustStartBrowser(t)
	instructor, _ := openBrowserTab(t, browser, srv.URL+"/scenarios#session")
	order := func() string {
		s, _ := browserEval(instructor, `Array.from(document.querySelectorAll('[data-testid="session-plan"] li')).slice(0, 2).map((li) => li.dataset.name + '@' + li.dataset.starts).join(' ')`)
		return s
	}
	first := order()
	if !strings.HasPrefix(first, "leader-crash@0:00 clean-release@") {
		t.Fatalf("the suggested plan begins %q", first)
	}
	browserPress(t, instructor, `[data-testid="session-plan"] li[data-name="leader-crash"] [data-testid="plan-down"]`)
	poll.Until(t, 10*time.Second, "leader-crash second in the plan", func() (bool, string) {
		s := order()
		return strings.HasPrefix(s, "clean-release@0:00 leader-crash@"), s
	})
	out := browserOutputDir(t)
	browserScreenshot(t, instructor, out, "plan-1280.png")
	if err := chromedp.Do(ctxWith(instructor, 10*time.Second), chromedp.ScrollIntoView(`[data-testid="plan-reset"]`)); err != nil {
		t.Fatal(err)
	}
	browserScreenshot(t, instructor, out, "plan-forms-1280.png")
	if code, body := postLesson(t, srv.URL, "leader-crash", "start", "1"); code != 303 {
		t.Fatalf("start: %d %s", code, body)
	}
	follower, _ := openBrowserTab(t, browser, srv.URL+"/follow")
	poll.Until(t, 30*time.Second, "the follower's plan at leader-crash", func() (bool, string) {
		s, _ := browserEval(follower, `(() => { const c = document.querySelector('[data-testid="follow-plan"] [aria-current="step"]');
			return (c ? c.dataset.name : '-') + ' | ' + document.querySelector('[data-testid="follow-plan-where"]').textContent.trim().replace(/\s+/g, ' '); })()`)
		return strings.HasPrefix(s, "leader-crash | Lesson 2 of ") && strings.Contains(s, " · starts at 0:"), s
	})
	browserScreenshot(t, follower, out, "follow-plan-1280.png")

	// The instructor edits the plan: the open /follow shows it without a reload.
	mustEval(t, follower, `(window.stayed = 'yes', '')`)
	browserPress(t, instructor, `[data-testid="session-plan"] li[data-name="leader-crash"] [data-testid="plan-down"]`)
	poll.Until(t, 30*time.Second, "the follower's plan with leader-crash third, unreloaded", func() (bool, string) {
		s, _ := browserEval(follower, `(window.stayed || 'reloaded') + ' | ' + document.querySelector('[data-testid="follow-plan-where"]').textContent.trim().replace(/\s+/g, ' ')`)
		return strings.HasPrefix(s, "yes | Lesson 3 of "), s
	})
	if err := chromedp.Do(ctxWith(follower, 10*time.Second), chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	browserScreenshot(t, follower, out, "follow-plan-390.png")
	mustFitTheWidth(t, follower, "/follow")
	if err := chromedp.Do(ctxWith(instructor, 10*time.Second), chromedp.EmulateViewport(390, 844), chromedp.ScrollIntoView(`#session`)); err != nil {
		t.Fatal(err)
	}
	browserScreenshot(t, instructor, out, "plan-390.png")
	mustFitTheWidth(t, instructor, "/scenarios")
	// Each lesson's row on a phone is laid out alike: the moves and Remove on one line under the
	// title, the arrows in one column, the talk's minutes on the next line.
	mustSee(t, instructor, `(() => { const top = (e, sel) => Math.round(e.querySelector(sel).getBoundingClientRect().top);
		const rows = [...document.querySelectorAll('[data-testid=session-plan] li')];
		const left = (e, sel) => Math.round(e.querySelector(sel).getBoundingClientRect().left);
		const odd = rows.filter((li) => top(li, '[data-testid=plan-up]') !== top(li, '[data-testid=plan-remove]') ||
			top(li, '[data-testid=plan-talk-set]') <= top(li, '[data-testid=plan-remove]') || top(li, '[data-testid=plan-up]') <= top(li, 'a') ||
			left(li, '[data-testid=plan-up]') !== left(rows[0], '[data-testid=plan-up]'));
		return (rows.length > 1) + ', ' + odd.map((li) => li.dataset.name).join(' ') + ' laid out otherwise'; })()`, "true,  laid out otherwise")
}
