package ui

import (
	"context"
	"encoding/json"
	"html"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/lease/judge"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

const evil = `<script>alert(1)</script>`

func text(s *goquery.Selection) string { return strings.TrimSpace(s.Text()) }

func TestDashboardListsLeasesWithHolders(t *testing.T) {
	now := t0.Add(time.Hour)
	tu := mustNewUI(t, now)
	tu.putLease(t, lease("default", "demo", "tab-1", now.Add(-2*time.Second), 10, 3), now.Add(-2*time.Second))
	tu.putLease(t, lease("team-a", "free", "", time.Time{}, 0, 0), now.Add(-time.Minute))
	tu.putLease(t, lease("team-a", "stale", "tab-9", now.Add(-time.Minute), 10, 1), now.Add(-time.Minute))

	doc := tu.mustGetDoc(t, "/", http.StatusOK)
	cards := doc.Find(`[data-testid=lease-grid] [data-testid=lease-card]`)
	if cards.Length() != 3 {
		t.Fatalf("%d lease cards, want 3", cards.Length())
	}
	want := []struct{ ns, name, holder, status, transitions string }{
		{"default", "demo", "tab-1", "HELD", "3"},
		{"team-a", "free", "no holder", "FREE", "0"},
		{"team-a", "stale", "tab-9", "EXPIRED", "1"},
	}
	cards.Each(func(i int, c *goquery.Selection) {
		w := want[i]
		if got := text(c.Find(`[data-testid=lease-name]`)); got != w.name {
			t.Errorf("card %d: name %q, want %q", i, got, w.name)
		}
		if got, _ := c.Attr("data-namespace"); got != w.ns {
			t.Errorf("card %d: namespace %q, want %q", i, got, w.ns)
		}
		if got := text(c.Find(`[data-testid=holder]`)); got != w.holder {
			t.Errorf("card %s: holder %q, want %q", w.name, got, w.holder)
		}
		if got := text(c.Find(`[data-testid=lease-status]`)); got != w.status {
			t.Errorf("card %s: status %q, want %q", w.name, got, w.status)
		}
		if got := text(c.Find(`[data-testid=transitions]`)); got != w.transitions {
			t.Errorf("card %s: transitions %q, want %q", w.name, got, w.transitions)
		}
		href, _ := c.Find(`[data-testid=open-tab]`).Attr("href")
		q := "/play?" + url.Values{"lease": {w.name}, "namespace": {w.ns}}.Encode()
		if href != q {
			t.Errorf("card %s: open-tab link %q, want %q", w.name, href, q)
		}
	})
	if got := text(cards.First().Find(`[data-testid=remaining]`)); got != "8.0 s" {
		t.Errorf("demo countdown %q, want 8.0 s", got)
	}
	// The page starts its watches where it was rendered.
	rv, _ := doc.Find(`#dashboard`).Attr("data-leases-rv")
	if rv != "3" {
		t.Errorf("data-leases-rv %q, want 3", rv)
	}
	var namespaces []string
	doc.Find(`[data-testid=ns-filter] option`).Each(func(_ int, o *goquery.Selection) { namespaces = append(namespaces, o.AttrOr("value", "?")) })
	if got := strings.Join(namespaces, ","); got != ",default,team-a" {
		t.Errorf("namespace filter options %q", got)
	}
	if n := doc.Find(`[data-testid=feed] [data-testid=feed-item]`).Length(); n == 0 {
		t.Error("the feed is empty")
	}

	// A namespace filter hides the other namespaces' cards.
	doc = tu.mustGetDoc(t, "/?namespace=team-a", http.StatusOK)
	var shown []string
	doc.Find(`[data-testid=lease-card]`).Each(func(_ int, c *goquery.Selection) {
		if _, hidden := c.Attr("hidden"); !hidden && c.Closest("template").Length() == 0 {
			shown = append(shown, c.AttrOr("data-name", ""))
		}
	})
	if got := strings.Join(shown, ","); got != "free,stale" {
		t.Errorf("shown with ?namespace=team-a: %q", got)
	}
}

// TestEscaping puts markup wherever users type (a holder identity, a tab identity, query
// parameters, path segments) and checks that it comes out as text.
func TestEscaping(t *testing.T) {
	now := t0.Add(time.Hour)
	tu := mustNewUI(t, now)
	tu.putLease(t, lease("default", "demo", evil, now.Add(-time.Second), 10, 0), now.Add(-time.Second))
	tab := tu.hub.addTab(TabUser{}, func() {})
	if err := tu.hub.report(tab, tabproto.Report{Identity: evil, Namespace: "default", Lease: "demo", State: "leader", Role: "leader", LastLog: tabproto.LogLine{Text: evil},
		Coordinated: true, BinaryVersion: evil, EmulationVersion: evil, Strategy: evil, PreferredHolder: "x" + evil}); err != nil {
		t.Fatal(err)
	}

	check := func(path string, status int, wantText ...string) *goquery.Document {
		t.Helper()
		w := tu.do(t, httptest.NewRequest(http.MethodGet, path, nil))
		body := w.Body.String()
		if w.Code != status {
			t.Fatalf("GET %s: status %d, want %d", path, w.Code, status)
		}
		if strings.Contains(body, evil) || strings.Contains(body, "<script>alert") {
			t.Errorf("GET %s: the response contains unescaped markup", path)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for _, sel := range wantText {
			found := false
			doc.Find(sel).Each(func(_ int, s *goquery.Selection) { found = found || strings.Contains(text(s), evil) })
			if !found {
				t.Errorf("GET %s: no %s with the text %q", path, sel, evil)
			}
		}
		return doc
	}

	doc := check("/", http.StatusOK, `[data-testid=lease-card] [data-testid=holder]`, `[data-testid=tab-row] [data-field=identity]`, `[data-testid=tab-row] [data-field=log]`, `[data-testid=feed-item] [data-field=text]`,
		`[data-testid=tab-row] [data-testid=tab-binary]`, `[data-testid=tab-row] [data-testid=tab-emulation]`, `[data-testid=tab-row] [data-testid=tab-strategy]`,
		`[data-testid=tab-row] [data-testid=tab-stepdown]:not([hidden]) [data-field=preferred]`)
	if h := doc.Find(`[data-testid=lease-card]`).First().AttrOr("data-holder", ""); h != evil {
		t.Errorf("data-holder %q", h)
	}
	check("/leases/default/demo", http.StatusOK, `[data-testid=holder]`, `[data-testid=term-holder]`, `[data-testid=lease-tab] .tab-identity`,
		`[data-testid=lease-tab] [data-testid=tab-emulation]`)
	check("/play?"+url.Values{"lease": {"demo"}, "identity": {evil}}.Encode(), http.StatusOK, `[data-testid=identity]`)
	doc = check("/play?"+url.Values{"lease": {evil}, "namespace": {evil}}.Encode(), http.StatusUnprocessableEntity)
	if n := doc.Find(`[data-testid=problems] li`).Length(); n < 2 {
		t.Errorf("a lease and namespace of markup: %d problems listed, want both refused", n)
	}
	check("/leases/"+url.PathEscape(evil)+"/x", http.StatusNotFound)

	// The identity reaches play.js as JSON inside a script element: escaped there too.
	w := tu.do(t, httptest.NewRequest(http.MethodGet, "/play?"+url.Values{"lease": {"demo"}, "identity": {"</script><b>x"}}.Encode(), nil))
	if strings.Contains(w.Body.String(), "</script><b>") {
		t.Error("an identity closed the config script element")
	}
}

func TestLeasePageTimeline(t *testing.T) {
	now := at(60)
	tu := mustNewUI(t, now)
	// tab-1 acquires and renews; tab-2 takes over before tab-1's lease ran out; tab-2 stops
	// renewing and its lease expires; tab-3 takes the expired lease and later releases it.
	tu.putLease(t, lease("default", "demo", "tab-1", at(0), 10, 0), at(0))
	tu.putLease(t, lease("default", "demo", "tab-1", at(2), 10, 0), at(2))
	tu.putLease(t, lease("default", "demo", "tab-2", at(5), 3, 1), at(5))
	tu.putLease(t, lease("default", "demo", "tab-2", at(6), 3, 1), at(6))
	tu.putLease(t, lease("default", "demo", "tab-3", at(15), 3, 2), at(15))
	tu.putLease(t, lease("default", "demo", "", at(20), 1, 2), at(20))
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "default", Name: "demo.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Lease", Namespace: "default", Name: "demo"},
		Reason:         "LeaderElection", Message: "tab-3 became leader", Type: "Normal",
		LastTimestamp: metav1.NewTime(at(15)),
	}
	other := ev.DeepCopy()
	other.Name, other.InvolvedObject.Name, other.Message = "other.1", "other", "not about demo"
	for _, e := range []*corev1.Event{ev, other} {
		e.APIVersion, e.Kind = "v1", "Event"
		b, _ := json.Marshal(e)
		tu.st.put(store.Key{Resource: "events", Namespace: "default", Name: e.Name}, b, at(15))
	}

	doc := tu.mustGetDoc(t, "/leases/default/demo", http.StatusOK)
	var lanes []string
	doc.Find(`[data-testid=timeline] [data-testid=timeline-lane]`).Each(func(_ int, l *goquery.Selection) {
		lanes = append(lanes, l.AttrOr("data-identity", "")+":"+itoa(l.Find(`[data-testid=timeline-bar]`).Length()))
	})
	if got := strings.Join(lanes, " "); got != "tab-1:1 tab-2:1 tab-3:1" {
		t.Errorf("lanes %q, want one bar for each of tab-1, tab-2, tab-3", got)
	}
	var marks []string
	doc.Find(`[data-testid=timeline-mark]`).Each(func(_ int, m *goquery.Selection) { marks = append(marks, m.AttrOr("data-kind", "")) })
	if got := strings.Join(marks, ","); got != "takeover,expired,released" {
		t.Errorf("markers %q, want takeover,expired,released", got)
	}
	// The legend shows each mark as the timeline draws it, on a bar of its term's colour.
	for _, m := range doc.Find(`[data-testid=timeline-mark]`).EachIter() {
		kind := m.AttrOr("data-kind", "")
		untitled := m.Clone()
		untitled.Find(`title`).Remove()
		shape, _ := untitled.Html()
		shape = strings.TrimSpace(shape)
		item := doc.Find(`[data-testid=timeline-legend] [data-kind="` + kind + `"]`)
		legendShape, _ := item.Find(`.mark-` + kind).Html()
		if item.Length() != 1 || strings.TrimSpace(legendShape) != shape {
			t.Errorf("the legend of %s: %d items, shape %q, want the timeline's %q", kind, item.Length(), legendShape, shape)
		}
		bar := doc.Find(`[data-testid=timeline-bar][data-ended="`+kind+`"]`).AttrOr("class", "")
		if swatch := item.Find(`rect.term`).AttrOr("class", ""); swatch == "" || swatch != strings.ReplaceAll(bar, " term-open", "") {
			t.Errorf("the legend of %s: its bar %q, the timeline's %q", kind, swatch, bar)
		}
	}
	// The split-brain band has its line too, drawn with the band's class.
	if doc.Find(`[data-testid=timeline-legend] [data-kind="split-brain"] rect.split-band`).Length() != 1 {
		t.Error("the legend has no split-brain band")
	}
	var terms []string
	doc.Find(`[data-testid=terms] [data-testid=term]`).Each(func(_ int, r *goquery.Selection) {
		terms = append(terms, text(r.Find(`[data-testid=term-holder]`))+": "+text(r.Find(`[data-testid=term-ended]`)))
	})
	want := "tab-3: released | tab-2: expired, then tab-3 took it | tab-1: taken over by tab-2"
	if got := strings.Join(terms, " | "); got != want {
		t.Errorf("terms %q, want %q", got, want)
	}
	if n := doc.Find(`[data-testid=events] [data-testid=event]`).Length(); n != 1 {
		t.Errorf("%d events listed, want only the one about demo", n)
	}
	yaml := text(doc.Find(`[data-testid=yaml]`))
	for _, s := range []string{"apiVersion: coordination.k8s.io/v1", "kind: Lease", `resourceVersion: "6"`, "leaseTransitions: 2"} {
		if !strings.Contains(yaml, s) {
			t.Errorf("YAML lacks %q:\n%s", s, yaml)
		}
	}
	// Nobody holds it: [data-testid=holder] is empty (a contract), and the page says so.
	if got, words := text(doc.Find(`.lease-now [data-testid=holder]`)), text(doc.Find(`.lease-now .holder`)); got != "" || words != "no holder" {
		t.Errorf("holder %q (%q), want empty (no holder)", got, words)
	}

	// The live fragment is the same part, alone.
	frag := tu.mustGetDoc(t, "/leases/default/demo/live", http.StatusOK)
	if frag.Find(`#lease-live [data-testid=timeline]`).Length() != 1 || frag.Find(`header`).Length() != 0 {
		t.Error("the live fragment is not just the live part")
	}

	tu.mustGetDoc(t, "/leases/default/missing", http.StatusNotFound)
}

