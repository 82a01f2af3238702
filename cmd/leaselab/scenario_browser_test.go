package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBrowserScenarioLeaderCrash drives leader-crash through its page in Chromium: Start, then
// Next whenever it is offered, until the end. The narration advances a step at a time, the
// members' cards follow, and the scenario's lease passes from alice to another candidate.
func TestBrowserScenarioLeaderCrash(t *testing.T) {
	browserTest(t)
	srv := mustStartServer(t, "")
	browser := mustStartBrowser(t)
	out := browserOutputDir(t)
	tab, _ := openBrowserTab(t, browser, srv.URL+"/scenarios")
	browserPress(t, tab, `a[href="/scenarios/leader-crash"]`)
	if _, err := browserWait(time.Minute, func() (bool, string) {
		s, _ := browserEval(tab, `location.pathname + ' ' + document.readyState + ' ' + !!document.querySelector('[data-testid="start"]')`)
		return s == "/scenarios/leader-crash complete true", s
	}); err != nil {
		t.Fatalf("the scenario page does not load: %v", err)
	}
	// Before Start, Next cannot be pressed, and does not look like Start, which can.
	if s := mustEval(t, tab, `(() => { const n = document.querySelector('[data-testid="next"]'), s = document.querySelector('[data-testid="start"]');
		return n.disabled + ' ' + (getComputedStyle(n).backgroundColor === getComputedStyle(s).backgroundColor); })()`); s != "true false" {
		t.Errorf("Next before Start (disabled, filled as Start): %s", s)
	}
	// Four times as fast: the lesson's 20-odd seconds of lease time in a few real ones. Space
	// starts it, as a presenter's clicker does.
	if err := chromedp.Do(ctxWith(tab, 10*time.Second), chromedp.SetValue(chromedp.CSS(`select[name="speed"]`), "4"), chromedp.KeyEvent(" ")); err != nil {
		t.Fatalf("start: %v", err)
	}
	steps := func() int {
		s, _ := browserEval(tab, `String(document.querySelectorAll('[data-testid="step"]').length)`)
		n, _ := strconv.Atoi(s)
		return n
	}
	if _, err := browserWait(time.Minute, func() (bool, string) { return steps() == 1, "steps " + strconv.Itoa(steps()) }); err != nil {
		t.Fatalf("the first step is not shown after Start: %v", err)
	}
	ns, err := browserEval(tab, `document.querySelector('[data-testid="scenario"]').dataset.namespace`)
	if err != nil || ns == "" {
		t.Fatalf("data-namespace: %q %v", ns, err)
	}
	if !strings.Contains(mustEval(t, tab, `location.search`), "speed=4") {
		t.Errorf("the page's URL does not carry the speed: %s", mustEval(t, tab, `location.href`))
	}
	holder := func() string {
		s, _ := browserEval(tab, `(document.querySelector('[data-testid="holder"]')||{}).textContent||''`)
		return strings.TrimSpace(s)
	}
	if _, err := browserWait(time.Minute, func() (bool, string) { return holder() == "alice", "holder " + holder() }); err != nil {
		t.Fatalf("alice does not lead first: %v", err)
	}
	browserScreenshot(t, tab, out, "leader-crash-1280.png")

	const total = 5
	for n := 1; n < total; n++ {
		if _, err := browserWait(2*time.Minute, func() (bool, string) {
			s, _ := browserEval(tab, `String(!document.querySelector('[data-testid="next"]').disabled)`)
			return s == "true", "step " + strconv.Itoa(steps()) + ": " + mustEval(t, tab, `document.querySelector('[data-testid="scenario-status"]').textContent`)
		}); err != nil {
			t.Fatalf("Next is not offered at step %d: %v", n, err)
		}
		browserPress(t, tab, `[data-testid="next"]`)
		if _, err := browserWait(time.Minute, func() (bool, string) { return steps() == n+1, "steps " + strconv.Itoa(steps()) }); err != nil {
			t.Fatalf("the narration does not advance to step %d: %v", n+1, err)
		}
		browserRevealIfAsked(t, tab)
		// The step told is on screen, however far down the narration has grown.
		if _, err := browserWait(10*time.Second, func() (bool, string) {
			s, _ := browserEval(tab, `(() => { const c = document.querySelector('.step-current'); if (!c) return 'none';
				const r = c.getBoundingClientRect(); return c.dataset.n + ' ' + (r.top >= 0 && r.bottom <= innerHeight + 1) + ' ' + Math.round(r.top) + '-' + Math.round(r.bottom) + '/' + innerHeight; })()`)
			return strings.HasPrefix(s, strconv.Itoa(n+1)+" true"), s
		}); err != nil {
			t.Errorf("step %d is not brought into view: %v", n+1, err)
		}
	}
	// On a wide screen the stage stays in view beside the narration followed down the page:
	// every candidate between the controls and the window's bottom edge.
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserEval(tab, `(() => { const top = document.querySelector('.scenario-controls').getBoundingClientRect().bottom;
			const out = [...document.querySelectorAll('#stage-page [data-testid="stage-candidate"]')].filter((c) => { const r = c.getBoundingClientRect(); return r.top < top - 1 || r.bottom > innerHeight + 1; });
			return document.querySelectorAll('#stage-page [data-testid="stage-candidate"]').length + ' candidates, out of view: ' + out.map((c) => c.dataset.identity).join(',') + '; scrolled ' + (scrollY > 0); })()`)
		return s == "3 candidates, out of view: ; scrolled true", s
	}); err != nil {
		t.Errorf("the stage beside the narration at 1280x720: %v", err)
	}
	// The page follows the step told only until the reader moves it: scrolled back to the top
	// with the Home key, it stays there as the run goes on and the live part is swapped.
	mustEval(t, tab, `(window.llSwaps = 0, document.addEventListener('ll:swapped', () => window.llSwaps++), 'ok')`)
	if err := chromedp.Do(ctxWith(tab, 10*time.Second), chromedp.KeyEvent(kb.Home)); err != nil {
		t.Fatal(err)
	}
	scrolled := func() string {
		return mustEval(t, tab, `String(Math.round(scrollY)) + ' after ' + window.llSwaps + ' swaps'`)
	}
	if _, err := browserWait(10*time.Second, func() (bool, string) { s := scrolled(); return strings.HasPrefix(s, "0 "), s }); err != nil {
		t.Fatalf("Home does not scroll the page to the top: %v", err)
	}
	if _, err := browserWait(time.Minute, func() (bool, string) {
		return mustEval(t, tab, `String(window.llSwaps >= 3)`) == "true", scrolled()
	}); err != nil {
		t.Fatalf("the live part is not swapped as the run goes on: %v", err)
	}
	if s := scrolled(); !strings.HasPrefix(s, "0 ") {
		t.Errorf("the page scrolled back to the step after the reader scrolled away: scrollY %s", s)
	}
	// The lease passed from alice to bob or carol, on the page and on the server.
	if _, err := browserWait(time.Minute, func() (bool, string) {
		h := holder()
		return h == "bob" || h == "carol", "holder " + h
	}); err != nil {
		t.Fatalf("the page does not show a new holder: %v", err)
	}
	l, err := srv.Client.CoordinationV1().Leases(ns).Get(ctxT(t, 10*time.Second), "demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := *l.Spec.HolderIdentity; h == "alice" || h == "" || *l.Spec.LeaseTransitions < 1 {
		t.Fatalf("the scenario's lease names %q after %d transitions", h, *l.Spec.LeaseTransitions)
	}
	browserScreenshot(t, tab, out, "leader-crash-end-1280.png")

	// Presenter mode (F): the stage in the centre, the narration as a caption.
	if err := chromedp.Do(ctxWith(tab, 10*time.Second), chromedp.KeyEvent("f")); err != nil {
		t.Fatal(err)
	}
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserEval(tab, `document.body.classList.contains('present') && getComputedStyle(document.querySelector('[data-testid="caption"]')).display !== 'none' ? 'yes' : 'no'`)
		return s == "yes", s
	}); err != nil {
		t.Fatalf("F does not switch to presenter mode: %v", err)
	}
	// On a projector it is one screen: every candidate on the stage and the status above the
	// caption, nothing under it, and nothing to scroll to.
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserEval(tab, `(() => { const cap = document.querySelector('[data-testid="caption"]').getBoundingClientRect().top;
			const over = [...document.querySelectorAll('[data-testid="stage-candidate"], [data-testid="scenario-status"], [data-testid="scenario-holder"]')]
				.filter((e) => e.getBoundingClientRect().bottom > cap + 1).map((e) => e.dataset.identity || e.dataset.testid);
			return over.length + ' under the caption ' + over.join(',') + '; scrolls ' + (document.documentElement.scrollHeight > innerHeight + 1); })()`)
		return s == "0 under the caption ; scrolls false", s
	}); err != nil {
		t.Errorf("presenter mode at 1280x720: %v", err)
	}
	browserScreenshot(t, tab, out, "leader-crash-present-1280.png")
	if err := chromedp.Do(ctxWith(tab, 10*time.Second), chromedp.KeyEvent("f"), chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	browserScreenshot(t, tab, out, "leader-crash-390.png")
	// On a phone the controls, which stay at the top, take two rows.
	if s := mustEval(t, tab, `String(new Set([...document.querySelectorAll('.scenario-controls :is(button, select)')].map((e) => Math.round(e.getBoundingClientRect().top))).size)`); s != "2" {
		t.Errorf("the lesson's controls at 390x844 take %s rows, want 2", s)
	}
	// Presenter mode on a phone: the stage is the centre, every candidate on it within the
	// screen, and the caption follows the status line rather than covering it.
	if err := chromedp.Do(ctxWith(tab, 10*time.Second), chromedp.KeyEvent("f")); err != nil {
		t.Fatal(err)
	}
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserEval(tab, `document.body.classList.contains('present') + ' ' + [...document.querySelectorAll('[data-testid="stage-candidate"]')].map((m) => { const r = m.getBoundingClientRect(); return Math.round(r.left) + '/' + Math.round(r.right) + '/' + innerWidth; }).join(' ')`)
		fields := strings.Fields(s)
		fits := len(fields) >= 4 && fields[0] == "true" // three members at least
		for _, f := range fields[1:] {
			p := strings.Split(f, "/")
			le, _ := strconv.Atoi(p[0])
			ri, _ := strconv.Atoi(p[1])
			wi, _ := strconv.Atoi(p[2])
			fits = fits && len(p) == 3 && le >= 0 && ri <= wi
		}
		c, _ := browserEval(tab, `String(document.querySelector('[data-testid="caption"]').getBoundingClientRect().top >= document.querySelector('[data-testid="scenario-status"]').getBoundingClientRect().bottom)`)
		return fits && c == "true", s + " caption below the status: " + c
	}); err != nil {
		t.Errorf("presenter mode at 390x844: %v", err)
	}
	browserScreenshot(t, tab, out, "leader-crash-present-390.png")
}

// mustEval evaluates expr in a tab; an error reads as its message (for failure reports).
func mustEval(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	s, err := browserEval(ctx, expr)
	if err != nil {
		return err.Error()
	}
	return s
}

// ctxWith bounds one browser action; a stuck one fails the test instead of hanging it.
func ctxWith(ctx context.Context, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(ctx, d)
	context.AfterFunc(ctx, cancel)
	return ctx
}
