package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// history is a UI whose clock the test moves: the server's and the store's together, so that
// tab reports are recorded at the moment they are made.
type history struct {
	*testUI
	mu  sync.Mutex
	now time.Time
}

func newHistory(t *testing.T, start time.Time) *history {
	h := &history{now: start}
	h.testUI = mustNewUI(t, start, func(o *Options) { o.Now = h.clock })
	return h
}

func (h *history) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

// set moves both clocks to at.
func (h *history) set(at time.Time) {
	h.mu.Lock()
	h.now = at
	h.mu.Unlock()
	h.st.mu.Lock()
	h.st.now = at
	h.st.mu.Unlock()
}

// tab connects a candidate tab to the hub.
func (h *history) tab(t *testing.T) *hubTab {
	t.Helper()
	return h.hub.addTab(TabUser{}, func() {})
}

// say reports a tab's state through the hub at the moment at, as its page would.
func (h *history) say(t *testing.T, tab *hubTab, at time.Time, identity, lease string, state tabproto.State, holder string) {
	t.Helper()
	h.set(at)
	role := tabproto.RoleFollower
	if state == tabproto.StateLeader {
		role = tabproto.RoleLeader
	}
	if err := h.hub.report(tab, tabproto.Report{Identity: identity, Namespace: "default", Lease: lease, State: state, Role: role, Holder: holder}); err != nil {
		t.Fatal(err)
	}
}

// story writes a history: alice acquires x for 30 s at 1 s (her tab says so) and renews it at
// 10 s; y is created for carol at 20 s, for 15 s; at 30 s bob takes x over (his tab leads, alice's follows).
// The clocks then stand at 40 s.
func (h *history) story(t *testing.T) {
	t.Helper()
	s := func(v float64) time.Time { return t0.Add(time.Duration(v * float64(time.Second))) }
	alice, bob := h.tab(t), h.tab(t)
	h.set(s(1))
	h.putLease(t, lease("default", "x", "alice", s(1), 30, 0), s(1))
	h.say(t, alice, s(1), "alice", "x", tabproto.StateLeader, "alice")
	h.putLease(t, lease("default", "x", "alice", s(10), 30, 0), s(10))
	h.putLease(t, lease("default", "y", "carol<&>", s(20), 15, 0), s(20))
	h.putLease(t, lease("default", "x", "bob", s(30), 30, 1), s(30))
	h.say(t, bob, s(30), "bob", "x", tabproto.StateLeader, "bob")
	h.say(t, alice, s(32), "alice", "x", tabproto.StateFollower, "bob")
	h.set(s(40))
}

// atPath is path showing the moment s seconds after t0.
func atPath(path string, s float64) string {
	at := t0.Add(time.Duration(s * float64(time.Second))).UTC().Format(time.RFC3339Nano)
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + "at=" + url.QueryEscape(at)
}

// cards lists the dashboard's lease cards (not its templates) as "name=holder".
func cards(doc *goquery.Document) string {
	var out []string
	doc.Find(`#lease-grid [data-testid=lease-card]`).Each(func(_ int, c *goquery.Selection) {
		out = append(out, c.AttrOr("data-name", "?")+"="+text(c.Find(`[data-testid=holder]`)))
	})
	return strings.Join(out, " ")
}

// tabs lists the tab rows of the dashboard as "identity=state".
func tabs(sel *goquery.Selection) string {
	var out []string
	sel.Each(func(_ int, r *goquery.Selection) {
		out = append(out, r.AttrOr("data-identity", "?")+"="+r.AttrOr("data-state", "?"))
	})
	return strings.Join(out, " ")
}

