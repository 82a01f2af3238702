package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserFollow: a participant's /follow shows the lesson the instructor runs, its step and
// its stage, and moves when the instructor presses Next; the time from the click to the
// participant's screen is measured (a figure for the log, bounded loosely here: the target,
// under a second on loopback, is a measurement, not a timed assertion).
func TestBrowserFollow(t *testing.T) {
	browserTest(t)
	srv := mustStartServer(t, "")
	browser := mustStartBrowser(t)
	follower, _ := openBrowserTab(t, browser, srv.URL+"/follow")
	if s := mustEval(t, follower, `String(!!document.querySelector('[data-testid="follow-idle"]'))`); s != "true" {
		t.Fatalf("/follow before any lesson: idle = %s", s)
	}
	instructor, _ := openBrowserTab(t, browser, srv.URL+"/scenarios/leader-crash?speed=4")
	browserPress(t, instructor, `[data-testid="start"]`)
	shown := func() string {
		s, _ := browserEval(follower, `(() => { const s = document.querySelector('#follow-live [data-testid="step"]');
			return (s ? s.dataset.n : '') + '|' + (document.querySelector('[data-testid="follow-lesson"]') || {textContent: ''}).textContent + '|' +
				document.querySelectorAll('[data-testid="stage-candidate"]').length; })()`)
		return s
	}
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		f := strings.Split(shown(), "|")
		return len(f) == 3 && f[0] == "1" && f[1] != "" && f[2] != "0", shown()
	}); err != nil {
		t.Fatalf("the follower does not show the lesson's first step and stage: %v", err)
	}
	for n := 2; n <= 3; n++ {
		// Offered on the instructor's page as it shows step n-1: its Next button may still be
		// enabled from the step before until the page has caught up.
		if _, err := browserWait(2*time.Minute, func() (bool, string) {
			s, _ := browserEval(instructor, `(() => { const l = document.getElementById('scenario-live'); return l.dataset.shown + ' ' + l.dataset.canNext + ' ' + !document.querySelector('[data-testid="next"]').disabled; })()`)
			return s == strconv.Itoa(n-1)+" true true", s
		}); err != nil {
			t.Fatalf("Next is not offered for step %d: %v", n, err)
		}
		clicked := time.Now()
		browserPress(t, instructor, `[data-testid="next"]`)
		took, err := browserWait(10*time.Second, func() (bool, string) {
			return strings.HasPrefix(shown(), strconv.Itoa(n)+"|"), shown()
		})
		if err != nil {
			inst, _ := browserEval(instructor, `(() => { const l = document.getElementById('scenario-live'); return 'shown ' + l.dataset.shown + ' asking ' + l.dataset.asking + ' steps ' + document.querySelectorAll('[data-testid="step"]').length; })()`)
			live, _ := browserEval(follower, `(() => { const x = new XMLHttpRequest(); x.open('GET', '/follow/live', false); x.send(); return x.responseText.replace(/\s+/g, ' ').slice(0, 600); })()`)
			t.Fatalf("the follower does not move to step %d: %v (the instructor's page: %s; /follow/live now: %s)", n, err, inst, live)
		}
		t.Logf("step %d on the follower's screen %v after the click (%v including the click)", n, took, time.Since(clicked))
	}
	out := browserOutputDir(t)
	browserScreenshot(t, follower, out, "follow-1280.png")
	if err := chromedp.Do(ctxWith(follower, 10*time.Second), chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	browserScreenshot(t, follower, out, "follow-390.png")

	// A look away, to the lesson's own page, then Home: back to what the instructor shows.
	if _, err := browserEval(follower, `(document.querySelector('[data-testid="follow-lesson"]').click(), 'ok')`); err != nil {
		t.Fatal(err)
	}
	where := func() (bool, string) {
		s, _ := browserEval(follower, `location.pathname`)
		return strings.HasPrefix(s, "/scenarios/"), s
	}
	if _, err := browserWait(20*time.Second, where); err != nil {
		t.Fatalf("the lesson's link: %v", err)
	}
	// Home is pressed once the page's scripts run (a key before them does nothing), again if
	// a loaded machine let one pass before they did.
	back := func() (bool, string) {
		s, _ := browserEval(follower, `location.pathname + ' ' + !!document.getElementById('follow')`)
		return s == "/follow true", s
	}
	var err error
	for try := 0; try < 3; try++ {
		if _, err = browserWait(20*time.Second, func() (bool, string) {
			s, _ := browserEval(follower, `document.readyState`)
			return s == "complete", s
		}); err != nil {
			t.Fatalf("the lesson's page does not load: %v", err)
		}
		if err = chromedp.Do(ctxWith(follower, 10*time.Second), chromedp.KeyEvent(kb.Home)); err != nil {
			t.Fatal(err)
		}
		if _, err = browserWait(10*time.Second, back); err == nil {
			break
		}
	}
	if err != nil {
		t.Errorf("Home from a page reached from /follow: %v", err)
	}
}
