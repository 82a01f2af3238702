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
	"github.com/chromedp/chromedp/kb"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestBrowserScrub: alice holds a lease, then bob takes it over. On the lease page, Pause and
// ← show the earlier moments (bob's takeover, then alice's acquisition: the holder is alice,
// and the URL carries that moment), → shows bob again, and L goes back to live; played from
// alice's moment, the page reaches now and is live again. On the
// dashboard, ← ← scrubs to alice's moment, and its card names her; the keys work the same with
// the focus on the bar's slider, and space scrolls nothing; L loads the live dashboard again.
// The keys do nothing while the reader types in a field.
func TestBrowserScrub(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	out := browserOutputDir(t)
	aliceAt := mustRenewLease(t, ts, "default", "scrub", "alice", 60)
	aliceDone := time.Now() // the server committed alice's write in between
	poll.Until(t, time.Second, "the clock moves on from alice's write", func() (bool, string) {
		return time.Since(aliceDone) > 50*time.Millisecond, "" // so that the two writes are apart in time
	})
	mustRenewLease(t, ts, "default", "scrub", "bob", 60)
	browser := mustStartBrowser(t)

	page, _ := openBrowserTab(t, browser, ts.URL+"/leases/default/scrub")
	holder := `document.querySelector('#lease-live [data-testid=holder]').textContent`
	mustSee(t, page, holder, "bob")
	mustSee(t, page, `document.getElementById('conn').textContent`, "live")
	// Beside the events panel, at 1280, the terms table fits its column: no column out of sight,
	// with room for a page scrollbar (the test's browser draws none: 1260 wide).
	if err := chromedp.Do(page, chromedp.EmulateViewport(1260, 720)); err != nil {
		t.Fatal(err)
	}
	if s, err := browserEval(page, `(() => { const w = document.querySelector('[data-testid=terms]').parentElement; return w.scrollWidth <= w.clientWidth ? 'fits' : w.scrollWidth + ' > ' + w.clientWidth })()`); s != "fits" {
		t.Errorf("the terms table overflows its column (scroll width > client width: %s %v)", s, err)
	}
	if err := chromedp.Do(page, chromedp.EmulateViewport(1280, 720)); err != nil {
		t.Fatal(err)
	}
	browserPress(t, page, `[data-testid=scrub-live]`)
	mustSee(t, page, `document.getElementById('conn').textContent`, "past moment")
	mustPress(t, page, kb.ArrowLeft) // bob's takeover
	mustSee(t, page, holder, "bob")
	mustPress(t, page, kb.ArrowLeft) // alice's acquisition
	mustSee(t, page, holder, "alice")
	at := mustMomentInURL(t, page)
	if at.Before(aliceAt) || at.After(aliceDone.Add(time.Millisecond)) {
		t.Errorf("the URL shows %s, not the moment of alice's write (between %s and %s)", at.Format(time.RFC3339Nano),
			aliceAt.Format(time.RFC3339Nano), aliceDone.Format(time.RFC3339Nano))
	}
	mustSee(t, page, `document.querySelector('#lease-live').dataset.at`, at.UTC().Format("2006-01-02T15:04:05.000Z"))
	// The time bar's age of the moment is kept current as the banner's is.
	mustSee(t, page, `document.querySelector('[data-testid=scrub-shown] [data-ago]').dataset.ago`, at.UTC().Format("2006-01-02T15:04:05.000Z"))
	browserScreenshot(t, page, out, "lease-scrubbed.png")
	browserPhoneScreenshot(t, page, out, "lease-scrubbed-phone.png")
	mustPress(t, page, kb.ArrowRight)
	mustSee(t, page, holder, "bob")
	mustPress(t, page, "l")
	mustSee(t, page, `location.search + '|' + document.getElementById('conn').textContent + '|' + (document.querySelector('#lease-live').dataset.at || '')`, "|live|")
	mustSee(t, page, holder, "bob")
	// On a phone the timeline opens scrolled to now, and says that earlier times lie to the
	// left (app.css shades the lane names' edge); where it fits, nothing is scrolled.
	scrolled := `String(document.querySelector('.timeline-wrap').classList.contains('scrolled'))`
	mustSee(t, page, scrolled, "false")
	if err := chromedp.Do(page, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(page, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	mustSee(t, page, scrolled, "true")
	// No time label shows cut by the names: one that reaches under them is hidden.
	mustSee(t, page, `(() => { const w = document.querySelector('.timeline-wrap'); const edge = w.querySelector('.timeline-names').getBoundingClientRect().right;
		return String([...w.querySelectorAll('.timeline .tick')].filter((t) => getComputedStyle(t).visibility !== 'hidden' && t.getBoundingClientRect().left < edge).length) })()`, "0")
	if err := chromedp.Do(page, chromedp.EmulateViewport(1280, 720)); err != nil {
		t.Fatal(err)
	}
	mustSee(t, page, holder, "bob")
	// Play from alice's moment at 8×: bob takes over, and once it reaches now the page is live.
	mustPress(t, page, kb.ArrowLeft)
	mustPress(t, page, kb.ArrowLeft)
	mustSee(t, page, holder, "alice")
	if err := chromedp.Do(page, chromedp.SetValue(chromedp.CSS(`[data-testid=scrub-speed]`), "8")); err != nil {
		t.Fatal(err)
	}
	browserPress(t, page, `[data-testid=scrub-play]`)
	mustSee(t, page, `location.search + '|' + document.getElementById('conn').textContent`, "|live")
	mustSee(t, page, holder, "bob")

	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	card := `document.querySelector('#lease-grid [data-lease-card][data-name=scrub] [data-testid=holder]').textContent`
	mustSee(t, dash, card, "bob")
	// Typing in a field is not a key for the time control.
	if err := chromedp.Do(dash, chromedp.Focus(chromedp.CSS(`[data-testid=open-tab-form] input[name=lease]`)), chromedp.KeyEvent("l")); err != nil {
		t.Fatal(err)
	}
	if s, _ := browserEval(dash, `location.search + '|' + document.body.dataset.at`); s != "|" {
		t.Fatalf("typing l in a field paused the dashboard: %q", s)
	}
	if err := chromedp.Do(dash, chromedp.Blur(chromedp.CSS(`[data-testid=open-tab-form] input[name=lease]`))); err != nil {
		t.Fatal(err)
	}
	mustPress(t, dash, kb.ArrowLeft)
	mustPress(t, dash, kb.ArrowLeft)
	mustSee(t, dash, card, "alice")
	mustMomentInURL(t, dash)
	if s, _ := browserEval(dash, `String(document.querySelectorAll('#lease-grid .card-actions').length) + ' ' + getComputedStyle(document.querySelector('#lease-grid .card-actions')).display`); s != "1 none" {
		t.Errorf("the scrubbed dashboard's card actions: %q, want hidden", s)
	}
	browserScreenshot(t, dash, out, "dashboard-scrubbed.png")
	browserPhoneScreenshot(t, dash, out, "dashboard-scrubbed-phone.png")
	// Once the bar's slider has the focus (a click leaves it there), it takes the bar's keys:
	// → goes on to bob's takeover, not 0.1 s on; space plays and stops without scrolling the
	// page away from the bar; L (below) goes live.
	if _, err := browserEval(dash, `document.body.style.minHeight = '3000px'`); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(dash, chromedp.Focus(chromedp.CSS(`[data-testid=scrub-slider]`))); err != nil {
		t.Fatal(err)
	}
	mustPress(t, dash, kb.ArrowRight)
	mustSee(t, dash, card, "bob")
	mustPress(t, dash, kb.ArrowLeft)
	mustSee(t, dash, card, "alice")
	playing := `document.querySelector('[data-testid=scrub-play]').getAttribute('aria-pressed') + ' ' + scrollY`
	mustPress(t, dash, " ")
	mustSee(t, dash, playing, "true 0")
	mustPress(t, dash, " ")
	mustSee(t, dash, playing, "false 0")
	mustPress(t, dash, "L")
	mustSee(t, dash, `location.search + '|' + document.getElementById('conn').textContent`, "|live")
	mustSee(t, dash, card, "bob")
}

// mustSee waits until expr evaluates to want in the tab.
func mustSee(t *testing.T, tab context.Context, expr, want string) {
	t.Helper()
	poll.Until(t, 10*time.Second, fmt.Sprintf("%s is %q", expr, want), func() (bool, string) {
		got, err := browserEval(tab, expr)
		return err == nil && got == want, fmt.Sprintf("%q (%v)", got, err)
	})
}

// mustPress presses a key in the tab.
func mustPress(t *testing.T, tab context.Context, key string) {
	t.Helper()
	if err := chromedp.Do(tab, chromedp.KeyEvent(key)); err != nil {
		t.Fatalf("press %q: %v", key, err)
	}
}

// mustMomentInURL returns the moment the tab's URL carries (?at=).
func mustMomentInURL(t *testing.T, tab context.Context) time.Time {
	t.Helper()
	var at time.Time
	poll.Until(t, 10*time.Second, "the URL carries ?at=", func() (bool, string) {
		href, _ := browserEval(tab, `location.href`)
		u, err := url.Parse(href)
		if err != nil {
			return false, href
		}
		at, err = time.Parse(time.RFC3339Nano, u.Query().Get("at"))
		return err == nil && strings.Contains(href, "at="), href
	})
	return at
}

// browserPhoneScreenshot saves a PNG of the tab as a phone shows it (390x844), then gives the
// tab its 1280x720 back.
func browserPhoneScreenshot(tb testing.TB, tab context.Context, dir, name string) {
	tb.Helper()
	if err := chromedp.Do(tab, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		tb.Fatal(err)
	}
	browserScreenshot(tb, tab, dir, name)
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 720)); err != nil {
		tb.Fatal(err)
	}
}