func TestCreateAndDeleteLease(t *testing.T) {
	tu := mustNewUI(t, t0)
	post := func(path string, form url.Values, header map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			r.Header.Set(k, v)
		}
		return tu.do(t, r)
	}
	w := post("/ui/leases", url.Values{"namespace": {"team-a"}, "name": {"demo"}}, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://example.com"})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("create: status %d\n%s", w.Code, w.Body.String())
	}
	o, err := tu.st.Get(context.Background(), store.Key{Resource: "leases.coordination.k8s.io", Namespace: "team-a", Name: "demo"})
	if err != nil {
		t.Fatalf("the lease was not created: %v", err)
	}
	l, err := tu.decodeLease(o)
	if err != nil || l.UID == "" || l.CreationTimestamp.IsZero() {
		t.Errorf("not created through the API: uid %q, creationTimestamp %v, err %v", l.UID, l.CreationTimestamp, err)
	}

	// Refusals are shown on the dashboard with the form filled in.
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"namespace": {"team-a"}, "name": {"demo"}}, "already exists"},
		{url.Values{"namespace": {"team-a"}, "name": {"Not_Valid"}}, "Invalid value"},
		{url.Values{"namespace": {"team-a"}, "name": {""}}, "name is required"},
		{url.Values{"namespace": {"NS"}, "name": {"x"}}, "namespace \"NS\" is not valid"},
	} {
		w := post("/ui/leases", tc.form, nil)
		if w.Code != http.StatusUnprocessableEntity {
			t.Errorf("%v: status %d, want 422", tc.form, w.Code)
			continue
		}
		doc, _ := goquery.NewDocumentFromReader(w.Body)
		errs := text(doc.Find(`[data-testid=form-errors]`))
		if !strings.Contains(errs, tc.want) {
			t.Errorf("%v: errors %q, want %q", tc.form, errs, tc.want)
		}
		if v := doc.Find(`[data-testid=new-lease-form] input[name=name]`).AttrOr("value", "?"); v != tc.form.Get("name") {
			t.Errorf("%v: the form lost the name: %q", tc.form, v)
		}
	}

	// A cross-site post is refused before anything happens.
	w = post("/ui/leases/team-a/demo/delete", nil, map[string]string{"Sec-Fetch-Site": "cross-site"})
	if w.Code != http.StatusForbidden {
		t.Errorf("cross-site delete: status %d, want 403", w.Code)
	}
	w = post("/ui/leases/team-a/demo/delete", nil, map[string]string{"Origin": "http://evil.example"})
	if w.Code != http.StatusForbidden {
		t.Errorf("delete from another origin: status %d, want 403", w.Code)
	}
	if _, err := tu.st.Get(context.Background(), o.Key); err != nil {
		t.Fatalf("the refused delete deleted: %v", err)
	}
	w = post("/ui/leases/team-a/demo/delete", nil, map[string]string{"Sec-Fetch-Site": "same-origin"})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("delete: status %d\n%s", w.Code, w.Body.String())
	}
	if _, err := tu.st.Get(context.Background(), o.Key); err == nil {
		t.Error("the lease is still there")
	}
	// Deleting what is gone is not an error.
	if w := post("/ui/leases/team-a/demo/delete", nil, nil); w.Code != http.StatusSeeOther {
		t.Errorf("delete again: status %d", w.Code)
	}

	// Either form leads back to the namespace the dashboard showed (its view field), else home.
	for _, tc := range []struct {
		path string
		form url.Values
		want string
	}{
		{"/ui/leases", url.Values{"namespace": {"arena"}, "name": {"shared"}, "view": {"arena"}}, "/?namespace=arena"},
		{"/ui/leases/arena/shared/delete", url.Values{"view": {"arena"}}, "/?namespace=arena"},
		{"/ui/leases/arena/shared/delete", url.Values{"view": {""}}, "/"},
		{"/ui/leases/arena/shared/delete", url.Values{"view": {"Not A Namespace"}}, "/"},
		{"/ui/leases/arena/shared/delete", url.Values{"view": {"https://evil.example"}}, "/"},
	} {
		w := post(tc.path, tc.form, nil)
		if w.Code != http.StatusSeeOther || w.Header().Get("Location") != tc.want {
			t.Errorf("POST %s %v: %d to %q, want 303 to %q", tc.path, tc.form, w.Code, w.Header().Get("Location"), tc.want)
		}
	}
}

