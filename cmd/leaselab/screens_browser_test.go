package main

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestBrowserHoldWithoutRenewTime: a lease written with a holder and no renewTime drains on
// the dashboard from the moment it was written, and the dashboard tells its expiry, as the
// server-side feed and timeline do.
func TestBrowserHoldWithoutRenewTime(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	browser := mustStartBrowser(t)
	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	if err := chromedp.Do(dash, chromedp.WaitVisible(chromedp.CSS(`#lease-grid`))); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	if _, err := browserWait(5*time.Second, func() (bool, string) {
		s, _ := browserEval(dash, `document.getElementById('conn').textContent`)
		return s == "live", "connection " + s
	}); err != nil {
		t.Fatal(err)
	}
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "bare"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), LeaseDurationSeconds: ptr.To[int32](2)},
	}
	if _, err := ts.Client.CoordinationV1().Leases("default").Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	card := `document.querySelector('[data-lease-card][data-name=bare]')`
	status := `((` + card + ` || document).querySelector('[data-testid=lease-status]') || {}).textContent.trim()`
	if _, err := browserWait(2*time.Second, func() (bool, string) {
		s, _ := browserEval(dash, status)
		r, _ := browserEval(dash, `((`+card+` || document).querySelector('[data-testid=remaining]') || {}).textContent`)
		return s == "HELD" && strings.HasSuffix(r, " s") && r != "0 s", fmt.Sprintf("status %q, remaining %q", s, r)
	}); err != nil {
		t.Fatalf("new lease: %v", err)
	}
	if _, err := browserWait(4*time.Second, func() (bool, string) {
		s, _ := browserEval(dash, status)
		f, _ := browserEval(dash, `Array.from(document.querySelectorAll('#feed .feed-expired'), (li) => li.textContent).join('|')`)
		return s == "EXPIRED" && strings.Contains(f, "a's hold on default/bare expired"), fmt.Sprintf("status %q, feed %q", s, f)
	}); err != nil {
		t.Fatalf("a hold without renewTime never expired on the dashboard: %v", err)
	}
	// The server, rendering the page afresh, agrees.
	fresh, _ := openBrowserTab(t, browser, ts.URL+"/leases/default/bare")
	if s, err := browserEval(fresh, `document.querySelector('.lease-now [data-testid=lease-status]').textContent.trim()`); err != nil || s != "EXPIRED" {
		t.Errorf("lease page: status %q (%v), want EXPIRED", s, err)
	}
}