// TestBrowserScrubFollowsLive: while live, the time bar follows now: on a dashboard opened on
// an empty server the window's end moves on with the thumb at it, and a lease acquired after
// the page loaded gets its tick; on the lease page, a takeover after the page loaded gets
// its tick too.
func TestBrowserScrubFollowsLive(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)

	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	mustSee(t, dash, `String(!document.getElementById('timebar').hidden)`, "true")
	slider := `document.querySelector('[data-testid=scrub-slider]')`
	ticks := `String(document.querySelectorAll('#timebar [data-scrub=ticks] .tick').length)`
	max0, err := browserEval(dash, slider+`.max`)
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the window's end moves on while live", func() (bool, string) {
		s, err := browserEval(dash, `[`+slider+`.max, `+slider+`.value, `+slider+`.min].join(' ')`)
		var max, value, min int64
		if _, e := fmt.Sscan(s, &max, &value, &min); err != nil || e != nil {
			return false, fmt.Sprintf("%q (%v %v)", s, err, e)
		}
		m0, _ := strconv.ParseInt(max0, 10, 64)
		return max > m0 && max > min && max == value, s // the thumb at the very end, where now is
	})
	mustSee(t, dash, ticks, "0")
	mustRenewLease(t, ts, "default", "follow", "alice", 60)
	mustSee(t, dash, ticks, "1")
	mustSee(t, dash, `document.querySelector('#timebar .tick').className`, "tick tick-acquired")
	browserScreenshot(t, dash, out, "dashboard-live-ticks.png")
	browserPhoneScreenshot(t, dash, out, "dashboard-live-ticks-phone.png")

	page, _ := openBrowserTab(t, browser, ts.URL+"/leases/default/follow")
	mustSee(t, page, `String(!document.getElementById('timebar').hidden)`, "true")
	mustSee(t, page, ticks, "1")
	mustRenewLease(t, ts, "default", "follow", "bob", 60)
	mustSee(t, page, `document.querySelector('#lease-live [data-testid=holder]').textContent`, "bob")
	mustSee(t, page, `Array.from(document.querySelectorAll('#timebar .tick'), (e) => e.className).join(',')`, "tick tick-acquired,tick tick-takeover")
	mustSee(t, dash, ticks, "2")
	browserScreenshot(t, page, out, "lease-live-ticks.png")

	// On a phone the timeline is wider than the screen: it keeps its right edge, now, in view.
	if err := chromedp.Do(page, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	mustRenewLease(t, ts, "default", "follow", "carol", 60)
	mustSee(t, page, `(() => { const w = document.querySelector('.timeline-wrap');
		return String(w.scrollWidth > w.clientWidth && w.scrollLeft + w.clientWidth >= w.scrollWidth - 2); })()`, "true")
	// The page itself does not: its buttons wrap, Delete among them.
	mustSee(t, page, `String(!!document.querySelector('[data-testid=delete-lease]') && document.documentElement.scrollWidth <= innerWidth + 1)`, "true")
}
