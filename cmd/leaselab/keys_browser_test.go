package main

import (
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserQuickKeys: fault keys pressed faster than the candidate answers build on each
// other: ] three times at once sets the clock 3 s ahead, not 1 or 2; [ three times brings it
// back in sync.
func TestBrowserQuickKeys(t *testing.T) {
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
}
