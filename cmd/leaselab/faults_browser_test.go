package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestBrowserFaults sets a network delay, a fail-fast partition, a clock rate and packet loss
// on a tab from the dashboard's tab row, and some from the tab's own keys, and sees the tab's
// state and its report (the row's data-latency-ms, data-partition, data-clock-rate and
// data-loss-percent) follow. Every
// wait is on observed state; the limits only bound a broken run.
func TestBrowserFaults(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)

	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	q := url.Values{"namespace": {"default"}, "lease": {"faults-demo"}, "identity": {"tab-f"}}
	tab, _ := openBrowserTab(t, browser, ts.URL+"/play?"+q.Encode())

	row := `#tabs [data-tab-row][data-identity="tab-f"]`
	attrs := func(ctx context.Context, sel string) string {
		s, err := browserEval(ctx, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return 'missing';
			return [e.dataset.state, e.dataset.latencyMs, e.dataset.partition, e.dataset.clockRate].join('|'); })()`, sel))
		if err != nil {
			return "error: " + err.Error()
		}
		return s
	}
	// want waits until both the tab and its dashboard row say state|latencyMs|partition|clockRate.
	want := func(step, tabWant, rowWant string) {
		t.Helper()
		if _, err := browserWait(20*time.Second, func() (bool, string) {
			a, b := attrs(tab, "#candidate"), attrs(dash, row)
			return match(a, tabWant) && match(b, rowWant), "tab " + a + ", row " + b
		}); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	// click clicks the button sel once it is there and enabled (a row is drawn from the hub's
	// messages, a button is disabled until the tab's state allows it).
	click := func(ctx context.Context, sel string) {
		t.Helper()
		if _, err := browserWait(20*time.Second, func() (bool, string) {
			s, err := browserEval(ctx, fmt.Sprintf(`(() => { const b = document.querySelector(%q);
				if (!b) return 'missing'; if (b.disabled) return 'disabled'; b.click(); return 'clicked'; })()`, sel))
			return s == "clicked", fmt.Sprintf("%s (%v)", s, err)
		}); err != nil {
			t.Fatalf("click %s: %v", sel, err)
		}
	}
	text := func(ctx context.Context, sel string) string {
		s, _ := browserEval(ctx, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ''`, sel))
		return strings.Join(strings.Fields(s), " ")
	}

	want("leads", "leader|0||1", "leader|0||1")

	// The tab's delay control starts at the delay that matters at its timings, and says why.
	if v, e := text(tab, "#delay-value"), text(tab, "#delay-effect"); v != "8.0 s" || !strings.Contains(e, "not less than the 7 s renew deadline") {
		t.Errorf("the tab's delay control: %q, %q", v, e)
	}

	// 1. A delay of 4 s from the dashboard, then 10 s while it is on.
	if _, err := browserEval(dash, `document.querySelector('`+row+` [data-field=delay]').value = '4000'`); err != nil {
		t.Fatalf("choose 4 s: %v", err)
	}
	click(dash, row+` [data-cmd=slow]`)
	want("slow 4 s", "leader|4000||1", "*|4000||1")
	if s := text(dash, row+` [data-cmd=slow]`); s != "Slow 4.0 s" {
		t.Errorf("the row's Slow button says %q", s)
	}
	if _, err := chromedp.Run(dash, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('`+row+` [data-field=delay]');
		s.value = '10000'; s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`)); err != nil {
		t.Fatalf("choose 10 s: %v", err)
	}
	want("slow 10 s", "*|10000||1", "*|10000||1")
	if s := text(tab, "#delay-value"); s != "10.0 s" {
		t.Errorf("the tab's delay control follows the dashboard: %q", s)
	}
	// A screen reader says the delay as the page shows it, not the slider's index.
	if s, _ := browserEval(tab, `document.getElementById('delay-slider').getAttribute('aria-valuetext') + '|' + document.getElementById('offset-slider').getAttribute('aria-valuetext')`); s != "10.0 s|0 s" {
		t.Errorf("the sliders' spoken values: %q, want 10.0 s|0 s", s)
	}
	// A renewal cannot outlast 10 s: the leader gives up leading at its renew deadline.
	want("slow past the deadline", "follower|10000||1", "follower|10000||1")
	click(dash, row+` [data-cmd=slow]`)
	want("slow off", "*|0||1", "*|0||1")

	// 2. A fail-fast partition from the dashboard; the hang button switches it; again heals.
	click(dash, row+` [data-cmd=partition-fail]`)
	want("fail fast", "partitioned|0|fail|1", "partitioned|0|fail|1")
	if s := text(tab, "#active-faults"); !strings.Contains(s, "requests fail") {
		t.Errorf("the tab's active faults: %q", s)
	}
	if s := text(dash, row+` [data-cmd=partition-fail]`); s != "Heal" {
		t.Errorf("the row's fail-fast button says %q", s)
	}
	click(dash, row+` [data-cmd=partition]`)
	want("hang", "partitioned|0|hang|1", "partitioned|0|hang|1")
	click(dash, row+` [data-cmd=partition]`)
	want("healed", "*|0||1", "*|0||1")

	// 3. The clock rate from the dashboard: two steps faster, one slower.
	click(dash, row+` [data-cmd="rate+"]`)
	want("1.25×", "*|0||1.25", "*|0||1.25")
	click(dash, row+` [data-cmd="rate+"]`)
	want("1.5×", "*|0||1.5", "*|0||1.5")
	if s := text(tab, `#candidate ~ * [data-field=rate], [data-testid=faultbar] [data-field=rate]`); s != "clock 1.5×" {
		t.Errorf("the tab shows its rate as %q", s)
	}

	// 4. The tab's own keys: Shift+N fails fast, { slows the clock, Shift+S picks the next delay
	// (its control follows the dashboard's 10 s, the longest: the next is the shortest) and S
	// turns the slow network on at it.
	for _, k := range []string{"N", "{"} {
		kctx, cancel := context.WithTimeout(tab, 10*time.Second)
		err := chromedp.Do(kctx, chromedp.KeyEvent(k))
		cancel()
		if err != nil {
			t.Fatalf("key %s: %v", k, err)
		}
	}
	want("keys", "partitioned|0|fail|1.25", "partitioned|0|fail|1.25")
	for _, k := range []string{"S", "s"} {
		kctx, cancel := context.WithTimeout(tab, 10*time.Second)
		err := chromedp.Do(kctx, chromedp.KeyEvent(k))
		cancel()
		if err != nil {
			t.Fatalf("key %s: %v", k, err)
		}
	}
	want("keys: slow at the next delay", "partitioned|100|fail|1.25", "partitioned|100|fail|1.25")

	// 5. Packet loss: L on the tab takes the next share (10 %), the row's button the one after
	// (30 %); both the tab's #candidate and its row say it (data-loss-percent), in words too.
	loss := func(step, want string) {
		t.Helper()
		if _, err := browserWait(20*time.Second, func() (bool, string) {
			a, _ := browserEval(tab, `document.getElementById('candidate').dataset.lossPercent`)
			b, _ := browserEval(dash, `(document.querySelector('`+row+`') || { dataset: {} }).dataset.lossPercent`)
			return a == want && b == want, "tab " + a + ", row " + b
		}); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	loss("no loss yet", "0")
	if s, _ := browserEval(tab, `Array.from(document.querySelectorAll('[data-testid=shortcuts] > div')).map((d) => d.querySelector('dt').textContent.trim() + ': ' + d.querySelector('dd').textContent).find((k) => k.startsWith('L:')) || ''`); !strings.Contains(s, "packet loss") {
		t.Errorf("the tab's keys do not list L: %q", s)
	}
	kctx, cancel := context.WithTimeout(tab, 10*time.Second)
	err := chromedp.Do(kctx, chromedp.KeyEvent("l"))
	cancel()
	if err != nil {
		t.Fatalf("key l: %v", err)
	}
	loss("key L", "10")
	click(dash, row+` [data-cmd=loss]`)
	loss("the row's loss button", "30")
	want("loss leaves the other faults", "partitioned|100|fail|1.25", "partitioned|100|fail|1.25")
	if s := text(dash, row+` [data-cmd=loss]`); s != "Loss 30%" {
		t.Errorf("the row's loss button says %q", s)
	}
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		a, b := text(tab, "#active-faults"), text(dash, row+` [data-field=faults]`)
		return strings.Contains(a, "packet loss: 30% of requests lost") && strings.Contains(b, "packet loss: 30% of requests lost"), "tab " + a + "; row " + b
	}); err != nil {
		t.Errorf("the loss in words: %v", err)
	}
	if s := text(tab, "#remote-note"); !strings.Contains(s, "packet loss 30%") {
		t.Errorf("the tab's note of the dashboard's command: %q", s)
	}

	for _, size := range [][2]int64{{1280, 720}, {390, 844}} {
		name := fmt.Sprintf("%dx%d", size[0], size[1])
		for _, p := range []struct {
			ctx  context.Context
			what string
		}{{tab, "play"}, {dash, "dashboard"}} {
			vctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
			err := chromedp.Do(vctx, chromedp.EmulateViewport(size[0], size[1]))
			cancel()
			if err != nil {
				t.Fatalf("viewport: %v", err)
			}
			if p.what == "dashboard" {
				_, _ = browserEval(p.ctx, `document.querySelector('`+row+`').scrollIntoView()`)
			}
			browserScreenshot(t, p.ctx, out, "faults-"+p.what+"-"+name+".png")
		}
	}
}

