package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestBrowserArenaLesson: the room lesson's cast is the tabs that open its join link. Three
// real candidate tabs join the arena's lease after the instructor started the lesson; its
// page lists them and offers Next once one leads; the next step freezes the tab that leads,
// another takes over, and the narration names both and how long the takeover took, on the
// lesson's page and on a participant's /follow; the stage draws all three; the random-third button then cuts the network of one of the three.
func TestBrowserArenaLesson(t *testing.T) {
	browserTest(t)
	srv := mustStartServer(t, "")
	mustHaveWasm(t, srv.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	lesson, _ := openBrowserTab(t, browser, srv.URL+"/scenarios/arena")
	join, err := browserEval(lesson, `document.querySelector('[data-testid="room-join"]').getAttribute('href')`)
	if err != nil || !strings.HasPrefix(join, "/play?namespace=arena&lease=arena&") {
		t.Fatalf("the join link: %q %v", join, err)
	}
	// Before Start the empty stage is small: the join code the room scans is on the first
	// screen at 1280x720.
	arenaWait(t, lesson, 10*time.Second, "the join code on the first screen", `String(scrollY === 0 &&
		document.querySelector('[data-testid="room-qr"]').getBoundingClientRect().bottom <= innerHeight)`, "true")
	arenaShowRoom(t, lesson)
	browserScreenshot(t, lesson, out, "arena-idle.png")
	arenaClick(t, lesson, "start")
	arenaWait(t, lesson, 30*time.Second, "the lesson runs", `document.getElementById('scenario-live').dataset.running`, "true")
	tabs := map[string]context.Context{}
	for range 3 {
		tab, _ := openBackgroundTab(t, browser, srv.URL+join)
		id, err := browserEval(tab, `document.getElementById('candidate').dataset.identity`)
		if err != nil || id == "" {
			t.Fatalf("a joining tab's identity: %q %v", id, err)
		}
		tabs[id] = tab
	}
	arenaWait(t, lesson, time.Minute, "the room of three, one leading", `document.querySelector('[data-testid="room"]').dataset.tabs + ' ' +
		!document.querySelector('[data-testid="next"]').disabled`, "3 true")
	arenaWait(t, lesson, 10*time.Second, "the lesson's stage draws the room's three tabs",
		`String(document.querySelectorAll('#stage-page [data-testid="stage-candidate"]').length)`, "3")
	browserScreenshot(t, lesson, out, "arena-joined.png")

	arenaClick(t, lesson, "next") // step 2: the instructor freezes the leader
	took := regexp.MustCompile(`(tab-[0-9a-f]{4}) took over (\d+\.\d) s after (tab-[0-9a-f]{4}) froze\.`)
	var m []string
	poll.Until(t, time.Minute, "a takeover told by the narration", func() (bool, string) {
		s, _ := browserEval(lesson, `(document.querySelector('[data-testid="step"][data-n="2"] p') || {}).textContent || ''`)
		m = took.FindStringSubmatch(s)
		return m != nil, s
	})
	successor, frozen := m[1], m[3]
	if tabs[successor] == nil || tabs[frozen] == nil || successor == frozen {
		t.Fatalf("the narration says %q; the room is %v", m[0], roomIdentities(tabs))
	}
	if secs, _ := strconv.ParseFloat(m[2], 64); secs < 5 || secs > 25 {
		t.Errorf("the takeover came %s s after the freeze, want about a lease duration (10 s)", m[2])
	}
	if s, _ := browserCandidateState(tabs[frozen]); s != "paused" {
		t.Errorf("the frozen tab %s is %q, want paused", frozen, s)
	}
	poll.Until(t, 10*time.Second, "the successor's tab leads", func() (bool, string) {
		s, _ := browserCandidateState(tabs[successor])
		return s == "leader", s
	})
	browserScreenshot(t, lesson, out, "arena-frozen.png")
	// A participant's /follow tells the same: the step and what the room did in it.
	follow, _ := openBrowserTab(t, browser, srv.URL+"/follow")
	arenaWait(t, follow, 10*time.Second, "/follow tells the takeover", `String(String((document.querySelector('[data-testid="step"]') || {}).textContent || '').includes('`+m[0]+`'))`, "true")
	arenaShowRoom(t, lesson)
	browserScreenshot(t, lesson, out, "arena-room.png")

	arenaClick(t, lesson, "fault-third")
	poll.Until(t, 20*time.Second, "one tab of three cut off, on the panel and in the tabs", func() (bool, string) {
		cut, _ := browserEval(lesson, `document.querySelector('[data-testid="room"]').dataset.cut`)
		var hang []string
		for id, tab := range tabs {
			if p, _ := browserEval(tab, `document.getElementById('candidate').dataset.partition`); p == "hang" {
				hang = append(hang, id)
			}
		}
		return cut == "1" && len(hang) == 1, "panel " + cut + ", tabs " + strings.Join(hang, ",")
	})
	if err := chromedp.Do(ctxWith(lesson, 10*time.Second), chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	arenaShowRoom(t, lesson)
	browserScreenshot(t, lesson, out, "arena-phone.png")
}

// arenaShowRoom scrolls the room's panel into view, for a screenshot.
func arenaShowRoom(t *testing.T, tab context.Context) {
	t.Helper()
	if _, err := browserEval(tab, `(document.querySelector('[data-testid="room"]').scrollIntoView({block: 'start'}), 'shown')`); err != nil {
		t.Fatal(err)
	}
}

// arenaClick clicks the button of the page with data-testid id.
func arenaClick(t *testing.T, tab context.Context, id string) {
	t.Helper()
	browserPress(t, tab, `[data-testid="`+id+`"]`)
}

// arenaWait waits until the expression expr reads want in tab.
func arenaWait(t *testing.T, tab context.Context, within time.Duration, what, expr, want string) {
	t.Helper()
	poll.Until(t, within, what, func() (bool, string) {
		s, err := browserEval(tab, expr)
		if err != nil {
			return false, err.Error()
		}
		return s == want, s
	})
}

func roomIdentities(m map[string]context.Context) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