func TestPlayPage(t *testing.T) {
	tu := mustNewUI(t, t0)
	doc := tu.mustGetDoc(t, "/play?lease=demo&leaseDuration=3&renewDeadline=2&retryPeriod=0.5", http.StatusOK)
	c := doc.Find(`#candidate`)
	id := c.AttrOr("data-identity", "")
	if !strings.HasPrefix(id, "tab-") || c.AttrOr("data-state", "") != "stopped" {
		t.Errorf("candidate: data-identity %q, data-state %q", id, c.AttrOr("data-state", ""))
	}
	if text(doc.Find(`[data-testid=identity]`)) != id {
		t.Error("the identity shown is not data-identity")
	}
	cfg := doc.Find(`script#play-config`).Text()
	for _, s := range []string{`"retryPeriod":0.5`, `"leaseDuration":3`, `"namespace":"default"`, `"identity":"` + id + `"`} {
		if !strings.Contains(cfg, s) {
			t.Errorf("config %s lacks %s", cfg, s)
		}
	}
	if n := doc.Find(`[data-testid=shortcuts] kbd`).Length(); n < 8 {
		t.Errorf("%d shortcuts listed", n)
	}
	for _, cmd := range []string{"pause", "partition", "slow", "clock-", "clock+", "release", "crash", "rejoin"} {
		if doc.Find(`[data-testid=faultbar] [data-cmd="`+cmd+`"] kbd`).Length() != 1 {
			t.Errorf("no %s button with its key", cmd)
		}
	}

	// Bad timings are refused on the page, with the reason.
	doc = tu.mustGetDoc(t, "/play?lease=demo&leaseDuration=2&renewDeadline=3&retryPeriod=x", http.StatusUnprocessableEntity)
	problems := text(doc.Find(`[data-testid=problems]`))
	if doc.Find(`[data-testid=problems] [data-testid=change-in-settings]`).Length() != 1 {
		t.Error("refused settings do not say where to change them")
	}
	for _, s := range []string{"retryPeriod must be a number", "must be greater than renewDeadline"} {
		if !strings.Contains(problems, s) {
			t.Errorf("problems %q lack %q", problems, s)
		}
	}
	if !strings.Contains(doc.Find(`script#play-config`).Text(), `"disabled":true`) {
		t.Error("a refused configuration still starts the candidate")
	}
	doc = tu.mustGetDoc(t, "/play", http.StatusUnprocessableEntity)
	if !strings.Contains(text(doc.Find(`[data-testid=problems]`)), "lease name must not be empty") {
		t.Error("no lease: not refused")
	}
	if n, line := doc.Find(`[data-testid=lease-link]`).Length(), text(doc.Find(`.lease-line`)); n != 0 || !strings.Contains(line, "default/—") {
		t.Errorf("no lease: the lease line links %d times and reads %q, want no link and default/—", n, line)
	}
	doc = tu.mustGetDoc(t, "/play?lease=demo", http.StatusOK)
	if line := text(doc.Find(`.lease-line`)); line != "lease default/demo" || doc.Find(`.lease-line [data-testid=lease-link][href="/leases/default/demo"]`).Length() != 1 {
		t.Errorf("the lease line reads %q, want a link after \"lease \"", line)
	}
}

