package main

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestBrowserHoldWithoutRenewTime: a lease written with a holder and no renewTime drains on
// the dashboard from the moment it was written, and the dashboard tells its expiry, as the
// server-side feed and timeline do.
func TestBrowserHoldWithoutRenewTime(t *testing.T) {
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

// TestBrowserPlayScreen: in a candidate tab at 1280x720, the leader's renew deadline drains
// between renewals and never shows more than the setting, every fault control fits without
// scrolling, and a stopped tab is told by word, icon and color without striking its text.
func TestBrowserPlayScreen(t *testing.T) {
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

	// Sample the renew deadline bar over a few renewals.
	lo, hi := 1e9, 0.0
	for range 30 {
		v, err := browserEval(tab, `document.querySelector('#bar-deadline [data-field=value]').textContent`)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := strings.CutSuffix(v, " s")
		f, err := strconv.ParseFloat(s, 64)
		if !ok || err != nil {
			t.Fatalf("renew deadline bar reads %q", v)
		}
		lo, hi = min(lo, f), max(hi, f)
		time.Sleep(70 * time.Millisecond)
	}
	rd := browserRenewDeadline.Seconds()
	t.Logf("renew deadline bar between %.1f s and %.1f s (setting %.1f s)", lo, hi, rd)
	if hi > rd {
		t.Errorf("renew deadline bar read %.1f s, more than the setting %.1f s", hi, rd)
	}
	if lo > rd-0.2 {
		t.Errorf("renew deadline bar never below %.1f s: it does not drain between renewals", lo)
	}

	// Everything of the fault panel is on screen at 1280x720.
	for _, sel := range []string{`[data-cmd=rejoin]`, `[data-cmd=crash]`, `#offset-slider`, `[data-testid=active-faults]`} {
		bottom, err := browserEval(tab, `String(Math.ceil(document.querySelector('`+sel+`').getBoundingClientRect().bottom))`)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := strconv.Atoi(bottom); b > 720 {
			t.Errorf("%s ends at y=%d, below the 720 px viewport", sel, b)
		}
	}
	browserScreenshot(t, tab, out, "play-leader.png")

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
	browserScreenshot(t, tab, out, "play-stopped.png")
}

// TestBrowserServerLost: when the server goes away, the dashboard and a candidate tab say so
// in a banner and grey their content; the dashboard invents no expiry meanwhile, and the
// candidate's log speaks plainly.
func TestBrowserServerLost(t *testing.T) {
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	now := metav1.NewMicroTime(time.Now())
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "held"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("x"), LeaseDurationSeconds: ptr.To[int32](2), RenewTime: &now, AcquireTime: &now},
	}
	if _, err := ts.Client.CoordinationV1().Leases("default").Create(context.Background(), l, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	q := url.Values{"namespace": {"default"}, "lease": {"other"}, "identity": {"tab-l"},
		"leaseDuration": {browserSeconds(browserLeaseDuration)}, "renewDeadline": {browserSeconds(browserRenewDeadline)}, "retryPeriod": {browserSeconds(browserRetryPeriod)}}
	play, _ := openBrowserTab(t, browser, ts.URL+"/play?"+q.Encode())
	for _, tab := range []context.Context{dash, play} {
		if _, err := browserWait(10*time.Second, func() (bool, string) {
			s, _ := browserEval(tab, `document.getElementById('conn').textContent`)
			return s == "live", "connection " + s
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserCandidateState(play)
		return s == "leader", "state " + s
	}); err != nil {
		t.Fatalf("candidate tab: %v", err)
	}
	if err := ts.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	for name, tab := range map[string]context.Context{"dashboard": dash, "candidate tab": play} {
		if _, err := browserWait(5*time.Second, func() (bool, string) {
			b, _ := browserEval(tab, `(() => { const b = document.getElementById('offline'); return b.hidden ? '' : b.textContent.replace(/\s+/g, ' ').trim(); })()`)
			c, _ := browserEval(tab, `document.body.className`)
			return strings.Contains(b, "Connection to the server lost") && strings.Contains(c, "offline"), fmt.Sprintf("banner %q, body class %q", b, c)
		}); err != nil {
			t.Errorf("%s after the server stopped: %v", name, err)
		}
	}
	// The lease's 2 s run out while the server is away: the dashboard cannot know whether it
	// was renewed, and tells nothing.
	time.Sleep(2500 * time.Millisecond)
	if f, _ := browserEval(dash, `Array.from(document.querySelectorAll('#feed .feed-expired'), (li) => li.textContent).join('|')`); f != "" {
		t.Errorf("the dashboard told an expiry while disconnected: %q", f)
	}
	if _, err := browserWait(5*time.Second, func() (bool, string) {
		log, err := browserEval(play, `document.getElementById('log').textContent`)
		return strings.Contains(log, "the server could not be reached") && !strings.Contains(log, "Failed to fetch"), fmt.Sprintf("log %q (%v)", log, err)
	}); err != nil {
		t.Errorf("candidate log: %v", err)
	}
	browserScreenshot(t, dash, out, "dashboard-offline.png")
	browserScreenshot(t, play, out, "play-offline.png")
}