// TestBrowserPlayScreen: in a candidate tab at 1280x720, the leader's renew deadline bar shows
// the deadline the elector acts on (full at the setting between renew rounds, never more;
// under a partition it drains to zero when the tab gives up), every fault control fits
// without scrolling, and a stopped tab is told by word, icon and color without striking its
// text.
func TestBrowserPlayScreen(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	q := url.Values{
		"namespace":     {"default"},
		"lease":         {"screen"},
		"identity":      {"tab-s"},
		"leaseDuration": {browserSeconds(browserLeaseDuration)},
		"renewDeadline": {browserSeconds(browserRenewDeadline)},
		"retryPeriod":   {browserSeconds(browserRetryPeriod)},
	}
	tab, _ := openBrowserTab(t, browser, ts.URL+"/play?"+q.Encode())
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserCandidateState(tab)
		return s == "leader", "state " + s
	}); err != nil {
		t.Fatalf("leading: %v", err)
	}

	// The bar shows the deadline the elector acts on: full at the setting between renew rounds,
	// never more, and under a partition it drains to zero exactly when the tab gives up.
	// The page records every value the bar shows, and when the bar goes (leadership ends).
	if _, err := browserEval(tab, `(() => {
		const el = document.getElementById('bar-deadline');
		const value = el.querySelector('[data-field=value]');
		window.deadlineBar = [];
		const note = () => window.deadlineBar.push({ t: Date.now(), v: value.textContent, hidden: el.hidden, over: el.classList.contains('over') });
		new MutationObserver(note).observe(el, { attributes: true, childList: true, subtree: true, characterData: true });
		note();
		return 'ok';
	})()`); err != nil {
		t.Fatal(err)
	}
	type reading struct {
		T      int64
		V      string
		Hidden bool
		Over   bool
	}
	readings := func() []reading {
		t.Helper()
		rs, err := chromedp.Run(tab, chromedp.Evaluate[[]reading](`window.deadlineBar`))
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	secsOf := func(v string) (float64, bool) {
		s, ok := strings.CutSuffix(v, " s")
		f, err := strconv.ParseFloat(s, 64)
		return f, ok && err == nil
	}
	rd := browserRenewDeadline.Seconds()
	// Several renewals: the bar stays full (a late worker step may take a moment off it).
	var healthy []reading
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		healthy = readings()
		return len(healthy) > 1 && healthy[len(healthy)-1].T-healthy[0].T >= 4*browserRetryPeriod.Milliseconds(), fmt.Sprintf("%d readings", len(healthy))
	}); err != nil {
		t.Fatal(err)
	}
	// Each reading holds until the next: the time the bar spent at the setting, against the
	// time it spent below it while a round was in flight (longer on a loaded machine).
	lo, hi := 1e9, 0.0
	var full, all int64
	for i, r := range healthy {
		f, ok := secsOf(r.V)
		if !ok {
			t.Fatalf("renew deadline bar reads %q while leading", r.V)
		}
		lo, hi = min(lo, f), max(hi, f)
		if i+1 < len(healthy) {
			held := healthy[i+1].T - r.T
			all += held
			if f >= rd-0.05 {
				full += held
			}
		}
	}
	t.Logf("healthy: renew deadline bar between %.1f s and %.1f s, at the setting (%.1f s) %d%% of the time", lo, hi, rd, 100*full/max(all, 1))
	if hi > rd {
		t.Errorf("renew deadline bar read %.1f s, more than the setting %.1f s", hi, rd)
	}
	// A bar that drained between renewals would be at the setting only just after each one.
	if 3*full < all {
		t.Errorf("renew deadline bar was at the setting %d of %d ms on a healthy network: it drains between renewals, though no round was failing", full, all)
	}
	browserScreenshot(t, tab, out, "play-leader.png")

	// Partitioned (fail fast): the bar drains from the setting to zero, and the tab gives up
	// as it reaches zero, not a retry period later.
	browserPress(t, tab, `[data-cmd=partition-fail]`)
	var cut []reading
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		cut = readings()
		return cut[len(cut)-1].Hidden, "the renew deadline bar still shows " + cut[len(cut)-1].V
	}); err != nil {
		t.Fatalf("partitioned: %v", err)
	}
	lostAt := cut[len(cut)-1].T
	last, overSince := "", int64(0)
	for _, r := range cut[len(healthy):] {
		if r.Hidden {
			break
		}
		if f, ok := secsOf(r.V); ok && f > rd {
			t.Errorf("partitioned: the renew deadline bar read %q, more than the setting", r.V)
		}
		if r.Over && overSince == 0 {
			overSince = r.T
		}
		last = r.V
	}
	if f, ok := secsOf(last); ok && f > 0.3 {
		t.Errorf("the tab gave up leading while its renew deadline bar read %q", last)
	}
	if overSince != 0 && lostAt-overSince > browserRetryPeriod.Milliseconds()/2 {
		t.Errorf("the renew deadline bar read passed for %d ms before the tab gave up", lostAt-overSince)
	}
	browserPress(t, tab, `[data-cmd=partition-fail]`)
	// The page as it settles once the network is back: no fault, leading again.
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		s, _ := browserEval(tab, `document.getElementById('active-faults').textContent + ' ' + document.getElementById('candidate').dataset.state`)
		return s == "none leader", s
	}); err != nil {
		t.Fatalf("after the partition: %v", err)
	}

	// Everything of the fault panel is on screen at 1280x720.
	for _, sel := range []string{`[data-cmd=rejoin]`, `[data-cmd=crash]`, `#offset-slider`, `#delay-slider`, `[data-testid=active-faults]`} {
		bottom, err := browserEval(tab, `String(Math.ceil(document.querySelector('`+sel+`').getBoundingClientRect().bottom))`)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := strconv.Atoi(bottom); b > 720 {
			t.Errorf("%s ends at y=%d, below the 720 px viewport", sel, b)
		}
	}

	// Crash: STOPPED, with the cross, and no struck-through text.
	if err := chromedp.Do(tab, chromedp.KeyEvent("c")); err != nil {
		t.Fatal(err)
	}
	if _, err := browserWait(3*time.Second, func() (bool, string) {
		s, _ := browserCandidateState(tab)
		return s == "stopped", "state " + s
	}); err != nil {
		t.Fatalf("after crash: %v", err)
	}
	if w, _ := browserEval(tab, `document.getElementById('role-word').textContent`); w != "STOPPED" {
		t.Errorf("role word %q, want STOPPED", w)
	}
	if icon, _ := browserEval(tab, `document.getElementById('role-icon').getAttribute('href')`); icon != "#i-stopped" {
		t.Errorf("role icon %q, want #i-stopped", icon)
	}
	struck, err := browserEval(tab, `Array.from(document.querySelectorAll('#candidate, #candidate *'))
		.filter((el) => getComputedStyle(el).textDecorationLine.includes('line-through'))
		.map((el) => el.id || el.className.baseVal || el.className).join(',')`)
	if err != nil || struck != "" {
		t.Errorf("struck-through text in the stopped tab's header: %q (%v)", struck, err)
	}
	// The controls that cannot act on a stopped tab are disabled, and say so to assistive
	// technology; Rejoin is not. Their key still tells, in the log, why nothing happened.
	controls, err := browserEval(tab, `['pause', 'release', 'crash', 'rejoin', 'partition'].map((c) => {
		const b = document.querySelector('[data-testid=faultbar] [data-cmd="' + c + '"]');
		return c + '=' + b.disabled + '/' + b.getAttribute('aria-disabled');
	}).join(' ')`)
	if want := "pause=true/true release=true/true crash=true/true rejoin=false/null partition=false/null"; err != nil || controls != want {
		t.Errorf("stopped tab's controls: %q (%v), want %q", controls, err, want)
	}
	if err := chromedp.Do(tab, chromedp.KeyEvent("p")); err != nil {
		t.Fatal(err)
	}
	if _, err := browserWait(3*time.Second, func() (bool, string) {
		l, _ := browserEval(tab, `document.querySelector('#log li .log-text').textContent`)
		s, _ := browserCandidateState(tab)
		return s == "stopped" && strings.HasPrefix(l, "pause: nothing happened, I am stopped"), "state " + s + ", log " + l
	}); err != nil {
		t.Errorf("P on a stopped tab: %v", err)
	}
	browserScreenshot(t, tab, out, "play-stopped.png")
}