func TestPlayPageCoordinated(t *testing.T) {
	tu := mustNewUI(t, t0)
	doc := tu.mustGetDoc(t, "/play?lease=demo&coordinated=1&binaryVersion=1.36.0&emulationVersion=1.35.0", http.StatusOK)
	if got := text(doc.Find(`[data-testid=coordinated]`)); got != "coordinated: binary 1.36.0, emulation 1.35.0" {
		t.Errorf("mode line %q", got)
	}
	if doc.Find(`[data-testid=preferred-holder]`).Length() != 1 {
		t.Error("no preferredHolder on the page")
	}
	cfg := doc.Find(`script#play-config`).Text()
	for _, s := range []string{`"coordinated":true`, `"binaryVersion":"1.36.0"`, `"emulationVersion":"1.35.0"`} {
		if !strings.Contains(cfg, s) {
			t.Errorf("config %s lacks %s", cfg, s)
		}
	}
	form := doc.Find(`[data-testid=settings] form`)
	if _, ok := form.Find(`input[name=coordinated]`).Attr("checked"); !ok {
		t.Error("coordinated not checked in the settings")
	}
	if v := form.Find(`input[name=emulationVersion]`).AttrOr("value", ""); v != "1.35.0" {
		t.Errorf("emulationVersion in the settings: %q", v)
	}
	// The timing calculator counts a plain election's failover; in coordinated mode the page says so.
	if doc.Find(`[data-testid=timings]`).Length() != 1 || !strings.Contains(text(doc.Find(`[data-testid=timings-coordinated]`)), "election controller picks each holder") {
		t.Error("a coordinated tab's timings do not say that the controller picks the holder")
	}

	// Not coordinated: no mode line, nothing coordinated in the config.
	doc = tu.mustGetDoc(t, "/play?lease=demo", http.StatusOK)
	if doc.Find(`[data-testid=coordinated]`).Length() != 0 || strings.Contains(doc.Find(`script#play-config`).Text(), "coordinated") ||
		doc.Find(`[data-testid=timings-coordinated]`).Length() != 0 {
		t.Error("coordinated mode shown without coordinated=1")
	}

	// Bad versions are refused on the page, with the reason.
	doc = tu.mustGetDoc(t, "/play?lease=demo&coordinated=1&binaryVersion=1.35.0&emulationVersion=1.36", http.StatusUnprocessableEntity)
	problems := text(doc.Find(`[data-testid=problems]`))
	if !strings.Contains(problems, `emulationVersion ("1.36") must be a version MAJOR.MINOR.PATCH`) {
		t.Errorf("problems %q", problems)
	}
	doc = tu.mustGetDoc(t, "/play?lease=demo&coordinated=1&binaryVersion=1.35.0&emulationVersion=1.36.0", http.StatusUnprocessableEntity)
	problems = text(doc.Find(`[data-testid=problems]`))
	if !strings.Contains(problems, "emulationVersion (1.36.0) must not be newer than binaryVersion (1.35.0)") {
		t.Errorf("problems %q", problems)
	}
	if !strings.Contains(doc.Find(`script#play-config`).Text(), `"disabled":true`) {
		t.Error("a refused configuration still starts the candidate")
	}
}

func TestLeasePageElectionDecisions(t *testing.T) {
	now := at(60)
	tu := mustNewUI(t, now)
	tu.putLease(t, lease("default", "demo", "tab-1", at(0), 10, 0), at(0))

	// Without the controller: no section.
	doc := tu.mustGetDoc(t, "/leases/default/demo", http.StatusOK)
	if doc.Find(`[data-testid=lease-decisions]`).Length() != 0 {
		t.Error("decisions shown without the controller")
	}

	var asked []string
	tu.setDecisions(func(ns, l string) []election.Decision {
		asked = append(asked, ns+"/"+l)
		return []election.Decision{
			{Time: at(1), Namespace: ns, Lease: l, Kind: election.KindElect, Candidate: "tab-1", Message: "created the lease with holder tab-1"},
			{Time: at(30), Namespace: ns, Lease: l, Kind: election.KindPrefer, Candidate: "tab-2", Message: "set preferredHolder tab-2 (holder tab-1 must step down)"},
		}
	})
	doc = tu.mustGetDoc(t, "/leases/default/demo", http.StatusOK)
	var got []string
	doc.Find(`[data-testid=lease-decisions] [data-testid=decision]`).Each(func(_ int, s *goquery.Selection) {
		got = append(got, s.AttrOr("data-kind", "")+" "+s.AttrOr("data-candidate", "")+": "+text(s.Find(".decision-text")))
	})
	want := []string{
		"prefer tab-2: set preferredHolder tab-2 (holder tab-1 must step down)",
		"elect tab-1: created the lease with holder tab-1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("decisions %q, want %q (newest first)", got, want)
	}
	if !slices.Contains(asked, "default/demo") {
		t.Errorf("asked for %v", asked)
	}
	// The live part carries them too.
	live := tu.mustGetDoc(t, "/leases/default/demo/live", http.StatusOK)
	if live.Find(`[data-testid=decision]`).Length() != 2 {
		t.Error("live part lacks the decisions")
	}
	// Without decisions yet: the section says why.
	tu.setDecisions(func(string, string) []election.Decision { return nil })
	doc = tu.mustGetDoc(t, "/leases/default/demo", http.StatusOK)
	if !strings.Contains(text(doc.Find(`[aria-label="election decisions"]`)), "No decisions about this lease yet") {
		t.Error("empty decisions not explained")
	}
}

