package main

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// The browser tests' timings: short, so that the scenarios run in seconds. Followers retry
// every retryPeriod plus up to 1.2 × retryPeriod of jitter, as client-go's.
const (
	browserLeaseDuration = 3 * time.Second
	browserRenewDeadline = 2 * time.Second
	browserRetryPeriod   = 500 * time.Millisecond
	// renewRoundSlack bounds how long a renew round of a candidate tab takes.
	renewRoundSlack = 200 * time.Millisecond
	// browserJitterFactor is client-go's (and the browser candidate's) JitterFactor.
	browserJitterFactor = 1.2
)

// TestBrowser drives a real headless Chromium: three candidate tabs compete for one lease,
// the leader's tab is closed, a leader is paused, and the dashboard follows along.
func TestBrowser(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	const ns, lease = "default", "browser-demo"

	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	if err := chromedp.Do(dash, chromedp.WaitVisible(chromedp.CSS(`#lease-grid`))); err != nil {
		t.Fatalf("dashboard: %v", err)
	}

	type tab struct {
		identity string
		ctx      context.Context
		close    context.CancelFunc
		closed   bool
	}
	var tabs []*tab
	for _, id := range []string{"tab-a", "tab-b", "tab-c"} {
		q := url.Values{
			"namespace":     {ns},
			"lease":         {lease},
			"identity":      {id},
			"leaseDuration": {browserSeconds(browserLeaseDuration)},
			"renewDeadline": {browserSeconds(browserRenewDeadline)},
			"retryPeriod":   {browserSeconds(browserRetryPeriod)},
		}
		ctx, cancel := openBackgroundTab(t, browser, ts.URL+"/play?"+q.Encode())
		tabs = append(tabs, &tab{identity: id, ctx: ctx, close: cancel})
	}
	states := func() map[string]string {
		m := map[string]string{}
		for _, tb := range tabs {
			if tb.closed {
				continue
			}
			s, err := browserCandidateState(tb.ctx)
			if err != nil {
				s = "error: " + err.Error()
			}
			m[tb.identity] = s
		}
		return m
	}
	leaders := func(m map[string]string) []string {
		var out []string
		for id, s := range m {
			if s == "leader" {
				out = append(out, id)
			}
		}
		sort.Strings(out)
		return out
	}
	holder := func() string {
		l, err := ts.Client.CoordinationV1().Leases(ns).Get(context.Background(), lease, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	tabOf := func(id string) *tab {
		for _, tb := range tabs {
			if tb.identity == id {
				return tb
			}
		}
		t.Fatalf("no tab %s", id)
		return nil
	}

	// 1. Exactly one of the three becomes leader, and the Lease names it.
	var leader string
	took, err := browserWait(20*time.Second, func() (bool, string) {
		m := states()
		ls := leaders(m)
		h := holder()
		if len(ls) == 1 && h == ls[0] {
			for _, s := range m {
				if s != "leader" && s != "follower" {
					return false, fmt.Sprintf("states %v, holder %q", m, h)
				}
			}
			leader = ls[0]
			return true, ""
		}
		return false, fmt.Sprintf("states %v, holder %q", m, h)
	})
	if err != nil {
		t.Fatalf("one leader: %v", err)
	}
	t.Logf("%s leads after %s", leader, took.Round(time.Millisecond))
	// The candidate tabs are behind the dashboard: the picture is of one brought to the front.
	browserShowTab(t, tabOf(leader).ctx)
	browserScreenshot(t, tabOf(leader).ctx, out, "candidate-leader.png")
	browserShowTab(t, dash)

	// 2. Close the leader's tab: another tab leads, not before the lease could have run out,
	// and the dashboard shows the new holder. How long each took is logged against the bound
	// the algorithm gives (the lease duration plus two retry periods) and a second for the
	// dashboard: on a busy machine wall-clock figures are not the algorithm's, so they are
	// reported, not asserted (targets belong in benchmarks).
	//
	// The two retry periods are a follower's two waits: until its next attempt sees the
	// leader's last renewal (the expiry counts from that observation, on its own clock), and
	// from the expiry to its next attempt. A follower waits retryPeriod plus up to
	// JitterFactor (1.2) × retryPeriod between attempts, as client-go's does, so each wait is at
	// most 2.2 × retryPeriod. Without the jitter allowance the bound fails by chance in about
	// one run in twenty-five.
	changes := watchLeaseHolder(t, ts, ns, lease)
	old := tabOf(leader)
	retry := time.Duration(float64(browserRetryPeriod) * (1 + browserJitterFactor))
	limit := browserLeaseDuration + 2*retry
	closedAt := time.Now()
	old.close()
	old.closed = true
	var next string
	if _, err := browserWait(limit+5*time.Second, func() (bool, string) {
		m := states()
		ls := leaders(m)
		if len(ls) == 1 && ls[0] != leader {
			next = ls[0]
			return true, ""
		}
		return false, fmt.Sprintf("states %v", m)
	}); err != nil {
		t.Fatalf("new leader after closing %s: %v", leader, err)
	}
	changedAt := changes.when(t, next, 5*time.Second)
	took = changedAt.Sub(closedAt)
	t.Logf("%s took the lease %s after %s's tab closed (leaseDuration + 2 × retry periods of at most %s: %s)",
		next, took.Round(time.Millisecond), leader, retry, limit)
	// The last renewal the new leader saw came at most a retry period before the close, plus
	// the time its round took: the next round starts a retry period after the last one ended,
	// as client-go's does (a renewal takes milliseconds, some tens on a loaded machine; a
	// takeover that did not wait for the lease to run out would come seconds earlier).
	if earliest := browserLeaseDuration - browserRetryPeriod - renewRoundSlack; took < earliest {
		t.Errorf("%s took the lease %s after the leader's tab closed, before it could have run out (%s)", next, took.Round(time.Millisecond), earliest)
	}
	card := fmt.Sprintf(`document.querySelector('[data-lease-card][data-namespace=%q][data-name=%q] [data-testid=holder]')`, ns, lease)
	_, err = browserWait(5*time.Second, func() (bool, string) {
		s, err := browserEval(dash, `(`+card+` || {}).textContent || ''`)
		return err == nil && s == next, fmt.Sprintf("dashboard holder %q (err %v)", s, err)
	})
	if err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	t.Logf("the dashboard showed the new holder within %s of the change (aim: 1 s)", time.Since(changedAt).Round(time.Millisecond))

	// 3. Pause the leader, from the dashboard (the command travels through the tab hub and
	// the tab's WebSocket): it loses the lease meanwhile, and shows it after resuming.
	paused := tabOf(next)
	pauseButton := fmt.Sprintf(`#tabs [data-tab-row][data-identity=%q] [data-cmd=pause]`, next)
	// Pressed with the page's own click(): the dashboard redraws its rows live, and a click at
	// a row's place on screen can land beside it.
	browserPress(t, dash, pauseButton)
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserCandidateState(paused.ctx)
		return s == "paused", "state " + s
	}); err != nil {
		t.Fatalf("%s after pause: %v", next, err)
	}
	var third string
	if _, err := browserWait(limit+5*time.Second, func() (bool, string) {
		h := holder()
		m := states()
		if h != "" && h != next && m[h] == "leader" {
			third = h
			return true, ""
		}
		return false, fmt.Sprintf("holder %q, states %v", h, m)
	}); err != nil {
		t.Fatalf("nobody took the lease from paused %s: %v", next, err)
	}
	if s, _ := browserCandidateState(paused.ctx); s != "paused" {
		t.Errorf("%s while paused: data-state %q, want paused", next, s)
	}
	// Resume with the tab's own key.
	if err := chromedp.Do(paused.ctx, chromedp.KeyEvent("p")); err != nil {
		t.Fatalf("resume %s: %v", next, err)
	}
	if _, err := browserWait(browserRenewDeadline+3*time.Second, func() (bool, string) {
		s, _ := browserCandidateState(paused.ctx)
		h, _ := browserEval(paused.ctx, `document.getElementById('holder').textContent`)
		lost, _ := browserEval(paused.ctx, `String(document.querySelectorAll('#log li[data-kind=lost]').length)`)
		return s == "follower" && h == third && lost != "0", fmt.Sprintf("state %q, holder shown %q, lost entries %s", s, h, lost)
	}); err != nil {
		t.Fatalf("%s after resuming: %v", next, err)
	}
	if s, _ := browserCandidateState(tabOf(third).ctx); s != "leader" {
		t.Errorf("%s: data-state %q, want leader", third, s)
	}

	// Screenshots of the dashboard and of a candidate tab, to look at.
	if _, err := browserWait(3*time.Second, func() (bool, string) {
		n, _ := browserEval(dash, `String(document.querySelectorAll('#tabs [data-tab-row]').length)`)
		return n == "2", "tab rows: " + n
	}); err != nil {
		t.Errorf("dashboard tab list: %v", err)
	}
	if modes, _ := browserEval(dash, `Array.from(document.querySelectorAll('#tabs [data-tab-row]'), (r) =>
		r.querySelector('[data-testid=tab-mode]').dataset.mode + (r.querySelector('[data-field=mode-plain]').hidden ? '' : ' shown') +
		(r.querySelector('[data-field=versions]').hidden ? '' : ' versions')).join(',')`); modes != "plain shown,plain shown" {
		t.Errorf("dashboard tab modes %q, want both plain, without versions", modes)
	}
	if _, err := browserEval(dash, `window.scrollTo(0, 0), ''`); err != nil {
		t.Errorf("scroll: %v", err)
	}
	browserScreenshot(t, dash, out, "dashboard.png")
	browserShowTab(t, paused.ctx)
	browserScreenshot(t, paused.ctx, out, "candidate-follower.png")
	browserShowTab(t, dash)

	// The lease page draws the terms so far: tab-a's, the one after it, and the pause's.
	page, _ := openBrowserTab(t, browser, ts.URL+"/leases/"+ns+"/"+lease)
	if _, err := browserWait(3*time.Second, func() (bool, string) {
		n, _ := browserEval(page, `String(document.querySelectorAll('[data-testid=timeline-bar]').length)`)
		bars, _ := strconv.Atoi(n)
		return bars >= 3, "timeline bars: " + n
	}); err != nil {
		t.Errorf("lease page: %v", err)
	}
	browserScreenshot(t, page, out, "lease.png")
}

