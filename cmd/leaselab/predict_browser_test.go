package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserPredict: predict, then watch, as a room does it. The instructor runs
// clean-release to its question; two people in the audience, each in a browser of their own
// (their own cookies: without workshop mode a browser votes by its cookie), answer on /follow,
// one changing her mind; the instructor's page and presenter mode show the tally, two votes,
// while the audience does not see it and Next waits; Reveal says the answer and why everywhere
// and only then does the step run.
func TestBrowserPredict(t *testing.T) {
	browserTest(t)
	srv := mustStartServer(t, "")
	browser := mustStartBrowser(t)
	lesson := srv.URL + "/scenarios/clean-release?seed=1&speed=4"
	instructor, _ := openBrowserTab(t, browser, lesson)
	click := func(tab context.Context, sel string) {
		t.Helper()
		browserPress(t, tab, sel)
	}
	click(instructor, `[data-testid="start"]`)
	for n := 2; n <= 3; n++ {
		browserMust(t, 2*time.Minute, "Next offered", func() (bool, string) {
			s, _ := browserEval(instructor, `document.getElementById('scenario-live').dataset.shown + ' ' + !document.querySelector('[data-testid="next"]').disabled`)
			return s == strconv.Itoa(n-1)+" true", s
		})
		click(instructor, `[data-testid="next"]`)
		browserMust(t, 10*time.Second, "step shown", func() (bool, string) {
			s, _ := browserEval(instructor, `document.getElementById('scenario-live').dataset.shown`)
			return s == strconv.Itoa(n), s
		})
	}
	browserMust(t, 20*time.Second, "the question on the instructor's page", func() (bool, string) {
		s, _ := browserEval(instructor, `(() => { const p = document.querySelector('[data-testid="prediction"]'), t = document.querySelector('[data-testid="tally"]');
			return p ? p.dataset.open + ' ' + (t ? t.dataset.votes : '-') + ' ' + !!document.querySelector('[data-testid="reveal"]') + ' ' + document.querySelector('[data-testid="next"]').disabled : 'none'; })()`)
		return s == "true 0 true true", s
	})

	// Two browsers of the audience, each with cookies of its own.
	audience := make([]context.Context, 2)
	for k := range audience {
		ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		if err := chromedp.Do(ctxWith(ctx, 20*time.Second), chromedp.EmulateViewport(390, 844), chromedp.Navigate(srv.URL+"/follow")); err != nil {
			t.Fatal(err)
		}
		audience[k] = ctx
		browserMust(t, 20*time.Second, "the question on /follow", func() (bool, string) {
			s, _ := browserEval(ctx, `String(document.querySelectorAll('#follow-live [data-testid="prediction"][data-open="true"] [data-testid="choice"]:not([disabled])').length)`)
			return s == "3", s
		})
	}
	vote := func(tab context.Context, choice string) {
		t.Helper()
		if _, err := browserEval(tab, `(document.querySelector('#follow-live [data-testid="choice"][data-choice="`+choice+`"]').click(), 'ok')`); err != nil {
			t.Fatal(err)
		}
		browserMust(t, 30*time.Second, "choice "+choice+" marked", func() (bool, string) {
			s, _ := browserEval(tab, `Array.from(document.querySelectorAll('#follow-live [data-testid="choice"]'), (b) => b.getAttribute('aria-pressed')).join(',')`)
			marks := strings.Split(s, ",")
			return len(marks) == 3 && marks[choice[0]-'0'] == "true", s
		})
	}
	vote(audience[0], "0")
	vote(audience[0], "1") // changed her mind
	vote(audience[1], "1")
	if s, _ := browserEval(audience[0], `String(!!document.querySelector('#follow-live [data-testid="tally"]'))`); s != "false" {
		t.Errorf("the audience sees the tally before the reveal")
	}
	tally := `(() => { const t = document.querySelector('[data-testid="tally"]');
		return t ? t.dataset.votes + ':' + Array.from(t.querySelectorAll('[data-testid="tally-row"]'), (r) => r.dataset.votes).join(',') + ':' + (t.getBoundingClientRect().height > 0) : 'none'; })()`
	browserMust(t, 30*time.Second, "the tally on the instructor's page", func() (bool, string) {
		s, _ := browserEval(instructor, tally)
		return s == "2:0,2,0:true", s
	})
	out := browserOutputDir(t)
	browserScreenshot(t, instructor, out, "predict-instructor-1280.png")
	presenter, _ := openBrowserTab(t, browser, lesson+"&present=1")
	browserMust(t, 30*time.Second, "the tally in presenter mode", func() (bool, string) {
		s, _ := browserEval(presenter, tally)
		return s == "2:0,2,0:true", s
	})
	browserScreenshot(t, presenter, out, "predict-presenter-1280.png")
	browserScreenshot(t, audience[0], out, "predict-follow-390.png")

	if _, err := browserEval(instructor, `(document.querySelector('[data-testid="reveal"]').click(), 'ok')`); err != nil {
		t.Fatal(err)
	}
	for k, tab := range audience {
		browserMust(t, 30*time.Second, "the answer on /follow", func() (bool, string) {
			s, _ := browserEval(tab, `(() => { const a = document.querySelector('#follow-live [data-testid="answer"]'), r = document.querySelector('#follow-live [data-testid="choice"][data-right="true"]'), t = document.querySelector('#follow-live [data-testid="tally"]');
				return (a ? 'answer' : '-') + ' ' + (r ? r.dataset.choice + r.disabled : '-') + ' ' + (t ? t.dataset.votes : '-'); })()`)
			return s == "answer 1true 2", s
		})
		if k == 0 {
			browserScreenshot(t, tab, out, "predict-answer-390.png")
		}
	}
	// On the projector the answer stays in the column under the stage, as a caption would, and
	// every candidate stays in view above it: the room watches the step run.
	browserMust(t, 30*time.Second, "the presenter's stage above the answer", func() (bool, string) {
		s, _ := browserEval(presenter, `(() => { const p = document.querySelector('[data-testid="prediction"]'); if (!p) return 'no panel';
			const top = p.getBoundingClientRect().top, cands = [...document.querySelectorAll('[data-testid="stage-candidate"]')];
			const under = cands.filter((c) => c.getBoundingClientRect().bottom > top + 1).map((c) => c.dataset.identity);
			return p.dataset.open + ' ' + cands.length + ' candidates, under the answer: ' + under.join(',') + '; ask shown ' + !!p.querySelector('.prediction-ask').getClientRects().length; })()`)
		return s == "false 3 candidates, under the answer: ; ask shown false", s
	})
	browserScreenshot(t, presenter, out, "predict-presenter-answer-1280.png")
	// The step runs after the reveal: alice releases, and another takes the lease.
	browserMust(t, time.Minute, "the step runs", func() (bool, string) {
		s, _ := browserEval(instructor, `document.querySelector('[data-testid="holder"]').textContent.trim() + ' ' + document.getElementById('scenario-live').dataset.asking`)
		return (strings.HasPrefix(s, "bob ") || strings.HasPrefix(s, "carol ")) && strings.HasSuffix(s, " false"), s
	})
}

// browserMust waits for cond, failing the test with what it last saw.
func browserMust(t *testing.T, limit time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	if _, err := browserWait(limit, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
