package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/leaselab/leaselab/cmd/internal/chromium"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// mustFindChromium returns the path of a Chromium. A missing browser fails the test (it is
// never skipped): `make test-deps` installs Debian's.
func mustFindChromium(tb testing.TB) string {
	tb.Helper()
	p, err := chromium.Find("")
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// mustHaveWasm fails the test when the server has no wasm candidate built in.
func mustHaveWasm(tb testing.TB, base string) {
	tb.Helper()
	resp, err := http.Head(base + "/static/wasm/candidate.wasm")
	if err != nil {
		tb.Fatalf("HEAD candidate.wasm: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("candidate.wasm is not built into the server (status %d): run `make wasm` (make test does) before go test", resp.StatusCode)
	}
}

// browserSlots bounds how many tests drive Chromium at once: as many as the machine has cores.
// Chromium's pages are most of a browser test's work, and more at once was slower (measured
// on 2 cores, whole package: 304 s two at a time, 318 s three, 332 s four, where a 1.5 s renew
// deadline was missed).
var browserSlots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))

// browserHolders are the tests that hold a slot.
var browserHolders sync.Map

// holdBrowserSlot waits for a slot for the test, unless it holds one, and gives it back when
// the test ends.
func holdBrowserSlot(tb testing.TB) {
	if _, held := browserHolders.LoadOrStore(tb, true); held {
		return
	}
	browserSlots <- struct{}{}
	tb.Cleanup(func() {
		browserHolders.Delete(tb)
		<-browserSlots
	})
}

// browserTest runs t beside the package's other parallel tests, from when it holds a browser
// slot. A browser test waits for its turn before it starts anything: a server, candidates or
// a lesson started before would run on while it waited, and miss the moments it checks.
func browserTest(t *testing.T) {
	t.Parallel()
	holdBrowserSlot(t)
}

// mustHoldBrowserSlot fails a test that drives Chromium without its turn.
func mustHoldBrowserSlot(tb testing.TB) {
	tb.Helper()
	if _, held := browserHolders.Load(tb); !held {
		tb.Fatal("a browser test takes its turn before it starts anything: call browserTest(t) (or holdBrowserSlot) first")
	}
}

// The package's browser tests share one Chromium: starting one costs several seconds of CPU
// (measured 3.5 to 8 s on a 2-core machine), more than many a test. Each test gets a browser
// context of its own, with its own cookies, storage and cache as a fresh profile would have,
// disposed of with its tabs when the test ends.
var sharedChromium struct {
	once sync.Once
	ctx  context.Context // the browser's first tab, left blank
	err  error
	stop func()
}

// mustStartBrowser returns a context of a new tab in a browser context of the test's own, in
// the package's Chromium; openBrowserTab opens more tabs in it.
func mustStartBrowser(tb testing.TB) context.Context {
	tb.Helper()
	mustHoldBrowserSlot(tb)
	path := mustFindChromium(tb)
	shared := &sharedChromium
	shared.once.Do(func() {
		profile, err := os.MkdirTemp("", "leaselab-chromium-")
		if err != nil {
			shared.err = err
			return
		}
		// Past the first test, nothing of a test may log: chromedp's own errors go to stderr.
		logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "chromium: "+format+"\n", args...) }
		ctx, stop := startChromium(path, profile, logf)
		shared.ctx = ctx
		shared.stop = func() {
			stop()
			os.RemoveAll(profile)
		}
		shared.err = chromedp.Do(ctx)
	})
	if shared.err != nil {
		tb.Fatalf("start chromium %s: %v", path, shared.err)
	}
	return mustNewBrowserContext(tb, shared.ctx)
}

// mustNewBrowserContext returns a context of a new tab in a new browser context of browser,
// with its own cookies, storage and cache, disposed of when the test ends.
func mustNewBrowserContext(tb testing.TB, browser context.Context) context.Context {
	tb.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	tb.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("open a browser context in chromium: %v", err)
	}
	return ctx
}

// stopSharedBrowser stops the package's Chromium, if a test started it.
func stopSharedBrowser() {
	if sharedChromium.stop != nil {
		sharedChromium.stop()
	}
}