// TestDashboardCandidatePingAndRenew shows when the election controller last pinged a
// LeaseCandidate and when it last renewed, as the coordinated election turns on both.
func TestDashboardCandidatePingAndRenew(t *testing.T) {
	now := t0.Add(time.Hour)
	tu := mustNewUI(t, now)
	ping := metav1.NewMicroTime(now.Add(-3 * time.Second))
	renew := metav1.NewMicroTime(now.Add(-2 * time.Second))
	lc := &coordinationv1beta1.LeaseCandidate{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1beta1", Kind: "LeaseCandidate"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "cand-a"},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: "sched", PingTime: &ping, RenewTime: &renew,
			BinaryVersion: "1.36.0", EmulationVersion: "1.35.0", Strategy: "OldestEmulationVersion"},
	}
	b, err := json.Marshal(lc)
	if err != nil {
		t.Fatal(err)
	}
	tu.st.put(store.Key{Resource: "leasecandidates.coordination.k8s.io", Namespace: "kube-system", Name: "cand-a"}, b, now)

	row := tu.mustGetDoc(t, "/", http.StatusOK).Find(`[data-testid=lease-candidates] [data-testid=candidate-row]`).First()
	for field, want := range map[string]string{
		"name": "kube-system/cand-a", "emulation": "1.35.0", "ping": clockTime(ping.Time), "renew": clockTime(renew.Time),
	} {
		if got := text(row.Find(`[data-field=` + field + `]`)); got != want {
			t.Errorf("candidate row %s = %q, want %q", field, got, want)
		}
	}
}

// TestDashboardTabModes: the tab list tells each tab's mode as the tab reported it: a
// coordinated tab with its versions and strategy (and that it is stepping down when the server
// prefers another candidate), a plain tab as plain with no versions.
func TestDashboardTabModes(t *testing.T) {
	tu := mustNewUI(t, t0)
	report := func(info tabproto.Report) {
		t.Helper()
		if err := tu.hub.report(tu.hub.addTab(TabUser{}, func() {}), info); err != nil {
			t.Fatal(err)
		}
	}
	report(tabproto.Report{Identity: "tab-new", Namespace: "default", Lease: "sched", State: "leader", Role: "leader", Holder: "tab-new",
		Coordinated: true, BinaryVersion: "1.36.0", EmulationVersion: "1.36.0", Strategy: "OldestEmulationVersion", PreferredHolder: "tab-old"})
	report(tabproto.Report{Identity: "tab-old", Namespace: "default", Lease: "sched", State: "follower", Role: "follower", Holder: "tab-new",
		Coordinated: true, BinaryVersion: "1.36.0", EmulationVersion: "1.35.0", Strategy: "OldestEmulationVersion", PreferredHolder: "tab-old"})
	report(tabproto.Report{Identity: "tab-plain", Namespace: "default", Lease: "demo", State: "leader", Role: "leader", Holder: "tab-plain",
		BinaryVersion: "1.36.0", EmulationVersion: "1.35.0", Strategy: "OldestEmulationVersion"})

	doc := tu.mustGetDoc(t, "/", http.StatusOK)
	row := func(id string) *goquery.Selection {
		t.Helper()
		r := doc.Find(`#tabs [data-testid=tab-row][data-identity="` + id + `"]`)
		if r.Length() != 1 {
			t.Fatalf("%d rows for %s", r.Length(), id)
		}
		return r
	}
	shown := func(s *goquery.Selection) bool { _, hidden := s.Attr("hidden"); return s.Length() == 1 && !hidden }
	type want struct {
		mode, binary, emulation, strategy string
		steppingDownFor                   string
	}
	for id, w := range map[string]want{
		"tab-new":   {"coordinated", "1.36.0", "1.36.0", "OldestEmulationVersion", "tab-old"},
		"tab-old":   {"coordinated", "1.36.0", "1.35.0", "OldestEmulationVersion", ""},
		"tab-plain": {"plain", "", "", "", ""},
	} {
		r := row(id)
		m := r.Find(`[data-testid=tab-mode]`)
		if got := m.AttrOr("data-mode", ""); got != w.mode {
			t.Errorf("%s: data-mode %q, want %q", id, got, w.mode)
		}
		var words []string
		m.Find(`[data-testid=tab-mode-word]`).Each(func(_ int, s *goquery.Selection) {
			if shown(s) {
				words = append(words, text(s))
			}
		})
		if strings.Join(words, ",") != w.mode {
			t.Errorf("%s: mode shown %q, want %q", id, words, w.mode)
		}
		versions := m.Find(`[data-field=versions]`)
		if shown(versions) != (w.mode == "coordinated") {
			t.Errorf("%s: versions shown %v", id, shown(versions))
		}
		for sel, v := range map[string]string{"tab-binary": w.binary, "tab-emulation": w.emulation, "tab-strategy": w.strategy} {
			if got := text(versions.Find(`[data-testid=` + sel + `]`)); got != v {
				t.Errorf("%s: %s %q, want %q", id, sel, got, v)
			}
		}
		step := r.Find(`[data-testid=tab-stepdown]`)
		if shown(step) != (w.steppingDownFor != "") {
			t.Errorf("%s: stepping down shown %v, want for %q", id, shown(step), w.steppingDownFor)
		}
		if w.steppingDownFor != "" {
			if got := text(step); got != "stepping down: the server prefers "+w.steppingDownFor {
				t.Errorf("%s: %q", id, got)
			}
		}
	}

	// The lease page lists its tabs with their mode too.
	tu.putLease(t, lease("default", "sched", "tab-new", t0.Add(-time.Second), 10, 0), t0.Add(-time.Second))
	page := tu.mustGetDoc(t, "/leases/default/sched", http.StatusOK)
	if got := text(page.Find(`[data-testid=lease-tab][data-identity=tab-old] [data-testid=tab-emulation]`)); got != "1.35.0" {
		t.Errorf("lease page: tab-old's emulation version %q", got)
	}
}

