package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBrowserScenarioStop: Stop on a running lesson ends it at once: its candidates leave the
// tab hub (the dashboard's rows), its namespace's Leases and LeaseCandidates are deleted, the
// page is idle again, and its recording can still be downloaded.
func TestBrowserScenarioStop(t *testing.T) {
	browserTest(t)
	srv := mustStartServer(t, "")
	browser := mustStartBrowser(t)
	tab, _ := openBrowserTab(t, browser, srv.URL+"/scenarios/leader-crash?speed=4")
	browserPress(t, tab, `[data-testid="start"]`)
	ns := ""
	if _, err := browserWait(time.Minute, func() (bool, string) {
		s, _ := browserEval(tab, `(() => { const h = document.querySelector('[data-testid="holder"]'); const b = document.querySelector('[data-testid="stop"]');
			return (h ? h.textContent.trim() : '') + ' ' + (b && !b.disabled) + ' ' + document.querySelector('[data-testid="scenario"]').dataset.namespace; })()`)
		f := strings.Fields(s)
		if len(f) == 3 {
			ns = f[2]
		}
		return len(f) == 3 && f[0] == "alice" && f[1] == "true", s
	}); err != nil {
		t.Fatalf("the lesson does not run with Stop offered: %v", err)
	}
	tabs := func() string {
		resp, err := http.Get(srv.URL + "/?namespace=" + ns)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// bob's first report reaches the tab hub a moment after alice leads.
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		return strings.Contains(tabs(), `data-identity="bob"`), "bob not listed"
	}); err != nil {
		t.Fatalf("the dashboard of %s does not list the lesson's candidates: %v", ns, err)
	}
	browserPress(t, tab, `[data-testid="stop"]`)
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		s, _ := browserEval(tab, `!!document.querySelector('[data-testid="scenario-idle"]') + ' ' + document.querySelector('[data-testid="stop"]').disabled`)
		return s == "true true", s
	}); err != nil {
		t.Fatalf("the page is not idle after Stop: %v", err)
	}
	ctx := ctxT(t, 10*time.Second)
	leases, err := srv.Client.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(leases.Items) != 0 {
		t.Errorf("Leases of %s after Stop: %v, %v", ns, leases, err)
	}
	cands, err := srv.Client.CoordinationV1beta1().LeaseCandidates(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(cands.Items) != 0 {
		t.Errorf("LeaseCandidates of %s after Stop: %v, %v", ns, cands, err)
	}
	if page := tabs(); strings.Contains(page, `data-identity="bob"`) || strings.Contains(page, `data-identity="alice"`) {
		t.Errorf("the dashboard of %s still lists the lesson's candidates after Stop", ns)
	}
	resp, err := http.Get(srv.URL + "/ui/history?namespace=" + ns + "&lease=demo")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "alice") {
		t.Errorf("the recording after Stop: %d %.300s", resp.StatusCode, body)
	}
}