// mustStartBrowserWith starts a Chromium of the test's own, with more of Chromium's options,
// and returns a context of its first tab. The browser stops at cleanup.
func mustStartBrowserWith(tb testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	tb.Helper()
	mustHoldBrowserSlot(tb)
	path := mustFindChromium(tb)
	profile := tb.TempDir() // registered first, so removed after the browser has stopped
	ctx, stop := startChromium(path, profile, tb.Logf, extra...)
	tb.Cleanup(stop)
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("start chromium %s: %v", path, err)
	}
	return ctx
}

// startChromium returns the context of a headless Chromium's first tab, started by the first
// action run in it, and what stops the browser.
func startChromium(path, profile string, logf func(string, ...any), extra ...chromedp.ExecAllocatorOption) (context.Context, func()) {
	opts := append(chromium.Options(path, profile, 1280, 720),
		// V8 runs the wasm candidate as compiled by its baseline compiler (Liftoff), without
		// compiling its hot functions again with the optimizing one: the same program, and
		// less of the tests' CPU (measured on a 2-core machine, three tabs each way: a candidate
		// tab's first 3 s cost 0.96-1.04 CPU-seconds against 1.47-1.71, and its page 0.11-0.12
		// of a core after, against 0.14-0.19).
		// Not in bench join, which measures what a participant's browser does.
		chromedp.Flag("js-flags", "--liftoff-only"),
		// Less of what a browser does for its user beside the pages: Debian's build turns on
		// Chromium's field trials (features under test, off in a released Chrome), and the
		// rest are services nobody here uses. Measured on a 2-core machine, 50 tabs opened and
		// closed in two interleaved pairs of runs: 58.2 and 58.9 CPU-seconds against 66.5 and
		// 62.4. On the package's tests as a whole the gain is within their run-to-run noise.
		chromedp.Flag("disable-field-trial-config", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-component-extensions-with-background-pages", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("no-service-autorun", true),
		chromedp.Flag("disable-search-engine-choice-screen", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("disable-features", chromium.DisabledFeatures+",MediaRouter,DialMediaRouteProvider,Translate,OptimizationHints,"+
			"OptimizationGuideModelDownloading,CertificateTransparencyComponentUpdater,LensOverlay,InterestFeedContentSuggestions,"+
			"AutofillServerCommunication,PrivacySandboxSettings4,GlobalMediaControls"))
	return chromium.Start(context.Background(), append(opts, extra...), chromedp.WithErrorf(logf))
}

// openBrowserTab opens a tab in the browser of ctx at url and returns its context and a
// function that closes it.
func openBrowserTab(tb testing.TB, browser context.Context, url string) (context.Context, context.CancelFunc) {
	tb.Helper()
	return openTab(tb, browser, url)
}

// openTab opens url at 1280x720 in the tab of a new context of browser made with opts (a new
// tab, unless opts name one), closed when the test ends.
func openTab(tb testing.TB, browser context.Context, url string, opts ...chromedp.ContextOption) (context.Context, context.CancelFunc) {
	tb.Helper()
	ctx, cancel := chromedp.NewContext(browser, opts...)
	tb.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 720), chromedp.Navigate(url)); err != nil {
		tb.Fatalf("open %s: %v", url, err)
	}
	return ctx, cancel
}

// openBackgroundTab opens url in a tab behind the others of the browser context's window, as a
// candidate tab a presenter opened and left for the dashboard: hidden, so the page draws
// nothing (no animation frames, timers at most once a second), while its candidate, in a
// worker, runs as in a tab in front. It returns the tab's context and what closes it.
func openBackgroundTab(tb testing.TB, browser context.Context, url string) (context.Context, context.CancelFunc) {
	tb.Helper()
	if err := chromedp.Do(browser); err != nil {
		tb.Fatalf("open %s: %v", url, err)
	}
	behind, newWindow := true, false
	res, err := chromedp.CallBrowser(browser, target.CreateTarget, target.CreateTargetParams{
		URL: "about:blank", BrowserContextID: chromedp.FromContext(browser).BrowserContextID,
		Background: &behind, NewWindow: &newWindow,
	})
	if err != nil {
		tb.Fatalf("open a tab for %s: %v", url, err)
	}
	return openTab(tb, browser, url, chromedp.WithTargetID(res.TargetID))
}