// TestHoldWithoutRenewTime checks the one expiry rule on every screen: a hold counts from the
// write that last changed the lease's record, as client-go's candidates count from when they
// observed it, whatever renewTime or acquireTime say; the card, the lease page and the feed
// agree that it expired.
func TestHoldWithoutRenewTime(t *testing.T) {
	now := t0.Add(time.Hour)
	tu := mustNewUI(t, now)
	bare := func(name string, acquire time.Time) *coordinationv1.Lease {
		l := lease("default", name, "a", time.Time{}, 10, 0)
		l.Spec.HolderIdentity = ptr("a")
		if !acquire.IsZero() {
			at := metav1.NewMicroTime(acquire)
			l.Spec.AcquireTime = &at
		}
		return l
	}
	tu.putLease(t, bare("old", time.Time{}), now.Add(-15*time.Second))
	tu.putLease(t, bare("fresh", time.Time{}), now.Add(-3*time.Second))
	tu.putLease(t, bare("acquired", now.Add(-4*time.Second)), now.Add(-time.Second))

	doc := tu.mustGetDoc(t, "/", http.StatusOK)
	want := map[string]struct {
		status, remaining string
		since             time.Time
	}{
		"old":      {"EXPIRED", "0 s", now.Add(-15 * time.Second)},
		"fresh":    {"HELD", "7.0 s", now.Add(-3 * time.Second)},
		"acquired": {"HELD", "9.0 s", now.Add(-time.Second)},
	}
	doc.Find(`#lease-grid [data-testid=lease-card]`).Each(func(_ int, c *goquery.Selection) {
		name := c.AttrOr("data-name", "")
		w := want[name]
		if got := text(c.Find(`[data-testid=lease-status]`)); got != w.status {
			t.Errorf("card %s: status %q, want %q", name, got, w.status)
		}
		if got := text(c.Find(`[data-testid=remaining]`)); got != w.remaining {
			t.Errorf("card %s: remaining %q, want %q", name, got, w.remaining)
		}
		if got, want := c.AttrOr("data-since", ""), strconv.FormatInt(w.since.UnixMilli(), 10); got != want {
			t.Errorf("card %s: data-since %s, want %s", name, got, want)
		}
		if got, want := c.Find(`[data-ring]`).AttrOr("data-expires", ""), strconv.FormatInt(w.since.Add(10*time.Second).UnixMilli(), 10); got != want {
			t.Errorf("card %s: ring expires %s, want %s", name, got, want)
		}
	})
	var feed []string
	doc.Find(`[data-testid=feed] [data-testid=feed-item]`).Each(func(_ int, li *goquery.Selection) { feed = append(feed, text(li)) })
	if !slices.ContainsFunc(feed, func(s string) bool { return strings.Contains(s, "a's hold on default/old expired") }) {
		t.Errorf("the feed does not tell default/old expired: %q", feed)
	}
	if slices.ContainsFunc(feed, func(s string) bool { return strings.Contains(s, "default/fresh expired") }) {
		t.Errorf("the feed tells default/fresh expired: %q", feed)
	}

	// The lease page's header says the same as the card.
	page := tu.mustGetDoc(t, "/leases/default/old", http.StatusOK)
	if got := text(page.Find(`.lease-now [data-testid=lease-status]`)); got != "EXPIRED" {
		t.Errorf("lease page of default/old: status %q, want EXPIRED", got)
	}
	if got := text(page.Find(`.lease-now [data-testid=remaining]`)); got != "0 s" {
		t.Errorf("lease page of default/old: remaining %q, want 0 s", got)
	}
	// Its Events panel says what it would list.
	if got := text(page.Find(`[data-testid=no-events]`)); !strings.Contains(got, "Event objects") {
		t.Errorf("lease page without events: %q", got)
	}
}

func ptr[T any](v T) *T { return &v }

// TestPlayRefusesForeignNamespace: a participant's tab for a namespace it may not write is
// refused up front with the reason, instead of sitting as a follower repeating 403s.
func TestPlayRefusesForeignNamespace(t *testing.T) {
	tu := mustNewUI(t, t0, func(o *Options) {
		o.TabUser = func(*http.Request) (TabUser, bool) {
			return TabUser{Name: "participant-01", Namespaces: []string{"participant-01", "arena"}}, true
		}
	})
	doc := tu.mustGetDoc(t, "/play?namespace=participant-02&lease=demo", http.StatusUnprocessableEntity)
	if got := text(doc.Find(`[data-testid=problems]`)); !strings.Contains(got, `participant-01 may not write in namespace "participant-02": open the tab in "participant-01" or "arena"`) {
		t.Errorf("problems %q", got)
	}
	// In Chinese the reason is Chinese too.
	doc = tu.mustGetDoc(t, "/play?namespace=participant-02&lease=demo&lang=zh", http.StatusUnprocessableEntity)
	if got := text(doc.Find(`[data-testid=problems]`)); !strings.Contains(got, `participant-01 不能在命名空间 "participant-02" 中写入：请在 "participant-01" 或 "arena" 中打开标签页`) {
		t.Errorf("problems in Chinese %q", got)
	}
	tu.mustGetDoc(t, "/play?namespace=participant-01&lease=demo", http.StatusOK)
	tu.mustGetDoc(t, "/play?namespace=arena&lease=demo", http.StatusOK)
}

// TestLeasePageAtMoment: /leases/{ns}/{name}?at= renders the lease as it was then, drawn by
// the same judge from its history: the holder of that moment in [data-testid=holder] (empty
// when nobody held it), the timeline up to then, the object as it was stored.
func TestLeasePageAtMoment(t *testing.T) {
	tu := mustNewUI(t, t0.Add(time.Minute))
	for s := 0; s <= 8; s += 2 {
		at := t0.Add(time.Duration(s) * time.Second)
		tu.putLease(t, lease("default", "demo", "alice", at, 10, 0), at)
	}
	at := t0.Add(20 * time.Second)
	tu.putLease(t, lease("default", "demo", "bob", at, 10, 1), at)
	released := lease("default", "demo", "", time.Time{}, 10, 1)
	released.Spec.HolderIdentity = ptr("")
	tu.putLease(t, released, t0.Add(30*time.Second))

	moment := func(s float64) *goquery.Document {
		at := t0.Add(time.Duration(s * float64(time.Second))).UTC().Format(time.RFC3339Nano)
		return tu.mustGetDoc(t, "/leases/default/demo?at="+url.QueryEscape(at), http.StatusOK)
	}
	for _, tc := range []struct {
		s              float64
		holder, status string
	}{
		{5.5, "alice", "HELD"}, // between two renewals the history cache folded
		{19, "alice", "EXPIRED"},
		{25, "bob", "HELD"},
		{35, "", "FREE"},
	} {
		doc := moment(tc.s)
		if got := doc.Find(`.lease-now [data-testid=holder]`).Text(); got != tc.holder {
			t.Errorf("at %vs: holder %q, want %q", tc.s, got, tc.holder)
		}
		if got := text(doc.Find(`.lease-now [data-testid=lease-status]`)); got != tc.status {
			t.Errorf("at %vs: status %q, want %q", tc.s, got, tc.status)
		}
		if doc.Find(`[data-testid=moment]`).Length() != 1 || doc.Find(`#lease-page`).AttrOr("data-at", "") == "" {
			t.Errorf("at %vs: the page does not say it shows a past moment", tc.s)
		}
	}
	if got := text(moment(5.5).Find(`[data-testid=yaml]`)); !strings.Contains(got, "renewTime: \"2026-03-01T14:00:04") {
		t.Errorf("at 5.5s the object is not the one stored at 4s:\n%s", got)
	}
	// The timeline of a moment ends then: bob's term is not on it before he took the lease.
	if n := moment(10).Find(`[data-testid=term]`).Length(); n != 1 {
		t.Errorf("at 10s: %d terms, want alice's alone", n)
	}
	if doc := tu.mustGetDoc(t, "/leases/default/demo", http.StatusOK); doc.Find(`[data-testid=moment]`).Length() != 0 {
		t.Error("the live page says it shows a past moment")
	}
	tu.mustGetDoc(t, "/leases/default/demo?at=yesterday", http.StatusBadRequest)
}

