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
	browserTest(t)
	// Plain HTTP on loopback: the browser would refuse the self-signed certificate.
	w := mustStartWorkshop(t, 2, "", func(c *serveConfig) { c.access.TLS = "off" })
	mustHaveWasm(t, w.URL)
	browser := mustStartBrowser(t)

	// Without the join link, the dashboard asks for one.
	tab, done := openBrowserTab(t, browser, w.URL+"/")
	if msg, err := browserEval(tab, `(document.querySelector('[data-testid=signin-message]') || {}).textContent || ''`); err != nil || !strings.Contains(msg, "join link") {
		t.Fatalf("dashboard without a session: %q %v", msg, err)
	}
	done()

	// The join link asks first: loading it sets no session; its Join button does.
	tab, _ = openBrowserTab(t, browser, w.URL+"/join?token="+w.tokens["participant-01"])
	if who, err := browserEval(tab, `(document.querySelector('[data-testid=join-identity]') || {}).textContent || ''`); err != nil || who != "participant-01" {
		t.Fatalf("join page: identity %q %v", who, err)
	}
	other, done := openBrowserTab(t, browser, w.URL+"/")
	if msg, err := browserEval(other, `(document.querySelector('[data-testid=signin-message]') || {}).textContent || ''`); err != nil || !strings.Contains(msg, "join link") {
		t.Fatalf("dashboard after loading the join link, before its button: %q %v (want no session yet)", msg, err)
	}
	done()
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`[data-testid=join-button]`)), chromedp.WaitVisible(chromedp.CSS(`#lease-grid`))); err != nil {
		t.Fatalf("join button: %v", err)
	}
	if u, err := browserEval(tab, `location.pathname + location.search`); err != nil || u != "/?namespace=participant-01" {
		t.Fatalf("after the join link: %q %v", u, err)
	}
	if c, err := browserEval(tab, `document.cookie`); err != nil || c != "" {
		t.Errorf("the session is readable by scripts: %q %v", c, err)
	}

	own, _ := openBackgroundTab(t, browser, w.URL+"/play?namespace=participant-01&lease=demo&identity=tab-own&leaseDuration=3&renewDeadline=2&retryPeriod=1")
	foreign, _ := openBackgroundTab(t, browser, w.URL+"/play?namespace=participant-02&lease=demo&identity=tab-foreign&leaseDuration=3&renewDeadline=2&retryPeriod=1")
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

	// The instructor, in a browser of their own, opens a tab in the arena.
	teacher := mustStartBrowser(t)
	join, _ := openBrowserTab(t, teacher, w.URL+"/join?token="+w.tokens["instructor"])
	if err := chromedp.Do(ctxWith(join, 10*time.Second), chromedp.Click(chromedp.CSS(`[data-testid=join-button]`)), chromedp.WaitVisible(chromedp.CSS(`#lease-grid`))); err != nil {
		t.Fatalf("instructor's join button: %v", err)
	}
	openBackgroundTab(t, teacher, w.URL+"/play?namespace=arena&lease=shared&identity=tab-teacher")

	// The participant's dashboard, showing every namespace, offers fault buttons on the
	// participant's own tab only, and its Pause pauses that tab.
	row := func(id string) string { return `[data-tab-row][data-identity="` + id + `"]` }
	if err := chromedp.Do(ctxWith(tab, 10*time.Second), chromedp.Navigate(w.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#lease-grid`))); err != nil {
		t.Fatalf("the participant's dashboard of every namespace: %v", err)
	}
	if _, err := browserWait(20*time.Second, func() (bool, string) {
		s, _ := browserEval(tab, `[...document.querySelectorAll('[data-tab-row]')].map(r => r.dataset.identity + ':' + r.dataset.commandable + ':' + (r.querySelector('[data-cmd=pause]').offsetParent !== null)).sort().join(' ')`)
		return s == "tab-own:true:true tab-teacher:false:false", s
	}); err != nil {
		t.Fatalf("the participant's tab rows (identity:commandable:pause shown): %v", err)
	}
	// Pressed with the page's own click(): the dashboard redraws its rows live, and a click at
	// a row's place on screen can land beside it.
	browserPress(t, tab, row("tab-own")+` [data-cmd=pause]`)
	if _, err := browserWait(20*time.Second, func() (bool, string) {
		s, _ := browserEval(own, `String((document.querySelector('[data-testid=fault-pause]') || {}).getAttribute('aria-pressed'))`)
		return s == "true", s
	}); err != nil {
		t.Fatalf("the participant's own tab, paused from the dashboard: %v", err)
	}

	// The instructor's room: a line per participant with tabs, whose name shows their namespace.
	dash, _ := openBrowserTab(t, teacher, w.URL+"/")
	if _, err := browserWait(20*time.Second, func() (bool, string) {
		s, _ := browserEval(dash, `[...document.querySelectorAll('[data-testid=room-row]')].map(r => r.dataset.owner + ':' + r.dataset.tabs + ':' + r.querySelector('.room-facts').textContent).join(' | ')`)
		return strings.HasPrefix(s, "instructor:1:1 tab · ") && strings.Contains(s, " | participant-01:1:1 tab · ") && strings.Contains(s, "1 paused"), s
	}); err != nil {
		t.Fatalf("the instructor's room: %v", err)
	}
	// A second tab takes the lease the paused one still believes it leads: the room flags the
	// split brain on the participant's line, as the lease's card counts it.
	openBackgroundTab(t, browser, w.URL+"/play?namespace=participant-01&lease=demo&identity=tab-two&leaseDuration=3&renewDeadline=2&retryPeriod=1")
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		s, _ := browserEval(dash, `(r => r ? r.dataset.splitBrains + ' ' + r.className + ' ' + r.textContent : '')(document.querySelector('[data-testid=room-row][data-owner=participant-01]'))`)
		return strings.HasPrefix(s, "1 room-row stale") && strings.Contains(s, "1 split brain"), s
	}); err != nil {
		t.Fatalf("the room's line of a participant with a split brain: %v", err)
	}
	// Clicked inside the page: the room re-renders live, and a node found by one protocol
	// call may be gone by the next.
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserEval(dash, `(a => a ? (a.click(), 'clicked') : 'no name')(document.querySelector('[data-testid=room-row][data-owner=participant-01] .room-name'))`)
		return s == "clicked", s
	}); err != nil {
		t.Fatalf("a name in the room: %v", err)
	}
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserEval(dash, `location.search + ' room hidden=' + document.getElementById('room').hidden`)
		return s == "?namespace=participant-01 room hidden=true", s
	}); err != nil {
		t.Fatalf("after a name in the room: %v", err)
	}
	// Back returns to the whole room.
	if _, err := browserEval(dash, `(history.back(), 'ok')`); err != nil {
		t.Fatal(err)
	}
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserEval(dash, `location.search + ' room hidden=' + document.getElementById('room').hidden + ' filter=' + document.getElementById('ns-filter').value`)
		return s == " room hidden=false filter=", s
	}); err != nil {
		t.Fatalf("Back after a name in the room: %v", err)
	}
	// Folded, it stays folded across a reload.
	if _, err := browserEval(dash, `(document.querySelector('#room summary').click(), 'ok')`); err != nil {
		t.Fatal(err)
	}
	mustSee(t, dash, `String(document.getElementById('room').open)`, "false")
	if err := chromedp.Do(ctxWith(dash, 10*time.Second), chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	mustSee(t, dash, `String(document.getElementById('room').open)`, "false")
	if _, err := browserEval(dash, `(document.querySelector('#room summary').click(), 'ok')`); err != nil {
		t.Fatal(err)
	}
	mustSee(t, dash, `String(document.getElementById('room').open)`, "true")

	// On the instructor's phone the header is two rows: the brand, the connection, who is
	// signed in and the language, then the four sections.
	if err := chromedp.Do(dash, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	mustSee(t, dash, `(() => { const top = (sel) => Math.round(document.querySelector(sel).getBoundingClientRect().top);
		const rows = new Set([...document.querySelectorAll('header.top nav a')].map((a) => Math.round(a.getBoundingClientRect().top)));
		return rows.size + ' row of ' + document.querySelectorAll('header.top nav a').length + ' sections; connection ' + (Math.abs(top('#conn') - top('[data-testid=signed-in]')) < 8 ? 'beside the name' : 'elsewhere'); })()`,
		"1 row of 4 sections; connection beside the name")
	browserScreenshot(t, dash, browserOutputDir(t), "workshop-dashboard-390.png")
	if err := chromedp.Do(dash, chromedp.EmulateViewport(1280, 720)); err != nil {
		t.Fatal(err)
	}

	// Switching a candidate tab's language keeps its identity: it renews the lease it holds.
	lang, _ := openBrowserTab(t, browser, w.URL+"/play?namespace=participant-01&lease=lang&leaseDuration=3&renewDeadline=2&retryPeriod=1")
	if _, err := browserWait(20*time.Second, func() (bool, string) {
		s, _ := browserCandidateState(lang)
		return s == "leader", s
	}); err != nil {
		t.Fatalf("the tab before switching its language: %v", err)
	}
	id, err := browserEval(lang, `JSON.parse(document.getElementById('play-config').textContent).start.identity`)
	if err != nil || id == "" {
		t.Fatalf("identity: %q %v", id, err)
	}
	oldest := `(document.querySelector('#log li:last-child time') || {}).textContent || ''`
	first, err := browserEval(lang, oldest)
	if err != nil || first == "" {
		t.Fatalf("the decision log before the switch: %q %v", first, err)
	}
	// The link itself never names the identity: opened in another tab, it is another candidate.
	switchHref := `document.querySelector('[data-testid=lang-switch]').href`
	if href, err := browserEval(lang, switchHref); err != nil || strings.Contains(href, "identity=") {
		t.Errorf("the language link before the switch: %q %v", href, err)
	}
	if err := chromedp.Do(ctxWith(lang, 10*time.Second), chromedp.Click(chromedp.CSS(`[data-testid=lang-switch]`)), chromedp.WaitReady(chromedp.CSS(`html[lang="zh-CN"]`))); err != nil {
		t.Fatalf("language switch: %v", err)
	}
	if _, err := browserWait(20*time.Second, func() (bool, string) {
		s, _ := browserEval(lang, `JSON.parse(document.getElementById('play-config').textContent).start.identity + ' ' + document.getElementById('candidate').dataset.state + ' ' + location.search`)
		// The identity rode the URL across the switch only.
		return strings.HasPrefix(s, id+" leader ?") && strings.Contains(s, "lang=zh") && !strings.Contains(s, "identity=") && !strings.Contains(s, "rejoin"), s
	}); err != nil {
		t.Fatalf("after the language switch (identity state query): %v", err)
	}
	if href, err := browserEval(lang, switchHref); err != nil || strings.Contains(href, "identity=") || strings.Contains(href, "rejoin") {
		t.Errorf("the language link after the switch: %q %v", href, err)
	}
	if got, err := browserEval(lang, oldest); err != nil || got != first {
		t.Errorf("the decision log after the switch starts at %q (%v), want the line of %q from before it", got, err, first)
	}
	l, err = inst.CoordinationV1().Leases("participant-01").Get(ctxT(t, 10*time.Second), "lang", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != id || l.Spec.LeaseTransitions == nil || *l.Spec.LeaseTransitions != 0 {
		t.Errorf("lease participant-01/lang after the switch: %v %+v (want %s holding it, no transition)", err, l.Spec, id)
	}
}