// browserSeconds formats a duration as the /play query wants it.
func browserSeconds(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", d.Seconds()), "0"), ".")
}

// leaseHolderWatch records when the Lease first named each holder.
type leaseHolderWatch struct {
	mu    sync.Mutex
	first map[string]time.Time
}

// watchLeaseHolder starts watching one Lease with client-go until the test ends.
func watchLeaseHolder(t *testing.T, ts *testServer, ns, name string) *leaseHolderWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := ts.Client.CoordinationV1().Leases(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatalf("watch lease: %v", err)
	}
	hw := &leaseHolderWatch{first: map[string]time.Time{}}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			l, ok := ev.Object.(*coordinationv1.Lease)
			if !ok || ev.Type == watch.Deleted || l.Spec.HolderIdentity == nil {
				continue
			}
			hw.mu.Lock()
			if _, seen := hw.first[*l.Spec.HolderIdentity]; !seen {
				hw.first[*l.Spec.HolderIdentity] = time.Now()
			}
			hw.mu.Unlock()
		}
	}()
	return hw
}

// when returns when the Lease first named holder after the watch started, waiting up to d; it
// fails the test if the Lease did not name holder by then.
func (hw *leaseHolderWatch) when(tb testing.TB, holder string, d time.Duration) time.Time {
	tb.Helper()
	var at time.Time
	poll.Until(tb, d, "the Lease names "+holder, func() (bool, string) {
		hw.mu.Lock()
		defer hw.mu.Unlock()
		var ok bool
		at, ok = hw.first[holder]
		return ok, fmt.Sprintf("holders first seen: %v", hw.first)
	})
	return at
}

