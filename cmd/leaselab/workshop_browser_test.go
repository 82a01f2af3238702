package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWorkshopBrowser: in a real Chromium, a participant's join link asks for a click, which
// opens a session the page's scripts cannot read (HttpOnly); the candidate tab, authenticated by that session alone, leads
// a lease in the participant's namespace, and cannot write in another participant's.
func TestWorkshopBrowser(t *testing.T) {
	// Plain HTTP on loopback: the browser would refuse the self-signed certificate.
	w := mustStartWorkshop(t, 2, "", func(c *serveConfig) { c.access.tls = "off" })
	mustHaveWasm(t, w.URL)
	browser := mustStartBrowser(t)

	// Without the join link, the dashboard asks for one.
	tab, _ := openBrowserTab(t, browser, w.URL+"/")
	if msg, err := browserEval(tab, `(document.querySelector('[data-testid=signin-message]') || {}).textContent || ''`); err != nil || !strings.Contains(msg, "join link") {
		t.Fatalf("dashboard without a session: %q %v", msg, err)
	}

	// The join link asks first: loading it sets no session; its Join button does.
	tab, _ = openBrowserTab(t, browser, w.URL+"/join?token="+w.tokens["participant-01"])
	if who, err := browserEval(tab, `(document.querySelector('[data-testid=join-identity]') || {}).textContent || ''`); err != nil || who != "participant-01" {
		t.Fatalf("join page: identity %q %v", who, err)
	}
	other, _ := openBrowserTab(t, browser, w.URL+"/")
	if msg, err := browserEval(other, `(document.querySelector('[data-testid=signin-message]') || {}).textContent || ''`); err != nil || !strings.Contains(msg, "join link") {
		t.Fatalf("dashboard after loading the join link, before its button: %q %v (want no session yet)", msg, err)
	}
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`[data-testid=join-button]`)), chromedp.WaitVisible(chromedp.CSS(`#lease-grid`))); err != nil {
		t.Fatalf("join button: %v", err)
	}
	if u, err := browserEval(tab, `location.pathname + location.search`); err != nil || u != "/?namespace=participant-01" {
		t.Fatalf("after the join link: %q %v", u, err)
	}
	if c, err := browserEval(tab, `document.cookie`); err != nil || c != "" {
		t.Errorf("the session is readable by scripts: %q %v", c, err)
	}

	own, _ := openBrowserTab(t, browser, w.URL+"/play?namespace=participant-01&lease=demo&identity=tab-own&leaseDuration=3&renewDeadline=2&retryPeriod=1")
	foreign, _ := openBrowserTab(t, browser, w.URL+"/play?namespace=participant-02&lease=demo&identity=tab-foreign&leaseDuration=3&renewDeadline=2&retryPeriod=1")
	if d, err := browserWait(20*time.Second, func() (bool, string) {
		s, _ := browserCandidateState(own)
		return s == "leader", s
	}); err != nil {
		t.Fatalf("the candidate in its own namespace: %v", err)
	} else {
		t.Logf("leader in own namespace after %v", d)
	}
	ctx := ctxT(t, 10*time.Second)
	inst := w.client(t, "instructor")
	l, err := inst.CoordinationV1().Leases("participant-01").Get(ctx, "demo", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "tab-own" {
		t.Fatalf("lease participant-01/demo: %v %+v", err, l)
	}
	if s, _ := browserCandidateState(foreign); s == "leader" {
		t.Errorf("the candidate in another participant's namespace leads")
	}
	if _, err := inst.CoordinationV1().Leases("participant-02").Get(ctx, "demo", metav1.GetOptions{}); err == nil {
		t.Errorf("a participant's browser wrote in another participant's namespace")
	}
}
