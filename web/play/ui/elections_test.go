package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/api/kinds/coordinationv1alpha1"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// putCandidate stores a LeaseCandidate as the API would. preferred, when not nil, makes it a
// candidate written through v1alpha1 with that preferredStrategies list.
func (tu *testUI) putCandidate(tb testing.TB, ns, name, lease string, strategy coordinationv1.CoordinatedLeaseStrategy, preferred []string) {
	tb.Helper()
	renew := metav1.NewMicroTime(tu.now.Add(-time.Second))
	lc := &coordinationv1beta1.LeaseCandidate{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1beta1", Kind: "LeaseCandidate"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: lease, RenewTime: &renew,
			BinaryVersion: "1.31.0", EmulationVersion: "1.31.0", Strategy: strategy},
	}
	if preferred != nil {
		b, err := json.Marshal(preferred)
		if err != nil {
			tb.Fatal(err)
		}
		lc.Annotations = map[string]string{coordinationv1alpha1.PreferredStrategiesAnnotation: string(b)}
	}
	b, err := json.Marshal(lc)
	if err != nil {
		tb.Fatal(err)
	}
	tu.st.put(store.Key{Resource: "leasecandidates.coordination.k8s.io", Namespace: ns, Name: name}, b, tu.now)
}

// fakeDecisions is a decisions source keyed by "namespace/lease", oldest first, as the
// controller keeps them.
func fakeDecisions(m map[string][]election.Decision) func(ns, lease string) []election.Decision {
	return func(ns, lease string) []election.Decision { return m[ns+"/"+lease] }
}

const conflictMsg = "strategy conflict: the candidates' preferred strategies have no common first choice; the lease is left alone until the candidates agree"

