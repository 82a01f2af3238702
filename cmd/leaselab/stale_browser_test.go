package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestBrowserStaleLeader: three tabs on one lease; the leader is paused for longer than the
// lease duration and resumed. Another tab took the lease meanwhile, so the resumed tab, which
// still believes it leads until its renew deadline, says STALE LEADER with the true holder's
// name, its #candidate carrying data-stale="true", and then becomes a follower. The lease page
// lists the split brain (an overlap naming both), and the page of a moment before the pause
// names the first leader as the holder.
//
// As with client-go, a pause that falls inside a renew round can outlast that round's
// deadline: the resumed leader then gives up before it reads the lease, and is never stale.
// The log says so; the test then pauses the new leader, up to four times in all.
func TestBrowserStaleLeader(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	tabs := map[string]context.Context{}
	for _, id := range []string{"tab-a", "tab-b", "tab-c"} {
		// Renewals 2 s apart: a pause mostly falls between two renew rounds.
		q := url.Values{"namespace": {"default"}, "lease": {"stale"}, "identity": {id},
			"leaseDuration": {"5"}, "renewDeadline": {"4"}, "retryPeriod": {"2"}}
		tabs[id], _ = openBackgroundTab(t, browser, ts.URL+"/play?"+q.Encode())
	}
	leaderOf := func() (string, string) {
		var seen []string
		leader := ""
		for id, tab := range tabs {
			s, _ := browserCandidateState(tab)
			seen = append(seen, id+"="+s)
			if s == "leader" {
				leader = id
			}
		}
		return leader, strings.Join(seen, " ")
	}
	leasePage, _ := openBrowserTab(t, browser, ts.URL+"/leases/default/stale")
	for attempt := 1; ; attempt++ {
		var first string
		poll.Until(t, 30*time.Second, "a leader", func() (bool, string) {
			l, seen := leaderOf()
			first = l
			return l != "", seen
		})
		if s, _ := browserEval(tabs[first], `document.getElementById('candidate').dataset.stale`); s != "false" {
			t.Fatalf("the leader %s is stale (%q) before its pause", first, s)
		}
		beforePause := time.Now()
		stale, second, how := pauseLeader(t, ts.Client, tabs, first, leaderOf)
		// Paused, the first leader still believed it led while the second held the lease,
		// whether or not it read the lease before giving up: a split brain.
		if attempt == 1 {
			mustShowHolderAt(t, leasePage, ts.URL, beforePause, first)
		}
		mustSeeOverlap(t, leasePage, ts.URL+"/leases/default/stale", ts.URL+"/ui/history?namespace=default&lease=stale", first, second)
		if stale {
			browserShowTab(t, tabs[first]) // the candidate tabs are behind another
			browserScreenshot(t, tabs[first], out, "play-stale.png")
			browserScreenshot(t, leasePage, out, "lease-overlap.png")
			if err := chromedp.Do(leasePage, chromedp.EmulateViewport(390, 844)); err != nil {
				t.Fatal(err)
			}
			browserScreenshot(t, leasePage, out, "lease-overlap-phone.png")
			mustSeeCardOverlaps(t, leasePage, ts.URL)
			browserScreenshot(t, leasePage, out, "dashboard-overlap-phone.png")
			break
		} else if attempt == 4 {
			t.Fatalf("four resumed leaders were never stale; the last: %s", how)
		} else {
			t.Logf("attempt %d: %s gave up before reading the lease (%s); again with the new leader", attempt, first, how)
		}
	}
}

