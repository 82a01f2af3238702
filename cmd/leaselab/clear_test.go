package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// noRedirects is an HTTP client that answers a redirect with the redirect itself.
var noRedirects = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// postLesson posts a lesson's form action (start, next, stop...) with seed and speed 4, as its
// page does, and returns the status code and body.
func postLesson(t *testing.T, base, name, action, seed string) (int, string) {
	t.Helper()
	resp, err := noRedirects.PostForm(base+"/scenarios/"+name+"/"+action, url.Values{"seed": {seed}, "speed": {"4"}})
	if err != nil {
		t.Fatalf("%s %s: %v", action, name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// lessonLive reads the data attributes of a lesson's live part (data-running, data-done...).
func lessonLive(t *testing.T, base, name, seed string) *goquery.Selection {
	t.Helper()
	doc := getDoc(t, noRedirects, base+"/scenarios/"+name+"/live?seed="+seed, http.StatusOK)
	return doc.Find(`#scenario-live`)
}

// mustStartLesson starts a lesson at 4× and waits until its candidates are on the dashboard.
func mustStartLesson(t *testing.T, base, name, seed string) {
	t.Helper()
	if code, body := postLesson(t, base, name, "start", seed); code != http.StatusSeeOther {
		t.Fatalf("start %s: %d %s", name, code, body)
	}
	ns := "scenario-" + name + "-" + seed
	poll.Until(t, time.Minute, "the candidates of "+ns+" on the dashboard", func() (bool, string) {
		doc := getDoc(t, noRedirects, base+"/?namespace="+ns, http.StatusOK)
		n := doc.Find(`[data-testid="tabs"] [data-namespace="` + ns + `"]`).Length()
		return n >= 2, strings.Repeat("row ", n)
	})
}

// mustFinishLesson takes Next on a running lesson as soon as each step is done, and reveals its
// questions at once, until its last step is reached and done.
func mustFinishLesson(t *testing.T, base, name, seed string) {
	t.Helper()
	poll.Until(t, 3*time.Minute, name+" played to its end", func() (bool, string) {
		live := lessonLive(t, base, name, seed)
		if live.AttrOr("data-done", "") == "true" {
			return true, ""
		}
		switch {
		case live.AttrOr("data-asking", "") == "true":
			postLesson(t, base, name, "reveal", seed) // its question: the step runs once revealed
		case live.AttrOr("data-can-next", "") == "true":
			postLesson(t, base, name, "next", seed)
		}
		return false, "step " + live.AttrOr("data-shown", "?") + " can next " + live.AttrOr("data-can-next", "?")
	})
}

// leftIn counts the Leases and LeaseCandidates in ns.
func leftIn(t *testing.T, srv *testServer, ns string) (leases, candidates int) {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	l, err := srv.Client.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := srv.Client.CoordinationV1beta1().LeaseCandidates(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(l.Items), len(c.Items)
}

// postClear posts the dashboard's "clear finished lessons" with client and header, from the
// dashboard of the namespace view.
func postClear(t *testing.T, client *http.Client, base, view string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/ui/scenarios/clear", strings.NewReader(url.Values{"view": {view}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// TestClearFinishedLessons: the dashboard's "clear finished lessons" stops and cleans up a
// lesson played to its end and the leftovers of a run that no longer plays (its candidates
// leave the dashboard, its Leases and LeaseCandidates are deleted, its recording stays), and
// leaves a playing lesson alone; the dashboard then says how many it cleared. In workshop mode
// only the instructor may.
func TestClearFinishedLessons(t *testing.T) {
	t.Parallel()
	srv := mustStartServer(t, "")
	mustStartLesson(t, srv.URL, "clean-release", "1")
	mustStartLesson(t, srv.URL, "leader-crash", "2")
	mustFinishLesson(t, srv.URL, "clean-release", "1")
	// What a run put out by maxScenarioRuns leaves: a lease in a lesson's namespace, no run.
	if _, err := srv.Client.CoordinationV1().Leases("scenario-gc-pause-9").Create(ctxT(t, 10*time.Second), namedLease("demo"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if code, loc := postClear(t, noRedirects, srv.URL, "", nil); code != http.StatusSeeOther || loc != "/?cleared=2" {
		t.Fatalf("clear: %d %q", code, loc)
	}
	for _, ns := range []string{"scenario-clean-release-1", "scenario-gc-pause-9"} {
		if l, c := leftIn(t, srv, ns); l != 0 || c != 0 {
			t.Errorf("%s after the clearing: %d Leases, %d LeaseCandidates", ns, l, c)
		}
	}
	if l, _ := leftIn(t, srv, "scenario-leader-crash-2"); l == 0 {
		t.Error("the playing lesson lost its lease")
	}
	if live := lessonLive(t, srv.URL, "leader-crash", "2"); live.AttrOr("data-running", "") != "true" {
		t.Error("the playing lesson was stopped")
	}
	if live := lessonLive(t, srv.URL, "clean-release", "1"); live.AttrOr("data-running", "") != "false" {
		t.Error("the finished lesson still runs")
	}
	doc := getDoc(t, noRedirects, srv.URL+"/?cleared=2", http.StatusOK)
	if rows := doc.Find(`[data-testid="tabs"] [data-namespace="scenario-clean-release-1"]`).Length(); rows != 0 {
		t.Errorf("the finished lesson's %d candidates are still on the dashboard", rows)
	}
	if rows := doc.Find(`[data-testid="tabs"] [data-namespace="scenario-leader-crash-2"]`).Length(); rows == 0 {
		t.Error("the playing lesson's candidates left the dashboard")
	}
	if s := doc.Find(`[data-testid="cleared"]`).Text(); s != "Finished lessons cleared: 2." {
		t.Errorf("the dashboard says %q", s)
	}
	resp, err := http.Get(srv.URL + "/ui/history?namespace=scenario-clean-release-1&lease=demo")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "alice") {
		t.Errorf("the recording after the clearing: %d %.300s", resp.StatusCode, body)
	}
	if code, loc := postClear(t, noRedirects, srv.URL, "scenario-leader-crash-2", nil); code != http.StatusSeeOther || loc != "/?cleared=0&namespace=scenario-leader-crash-2" {
		t.Fatalf("clear again: %d %q", code, loc)
	}
	doc = getDoc(t, noRedirects, srv.URL+"/?cleared=0", http.StatusOK)
	if s := doc.Find(`[data-testid="cleared"]`).Text(); s != "No finished lesson to clear." {
		t.Errorf("the dashboard says %q", s)
	}
}

// TestClearFinishedIsTheInstructors: in workshop mode a participant is not offered "clear
// finished lessons" and its route answers 403; the instructor is offered it and may.
func TestClearFinishedIsTheInstructors(t *testing.T) {
	w := mustStartWorkshop(t, 1, "", nil)
	same := map[string]string{"Origin": w.URL, "Sec-Fetch-Site": "same-origin"}
	for _, c := range []struct {
		user    string
		offered int
		code    int
	}{
		{"participant-01", 0, http.StatusForbidden},
		{"instructor", 1, http.StatusSeeOther},
	} {
		hc := w.httpClient(t)
		w.join(t, hc, c.user)
		doc := getDoc(t, hc, w.URL+"/", http.StatusOK)
		if n := doc.Find(`[data-testid="clear-finished"]`).Length(); n != c.offered {
			t.Errorf("%s is offered %d clear buttons, want %d", c.user, n, c.offered)
		}
		if code, _ := postClear(t, hc, w.URL, "", same); code != c.code {
			t.Errorf("%s clears: %d, want %d", c.user, code, c.code)
		}
	}
	// Another site's form is refused before anyone's rights are looked at.
	hc := w.httpClient(t)
	w.join(t, hc, "instructor")
	if code, _ := postClear(t, hc, w.URL, "", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden {
		t.Errorf("a cross-site clear: %d", code)
	}
}