// TestBrowserCoordinated opens two coordinated candidate tabs of different emulation versions
// (same binary) against a server running the Coordinated Leader Election controller: the server
// picks the tab with the older emulation version, which leads and holds the Lease, while the
// other follows. The dashboard, open before the tabs, lists them live as coordinated, with the
// versions and the strategy they report.
func TestBrowserCoordinated(t *testing.T) {
	browserTest(t)
	ts := mustStartCLEServer(t)
	mustHaveWasm(t, ts.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)

	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	if err := chromedp.Do(dash, chromedp.WaitVisible(chromedp.CSS(`#lease-grid`))); err != nil {
		t.Fatalf("dashboard: %v", err)
	}

	tabs := map[string]context.Context{}
	for _, tc := range []struct{ id, emulation string }{{"tab-new", "1.36.0"}, {"tab-old", "1.35.0"}} {
		q := url.Values{
			"namespace":        {cleNamespace},
			"lease":            {cleLease},
			"identity":         {tc.id},
			"leaseDuration":    {browserSeconds(cleLeaseDuration)},
			"renewDeadline":    {browserSeconds(cleRenewDeadline)},
			"retryPeriod":      {browserSeconds(cleRetryPeriod)},
			"coordinated":      {"1"},
			"binaryVersion":    {"1.36.0"},
			"emulationVersion": {tc.emulation},
		}
		ctx, _ := openBackgroundTab(t, browser, ts.URL+"/play?"+q.Encode())
		tabs[tc.id] = ctx
	}
	eval := func(id, expr string) string {
		s, err := browserEval(tabs[id], expr)
		if err != nil {
			return "error: " + err.Error()
		}
		return s
	}
	took, err := browserWait(15*time.Second, func() (bool, string) {
		oldState, _ := browserCandidateState(tabs["tab-old"])
		newState, _ := browserCandidateState(tabs["tab-new"])
		h := leaseHolder(t, ts)
		seen := eval("tab-new", `document.querySelector('[data-testid=holder]').textContent`)
		return oldState == "leader" && newState == "follower" && h == "tab-old" && seen == "tab-old",
			fmt.Sprintf("tab-old %s, tab-new %s (sees %q), holder %q", oldState, newState, seen, h)
	})
	if err != nil {
		t.Logf("controller decisions:\n%s", decisionsText(cleDecisions(ts)))
		for id := range tabs {
			t.Logf("%s log: %s", id, eval(id, `document.getElementById('log').innerText`))
		}
		t.Fatalf("the older emulation version leads: %v", err)
	}
	t.Logf("tab-old leads after %s", took.Round(time.Millisecond))
	browserScreenshot(t, tabs["tab-old"], out, "candidate-coordinated-leader.png")

	if got := eval("tab-old", `document.querySelector('[data-testid=coordinated]').textContent`); got != "coordinated: binary 1.36.0, emulation 1.35.0" {
		t.Errorf("tab-old mode line %q", got)
	}
	if got := eval("tab-old", `document.querySelector('[data-testid=preferred-holder]').textContent`); got != "nobody" {
		t.Errorf("tab-old shows preferredHolder %q", got)
	}
	if got := eval("tab-old", `document.getElementById('log').innerText`); !strings.Contains(got, "the server picked me") {
		t.Errorf("tab-old log: %s", got)
	}

	// The dashboard's tab list got both tabs over the tab hub, after it was rendered: each
	// coordinated, with the versions and the strategy its worker reports.
	tabRow := func(id, expr string) string {
		s, err := browserEval(dash, `(function () {
			const r = document.querySelector('#tabs [data-tab-row][data-identity="`+id+`"]');
			if (!r) return 'no row';
			const shown = (sel) => { const e = r.querySelector(sel); return e && !e.hidden && e.getClientRects().length > 0; };
			const text = (sel) => { const e = r.querySelector(sel); return e ? e.textContent.trim() : ''; };
			return `+expr+`;
		})()`)
		if err != nil {
			return "error: " + err.Error()
		}
		return s
	}
	const modeExpr = `r.querySelector('[data-testid=tab-mode]').dataset.mode + ' ' + (shown('[data-field=mode-coordinated]') ? 'coordinated' : '') +
		(shown('[data-field=mode-plain]') ? 'plain' : '') + ' ' + (shown('[data-field=versions]') ? 'versions' : 'no versions') + ' ' +
		text('[data-testid=tab-binary]') + ' ' + text('[data-testid=tab-emulation]') + ' ' + text('[data-testid=tab-strategy]') + ' ' +
		(shown('[data-testid=tab-stepdown]') ? 'stepping down' : 'steady')`
	want := map[string]string{
		"tab-old": "coordinated coordinated versions 1.36.0 1.35.0 OldestEmulationVersion steady",
		"tab-new": "coordinated coordinated versions 1.36.0 1.36.0 OldestEmulationVersion steady",
	}
	if _, err := browserWait(5*time.Second, func() (bool, string) {
		got := map[string]string{}
		for id, w := range want {
			if got[id] = tabRow(id, modeExpr); got[id] != w {
				return false, fmt.Sprintf("%v", got)
			}
		}
		return true, ""
	}); err != nil {
		t.Errorf("the dashboard's tab list, want %v: %v", want, err)
	}
	if n, _ := browserEval(dash, `String(document.querySelectorAll('#tabs [data-tab-row]').length)`); n != "2" {
		t.Errorf("dashboard tab rows: %s", n)
	}
	_, _ = browserEval(dash, `document.getElementById('tabs').scrollIntoView(), ''`)
	browserScreenshot(t, dash, out, "dashboard-coordinated.png")

	// The lease page lists the controller's decisions, among them the election of tab-old.
	page, _ := openBrowserTab(t, browser, ts.URL+"/leases/"+cleNamespace+"/"+cleLease)
	if _, err := browserWait(3*time.Second, func() (bool, string) {
		n, _ := browserEval(page, `String(document.querySelectorAll('[data-testid=decision][data-kind=elect][data-candidate=tab-old]').length)`)
		return n != "0" && n != "", "elect decisions for tab-old: " + n
	}); err != nil {
		t.Errorf("lease page: %v", err)
	}
	_, _ = browserEval(page, `document.querySelector('[data-testid=lease-decisions]').scrollIntoView(), ''`)
	browserScreenshot(t, page, out, "lease-coordinated.png")
}
