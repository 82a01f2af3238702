package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/play/scenario"
)

// getDoc fetches a page and parses it, failing unless it answers want.
func getDoc(t *testing.T, client *http.Client, u string, want int) *goquery.Document {
	t.Helper()
	resp, err := client.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %s", u, resp.StatusCode, want, body)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestScenarioPages: the library links every scenario; a scenario page carries the contract's
// controls and the namespace its run writes in; its forms start and step a run whose
// candidates write there; bad input is refused with a reason.
func TestScenarioPages(t *testing.T) {
	t.Parallel()
	srv := mustStartServer(t, "")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	doc := getDoc(t, client, srv.URL+"/scenarios", http.StatusOK)
	links := map[string]bool{}
	doc.Find(`a[href^="/scenarios/"]`).Each(func(_ int, s *goquery.Selection) { links[s.AttrOr("href", "")] = true })
	for _, sc := range scenario.Library() {
		if !links["/scenarios/"+sc.Name] {
			t.Errorf("/scenarios does not link /scenarios/%s (links: %v)", sc.Name, links)
		}
	}
	if len(scenario.Library()) < 10 {
		t.Errorf("the library has %d scenarios, want at least 10", len(scenario.Library()))
	}

	page := srv.URL + "/scenarios/leader-crash?seed=42&speed=4"
	doc = getDoc(t, client, page, http.StatusOK)
	sc := doc.Find(`[data-testid="scenario"]`)
	ns := sc.AttrOr("data-namespace", "")
	if ns != "scenario-leader-crash-42" {
		t.Fatalf("data-namespace = %q", ns)
	}
	if doc.Find(`[data-testid="start"]`).Length() != 1 || doc.Find(`[data-testid="next"]`).Length() != 1 {
		t.Fatal("no start or next control")
	}
	if n := doc.Find(`[data-testid="step"]`).Length(); n != 0 {
		t.Fatalf("%d steps shown before the start", n)
	}

	for _, bad := range []struct {
		path string
		code int
	}{
		{"/scenarios/no-such-lesson", http.StatusNotFound},
		{"/scenarios/leader-crash?seed=-1", http.StatusBadRequest},
		{"/scenarios/leader-crash?speed=9", http.StatusBadRequest},
		{"/scenarios/cle-rolling-upgrade?speed=2", http.StatusBadRequest}, // the controller's clock is the server's
	} {
		getDoc(t, client, srv.URL+bad.path, bad.code)
	}
	cle := getDoc(t, client, srv.URL+"/scenarios/cle-rolling-upgrade", http.StatusOK)
	if opts := cle.Find(`select[name="speed"] option`); opts.Length() != 1 || opts.AttrOr("value", "") != "1" {
		t.Errorf("cle-rolling-upgrade offers %d speeds, want 1× only", opts.Length())
	}
	post := func(action string, form url.Values) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/scenarios/leader-crash/"+action, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post("next", url.Values{"seed": {"42"}}); resp.StatusCode != http.StatusConflict {
		t.Fatalf("next before start: %d, want 409", resp.StatusCode)
	}
	resp := post("start", url.Values{"seed": {"42"}, "speed": {"4"}})
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "seed=42") {
		t.Fatalf("start: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	t.Cleanup(func() { post("stop", url.Values{"seed": {"42"}}) })
	// The library's running badge links this very run: its seed and its speed.
	if href := getDoc(t, client, srv.URL+"/scenarios", http.StatusOK).Find(`[data-name="leader-crash"] [data-testid="running"]`).AttrOr("href", ""); href != "/scenarios/leader-crash?seed=42&speed=4" {
		t.Errorf("the running badge links %q", href)
	}

	// The run writes in its namespace: alice leads first.
	ctx := ctxT(t, 2*time.Minute)
	waitFor(t, ctx, "alice to hold the scenario's lease", func() (bool, string) {
		l, err := srv.Client.CoordinationV1().Leases(ns).Get(ctx, "demo", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		h := ""
		if l.Spec.HolderIdentity != nil {
			h = *l.Spec.HolderIdentity
		}
		return h == "alice", "holder " + h
	})
	// Next is offered once the first step is done, and shows the second.
	waitFor(t, ctx, "the first step to be done", func() (bool, string) {
		d := getDoc(t, client, page, http.StatusOK)
		_, disabled := d.Find(`[data-testid="next"]`).Attr("disabled")
		return !disabled, d.Find(`[data-testid="scenario-status"]`).Text()
	})
	if resp := post("next", url.Values{"seed": {"42"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("next: %d", resp.StatusCode)
	}
	doc = getDoc(t, client, page, http.StatusOK)
	if n := doc.Find(`[data-testid="step"]`).Length(); n != 2 {
		t.Fatalf("%d steps shown after one Next, want 2", n)
	}
	// Back shows the first step again, and the status says the lesson has gone on.
	if resp := post("back", url.Values{"seed": {"42"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("back: %d", resp.StatusCode)
	}
	doc = getDoc(t, client, page, http.StatusOK)
	if st := strings.Join(strings.Fields(doc.Find(`[data-testid="scenario-status"]`).Text()), " "); !strings.Contains(st, "Looking back at step 1. The lesson is at step 2") {
		t.Errorf("status after Back: %q", st)
	}
	if resp := post("next", url.Values{"seed": {"42"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("next after back: %d", resp.StatusCode)
	}
	doc = getDoc(t, client, page, http.StatusOK)
	if st := doc.Find(`[data-testid="scenario-status"]`).Text(); strings.Contains(st, "Looking back") {
		t.Errorf("status after Back and Next: %q", st)
	}
	// Auto-play on: its button shows it (pressed, filled), and once a step is done the status
	// says that the next one follows by itself.
	if resp := post("auto", url.Values{"seed": {"42"}, "on": {"1"}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("auto: %d", resp.StatusCode)
	}
	doc = getDoc(t, client, page, http.StatusOK)
	if b := doc.Find(`[data-testid="auto"]`); b.AttrOr("aria-pressed", "") != "true" || !b.HasClass("toggle") {
		t.Errorf("auto-play button when on: aria-pressed %q, class %q", b.AttrOr("aria-pressed", ""), b.AttrOr("class", ""))
	}
	waitFor(t, ctx, "the status to say auto-play goes on", func() (bool, string) {
		st := strings.Join(strings.Fields(getDoc(t, client, page, http.StatusOK).Find(`[data-testid="scenario-status"]`).Text()), " ")
		return strings.Contains(st, "Auto-play: the next step follows once this one has had time to be read."), st
	})
	// The run's members are on the dashboard's tab list like tabs.
	tabs := getDoc(t, client, srv.URL+"/?namespace="+ns, http.StatusOK)
	if !strings.Contains(tabs.Text(), "alice") {
		t.Error("the dashboard does not show the scenario's candidates")
	}
	if !strings.Contains(tabs.Text(), "opened by leader-crash") {
		t.Error("the dashboard does not say which lesson opened the scenario's candidates")
	}
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() (bool, string)) {
	t.Helper()
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v; last: %s", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestLessonsFromTheField: the library holds at least 16 lessons; it and every lesson's page
// say in one line what the lesson teaches, and the lessons retold from incidents link the
// upstream issue, pull request or documentation they retell, in both languages.
func TestLessonsFromTheField(t *testing.T) {
	srv := mustStartServer(t, "")
	client := &http.Client{}
	incidents := map[string]string{
		"fencing":            "https://pkg.go.dev/k8s.io/client-go/tools/leaderelection",
		"identity-collision": "https://github.com/kubernetes/kubernetes/issues/22775",
		"zombie-standby":     "https://github.com/kubernetes/client-go/issues/1155",
		"restart-waits":      "https://github.com/kubernetes/client-go/issues/448",
		"stuck-connection":   "https://github.com/kubernetes/kubernetes/issues/125530",
		"apiserver-outage":   "https://github.com/kubernetes-sigs/cluster-api/pull/3980",
	}
	if n := len(scenario.Library()); n < 16 {
		t.Errorf("the library has %d lessons, want at least 16", n)
	}
	for _, lang := range []string{"en", "zh"} {
		lib := getDoc(t, client, srv.URL+"/scenarios?lang="+lang, http.StatusOK)
		for _, sc := range scenario.Library() {
			item := lib.Find(`[data-name="` + sc.Name + `"]`)
			if got, want := strings.TrimSpace(item.Find(`[data-testid="teaches"]`).Text()), sc.Teaches.In(i18n.Lang(lang)); !strings.Contains(got, want) {
				t.Errorf("%s: the library's %s line of what %s teaches is %q, want it to hold %q", lang, lang, sc.Name, got, want)
			}
			page := getDoc(t, client, srv.URL+"/scenarios/"+sc.Name+"?lang="+lang, http.StatusOK)
			if !strings.Contains(page.Find(`.scenario-head [data-testid="teaches"]`).Text(), sc.Teaches.In(i18n.Lang(lang))) {
				t.Errorf("%s: the page of %s does not say what it teaches", lang, sc.Name)
			}
			want, retold := incidents[sc.Name]
			for where, doc := range map[string]*goquery.Selection{"library": item, "page": page.Find(".scenario-head")} {
				href, ok := doc.Find(`[data-testid="incident"]`).Attr("href")
				if retold && href != want || !retold && ok && href != sc.Incident {
					t.Errorf("%s: the %s of %s links the incident %q, want %q", lang, where, sc.Name, href, want)
				}
			}
		}
	}
}