// TestDashboardAtMoment: /?at= renders the dashboard as it was then: the leases that existed,
// each judged as of that moment, the feed up to then, and the candidate tabs as their recorded
// views say (not the hub's live tabs), with no actions; a bad moment is a 400 and a moment
// the change log no longer reaches is a 410, each saying why.
func TestDashboardAtMoment(t *testing.T) {
	h := newHistory(t, t0)
	h.story(t)

	doc := h.mustGetDoc(t, atPath("/", 5), http.StatusOK)
	if got := cards(doc); got != "x=alice" {
		t.Errorf("cards at 5 s: %q, want x held by alice and no y", got)
	}
	if got := tabs(doc.Find(`#tabs [data-testid=tab-row]`)); got != "alice=leader" {
		t.Errorf("tabs at 5 s: %q", got)
	}
	if doc.Find(`#dashboard`).AttrOr("data-at", "") == "" || doc.Find(`[data-testid=moment]`).Length() != 1 {
		t.Error("the dashboard at 5 s does not say it shows a past moment")
	}
	if href := doc.Find(`[data-testid=back-to-live]`).AttrOr("href", ""); href != "/" {
		t.Errorf("back to live: %q", href)
	}
	if n := doc.Find(`#tabs [data-cmd]`).Length(); n != 0 {
		t.Errorf("recorded tabs have %d fault buttons", n)
	}
	if body := doc.Find(`body`); body.AttrOr("data-at", "") == "" {
		t.Error("body[data-at] is empty: the page's actions are not hidden")
	}
	for _, f := range doc.Find(`#feed [data-testid=feed-item]`).EachIter() {
		if strings.Contains(text(f), "bob") || strings.Contains(text(f), "carol") {
			t.Errorf("the feed at 5 s tells what happened later: %q", text(f))
		}
	}

	doc = h.mustGetDoc(t, atPath("/", 35), http.StatusOK)
	if got := cards(doc); got != "x=bob y=carol<&>" {
		t.Errorf("cards at 35 s: %q", got)
	}
	if got := tabs(doc.Find(`#tabs [data-testid=tab-row]`)); got != "alice=follower bob=leader" {
		t.Errorf("tabs at 35 s: %q", got)
	}
	if got := text(doc.Find(`#feed`)); !strings.Contains(got, "bob took default/x over from alice") {
		t.Errorf("the feed at 35 s does not tell the takeover: %q", got)
	}

	if got := cards(h.mustGetDoc(t, atPath("/", 0.5), http.StatusOK)); got != "" {
		t.Errorf("cards before anything happened: %q", got)
	}
	// The fragment the time control swaps in is the same rendering.
	frag := h.mustGetDoc(t, atPath("/ui/dashboard/live", 5), http.StatusOK)
	if frag.Find(`#dashboard-live`).AttrOr("data-at", "") == "" || cards(frag) != "x=alice" {
		t.Errorf("fragment at 5 s: data-at %q, cards %q", frag.Find(`#dashboard-live`).AttrOr("data-at", ""), cards(frag))
	}
	// Live, the tab rows are the hub's, with their fault buttons.
	live := h.mustGetDoc(t, "/", http.StatusOK)
	if live.Find(`#dashboard`).AttrOr("data-at", "x") != "" || live.Find(`#tabs [data-cmd=pause]`).Length() != 2 {
		t.Error("the live dashboard shows a moment, or its tabs have no fault buttons")
	}

	bad := h.mustGetDoc(t, "/?at=yesterday", http.StatusBadRequest)
	if got := text(bad.Find(`[data-testid=error-message]`)); !strings.Contains(got, `at="yesterday" is not a moment`) {
		t.Errorf("bad moment: %q", got)
	}
}

// TestMomentCompacted: a moment older than what the change log keeps is a 410 that says so,
// on the dashboard, its fragment and the lease page.
func TestMomentCompacted(t *testing.T) {
	h := newHistory(t, t0)
	h.story(t)
	h.set(t0.Add(25 * time.Hour)) // past the log's 24 hours
	if _, err := h.st.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/ui/dashboard/live", "/leases/default/x", "/leases/default/x/live"} {
		doc := h.mustGetDoc(t, atPath(path, 5), http.StatusGone)
		if got := text(doc.Find(`[data-testid=error-message]`)); !strings.Contains(got, "The history no longer reaches back to") {
			t.Errorf("%s at a compacted moment: %q", path, got)
		}
	}
}