// TestDashboardTabStale: a tab that believes it leads while the record it last read names
// another holder is a stale leader on the dashboard and the lease page, as on the tab itself:
// the word STALE LEADER, the conflict icon and data-stale="true", its data-state still the
// tab's own (leader). The hub decides it from the report and sends it to dashboards.
func TestDashboardTabStale(t *testing.T) {
	tu := mustNewUI(t, t0)
	report := func(info tabproto.Report) {
		t.Helper()
		if err := tu.hub.report(tu.hub.addTab(TabUser{}, func() {}), info); err != nil {
			t.Fatal(err)
		}
	}
	report(tabproto.Report{Identity: "tab-a", Namespace: "default", Lease: "demo", State: "leader", Role: "leader", Holder: "intruder"})
	report(tabproto.Report{Identity: "tab-b", Namespace: "default", Lease: "demo", State: "paused", Role: "leader", Holder: "tab-c"})
	report(tabproto.Report{Identity: "tab-c", Namespace: "default", Lease: "demo", State: "leader", Role: "leader", Holder: "tab-c"})
	report(tabproto.Report{Identity: "tab-d", Namespace: "default", Lease: "demo", State: "follower", Role: "follower", Holder: "tab-c"})

	want := map[string]struct {
		state, word, icon string
		stale             bool
	}{
		"tab-a": {"leader", "STALE LEADER", "#i-conflict", true},
		"tab-b": {"paused", "STALE LEADER", "#i-conflict", true},
		"tab-c": {"leader", "LEADER", "#i-leader", false},
		"tab-d": {"follower", "FOLLOWER", "#i-follower", false},
	}
	for _, info := range tu.hub.Tabs() {
		if w := want[info.Identity]; info.Stale != w.stale {
			t.Errorf("hub: %s stale %v, want %v", info.Identity, info.Stale, w.stale)
		}
	}
	tu.putLease(t, lease("default", "demo", "tab-c", t0.Add(-time.Second), 10, 0), t0.Add(-time.Second))
	for _, page := range []struct{ path, rows string }{
		{"/", `#tabs [data-testid=tab-row]`},
		{"/leases/default/demo", `[data-testid=lease-tab]`},
	} {
		doc := tu.mustGetDoc(t, page.path, http.StatusOK)
		for id, w := range want {
			r := doc.Find(page.rows + `[data-identity="` + id + `"]`)
			if r.Length() != 1 {
				t.Fatalf("%s: %d rows for %s", page.path, r.Length(), id)
			}
			badge := r.Find(`[data-testid=state]`)
			got := struct {
				state, word, icon string
				stale             bool
			}{r.AttrOr("data-state", ""), text(badge.Find(".state-word")), badge.Find("use").AttrOr("href", ""), r.AttrOr("data-stale", "") == "true"}
			if got != w {
				t.Errorf("%s: %s shows %+v, want %+v", page.path, id, got, w)
			}
			if r.HasClass("stale") != w.stale {
				t.Errorf("%s: %s has class stale %v", page.path, id, r.HasClass("stale"))
			}
		}
	}
}

// TestUnknownPathForBrowsers: a path nothing serves gets the screens' 404 page in a browser,
// with the way back to the dashboard, and Echo's JSON 404 for any other client.
func TestUnknownPathForBrowsers(t *testing.T) {
	tu := mustNewUI(t, t0)
	for _, path := range []string{"/leases", "/leases/default", "/nope/<b>"} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
		w := tu.do(t, r)
		body := w.Body.String()
		if w.Code != http.StatusNotFound || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") ||
			!strings.Contains(body, "There is no page at "+html.EscapeString(path)+".") || !strings.Contains(body, `href="/"`) {
			t.Errorf("GET %s from a browser: %d %s\n%s", path, w.Code, w.Header().Get("Content-Type"), body)
		}
		w = tu.do(t, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusNotFound || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			t.Errorf("GET %s from a program: %d %s", path, w.Code, w.Header().Get("Content-Type"))
		}
	}
}

// TestScaledLeaseCard: a lesson's lease written at 2x (judge.TimeScaleAnnotation) shows the
// leaseDurationSeconds it wrote, and its ring drains over the hold the judge counts, half of
// that on the server's clock.
func TestScaledLeaseCard(t *testing.T) {
	now := t0.Add(time.Hour)
	tu := mustNewUI(t, now)
	l := lease("default", "fast", "alice", now.Add(-time.Second), 10, 0)
	l.Annotations = map[string]string{judge.TimeScaleAnnotation: "2"}
	tu.putLease(t, l, now.Add(-time.Second))
	doc := tu.mustGetDoc(t, "/", http.StatusOK)
	card := doc.Find(`[data-lease-card][data-name=fast]`)
	ring := card.Find(`[data-ring]`)
	since, _ := strconv.ParseInt(ring.AttrOr("data-since", ""), 10, 64)
	expires, _ := strconv.ParseInt(ring.AttrOr("data-expires", ""), 10, 64)
	if card.AttrOr("data-duration", "") != "10" || ring.AttrOr("data-duration", "") != "10" || expires-since != 5000 {
		t.Errorf("card duration %q, ring %q over %d ms, want 10 s written and a 5,000 ms hold",
			card.AttrOr("data-duration", ""), ring.AttrOr("data-duration", ""), expires-since)
	}
	if got := strings.TrimSpace(ring.Find(`[data-testid=remaining]`).Text()); got != "4.0 s" {
		t.Errorf("remaining %q, want 4.0 s (5 s of hold, 1 s gone)", got)
	}
}

// TestSlowChoiceLabels: each delay the slow-network control offers is labelled with its exact
// length, as its effect text says it ("0.25 s", not "0.2 s").
func TestSlowChoiceLabels(t *testing.T) {
	choices := slowChoices(context.Background(), nil)
	labels := map[int64]string{}
	for _, c := range choices {
		labels[c.Ms] = c.Label
		secs, err := strconv.ParseFloat(strings.TrimSuffix(c.Label, " s"), 64)
		if err != nil || int64(math.Round(secs*1000)) != c.Ms {
			t.Errorf("%d ms labelled %q", c.Ms, c.Label)
		}
	}
	if labels[250] != "0.25 s" || labels[1500] != "1.5 s" || labels[10000] != "10.0 s" {
		t.Errorf("labels %v", labels)
	}
}