// pauseLeader pauses the leader until another tab leads, resumes it, and reports whether the
// page said STALE LEADER naming the new holder (as recorded by the page, however briefly),
// or how it ended otherwise. Either way it waits until the resumed tab is a follower again.
func pauseLeader(t *testing.T, client kubernetes.Interface, tabs map[string]context.Context, first string, leaderOf func() (string, string)) (stale bool, second, how string) {
	t.Helper()
	tab := tabs[first]
	if _, err := browserEval(tab, `(() => {
		window.staleSeen = [];
		const c = document.getElementById('candidate');
		new MutationObserver(() => {
			if (c.dataset.stale === 'true') window.staleSeen.push(document.getElementById('role-word').textContent + ' | ' + document.getElementById('role-explain').textContent);
		}).observe(c, { attributes: true, attributeFilter: ['data-stale'] });
		return 'recording';
	})()`); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.KeyEvent("p")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "another tab takes the lease", func() (bool, string) {
		l, seen := leaderOf()
		second = l
		return l != "" && l != first, seen
	})
	// Resumed once the new leader has renewed a second past its acquisition: the split brain
	// then outlasts the checker's grace (judge.OverlapGrace), however soon this test saw the
	// takeover. Its first renewal does not do: as client-go's, its renew loop starts at once
	// after it acquired, and writes within milliseconds (a recording showed 64 ms, and the
	// resumed leader, past its deadline, gave up 161 ms after the takeover: no split brain).
	poll.Until(t, 30*time.Second, second+" renews the lease a second after it took it", func() (bool, string) {
		l, err := client.CoordinationV1().Leases("default").Get(context.Background(), "stale", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		sp := l.Spec
		renewed := sp.HolderIdentity != nil && *sp.HolderIdentity == second && sp.AcquireTime != nil && sp.RenewTime != nil &&
			sp.RenewTime.Sub(sp.AcquireTime.Time) >= time.Second
		return renewed, fmt.Sprintf("holder %v, acquired %v, renewed %v", ptr.Deref(sp.HolderIdentity, ""), sp.AcquireTime, sp.RenewTime)
	})
	if err := chromedp.Do(tab, chromedp.KeyEvent("p")); err != nil {
		t.Fatal(err)
	}
	var seen, log string
	poll.Until(t, 30*time.Second, "the resumed tab becomes a follower", func() (bool, string) {
		seen, _ = browserEval(tab, `window.staleSeen.join('\n')`)
		st, _ := browserCandidateState(tab)
		log, _ = browserEval(tab, `Array.from(document.querySelectorAll('#log li'), (li) => li.textContent.replace(/\s+/g, ' ').trim()).slice(0, 8).join(' / ')`)
		return st == "follower" || strings.Contains(seen, "STALE LEADER"), fmt.Sprintf("state %s, seen %q, log %s", st, seen, log)
	})
	if strings.Contains(seen, "STALE LEADER | "+second+" holds the lease") {
		if s, _ := browserEval(tab, `document.getElementById('candidate').dataset.stale`); s != "true" && !strings.Contains(log, "renew deadline") {
			t.Errorf("stale %q after STALE LEADER, and no renew deadline in the log: %s", s, log)
		}
		return true, second, ""
	}
	if seen != "" {
		t.Fatalf("the page said %q, not STALE LEADER with the holder %s", seen, second)
	}
	if !strings.Contains(log, "cut off by the renew deadline") {
		t.Fatalf("the resumed leader was never stale, and its log does not say its renew deadline cut it off: %s", log)
	}
	return false, second, log
}

// mustSeeOverlap waits until the lease page at pageURL lists a split-brain interval naming
// both identities, with its start and end as RFC 3339 moments. When it does not, the lease's
// recording (the record's changes and every view of it, from history) is kept beside the
// test's pictures, to read which view ended whose belief.
func mustSeeOverlap(t *testing.T, page context.Context, pageURL, history, a, b string) {
	t.Helper()
	want := strings.Join(sortedPair(a, b), ",")
	_, err := browserWait(30*time.Second, func() (bool, string) {
		if err := chromedp.Do(page, chromedp.Navigate(pageURL)); err != nil {
			return false, err.Error()
		}
		list, _ := browserEval(page, `Array.from(document.querySelectorAll('[data-testid=overlap]'), (o) => [o.dataset.identities, o.dataset.start, o.dataset.end].join('|')).join('\n')`)
		for _, line := range strings.Split(list, "\n") {
			f := strings.Split(line, "|")
			if len(f) != 3 || f[0] != want {
				continue
			}
			start, err1 := time.Parse(time.RFC3339Nano, f[1])
			end, err2 := time.Parse(time.RFC3339Nano, f[2])
			if err1 != nil || err2 != nil || !end.After(start) {
				t.Fatalf("overlap %q: start and end are not an interval of RFC 3339 moments", line)
			}
			return true, ""
		}
		return false, "overlaps: " + list
	})
	if err == nil {
		return
	}
	if resp, herr := http.Get(history); herr == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		kept := filepath.Join(browserOutputDir(t), "history.jsonl")
		if werr := os.WriteFile(kept, body, 0o644); werr == nil {
			t.Logf("the lease's recording (%s): %s", resp.Status, kept)
		}
	}
	t.Fatalf("the lease page lists an overlap of %s: %v", want, err)
}