// TestLeasePageTabsAtMoment: the lease page of a moment lists the candidate tabs as their
// recorded views say.
func TestLeasePageTabsAtMoment(t *testing.T) {
	h := newHistory(t, t0)
	h.story(t)
	if got := tabs(h.mustGetDoc(t, atPath("/leases/default/x", 5), http.StatusOK).Find(`[data-testid=lease-tab]`)); got != "alice=leader" {
		t.Errorf("lease tabs at 5 s: %q", got)
	}
	if got := tabs(h.mustGetDoc(t, atPath("/leases/default/x", 35), http.StatusOK).Find(`[data-testid=lease-tab]`)); got != "alice=follower bob=leader" {
		t.Errorf("lease tabs at 35 s: %q", got)
	}
	// Before y was created, its page says so (it has a history, only later).
	if got := text(h.mustGetDoc(t, atPath("/leases/default/y", 5), http.StatusOK).Find(`[data-testid=lease-missing]`)); got != "This lease did not exist at that moment." {
		t.Errorf("y at 5 s: %q", got)
	}
}

// TestMoments: /ui/moments lists the window and the judge's events in order, the holders'
// acquisitions among them, with the texts as the judge cut them (not escaped for HTML).
func TestMoments(t *testing.T) {
	h := newHistory(t, t0)
	h.story(t)
	get := func(path string) (momentsReply, string) {
		w := h.do(t, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body.String())
		}
		var r momentsReply
		if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		return r, w.Body.String()
	}
	r, raw := get("/ui/moments?namespace=default")
	if r.From != "2026-03-01T14:00:01.000Z" || r.To != "2026-03-01T14:00:40.000Z" {
		t.Errorf("window %s to %s", r.From, r.To)
	}
	var held []string
	for i, m := range r.Moments {
		if i > 0 && m.At < r.Moments[i-1].At {
			t.Errorf("moment %d (%s) before the one before it (%s)", i, m.At, r.Moments[i-1].At)
		}
		if m.Kind == "acquired" || m.Kind == "takeover" {
			held = append(held, m.At+" "+m.Text)
		}
	}
	want := []string{
		"2026-03-01T14:00:01.000Z alice acquired default/x (transitions 0)",
		"2026-03-01T14:00:20.000Z carol<&> acquired default/y (transitions 0)",
		"2026-03-01T14:00:30.000Z bob took default/x over from alice (transitions 1)",
	}
	if strings.Join(held, "\n") != strings.Join(want, "\n") {
		t.Errorf("acquisitions:\n%s\nwant:\n%s", strings.Join(held, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(raw, "carol<&>") {
		t.Error("the texts are escaped for HTML")
	}
	if !strings.Contains(raw, `"kind":"role","text":"bob leads default/x, as it sees it"`) {
		t.Errorf("no role change of bob:\n%s", raw)
	}
	r, _ = get("/ui/moments?namespace=default&lease=y")
	for _, m := range r.Moments {
		if !strings.Contains(m.Text, "default/y") {
			t.Errorf("moments of y: %q", m.Text)
		}
	}
}

// TestMomentsAreTold: the page of each moment the time control steps to tells its event: the
// feed of the dashboard at that moment has the line.
func TestMomentsAreTold(t *testing.T) {
	h := newHistory(t, t0)
	h.story(t)
	w := h.do(t, httptest.NewRequest(http.MethodGet, "/ui/moments?namespace=default", nil))
	var r momentsReply
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, m := range r.Moments {
		if m.Kind == "role" {
			continue
		}
		kinds[m.Kind] = true
		feed := text(h.mustGetDoc(t, "/?at="+url.QueryEscape(m.At), http.StatusOK).Find(`#feed`))
		if !strings.Contains(feed, m.Text) {
			t.Errorf("the dashboard at %s does not tell %q; its feed: %s", m.At, m.Text, feed)
		}
	}
	for _, k := range []string{"acquired", "takeover", "expired", "split-brain"} {
		if !kinds[k] {
			t.Errorf("no %s among the moments: %+v", k, r.Moments)
		}
	}
}

// renewedEvery2s writes the lease default/demo held by b from 1 s, renewed every 2 s (its
// acquireTime kept, its renewTime moving, as client-go writes it) through last seconds, with a
// lease duration of 10 s; the clocks then stand at now seconds.
func (h *history) renewedEvery2s(t *testing.T, last, now float64) {
	t.Helper()
	s := func(v float64) time.Time { return t0.Add(time.Duration(v * float64(time.Second))) }
	for v := 1.0; v <= last; v += 2 {
		l := lease("default", "demo", "b", s(v), 10, 0)
		acquired := metav1.NewMicroTime(s(1))
		l.Spec.AcquireTime = &acquired
		h.set(s(v))
		h.putLease(t, l, s(v))
	}
	h.set(s(now))
}

// TestMomentCountsRenewals: a past moment inside a term that was renewed every 2 s for longer
// than its lease duration is judged as live judged it then: the term is held, its renewals up
// to then are counted, and no page of that moment tells an expiry that did not happen.
func TestMomentCountsRenewals(t *testing.T) {
	h := newHistory(t, t0)
	h.renewedEvery2s(t, 61, 62)
	// The live page reads the history first, as a server that has been running has.
	h.mustGetDoc(t, "/leases/default/demo", http.StatusOK)
	for _, path := range []string{"/leases/default/demo", "/leases/default/demo/live"} {
		doc := h.mustGetDoc(t, atPath(path, 21.5), http.StatusOK)
		rows := doc.Find(`[data-testid=term]`)
		if rows.Length() != 1 {
			t.Fatalf("%s at 21.5 s: %d terms, want 1: %s", path, rows.Length(), text(rows))
		}
		if ended := rows.AttrOr("data-ended", "?"); ended != "" {
			t.Errorf("%s at 21.5 s: b's term ended %q, want held", path, ended)
		}
		// Written at 1 s, renewed at 3, 5, ..., 21 s.
		if got := text(rows.Find(`td`).Last()); got != "10" {
			t.Errorf("%s at 21.5 s: %s renewals, want 10", path, got)
		}
		if n := doc.Find(`[data-testid=timeline-mark][data-kind=expired]`).Length(); n != 0 {
			t.Errorf("%s at 21.5 s: %d expiry marks", path, n)
		}
		if got := text(doc.Find(`[data-testid=lease-status]`)); !strings.Contains(strings.ToLower(got), "held") {
			t.Errorf("%s at 21.5 s: status %q", path, got)
		}
	}
	for _, path := range []string{"/", "/ui/dashboard/live"} {
		feed := text(h.mustGetDoc(t, atPath(path, 21.5), http.StatusOK).Find(`#feed`))
		if strings.Contains(feed, "expired") {
			t.Errorf("%s at 21.5 s tells an expiry: %s", path, feed)
		}
	}
}

// TestMomentCountsRenewalsOfALongTerm: a past moment inside a term that began longer ago than
// a past moment reads back (momentLookback) is still the same term, held since it began.
func TestMomentCountsRenewalsOfALongTerm(t *testing.T) {
	h := newHistory(t, t0)
	end := (momentLookback + 2*time.Minute).Seconds()
	h.renewedEvery2s(t, end-1, end)
	h.mustGetDoc(t, "/leases/default/demo", http.StatusOK)
	doc := h.mustGetDoc(t, atPath("/leases/default/demo", end-60.5), http.StatusOK)
	rows := doc.Find(`[data-testid=term]`)
	if rows.Length() != 1 || rows.AttrOr("data-ended", "?") != "" {
		t.Fatalf("%d terms (%s), want b's one, held", rows.Length(), text(rows))
	}
	if got := text(rows.Find(`td`).Eq(1)); got != clockTime(at(1)) {
		t.Errorf("b's term began at %s, want %s", got, clockTime(at(1)))
	}
	if n := doc.Find(`[data-testid=timeline-mark]`).Length(); n != 0 {
		t.Errorf("%d marks of an ended term", n)
	}
}

// TestMomentOfARoleChangeShowsIt: the moment of a candidate's role change, as the time
// control steps to it, shows the candidate in its new role, on the lease page and on the
// dashboard: a role change is dated back to when the candidate says it happened, before its
// report was recorded, and a report received within a millisecond is recorded after the
// millisecond its moment is written in.
func TestMomentOfARoleChangeShowsIt(t *testing.T) {
	h := newHistory(t, t0)
	s := func(v float64) time.Time { return t0.Add(time.Duration(v * float64(time.Second))) }
	alice, bob := h.tab(t), h.tab(t)
	report := func(tab *hubTab, received time.Time, identity string, state tabproto.State, holder string, roleChangedAgo time.Duration) {
		t.Helper()
		h.set(received)
		role := tabproto.RoleFollower
		if state == tabproto.StateLeader {
			role = tabproto.RoleLeader
		}
		clock := received.UnixMilli() + 5000 // the candidate's own clock, ahead of the server's
		r := tabproto.Report{Identity: identity, Namespace: "default", Lease: "x", State: state, Role: role, Holder: holder,
			Clock: clock, RoleSince: clock - roleChangedAgo.Milliseconds()}
		if err := h.hub.report(tab, r); err != nil {
			t.Fatal(err)
		}
	}
	h.set(s(1))
	h.putLease(t, lease("default", "x", "alice", s(1), 10, 0), s(1))
	report(alice, s(1.2), "alice", tabproto.StateLeader, "alice", 200*time.Millisecond)
	report(bob, s(1.5), "bob", tabproto.StateFollower, "alice", 0)
	h.set(s(20))
	h.putLease(t, lease("default", "x", "bob", s(20), 10, 1), s(20))
	// bob reports 400 ms after it became leader; alice, 0.4 ms into the millisecond it
	// learnt it follows.
	report(bob, s(20.4), "bob", tabproto.StateLeader, "bob", 400*time.Millisecond)
	report(alice, s(21.0004), "alice", tabproto.StateFollower, "bob", 0)
	h.set(s(30))

	w := h.do(t, httptest.NewRequest(http.MethodGet, "/ui/moments?namespace=default&lease=x", nil))
	var r momentsReply
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"alice leads default/x, as it sees it": "alice=leader",
		"bob follows on default/x":             "alice=leader bob=follower",
		"bob leads default/x, as it sees it":   "alice=leader bob=leader",
		"alice follows on default/x":           "alice=follower bob=leader",
	}
	seen := 0
	for _, m := range r.Moments {
		tabsThen, ok := want[m.Text]
		if m.Kind != "role" || !ok {
			continue
		}
		seen++
		lease := h.mustGetDoc(t, "/leases/default/x?at="+url.QueryEscape(m.At), http.StatusOK)
		if got := tabs(lease.Find(`[data-testid=lease-tab]`)); got != tabsThen {
			t.Errorf("the lease page at %s (%s) shows the tabs %q, want %q", m.At, m.Text, got, tabsThen)
		}
		dash := h.mustGetDoc(t, "/?at="+url.QueryEscape(m.At), http.StatusOK)
		if got := tabs(dash.Find(`#tabs [data-testid=tab-row]`)); got != tabsThen {
			t.Errorf("the dashboard at %s (%s) shows the tabs %q, want %q", m.At, m.Text, got, tabsThen)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d role changes among the moments: %+v", seen, len(want), r.Moments)
	}
}