// browserShowTab brings tab to the front of its window, as a click on it would, and waits until
// its page is visible and has drawn a frame: a background tab's page draws nothing while
// hidden, so a picture of it shows what it last drew. The tab it covers is hidden until shown
// again.
func browserShowTab(tb testing.TB, tab context.Context) {
	tb.Helper()
	c := chromedp.FromContext(tab)
	if _, err := chromedp.CallBrowser(tab, target.ActivateTarget, target.ActivateTargetParams{TargetID: c.Target.TargetID}); err != nil {
		tb.Fatalf("bring a tab to the front: %v", err)
	}
	poll.Until(tb, 10*time.Second, "the tab brought to the front draws", func() (bool, string) {
		s, err := chromedp.Run(ctxWith(tab, 2*time.Second), chromedp.Evaluate[string](`document.visibilityState === 'visible'
			? new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r('drawn'))))
			: document.visibilityState`, chromedp.EvalAwaitPromise))
		if err != nil {
			return false, err.Error()
		}
		return s == "drawn", s
	})
}

// browserEval evaluates a JavaScript expression in a tab, with a short timeout.
func browserEval(ctx context.Context, expr string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[string](expr))
}

// browserCandidateState reads a candidate tab's data-state.
func browserCandidateState(ctx context.Context) (string, error) {
	return browserEval(ctx, `(document.getElementById('candidate') || {dataset: {}}).dataset.state || ''`)
}

// browserOutputDir is where a test writes files to look at afterwards:
// $LEASELAB_TEST_OUTPUT/<test> when set, else the test's artifact directory (kept with
// go test -artifacts).
func browserOutputDir(tb testing.TB) string {
	tb.Helper()
	if base := os.Getenv("LEASELAB_TEST_OUTPUT"); base != "" {
		dir := filepath.Join(base, strings.ReplaceAll(tb.Name(), "/", "_"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatalf("output dir: %v", err)
		}
		return dir
	}
	return tb.ArtifactDir()
}

// browserScreenshot saves a PNG of a tab's viewport and logs its path.
func browserScreenshot(tb testing.TB, ctx context.Context, dir, name string) {
	tb.Helper()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(sctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		tb.Fatalf("write screenshot: %v", err)
	}
	tb.Logf("screenshot: %s", p)
}

// browserWait polls cond every 50 ms until it returns true or d passes; it returns how long
// that took, or an error with the last state cond described.
func browserWait(d time.Duration, cond func() (bool, string)) (time.Duration, error) {
	start := time.Now()
	last := ""
	for {
		ok, state := cond()
		if ok {
			return time.Since(start), nil
		}
		last = state
		if time.Since(start) > d {
			return time.Since(start), fmt.Errorf("not within %s; last: %s", d, last)
		}
		time.Sleep(50 * time.Millisecond) // the poll interval: each cond evaluates script in the page
	}
}

// browserPress presses the button sel of the tab's page with the page's own click(), once it
// is there and enabled. A click by screen position may land beside a button that the page is
// scrolling to a step just told, or redrawing with its live part.
func browserPress(t testing.TB, tab context.Context, sel string) {
	t.Helper()
	press := `(() => { const b = document.querySelector(` + strconv.Quote(sel) + `);
		if (!b) return 'missing'; if (b.disabled) return 'disabled'; b.click(); return 'pressed'; })()`
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserEval(tab, press)
		return s == "pressed", s
	}); err != nil {
		t.Fatalf("press %s: %v", sel, err)
	}
}

// browserRevealIfAsked reveals, on a lesson page, the answer of the question the step shown
// asks, if it asks one and the question is open: the tests of a lesson's story do not vote, and
// its step runs only after the reveal.
func browserRevealIfAsked(t *testing.T, tab context.Context) {
	t.Helper()
	asking := func() string {
		s, _ := browserEval(tab, `(document.getElementById('scenario-live') || {dataset: {}}).dataset.asking || ''`)
		return s
	}
	if asking() != "true" {
		return
	}
	if _, err := browserEval(tab, `(document.querySelector('[data-testid="reveal"]').click(), 'ok')`); err != nil {
		t.Fatalf("reveal: %v", err)
	}
	if _, err := browserWait(30*time.Second, func() (bool, string) { s := asking(); return s == "false", "asking " + s }); err != nil {
		t.Fatalf("the question stays open after Reveal: %v", err)
	}
}