// TestLongTermsReadInMinutes: a term of more than 100 s reads in minutes and seconds, in the
// page's language.
func TestLongTermsReadInMinutes(t *testing.T) {
	tu := mustNewUI(t, t0.Add(410*time.Second))
	tu.putLease(t, lease("default", "long", "a", t0, 600, 0), t0)
	tu.putLease(t, lease("default", "long", "b", t0.Add(409*time.Second), 600, 1), t0.Add(409*time.Second))
	for lang, want := range map[string]string{"en": "6 min 49 s", "zh": "6 分 49 秒"} {
		doc := tu.mustGetDoc(t, "/leases/default/long?lang="+lang, http.StatusOK)
		if got := text(doc.Find(`[data-testid=term][data-holder=a] [data-testid=term-duration]`)); got != want {
			t.Errorf("%s: a's term lasted %q, want %q", lang, got, want)
		}
	}
}

// TestStrategyBreaksBetweenWords: a lease's strategy may break between its words on a narrow
// screen, adds nothing to its text, and is escaped like anything a client wrote.
func TestStrategyBreaksBetweenWords(t *testing.T) {
	tu := mustNewUI(t, t0)
	for _, c := range []struct{ strategy, html string }{
		{"OldestEmulationVersion", "Oldest<wbr/>Emulation<wbr/>Version"},
		{"example.com/<b>Mine</b>", "example.com/&lt;b&gt;Mine&lt;/b&gt;"},
	} {
		l := lease("default", "cle", "a", t0, 10, 0)
		l.Spec.Strategy = (*coordinationv1.CoordinatedLeaseStrategy)(&c.strategy)
		tu.putLease(t, l, t0)
		doc := tu.mustGetDoc(t, "/leases/default/cle", http.StatusOK)
		dd := doc.Find(`.lease-now .facts dd`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			return strings.Contains(s.Text(), "Mine") || strings.Contains(s.Text(), "Oldest")
		})
		got, _ := dd.Html()
		if dd.Text() != c.strategy || got != c.html {
			t.Errorf("strategy %q: shown as %q (%q), want %q", c.strategy, dd.Text(), got, c.html)
		}
	}
}

// TestDeletedLeaseOffersNoDelete: the page of a lease that is gone shows what is left of its
// history, and no Delete button.
func TestDeletedLeaseOffersNoDelete(t *testing.T) {
	tu := mustNewUI(t, t0.Add(10*time.Second))
	tu.putLease(t, lease("default", "gone", "a", t0, 10, 0), t0)
	if n := tu.mustGetDoc(t, "/leases/default/gone", http.StatusOK).Find(`[data-testid=delete-lease]`).Length(); n != 1 {
		t.Errorf("a lease's page has %d Delete buttons, want 1", n)
	}
	tu.st.remove(store.Key{Resource: "leases.coordination.k8s.io", Namespace: "default", Name: "gone"}, t0.Add(5*time.Second))
	doc := tu.mustGetDoc(t, "/leases/default/gone", http.StatusOK)
	if doc.Find(`[data-testid=lease-missing]`).Length() != 1 || doc.Find(`[data-testid=delete-lease]`).Length() != 0 {
		t.Errorf("a deleted lease's page: %d missing notes, %d Delete buttons; want 1 and 0",
			doc.Find(`[data-testid=lease-missing]`).Length(), doc.Find(`[data-testid=delete-lease]`).Length())
	}
}

// TestDashboardOfAnEmptyNamespace: a dashboard opened on a namespace with nothing in it yet
// filters on it, as its forms write in it, rather than showing every namespace.
func TestDashboardOfAnEmptyNamespace(t *testing.T) {
	tu := mustNewUI(t, t0)
	tu.putLease(t, lease("default", "demo", "a", t0, 10, 0), t0)
	doc := tu.mustGetDoc(t, "/?namespace=nothing-here", http.StatusOK)
	if got := doc.Find(`#ns-filter option[selected]`).AttrOr("value", "?"); got != "nothing-here" {
		t.Errorf("the filter shows %q, want nothing-here", got)
	}
	if got := doc.Find(`#new-lease-namespace`).AttrOr("value", ""); got != "nothing-here" {
		t.Errorf("New lease writes in %q, want nothing-here", got)
	}
	if doc.Find(`#ns-filter option[value="Bad_Name"]`).Length() != 0 {
		t.Error("an option for a name that is no namespace name")
	}
	doc = tu.mustGetDoc(t, "/?namespace=Bad_Name", http.StatusOK)
	if doc.Find(`#ns-filter option[value="Bad_Name"]`).Length() != 0 {
		t.Error("the filter offers Bad_Name, which no namespace can be called")
	}
}

// TestLeasePageCutsLongValues: a lease whose holderIdentity is 2.5 MB (the API takes up to
// 3 MiB) makes no 2.5 MB page: the YAML shows the start of the value and how much more there
// is, and links the whole object in the API.
func TestLeasePageCutsLongValues(t *testing.T) {
	now := time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)
	tu := mustNewUI(t, now)
	holder := strings.Repeat("h", 2500000)
	l := lease("default", "big", holder, now.Add(-time.Second), 15, 0)
	l.Annotations = map[string]string{"note": strings.Repeat("é", 1000)}
	tu.putLease(t, l, now.Add(-time.Second))
	w := tu.do(t, httptest.NewRequest(http.MethodGet, "/leases/default/big", nil))
	if w.Code != http.StatusOK || w.Body.Len() > 200000 {
		t.Fatalf("lease page: %d, %d bytes", w.Code, w.Body.Len())
	}
	doc, err := goquery.NewDocumentFromReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	// (YAML folds a long line: compare the words.)
	yaml := strings.Join(strings.Fields(text(doc.Find(`[data-testid=yaml]`))), " ")
	wantHolder := "holderIdentity: " + strings.Repeat("h", maxYAMLValue) + "… (" + strconv.Itoa(2500000-maxYAMLValue) + " more bytes)"
	if !strings.Contains(yaml, wantHolder) || !strings.Contains(yaml, "… (1700 more bytes)") || !strings.Contains(yaml, "leaseDurationSeconds: 15") {
		t.Errorf("YAML:\n%.2000s", yaml)
	}
	if href := doc.Find(`[data-testid=object-url]`).AttrOr("href", ""); href != "/apis/coordination.k8s.io/v1/namespaces/default/leases/big" {
		t.Errorf("link to the whole object %q", href)
	}
}