// TestBrowserServerLost: when the server goes away, the dashboard and a candidate tab say so
// in a banner and grey their content; the dashboard invents no expiry meanwhile, and the
// candidate's log speaks plainly.
//
// What is asserted is what the page observed: a lease ring that runs out while the page knows
// it is disconnected tells nothing. How long the server takes to go away is not guessed: the
// lease is renewed just before the server stops, and if the page lost its connection only
// after the ring had already run out (a busy machine), the server is started again on the
// same address and database and the round repeats with a longer lease.
func TestBrowserServerLost(t *testing.T) {
	browserTest(t)
	db := filepath.Join(t.TempDir(), "leaselab.db")
	ts := mustStartServer(t, db)
	addr := strings.TrimPrefix(ts.URL, "http://")
	mustHaveWasm(t, ts.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	q := url.Values{"namespace": {"default"}, "lease": {"other"}, "identity": {"tab-l"},
		"leaseDuration": {browserSeconds(browserLeaseDuration)}, "renewDeadline": {browserSeconds(browserRenewDeadline)}, "retryPeriod": {browserSeconds(browserRetryPeriod)}}
	play, _ := openBrowserTab(t, browser, ts.URL+"/play?"+q.Encode())
	waitLive := func() {
		t.Helper()
		for _, tab := range []context.Context{dash, play} {
			if _, err := browserWait(30*time.Second, func() (bool, string) {
				s, _ := browserEval(tab, `document.getElementById('conn').textContent`)
				return s == "live", "connection " + s
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitLive()
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		s, _ := browserCandidateState(play)
		return s == "leader", "state " + s
	}); err != nil {
		t.Fatalf("candidate tab: %v", err)
	}
	// The page records, as it happens, whether it was connected when the held lease's ring ran
	// out and when it told an expiry in its feed.
	const record = `(() => {
		if (window.lostTest) return 'again';
		window.lostTest = { ranOut: [], told: [] };
		document.addEventListener('ll:expired', (e) => {
			const card = e.target.closest('[data-lease-card]');
			if (card && card.dataset.name === 'held') window.lostTest.ranOut.push(LL.connected());
		});
		new MutationObserver((ms) => {
			for (const m of ms) for (const n of m.addedNodes) {
				if (n.classList && n.classList.contains('feed-expired')) window.lostTest.told.push({ connected: LL.connected(), text: n.textContent.trim() });
			}
		}).observe(document.getElementById('feed'), { childList: true, subtree: true });
		return 'recording';
	})()`
	if _, err := browserEval(dash, record); err != nil {
		t.Fatal(err)
	}
	for attempt, d := 1, int32(3); ; attempt, d = attempt+1, d*2 {
		renewed := mustRenewLease(t, ts, "default", "held", "x", d)
		// The dashboard has the renewal before the server goes away.
		// The hold counts from when the server committed the renewal, just after renewTime.
		want := renewed.UnixMilli() + int64(d)*1000
		if _, err := browserWait(30*time.Second, func() (bool, string) {
			r, _ := browserEval(dash, `(document.querySelector('[data-lease-card][data-name=held] [data-ring]') || {dataset: {}}).dataset.expires || ''`)
			ms, _ := strconv.ParseInt(r, 10, 64)
			return ms >= want && ms < want+5000, fmt.Sprintf("ring expires at %s, want from %d", r, want)
		}); err != nil {
			t.Fatalf("the dashboard never showed the renewal: %v", err)
		}
		if _, err := browserEval(dash, `window.lostTest.ranOut = []; 'cleared'`); err != nil {
			t.Fatal(err)
		}
		if err := ts.Close(); err != nil {
			t.Logf("close: %v", err)
		}
		for name, tab := range map[string]context.Context{"dashboard": dash, "candidate tab": play} {
			if _, err := browserWait(30*time.Second, func() (bool, string) {
				b, _ := browserEval(tab, `(() => { const b = document.getElementById('offline'); return b.hidden ? '' : b.textContent.replace(/\s+/g, ' ').trim(); })()`)
				c, _ := browserEval(tab, `document.body.className`)
				return strings.Contains(b, "Connection to the server lost") && strings.Contains(c, "offline"), fmt.Sprintf("banner %q, body class %q", b, c)
			}); err != nil {
				t.Fatalf("%s after the server stopped: %v", name, err)
			}
		}
		// Wait for the ring to run out, however long the machine takes.
		var ranOut string
		if _, err := browserWait(time.Duration(d)*time.Second+30*time.Second, func() (bool, string) {
			ranOut, _ = browserEval(dash, `window.lostTest.ranOut.join(',')`)
			return ranOut != "", "the held lease's ring has not run out"
		}); err != nil {
			t.Fatal(err)
		}
		if ranOut == "false" {
			break // it ran out while the page knew it was disconnected: what this test is about
		}
		if attempt == 3 {
			t.Fatalf("the page lost its connection only after a %d s lease renewed just before the server stopped had run out, three times", d)
		}
		t.Logf("the page was still connected when the %d s lease ran out; again with a longer lease", d)
		ts = mustStartServerWith(t, db, func(c *serveConfig) { c.addr = addr })
		waitLive()
	}
	if told, _ := browserEval(dash, `window.lostTest.told.filter((x) => !x.connected).map((x) => x.text).join('|')`); told != "" {
		t.Errorf("the dashboard told an expiry while disconnected: %q", told)
	}
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		log, err := browserEval(play, `document.getElementById('log').textContent`)
		return strings.Contains(log, "the server could not be reached") && !strings.Contains(log, "Failed to fetch"), fmt.Sprintf("log %q (%v)", log, err)
	}); err != nil {
		t.Errorf("candidate log: %v", err)
	}
	browserScreenshot(t, dash, out, "dashboard-offline.png")
	browserScreenshot(t, play, out, "play-offline.png")
}

// mustRenewLease creates or updates a lease so that holder holds it for d seconds from now,
// and returns the renewTime written.
func mustRenewLease(tb testing.TB, ts *testServer, namespace, name, holder string, d int32) time.Time {
	tb.Helper()
	leases := ts.Client.CoordinationV1().Leases(namespace)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l, err = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
		l.Spec.AcquireTime = &now
	}
	if err != nil {
		tb.Fatal(err)
	}
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = ptr.To(holder), ptr.To(d), &now
	if l.ResourceVersion == "" {
		_, err = leases.Create(context.Background(), l, metav1.CreateOptions{})
	} else {
		_, err = leases.Update(context.Background(), l, metav1.UpdateOptions{})
	}
	if err != nil {
		tb.Fatal(err)
	}
	return now.Time
}

