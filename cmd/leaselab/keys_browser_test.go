package main

import (
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserQuickKeys: fault keys pressed faster than the candidate answers build on each
// other: ] three times at once sets the clock 3 s ahead, not 1 or 2; [ three times brings it
// back in sync. A clock rate's drift is said as an offset, and 0 resets the clock.
func TestBrowserQuickKeys(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	browser := mustStartBrowser(t)
	q := url.Values{"namespace": {"default"}, "lease": {"keys"}, "identity": {"quick"}, "lang": {"en"}}
	tab, _ := openBrowserTab(t, browser, ts.URL+"/play?"+q.Encode())
	offset := func() string {
		s, _ := browserEval(tab, `(document.getElementById('offset-slider') || {}).value || ''`)
		return s
	}
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		s, _ := browserCandidateState(tab)
		return s == "leader", "state " + s
	}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ key, want string }{{"]", "3"}, {"[", "0"}} {
		if err := chromedp.Do(ctxWith(tab, 10*time.Second), chromedp.KeyEvent(step.key), chromedp.KeyEvent(step.key), chromedp.KeyEvent(step.key)); err != nil {
			t.Fatal(err)
		}
		if _, err := browserWait(10*time.Second, func() (bool, string) { return offset() == step.want, "offset " + offset() }); err != nil {
			t.Fatalf("%s three times: %v", step.key, err)
		}
	}
	// A clock that ran at 2x for a while is ahead when it is back at the real rate, and says
	// so; 0 puts it back in sync, rate and offset.
	rate := func() string {
		s, _ := browserEval(tab, `document.getElementById('candidate').dataset.clockRate`)
		return s
	}
	if err := chromedp.Do(ctxWith(tab, 10*time.Second), chromedp.KeyEvent("}"), chromedp.KeyEvent("}"), chromedp.KeyEvent("}")); err != nil {
		t.Fatal(err)
	}
	if _, err := browserWait(10*time.Second, func() (bool, string) { return rate() == "2", "rate " + rate() }); err != nil {
		t.Fatal(err)
	}
	if _, err := browserWait(20*time.Second, func() (bool, string) { return offset() >= "3" && len(offset()) == 1, "offset " + offset() }); err != nil {
		t.Fatalf("at 2x the clock does not say it runs ahead: %v", err)
	}
	if err := chromedp.Do(ctxWith(tab, 10*time.Second), chromedp.KeyEvent("0")); err != nil {
		t.Fatal(err)
	}
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		return rate() == "1" && offset() == "0", "rate " + rate() + ", offset " + offset()
	}); err != nil {
		t.Fatalf("0 does not put the clock back in sync: %v", err)
	}
}
