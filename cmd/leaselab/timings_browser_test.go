package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserTimingsSliders: on /timings, moving a slider changes the verdict without a reload
// (the page's own marker survives), the address keeps the values, and a choice client-go
// refuses (renewDeadline at leaseDuration) is refused with client-go's reason; back within the
// rules the incidents are drawn again.
func TestBrowserTimingsSliders(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	page, _ := openBrowserTab(t, browser, ts.URL+"/timings")
	if _, err := browserEval(page, `window.notReloaded = true; 'ok'`); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		s, _ := browserEval(page, `[
			String(window.notReloaded === true),
			document.querySelector('[data-testid=value-renewDeadline]').textContent,
			(document.querySelector('[data-testid=timings-refused]') || {textContent: ''}).textContent.trim(),
			String(document.querySelectorAll('[data-testid=timings-incident]').length),
			(document.querySelector('[data-testid=timing-margin] .timing-value') || {textContent: ''}).textContent,
			location.search,
		].join('|')`)
		return s
	}
	set := func(name, value string) {
		t.Helper()
		if _, err := browserEval(page, `(() => {
			const i = document.querySelector('input[type=range][name=`+name+`]');
			i.value = '`+value+`';
			i.dispatchEvent(new Event('input', {bubbles: true}));
			return 'ok';
		})()`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s := state()
		f := strings.Split(s, "|")
		return len(f) == 6 && f[3] == "3" && f[2] == "", s
	}); err != nil {
		t.Fatalf("the first paint: %v", err)
	}
	before := strings.Split(state(), "|")[4]

	set("renewDeadline", "9")
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s := state()
		f := strings.Split(s, "|")
		return f[0] == "true" && strings.HasPrefix(f[1], "9") && f[4] != before && strings.Contains(f[5], "renewDeadline=9"), s
	}); err != nil {
		t.Fatalf("renewDeadline 9 s: %v (the margin read %q before)", err, before)
	}

	set("renewDeadline", "10") // equal to leaseDuration: NewLeaderElector refuses it
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s := state()
		f := strings.Split(s, "|")
		return f[0] == "true" && strings.Contains(f[2], "leaseDuration must be greater than renewDeadline") && f[3] == "0", s
	}); err != nil {
		t.Fatalf("a choice client-go refuses: %v", err)
	}
	for _, size := range []struct {
		w, h int64
		name string
	}{{1280, 720, "timings-1280.png"}, {390, 844, "timings-390.png"}} {
		if err := chromedp.Do(page, chromedp.EmulateViewport(size.w, size.h)); err != nil {
			t.Fatal(err)
		}
		browserScreenshot(t, page, out, size.name)
	}

	set("renewDeadline", "7")
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s := state()
		f := strings.Split(s, "|")
		return f[0] == "true" && f[2] == "" && f[3] == "3", s
	}); err != nil {
		t.Fatalf("back within the rules: %v", err)
	}
	browserScreenshot(t, page, out, "timings-390-ok.png")
	if err := chromedp.Do(page, chromedp.EmulateViewport(1280, 720)); err != nil {
		t.Fatal(err)
	}
	browserScreenshot(t, page, out, "timings-1280-ok.png")
}