// TestBrowserPlayPhone: a candidate tab at 390x844 keeps its words whole (the role word within
// its card, the language switch on one line, timer values with their unit, fault buttons on one
// line and without keys, the decision log with its kind and count beside its time), and says what it is doing in plain words: a
// request in flight while it hangs, nothing observed yet when it has started afresh, what a
// command from the dashboard did (for a while), and one renewal, not "1 renewals".
func TestBrowserPlayPhone(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	q := url.Values{"namespace": {"default"}, "lease": {"phone"}, "identity": {"tab-p"},
		"leaseDuration": {browserSeconds(browserLeaseDuration)}, "renewDeadline": {browserSeconds(browserRenewDeadline)}, "retryPeriod": {browserSeconds(browserRetryPeriod)}}
	tab, _ := openBrowserTab(t, browser, ts.URL+"/play?"+q.Encode())
	if err := chromedp.Do(tab, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "leading", func() (bool, string) {
		s, _ := browserCandidateState(tab)
		return s == "leader", "state " + s
	})
	// The dashboard counts renewals in words that agree with the number. The leader is paused
	// while the dashboard opens and starts listening, so that the count starts at its first
	// renewal: renewals that came before, or together in one message, skip the "1".
	pause := func(want string) {
		t.Helper()
		if err := chromedp.Do(tab, chromedp.KeyEvent("p")); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, 10*time.Second, want, func() (bool, string) {
			s, _ := browserCandidateState(tab)
			return (s == "paused") == (want == "paused"), "state " + s
		})
	}
	pause("paused")
	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	if _, err := browserEval(dash, `(() => {
		const p = document.getElementById('renewal-count').parentElement;
		window.renewalWords = [];
		new MutationObserver(() => window.renewalWords.push(p.textContent.trim())).observe(p, { childList: true, subtree: true, characterData: true });
		return 'ok';
	})()`); err != nil {
		t.Fatal(err)
	}
	pause("running")
	var said string
	poll.Until(t, 10*time.Second, "the dashboard counts two renewals", func() (bool, string) {
		said, _ = browserEval(dash, `window.renewalWords.join(' | ')`)
		return strings.Contains(said, "2 renewals since"), said
	})
	if !strings.Contains(said, "1 renewal since this page opened") || strings.Contains(said, "1 renewals") {
		t.Errorf("the dashboard counted: %s", said)
	}
	poll.Until(t, 30*time.Second, "leading again", func() (bool, string) {
		s, _ := browserCandidateState(tab)
		return s == "leader", "state " + s
	})

	// Partitioned, its requests hang: the role word fits, and the next try says a request is
	// in flight.
	if err := chromedp.Do(tab, chromedp.KeyEvent("n")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "a request in flight", func() (bool, string) {
		s, _ := browserCandidateState(tab)
		n, _ := browserEval(tab, `document.getElementById('next-retry').textContent`)
		return s == "partitioned" && strings.HasPrefix(n, "a request in flight for "), "state " + s + ", next try " + n
	})
	fits, err := browserEval(tab, `(() => {
		const bad = [];
		const card = document.getElementById('candidate').getBoundingClientRect();
		const word = document.getElementById('role-word').getBoundingClientRect();
		if (word.right > card.right - 8) bad.push('role word ends at ' + word.right + ', card at ' + card.right);
		const lang = document.querySelector('[data-testid=lang-switch]');
		if (lang.getClientRects().length !== 1 || lang.getBoundingClientRect().height > 1.6 * parseFloat(getComputedStyle(lang).fontSize)) bad.push('the language switch wraps');
		for (const v of document.querySelectorAll('.bar:not([hidden]) .bar-value, #next-retry')) {
			const r = document.createRange();
			r.selectNodeContents(v);
			const tops = new Set(Array.from(r.getClientRects(), (x) => Math.round(x.top)));
			if (tops.size > 1) bad.push('"' + v.textContent + '" wraps');
		}
		// The fault buttons keep their words on one line, and show no keys on a phone.
		const one = document.querySelector('[data-testid=fault-pause]').offsetHeight; // a word: one line
		for (const b of document.querySelectorAll('[data-testid=faultbar] button.fault')) {
			if (b.offsetHeight > one + 2) bad.push('"' + b.textContent.trim() + '" wraps');
			const k = b.querySelector('kbd');
			if (k && k.getClientRects().length) bad.push('"' + b.textContent.trim() + '" shows its key');
		}
		if (document.querySelector('.panel.keys').getClientRects().length) bad.push('the keys are listed');
		for (const li of document.querySelectorAll('#log li')) {
			const [tm, kind, , count] = li.children;
			if (getComputedStyle(kind).display === 'none' || !kind.getClientRects().length) bad.push('log kind hidden');
			if (count.textContent && Math.abs(count.getBoundingClientRect().top - tm.getBoundingClientRect().top) > 4) bad.push(count.textContent + ' off its line');
		}
		return bad.join('; ');
	})()`)
	if err != nil || fits != "" {
		t.Errorf("at 390x844: %s (%v)", fits, err)
	}
	browserScreenshot(t, tab, out, "play-partitioned-phone.png")
	if _, err := browserEval(tab, `(document.getElementById('log').scrollIntoView(), 'ok')`); err != nil {
		t.Fatal(err)
	}
	browserScreenshot(t, tab, out, "play-log-phone.png")

	// Crashed and rejoined behind the partition: it has read nothing yet, and says so.
	for _, k := range []string{"c", "j"} {
		if err := chromedp.Do(tab, chromedp.KeyEvent(k)); err != nil {
			t.Fatal(err)
		}
	}
	poll.Until(t, 10*time.Second, "nothing observed yet", func() (bool, string) {
		h, _ := browserEval(tab, `document.getElementById('holder').textContent + ' · ' + document.getElementById('transitions').textContent`)
		return h == "nothing observed yet · —", h
	})

	// A command from the dashboard is told by what it does, and only for a while.
	slow := `#tabs [data-tab-row][data-identity="tab-p"] [data-cmd=slow]`
	for _, pressed := range []string{"true", "false"} {
		// Clicked by the element, not by where it was: the rows around it may move while a
		// loaded machine draws them.
		if _, err := browserEval(dash, `(document.querySelector('`+slow+`').click(), 'ok')`); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, 20*time.Second, "slow network "+pressed, func() (bool, string) {
			s, _ := browserEval(dash, `document.querySelector('`+slow+`').getAttribute('aria-pressed')`)
			return s == pressed, "pressed " + s
		})
	}
	poll.Until(t, 5*time.Second, "the tab says what the dashboard did", func() (bool, string) {
		n, _ := browserEval(tab, `document.getElementById('remote-note').textContent`)
		return strings.HasSuffix(n, "the dashboard sent: network back to normal speed"), n
	})
	poll.Until(t, 15*time.Second, "the note goes", func() (bool, string) {
		h, _ := browserEval(tab, `String(document.getElementById('remote-note').hidden)`)
		return h == "true", "hidden " + h
	})
}