// match reports whether got ("a|b|c") equals want, where a "*" in want matches anything.
func match(got, want string) bool {
	g, w := strings.Split(got, "|"), strings.Split(want, "|")
	if len(g) != len(w) {
		return false
	}
	for i := range w {
		if w[i] != "*" && w[i] != g[i] {
			return false
		}
	}
	return true
}

// TestBrowserNavigatedTabLeaves: a candidate tab navigated to another page in the same
// browser tab leaves the dashboard at once, as a closed tab does, even when the browser keeps
// the page in its back-forward cache; going back brings the candidate back as a fresh one.
func TestBrowserNavigatedTabLeaves(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	browser := mustStartBrowser(t)
	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	q := url.Values{"namespace": {"default"}, "lease": {"away"}, "identity": {"tab-away"},
		"leaseDuration": {browserSeconds(browserLeaseDuration)}, "renewDeadline": {browserSeconds(browserRenewDeadline)}, "retryPeriod": {browserSeconds(browserRetryPeriod)}}
	play, _ := openBackgroundTab(t, browser, ts.URL+"/play?"+q.Encode())
	row := `(() => { const r = document.querySelector('#tabs [data-tab-row][data-identity="tab-away"]'); return r ? r.dataset.state : 'none'; })()`
	poll.Until(t, 30*time.Second, "the dashboard lists the tab leading", func() (bool, string) {
		s, _ := browserEval(dash, row)
		return s == "leader", "row " + s
	})
	if err := chromedp.Do(play, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 5*time.Second, "the navigated tab's row leaves the dashboard", func() (bool, string) {
		s, _ := browserEval(dash, row)
		return s == "none", "row " + s
	})
	if _, err := browserEval(play, `(history.back(), 'back')`); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "back on the candidate page, the tab rejoins", func() (bool, string) {
		s, _ := browserEval(dash, row)
		return s == "leader" || s == "follower", "row " + s
	})
}
