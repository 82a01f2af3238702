package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestBrowserUpstream: two /play tabs in a real Chromium, served by leaselab in front of a
// cluster (the upstream leaselab over TLS with a token), elect a leader: exactly one tab says
// it leads, the cluster's Lease names it, and the front's dashboard, which reads the mirror,
// shows it as the holder.
func TestBrowserUpstream(t *testing.T) {
	browserTest(t)
	up := mustStartCluster(t, "", nil)
	front := mustStartFront(t, up.kubeconfig(t, up.URL, "admin"), nil)
	mustHaveWasm(t, front.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	const ns, lease = "default", "upstream-browser"
	admin := up.client(t, "admin")

	tabs := map[string]context.Context{}
	for _, id := range []string{"tab-a", "tab-b"} {
		q := url.Values{
			"namespace":     {ns},
			"lease":         {lease},
			"identity":      {id},
			"leaseDuration": {browserSeconds(browserLeaseDuration)},
			"renewDeadline": {browserSeconds(browserRenewDeadline)},
			"retryPeriod":   {browserSeconds(browserRetryPeriod)},
		}
		tabs[id], _ = openBackgroundTab(t, browser, front.URL+"/play?"+q.Encode())
	}
	holder := func() string {
		l, err := admin.CoordinationV1().Leases(ns).Get(context.Background(), lease, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return ptr.Deref(l.Spec.HolderIdentity, "")
	}
	var leader string
	took, err := browserWait(30*time.Second, func() (bool, string) {
		states := map[string]string{}
		var leaders []string
		for id, ctx := range tabs {
			s, err := browserCandidateState(ctx)
			if err != nil {
				s = "error: " + err.Error()
			}
			states[id] = s
			if s == "leader" {
				leaders = append(leaders, id)
			}
		}
		h := holder()
		if len(leaders) == 1 && h == leaders[0] {
			for _, s := range states {
				if s != "leader" && s != "follower" {
					return false, fmt.Sprintf("states %v, the cluster's holder %q", states, h)
				}
			}
			leader = h
			return true, ""
		}
		return false, fmt.Sprintf("states %v, the cluster's holder %q", states, h)
	})
	if err != nil {
		t.Fatalf("one leader on the cluster: %v", err)
	}
	t.Logf("%s leads on the cluster after %s", leader, took.Round(time.Millisecond))
	browserShowTab(t, tabs[leader]) // the candidate tabs are behind another
	browserScreenshot(t, tabs[leader], out, "upstream-candidate-leader.png")

	// The front's dashboard reads the mirror: the lease's card names the cluster's holder.
	dash, _ := openBrowserTab(t, browser, front.URL+"/")
	if err := chromedp.Do(dash, chromedp.WaitVisible(chromedp.CSS(`[data-testid="upstream"]`))); err != nil {
		t.Fatalf("the dashboard's banner: %v", err)
	}
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		text, err := browserEval(dash, `document.querySelector('#lease-grid') ? document.querySelector('#lease-grid').innerText : ''`)
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(text, lease) && strings.Contains(text, leader), text
	}); err != nil {
		t.Fatalf("the dashboard shows the cluster's holder: %v", err)
	}
	browserScreenshot(t, dash, out, "upstream-dashboard.png")
}