// TestDashboardElections: every lease that has LeaseCandidates is listed with the controller's
// latest decision, also when the lease does not exist; a strategy conflict is a warning there
// and on the lease's card; v1alpha1 candidates show their whole preferredStrategies list.
func TestDashboardElections(t *testing.T) {
	now := at(60)
	tu := mustNewUI(t, now)
	tu.putLease(t, lease("default", "demo", "cand-a", now.Add(-time.Second), 10, 1), now.Add(-time.Second))
	tu.putLease(t, lease("default", "clash", "", time.Time{}, 0, 0), now.Add(-time.Minute))
	tu.putLease(t, lease("default", "plain", "tab-1", now.Add(-time.Second), 10, 0), now.Add(-time.Second))
	// sched does not exist: its candidates disagree.
	tu.putCandidate(t, "default", "sched-a", "sched", "OldestEmulationVersion", []string{"OldestEmulationVersion", "example.com/custom"})
	tu.putCandidate(t, "default", "sched-b", "sched", "example.com/custom", []string{"example.com/custom", "OldestEmulationVersion"})
	tu.putCandidate(t, "default", "cand-a", "demo", "OldestEmulationVersion", nil)
	tu.putCandidate(t, "default", "clash-a", "clash", "OldestEmulationVersion", nil)
	tu.putCandidate(t, "team-a", "quiet", "later", "OldestEmulationVersion", nil)

	// Without the controller the leases with candidates are listed all the same, and say so.
	doc := tu.mustGetDoc(t, "/", http.StatusOK)
	if got := doc.Find(`[data-testid=elections]`).AttrOr("data-election", ""); got != "false" {
		t.Errorf("data-election %q without the controller", got)
	}
	if got := text(doc.Find(`#elections [data-testid=election-row]`).First().Find(`[data-testid=election-message]`)); got != "the election controller is off" {
		t.Errorf("without the controller: %q", got)
	}

	tu.setDecisions(fakeDecisions(map[string][]election.Decision{
		"default/sched": {
			{Time: at(40), Kind: election.KindPing, Message: "pinged sched-a, sched-b: election needed because the lease does not exist"},
			{Time: at(50), Kind: election.KindConflict, Message: conflictMsg},
		},
		"default/demo": {
			{Time: at(10), Kind: election.KindConflict, Message: "strategy conflict: old news"},
			{Time: at(20), Kind: election.KindElect, Candidate: "cand-a", Message: "created the lease with holder cand-a: picked cand-a"},
		},
		"default/clash": {{Time: at(55), Kind: election.KindConflict, Message: conflictMsg}},
		// plain has no candidates: its decisions are not listed and do not mark its card.
		"default/plain": {{Time: at(55), Kind: election.KindConflict, Message: conflictMsg}},
	}))
	doc = tu.mustGetDoc(t, "/", http.StatusOK)
	if got := doc.Find(`[data-testid=elections]`).AttrOr("data-election", ""); got != "true" {
		t.Errorf("data-election %q with the controller", got)
	}
	var rows []string
	doc.Find(`#elections [data-testid=election-row]`).Each(func(_ int, r *goquery.Selection) {
		rows = append(rows, strings.Join([]string{
			text(r.Find(`[data-testid=election-lease]`)),
			text(r.Find(`[data-field=candidates]`)),
			r.AttrOr("data-kind", ""),
			text(r.Find(`[data-testid=election-kind]`)),
			text(r.Find(`[data-testid=election-message]`)),
			text(r.Find(`[data-testid=election-age]`)),
			strconv.FormatBool(r.HasClass("decision-warning")),
		}, " | "))
	})
	want := []string{
		"default/clash | 1 | conflict | CONFLICT | " + conflictMsg + " | 5 s ago | true",
		"default/demo | 1 | elect | ELECT | created the lease with holder cand-a: picked cand-a | 40 s ago | false",
		"default/sched | 2 | conflict | CONFLICT | " + conflictMsg + " | 10 s ago | true",
		"team-a/later | 1 |  | NONE | no decision yet |  | false",
	}
	if !slices.Equal(rows, want) {
		t.Errorf("election rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if href := doc.Find(`#elections [data-testid=election-row][data-lease=sched] a`).AttrOr("href", ""); href != "/leases/default/sched" {
		t.Errorf("sched links to %q", href)
	}

	// The cards: clash carries the warning, demo (no longer in conflict) and plain (no
	// candidates) do not.
	conflict := map[string]string{}
	doc.Find(`#lease-grid [data-testid=lease-card]`).Each(func(_ int, c *goquery.Selection) {
		w := c.Find(`[data-testid=card-conflict]`)
		if _, hidden := w.Attr("hidden"); !hidden {
			conflict[c.AttrOr("data-name", "")] = text(w)
		}
	})
	if len(conflict) != 1 || conflict["clash"] != conflictMsg {
		t.Errorf("cards with a conflict warning: %v", conflict)
	}

	// Strategies: the v1alpha1 list in order, marked; a v1beta1 candidate's one strategy.
	strategies := map[string]string{}
	doc.Find(`#candidates [data-testid=candidate-row]`).Each(func(_ int, r *goquery.Selection) {
		s := text(r.Find(`[data-testid=candidate-strategy]`))
		if _, hidden := r.Find(`[data-testid=candidate-v1alpha1]`).Attr("hidden"); !hidden {
			s += " (" + text(r.Find(`[data-testid=candidate-v1alpha1]`)) + ")"
		}
		strategies[r.AttrOr("data-name", "")] = s
	})
	for name, w := range map[string]string{
		"sched-a": "OldestEmulationVersion > example.com/custom (v1alpha1)",
		"sched-b": "example.com/custom > OldestEmulationVersion (v1alpha1)",
		"cand-a":  "OldestEmulationVersion",
	} {
		if strategies[name] != w {
			t.Errorf("candidate %s strategy %q, want %q", name, strategies[name], w)
		}
	}

	// The filter hides the other namespaces' rows.
	doc = tu.mustGetDoc(t, "/?namespace=team-a", http.StatusOK)
	var shown []string
	doc.Find(`#elections [data-testid=election-row]`).Each(func(_ int, r *goquery.Selection) {
		if _, hidden := r.Attr("hidden"); !hidden {
			shown = append(shown, r.AttrOr("data-lease", ""))
		}
	})
	if !slices.Equal(shown, []string{"later"}) {
		t.Errorf("shown with ?namespace=team-a: %v", shown)
	}
}

// TestLeasePageWithoutLease: a lease that does not exist but has candidates has a page with
// its candidates and the controller's decisions, a conflict first; with neither it is a 404.
func TestLeasePageWithoutLease(t *testing.T) {
	now := at(60)
	tu := mustNewUI(t, now)
	tu.putCandidate(t, "default", "sched-a", "sched", "OldestEmulationVersion", []string{"OldestEmulationVersion", "example.com/custom"})
	tu.putCandidate(t, "default", "sched-b", "sched", "example.com/custom", []string{"example.com/custom", "OldestEmulationVersion"})
	tu.mustGetDoc(t, "/leases/default/nothing", http.StatusNotFound)

	doc := tu.mustGetDoc(t, "/leases/default/sched", http.StatusOK)
	if got := text(doc.Find(`[data-testid=lease-missing]`)); !strings.Contains(got, "2 LeaseCandidates name it") {
		t.Errorf("missing lease explained as %q", got)
	}
	if n := doc.Find(`[data-testid=lease-candidates] [data-testid=candidate-row]`).Length(); n != 2 {
		t.Errorf("%d candidate rows, want 2", n)
	}
	if got := text(doc.Find(`[data-testid=lease-candidates] [data-testid=candidate-strategy]`).First()); got != "OldestEmulationVersion > example.com/custom" {
		t.Errorf("first candidate's strategies %q", got)
	}
	if doc.Find(`[data-testid=lease-conflict]`).Length() != 0 {
		t.Error("a conflict shown without decisions")
	}

	tu.setDecisions(fakeDecisions(map[string][]election.Decision{
		"default/sched": {
			{Time: at(40), Kind: election.KindPing, Message: "pinged sched-a, sched-b"},
			{Time: at(50), Kind: election.KindConflict, Message: conflictMsg},
		},
	}))
	for _, path := range []string{"/leases/default/sched", "/leases/default/sched/live"} {
		doc = tu.mustGetDoc(t, path, http.StatusOK)
		if got := text(doc.Find(`[data-testid=lease-conflict]`)); !strings.Contains(got, conflictMsg) || !strings.Contains(got, "CONFLICT") {
			t.Errorf("%s: conflict warning %q", path, got)
		}
		var kinds []string
		doc.Find(`[data-testid=lease-decisions] [data-testid=decision]`).Each(func(_ int, s *goquery.Selection) { kinds = append(kinds, s.AttrOr("data-kind", "")) })
		if !slices.Equal(kinds, []string{"conflict", "ping"}) {
			t.Errorf("%s: decisions %v, want conflict, ping", path, kinds)
		}
	}
	// At a past moment before every decision kept, the page says that the server keeps the
	// newest only, not that the lease has had no decisions.
	tu.putLease(t, lease("default", "sched", "sched-a", at(10), 60, 0), at(10))
	for _, c := range []struct {
		at        float64
		decisions int
		later     bool
	}{{30, 0, true}, {45, 1, false}} {
		doc = tu.mustGetDoc(t, atPath("/leases/default/sched", c.at), http.StatusOK)
		n, later := doc.Find(`[data-testid=lease-decisions] [data-testid=decision]`).Length(), doc.Find(`[data-testid=decisions-later]`).Length() == 1
		if n != c.decisions || later != c.later {
			t.Errorf("at %v s: %d decisions, 'none kept from before' shown %v; want %d, %v", c.at, n, later, c.decisions, c.later)
		}
	}
}

// TestElectionEscaping: names users typed, inside the controller's messages and as candidate
// and lease names, come out as text on the dashboard and the lease page.
func TestElectionEscaping(t *testing.T) {
	now := at(60)
	tu := mustNewUI(t, now)
	// Lease names are validated by the API, but the store takes anything: the pages must not
	// trust them. (A name with a slash would not reach the lease page's route.)
	const evilLease = `<img src=x onerror=alert(1)>`
	tu.putCandidate(t, "default", "c1", evilLease, coordinationv1.CoordinatedLeaseStrategy(evil), []string{evil, "OldestEmulationVersion"})
	tu.putLease(t, lease("default", evilLease, "", time.Time{}, 0, 0), now)
	msg := "strategy conflict: " + evil + " wants " + evil + "; the lease is left alone until the candidates agree"
	tu.setDecisions(fakeDecisions(map[string][]election.Decision{
		"default/" + evilLease: {{Time: at(50), Kind: election.KindConflict, Candidate: evil, Message: msg}},
	}))
	leasePath := "/leases/default/" + url.PathEscape(evilLease)
	for _, path := range []string{"/", leasePath, leasePath + "/live"} {
		w := tu.do(t, httptest.NewRequest(http.MethodGet, path, nil))
		body := w.Body.String()
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: status %d", path, w.Code)
		}
		for _, markup := range []string{evil, "<script>alert", evilLease, "<img"} {
			if strings.Contains(body, markup) {
				t.Errorf("GET %s: the response contains the unescaped markup %s", path, markup)
			}
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			`[data-testid=lease-conflict]`:     msg,
			`[data-testid=decision]`:           msg,
			`[data-testid=candidate-strategy]`: evil + " > OldestEmulationVersion",
		}
		if path == "/" {
			want = map[string]string{
				`[data-testid=election-message]`:               msg,
				`[data-testid=election-lease]`:                 "default/" + evilLease,
				`[data-testid=card-conflict]`:                  msg,
				`#candidates [data-testid=candidate-strategy]`: evil + " > OldestEmulationVersion",
			}
		}
		for sel, w := range want {
			if got := text(doc.Find(sel).First()); !strings.Contains(got, w) {
				t.Errorf("GET %s: %s reads %q, want %q as text", path, sel, got, w)
			}
		}
	}
	// Pushed to programs as JSON, to be set as text.
	b := tu.tabs.decisionsMessage([]leaseKey{{"default", evilLease}}, i18n.EN)
	var m struct {
		Decisions []decisionSummary `json:"decisions"`
	}
	if err := json.Unmarshal(b, &m); err != nil || len(m.Decisions) != 1 || m.Decisions[0].Message != msg || m.Decisions[0].Lease != evilLease {
		t.Errorf("pushed %s (%v)", b, err)
	}
}

