package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// updateScreenshots makes TestDocScreenshots write the pictures of the documents
// (docs/images/*.png) instead of checking them.
var updateScreenshots = flag.Bool("update-screenshots", false, "TestDocScreenshots writes docs/images/*.png instead of checking them")

// docImages is where the documents' pictures live, from this package's directory.
const docImages = "../../docs/images"

// TestDocScreenshots takes the pictures of the README at 1280x720: the dashboard with three
// candidate tabs running (its top, and its list of the tabs), the stage, a candidate tab, and a
// lesson in presenter mode. With -update-screenshots it writes them to docs/images; without, the pages
// must still render as the pictures show them, and each committed picture must exist with the
// size of the new one. Pixels are not compared: countdowns and times differ from run to run.
func TestDocScreenshots(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	const ns, lease = "default", "demo"

	// Three candidate tabs with the default timings (10/7/2 s), so that the countdowns read
	// as they do in a class. alice's opens first and takes the lease; bob and carol follow, as
	// the README's captions say.
	tabs := map[string]context.Context{}
	open := func(id string) {
		q := url.Values{"namespace": {ns}, "lease": {lease}, "identity": {id}, "lang": {"en"}}
		tabs[id], _ = openBackgroundTab(t, browser, ts.URL+"/play?"+q.Encode())
	}
	roles := func(want map[string]string) error {
		_, err := browserWait(30*time.Second, func() (bool, string) {
			got := map[string]string{}
			for id := range want {
				got[id], _ = browserCandidateState(tabs[id])
			}
			return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("states %v, want %v", got, want)
		})
		return err
	}
	open("alice")
	if err := roles(map[string]string{"alice": "leader"}); err != nil {
		t.Fatalf("alice does not lead: %v", err)
	}
	open("bob")
	open("carol")
	if err := roles(map[string]string{"alice": "leader", "bob": "follower", "carol": "follower"}); err != nil {
		t.Fatalf("bob and carol do not follow: %v", err)
	}
	const leader, follower = "alice", "bob"

	// The dashboard: the lease's card with its holder and ring, the feed, the three tabs.
	dash, _ := openBrowserTab(t, browser, ts.URL+"/?lang=en")
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		conn, _ := browserEval(dash, `(document.getElementById('conn') || {}).textContent || ''`)
		holder, _ := browserEval(dash, `((document.querySelector('[data-lease-card][data-name=demo] [data-testid=holder]')) || {}).textContent || ''`)
		rows, _ := browserEval(dash, `String(document.querySelectorAll('#tabs [data-tab-row]').length)`)
		return conn == "live" && holder == leader && rows == "3", fmt.Sprintf("connection %q, holder %q (want %q), tab rows %s", conn, holder, leader, rows)
	}); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	// A renewal or two, so that the ring has moved and the feed counts renewals.
	time.Sleep(3 * time.Second)
	docScreenshot(t, dash, out, "dashboard.png", "")
	// Below the cards, the candidate tabs' rows with their roles and fault buttons.
	docScreenshot(t, dash, out, "dashboard-tabs.png", `document.getElementById('candidate-tabs').scrollIntoView(), ''`)

	// The stage: the server and its record in the middle, the three candidates around it with
	// their rings, a request or two on their way.
	stage, _ := openBrowserTab(t, browser, ts.URL+"/stage?namespace="+ns+"&lease="+lease+"&lang=en")
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		s, _ := browserEval(stage, `[...document.querySelectorAll('[data-testid=stage-candidate]')].map((c) => c.dataset.identity + '=' + c.dataset.role).sort().join(' ')`)
		return s == "alice=leader bob=follower carol=follower", s
	}); err != nil {
		t.Fatalf("the stage: %v", err)
	}
	docScreenshot(t, stage, out, "stage.png", "")

	// A candidate tab: a follower, which shows the lease's expiry as it observed it and its
	// next try, beside the leader's record. It was behind the others: it comes to the front.
	browserShowTab(t, tabs[follower])
	docScreenshot(t, tabs[follower], out, "candidate-tab.png", "")

	// A lesson in presenter mode: leader-crash at 1x, started with the space bar as a
	// presenter's clicker does, shown once alice leads and the three countdowns run.
	lesson, _ := openBrowserTab(t, browser, ts.URL+"/scenarios/leader-crash?present=1&seed=1&lang=en")
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		s, _ := browserEval(lesson, `document.readyState + ' ' + document.body.classList.contains('present') + ' ' + !!document.querySelector('[data-testid="start"]')`)
		return s == "complete true true", s
	}); err != nil {
		t.Fatalf("the lesson's page does not load in presenter mode: %v", err)
	}
	if err := chromedp.Do(ctxWith(lesson, 10*time.Second), chromedp.KeyEvent(" ")); err != nil {
		t.Fatalf("start the lesson: %v", err)
	}
	if _, err := browserWait(time.Minute, func() (bool, string) {
		s, _ := browserEval(lesson, `[...document.querySelectorAll('[data-testid="member"]')].map((m) => m.dataset.identity + '=' + m.dataset.state).join(' ')`)
		h, _ := browserEval(lesson, `((document.querySelector('[data-testid="holder"]') || {}).textContent || '').trim()`)
		return h == "alice" && strings.Count(s, "=") == 3 && strings.Contains(s, "alice=leader"), fmt.Sprintf("holder %q, members %s", h, s)
	}); err != nil {
		t.Fatalf("the lesson does not start: %v", err)
	}
	time.Sleep(2 * time.Second) // a renewal, and the followers' countdowns under way
	docScreenshot(t, lesson, out, "lesson-presenter.png", "")
}

// docScreenshot takes a picture of a tab's viewport into dir and, with -update-screenshots,
// into docs/images; without the flag it checks that docs/images holds a picture of that name
// and size. scroll is a script that scrolls the page first; empty scrolls to the top.
func docScreenshot(t *testing.T, ctx context.Context, dir, name, scroll string) {
	t.Helper()
	if scroll == "" {
		scroll = `window.scrollTo(0, 0), ''`
	}
	if _, err := browserEval(ctx, scroll); err != nil {
		t.Fatalf("%s: scroll: %v", name, err)
	}
	browserScreenshot(t, ctx, dir, name)
	shot, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if cfg.Width != 1280 || cfg.Height != 720 {
		t.Errorf("%s is %dx%d, want 1280x720", name, cfg.Width, cfg.Height)
	}
	committed := filepath.Join(docImages, name)
	if *updateScreenshots {
		if err := os.WriteFile(committed, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", committed, len(shot))
		return
	}
	old, err := os.ReadFile(committed)
	if err != nil {
		t.Fatalf("%v: run go test ./cmd/leaselab -run TestDocScreenshots -update-screenshots and commit docs/images", err)
	}
	oldCfg, err := png.DecodeConfig(bytes.NewReader(old))
	if err != nil {
		t.Fatalf("%s: %v", committed, err)
	}
	if oldCfg.Width != cfg.Width || oldCfg.Height != cfg.Height {
		t.Errorf("%s is %dx%d, the page now %dx%d: run go test ./cmd/leaselab -run TestDocScreenshots -update-screenshots and commit docs/images",
			committed, oldCfg.Width, oldCfg.Height, cfg.Width, cfg.Height)
	}
}
