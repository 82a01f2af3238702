package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestBrowserClearFinishedLessons: on the dashboard the instructor clears the finished
// lessons with one click: the candidates and lease of a lesson played to its end leave the
// dashboard, those of a lesson still playing stay, and the page says how many it cleared.
func TestBrowserClearFinishedLessons(t *testing.T) {
	browserTest(t)
	srv := mustStartServer(t, "")
	mustStartLesson(t, srv.URL, "clean-release", "1")
	mustStartLesson(t, srv.URL, "leader-crash", "2")
	mustFinishLesson(t, srv.URL, "clean-release", "1")
	browser := mustStartBrowser(t)
	tab, _ := openBrowserTab(t, browser, srv.URL+"/")
	// rows: the finished lesson's tab rows and lease cards, then the playing one's, and what
	// the page says it cleared.
	rows := func() string {
		s, _ := browserEval(tab, `(() => { const n = (sel) => document.querySelectorAll(sel).length;
			const of = (ns) => n('[data-testid="tab-row"][data-namespace="' + ns + '"]') + '/' + n('[data-testid="lease-card"][data-namespace="' + ns + '"]');
			const c = document.querySelector('[data-testid="cleared"]');
			return of('scenario-clean-release-1') + ' ' + of('scenario-leader-crash-2') + ' ' + (c ? c.dataset.cleared + ':' + c.textContent : '-') + ' ' + location.search; })()`)
		return s
	}
	// shown: a lesson has tab rows and its lease's card ("3/1").
	shown := func(rowsCards string) bool {
		tabs, cards, _ := strings.Cut(rowsCards, "/")
		return tabs != "0" && cards == "1"
	}
	poll.Until(t, 30*time.Second, "both lessons on the dashboard", func() (bool, string) {
		f := strings.Fields(rows())
		return len(f) >= 3 && shown(f[0]) && shown(f[1]) && f[2] == "-", rows()
	})
	out := browserOutputDir(t)
	browserScreenshot(t, tab, out, "clear-before-1280.png")
	browserPress(t, tab, `[data-testid="clear-finished"]`)
	poll.Until(t, 30*time.Second, "the finished lesson gone, the playing one kept, the count said", func() (bool, string) {
		s := rows()
		f := strings.Fields(s)
		return len(f) >= 2 && f[0] == "0/0" && shown(f[1]) &&
			strings.Contains(s, " 1:Finished lessons cleared: 1. ") && !strings.Contains(s, "cleared="), s
	})
	browserScreenshot(t, tab, out, "clear-after-1280.png")
	if err := chromedp.Do(ctxWith(tab, 10*time.Second), chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	browserScreenshot(t, tab, out, "clear-after-390.png")
	mustFitTheWidth(t, tab, "the dashboard")
}

// mustFitTheWidth fails unless the page in tab needs no sideways scrolling.
func mustFitTheWidth(t *testing.T, tab context.Context, page string) {
	t.Helper()
	if s, err := browserEval(tab, `document.documentElement.scrollWidth <= window.innerWidth + 1 ? 'fits' : document.documentElement.scrollWidth + ' > ' + window.innerWidth`); s != "fits" {
		t.Errorf("%s is wider than the screen (scroll width > screen width: %s %v)", page, s, err)
	}
}