// TestDashboardDecisionsPushed: a new decision reaches an open dashboard's stream without any
// API object changing; the first message after a reconnect catches up.
func TestDashboardDecisionsPushed(t *testing.T) {
	tu := mustNewUI(t, at(60))
	decisions := map[string][]election.Decision{}
	var mu sync.Mutex
	tu.setDecisions(func(ns, l string) []election.Decision {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(decisions[ns+"/"+l])
	})
	decide := func(lease string, d election.Decision) {
		mu.Lock()
		decisions["default/"+lease] = append(decisions["default/"+lease], d)
		mu.Unlock()
		tu.tabs.decisionsChanged("default", lease)
	}
	srv := httptest.NewServer(tu.echo)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dash := mustDial(t, ctx, srv, "/ui/tabs/watch", srv.URL)

	readDecisions := func(ok func([]decisionSummary) bool) []decisionSummary {
		t.Helper()
		for {
			_, b, err := dash.Read(ctx)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			var m struct {
				Type      string            `json:"type"`
				Election  bool              `json:"election"`
				Decisions []decisionSummary `json:"decisions"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			if m.Type == "decisions" && m.Election && ok(m.Decisions) {
				return m.Decisions
			}
		}
	}
	decide("sched", election.Decision{Time: at(50), Kind: election.KindPing, Message: "pinged a, b"})
	readDecisions(func(ds []decisionSummary) bool {
		return len(ds) == 1 && ds[0].Lease == "sched" && ds[0].Kind == "ping"
	})
	decide("sched", election.Decision{Time: at(55), Kind: election.KindConflict, Message: conflictMsg})
	got := readDecisions(func(ds []decisionSummary) bool { return len(ds) == 1 && ds[0].Kind == "conflict" })
	if got[0].Message != conflictMsg || got[0].AtMs != at(55).UnixMilli() {
		t.Errorf("pushed %+v", got[0])
	}
	// The controller pings the disagreeing candidates again: the conflict stays what is shown.
	decide("sched", election.Decision{Time: at(55).Add(time.Second), Kind: election.KindPing, Message: "pinged a, b"})
	got = readDecisions(func(ds []decisionSummary) bool { return len(ds) == 1 && ds[0].Lease == "sched" })
	if got[0].Kind != "conflict" || got[0].AtMs != at(55).UnixMilli() {
		t.Errorf("after a routine ping, pushed %+v; want the conflict still", got[0])
	}

	// A dashboard that connects later gets every lease the feed knows of at once.
	decide("other", election.Decision{Time: at(56), Kind: election.KindElect, Candidate: "a", Message: "created the lease with holder a"})
	late := mustDial(t, ctx, srv, "/ui/tabs/watch", srv.URL)
	dash = late
	all := readDecisions(func(ds []decisionSummary) bool { return len(ds) == 2 })
	if all[0].Lease != "other" || all[0].Kind != "elect" || all[1].Lease != "sched" || all[1].Kind != "conflict" {
		t.Errorf("catch-up %+v", all)
	}
}

// fakeElections is an election controller that publishes what a test sends.
type fakeElections struct {
	decided chan election.Decision
	stopped chan struct{}
}

func (f *fakeElections) Decisions(string, string) []election.Decision { return nil }

func (f *fakeElections) Subscribe() (<-chan election.Decision, func()) {
	return f.decided, func() { close(f.stopped); close(f.decided) }
}

// TestElectionsSubscribed: the screens subscribe to the controller they are built with, mark
// each decided lease for open dashboards, and end the subscription with the server.
func TestElectionsSubscribed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeElections{decided: make(chan election.Decision), stopped: make(chan struct{})}
	tu := mustNewUI(t, at(60), func(o *Options) { o.Elections, o.Context = f, ctx })
	if tu.decisionsFunc() == nil {
		t.Fatal("the screens do not read the controller's decisions")
	}
	f.decided <- election.Decision{Namespace: "default", Lease: "sched", Kind: election.KindElect}
	poll.Until(t, 10*time.Second, "the decision reaches the dashboards' feed", func() (bool, string) {
		keys, _ := tu.tabs.dfeed.since(0)
		return slices.Contains(keys, leaseKey{"default", "sched"}), fmt.Sprintf("feed %v", keys)
	})
	cancel()
	select {
	case <-f.stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription outlives the server")
	}
}

// TestElectionDecisionsInChinese: the controller's decisions are sentences (election.Said)
// that the lease page, the dashboard and the dashboards' pushes put in the reader's language;
// in English they read as the controller's Message.
func TestElectionDecisionsInChinese(t *testing.T) {
	now := at(60)
	tu := mustNewUI(t, now)
	tu.putCandidate(t, "default", "sched-a", "sched", "OldestEmulationVersion", nil)
	tu.putCandidate(t, "default", "sched-b", "sched", "example.com/custom", nil)
	conflict := &election.ConflictError{First: "sched-a", Second: "sched-b", FirstStrategy: "OldestEmulationVersion", SecondStrategy: "example.com/custom"}
	conflictSays := election.Said{Key: "election.conflict", Args: []any{conflict.Says()}}
	pingSays := election.Said{Key: "election.pinged", Args: []any{
		election.Said{Key: election.KeyList, Args: []any{"sched-a", "sched-b"}}, election.Said{Key: "election.noLease"}}}
	const (
		conflictEn = `strategy conflict: candidates "sched-a", "sched-b" at same binary version but received differing strategies OldestEmulationVersion, example.com/custom; the lease is left alone until the candidates agree`
		conflictZh = `策略冲突：候选者 "sched-a"、"sched-b" 的二进制版本相同，却提出了不同的策略 OldestEmulationVersion、example.com/custom；在候选者达成一致之前不改动租约`
		pingEn     = "pinged sched-a, sched-b: election needed because the lease does not exist"
		pingZh     = "已 ping sched-a、sched-b：需要选举，因为租约不存在"
	)
	if got := conflictSays.English(); got != conflictEn {
		t.Errorf("English: %q", got)
	}
	tu.setDecisions(fakeDecisions(map[string][]election.Decision{
		"default/sched": {
			{Time: at(40), Kind: election.KindPing, Message: pingSays.English(), Says: pingSays},
			{Time: at(50), Kind: election.KindConflict, Message: conflictSays.English(), Says: conflictSays},
		},
	}))
	for _, c := range []struct{ lang, conflict, ping string }{{"en", conflictEn, pingEn}, {"zh", conflictZh, pingZh}} {
		doc := tu.mustGetDoc(t, "/leases/default/sched?lang="+c.lang, http.StatusOK)
		var texts []string
		doc.Find(`[data-testid=lease-decisions] [data-testid=decision] .decision-text`).Each(func(_ int, s *goquery.Selection) { texts = append(texts, text(s)) })
		if !slices.Equal(texts, []string{c.conflict, c.ping}) {
			t.Errorf("%s: the lease page's decisions %q", c.lang, texts)
		}
		doc = tu.mustGetDoc(t, "/?lang="+c.lang, http.StatusOK)
		if got := text(doc.Find(`#elections [data-testid=election-row] [data-testid=election-message]`).First()); got != c.conflict {
			t.Errorf("%s: the dashboard's decision %q", c.lang, got)
		}
		l, _ := i18n.Parse(c.lang)
		var m struct {
			Decisions []decisionSummary `json:"decisions"`
		}
		if err := json.Unmarshal(tu.tabs.decisionsMessage([]leaseKey{{"default", "sched"}}, l), &m); err != nil || len(m.Decisions) != 1 || m.Decisions[0].Message != c.conflict {
			t.Errorf("%s: pushed %+v (%v)", c.lang, m.Decisions, err)
		}
	}
}
