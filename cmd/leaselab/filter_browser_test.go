package main

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBrowserDashboardFollowsFilter: a dashboard opened on one namespace (as a join link opens
// a participant's) is sent that namespace's lease changes only; choosing every namespace in its
// filter connects again and brings every namespace's cards, live; choosing another brings
// that one's.
func TestBrowserDashboardFollowsFilter(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	ctx := ctxT(t, time.Minute)
	put := func(ns, holder string) {
		t.Helper()
		leases := ts.Client.CoordinationV1().Leases(ns)
		now := metav1.NewMicroTime(time.Now())
		l, err := leases.Get(ctx, "demo", metav1.GetOptions{})
		if err != nil {
			l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
		}
		d := int32(60)
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime, l.Spec.AcquireTime = &holder, &d, &now, &now
		if l.ResourceVersion == "" {
			_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		} else {
			_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	put("team-a", "a1")
	put("team-b", "b1")
	browser := mustStartBrowser(t)
	dash, _ := openBrowserTab(t, browser, ts.URL+"/?namespace=team-a")
	holderOf := func(ns string) string {
		h, _ := browserEval(dash, `(document.querySelector('[data-lease-card][data-namespace="`+ns+`"]') || {dataset: {holder: 'none'}}).dataset.holder`)
		return h
	}
	awaitHolder := func(ns, want string) {
		t.Helper()
		if _, err := browserWait(20*time.Second, func() (bool, string) {
			h := holderOf(ns)
			return h == want, "holder " + h
		}); err != nil {
			t.Fatalf("%s's card: %v, want holder %s", ns, err, want)
		}
	}
	// The team-a board's first message drops the other namespaces' cards the page was
	// rendered with.
	awaitHolder("team-b", "none")
	put("team-b", "b2")
	put("team-a", "a2")
	awaitHolder("team-a", "a2")
	if h := holderOf("team-b"); h != "none" {
		t.Errorf("the dashboard on team-a was sent team-b's card (holder %s)", h)
	}

	choose := func(ns string) {
		t.Helper()
		if _, err := browserEval(dash, `(() => { const f = document.getElementById('ns-filter'); f.value = '`+ns+`'; f.dispatchEvent(new Event('change')); return 'ok'; })()`); err != nil {
			t.Fatal(err)
		}
	}
	choose("") // every namespace: the whole board again, then live changes of team-b too
	awaitHolder("team-b", "b2")
	put("team-b", "b3")
	awaitHolder("team-b", "b3")
	choose("team-b")
	awaitHolder("team-a", "none")
	put("team-b", "b4")
	awaitHolder("team-b", "b4")
	if u, err := browserEval(dash, `location.search`); err != nil || u != "?namespace=team-b" {
		t.Errorf("URL after choosing team-b: %q %v", u, err)
	}

	// Deleting a lease leads back to the namespace shown, not to the one the page opened on.
	if _, err := browserEval(dash, `(() => { window.confirm = () => true; document.querySelector('[data-lease-card][data-namespace="team-b"] [data-testid=delete-lease]').click(); return 'ok'; })()`); err != nil {
		t.Fatal(err)
	}
	if _, err := browserWait(20*time.Second, func() (bool, string) {
		s, _ := browserEval(dash, `location.search + ' cards=' + document.querySelectorAll('[data-lease-card]:not([hidden])').length`)
		return s == "?namespace=team-b cards=0", s
	}); err != nil {
		t.Errorf("after deleting team-b/demo: %v, want the dashboard of team-b with no card", err)
	}
}