// mustSeeCardOverlaps waits until the dashboard's card of the lease counts a split brain.
func mustSeeCardOverlaps(t *testing.T, page context.Context, base string) {
	t.Helper()
	if err := chromedp.Do(page, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "the dashboard card counts the split brain", func() (bool, string) {
		s, _ := browserEval(page, `(() => { const e = document.querySelector('[data-lease-card][data-name=stale] [data-testid=card-overlaps]'); return e ? (e.hidden ? 'hidden' : e.textContent.trim()) : 'none'; })()`)
		return strings.Contains(s, "split brain"), s
	})
}

// mustShowHolderAt checks that the lease page of the moment at names holder.
func mustShowHolderAt(t *testing.T, page context.Context, base string, at time.Time, holder string) {
	t.Helper()
	u := base + "/leases/default/stale?at=" + url.QueryEscape(at.UTC().Format(time.RFC3339Nano))
	if err := chromedp.Do(page, chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	if got, _ := browserEval(page, `document.querySelector('[data-testid=holder]').textContent`); got != holder {
		t.Fatalf("%s: holder %q, want %q", u, got, holder)
	}
}

func sortedPair(a, b string) []string {
	if b < a {
		return []string{b, a}
	}
	return []string{a, b}
}

// TestBrowserDashboardStaleRow: a leader's lease is patched to name an intruder; until its
// renew deadline the tab believes it leads while the record names another holder, and the
// dashboard's row says so as the tab does (STALE LEADER, the conflict icon, data-stale="true",
// data-state still "leader"), then shows the follower it becomes.
func TestBrowserDashboardStaleRow(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	q := url.Values{"namespace": {"default"}, "lease": {"intruded"}, "identity": {"tab-i"},
		"leaseDuration": {"10"}, "renewDeadline": {"7"}, "retryPeriod": {"2"}}
	play, _ := openBackgroundTab(t, browser, ts.URL+"/play?"+q.Encode())
	row := `document.querySelector('#tabs [data-tab-row][data-identity="tab-i"]')`
	rowState := `(() => { const r = ` + row + `; if (!r) return 'none';
		return [r.dataset.state, r.dataset.stale, r.querySelector('.state-word').textContent, r.querySelector('[data-testid=state] use').getAttribute('href')].join('|'); })()`
	poll.Until(t, 30*time.Second, "the dashboard shows tab-i leading", func() (bool, string) {
		s, _ := browserEval(dash, rowState)
		return s == "leader|false|LEADER|#i-leader", s
	})
	patch := []byte(`{"spec":{"holderIdentity":"intruder"}}`)
	if _, err := ts.Client.CoordinationV1().Leases("default").Patch(context.Background(), "intruded", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 15*time.Second, "the dashboard row says STALE LEADER while the tab does", func() (bool, string) {
		s, _ := browserEval(dash, rowState)
		c, _ := browserEval(play, `document.getElementById('candidate').dataset.stale`)
		return s == "leader|true|STALE LEADER|#i-conflict" && c == "true", "row " + s + ", tab stale " + c
	})
	if _, err := browserEval(dash, `(`+row+`.scrollIntoView({ block: 'center' }), 'ok')`); err != nil {
		t.Fatal(err)
	}
	browserScreenshot(t, dash, out, "dashboard-stale-row.png")
	poll.Until(t, 15*time.Second, "the tab gives up and its row shows a follower", func() (bool, string) {
		s, _ := browserEval(dash, rowState)
		return s == "follower|false|FOLLOWER|#i-follower", s
	})
}
