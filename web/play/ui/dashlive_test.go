package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// mustDashMessage waits for the next message of a dashboard following the live part.
func mustDashMessage(tb testing.TB, sub *dashSub) dashMessage {
	tb.Helper()
	select {
	case data := <-sub.msgs:
		var m dashMessage
		if err := json.Unmarshal(data, &m); err != nil {
			tb.Fatal(err)
		}
		return m
	case <-sub.dropped:
		tb.Fatal("the dashboard was dropped")
	case <-time.After(10 * time.Second):
		tb.Fatal("no message within 10 s")
	}
	return dashMessage{}
}

// mustDashMessageWith waits for a message of sub that puts the element id, and returns its
// fragment.
func mustDashMessageWith(tb testing.TB, sub *dashSub, id string) dashFragment {
	tb.Helper()
	for range 50 {
		for _, f := range mustDashMessage(tb, sub).Put {
			if f.ID == id {
				return f
			}
		}
	}
	tb.Fatalf("no message puts %s", id)
	return dashFragment{}
}

// mustGetBody GETs path as user ("" for nobody signed in) and returns the page as served.
func (tu *testUI) mustGetBody(tb testing.TB, path, user string) string {
	tb.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	if user != "" {
		r.Header.Set("X-Test-User", user)
	}
	w := tu.do(tb, r)
	if w.Code != http.StatusOK {
		tb.Fatalf("GET %s: %d", path, w.Code)
	}
	return w.Body.String()
}

// mustFollow follows the live part of namespace ns as user in lang, and returns its first
// message.
func (tu *testUI) mustFollow(tb testing.TB, ns, user string, lang i18n.Lang) (*dashSub, dashMessage) {
	tb.Helper()
	r := httptest.NewRequest(http.MethodGet, "/ui/dashboard/watch", nil)
	if user != "" {
		r.Header.Set("X-Test-User", user)
	}
	who, _ := tu.dashboard.signedIn(r)
	sub, first, err := tu.dashboard.board.follow(i18n.WithLang(context.Background(), lang), ns, who)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tu.dashboard.board.unfollow(sub) })
	var all dashMessage
	for i, data := range first {
		var m dashMessage
		if err := json.Unmarshal(data, &m); err != nil {
			tb.Fatal(err)
		}
		if m.Reset != (i == 0) {
			tb.Fatalf("message %d of the first says reset %v", i, m.Reset)
		}
		all.Reset, all.Keep, all.Put, all.Feed = true, append(all.Keep, m.Keep...), append(all.Put, m.Put...), append(all.Feed, m.Feed...)
	}
	return sub, all
}

// mustBeInPage fails unless every fragment is, byte for byte, in the page: the page and the
// stream rendered it with one component from one view model.
func mustBeInPage(tb testing.TB, page string, fs []dashFragment, what string) {
	tb.Helper()
	for _, f := range fs {
		if !strings.Contains(page, f.HTML) {
			tb.Errorf("%s: the stream's %s is not the page's:\nstream: %s", what, f.ID, f.HTML)
		}
	}
}

// setUpLiveDashboard is a dashboard with a held lease and its tabs, a free lease, a lease
// whose candidates disagree on the strategy, and a workshop's users (X-Test-User).
func setUpLiveDashboard(tb testing.TB) *testUI {
	tb.Helper()
	tu := mustNewUI(tb, t0, workshopUsers, func(o *Options) {
		o.MayCommandTabs = func(r *http.Request) bool { return r.Header.Get("X-Test-User") == "instructor" }
	})
	tu.setDecisions(fakeDecisions(map[string][]election.Decision{
		"default/sched": {{Time: t0.Add(-2 * time.Second), Kind: election.KindConflict, Message: conflictMsg}},
	}))
	tu.putLease(tb, lease("default", "demo", "tab-a", t0.Add(-time.Second), 10, 2), t0.Add(-time.Second))
	tu.putLease(tb, lease("default", "quiet", "", time.Time{}, 0, 0), t0)
	tu.putLease(tb, lease("p1", "mine", "tab-p", t0, 10, 0), t0)
	tu.putCandidate(tb, "default", "sched-a", "sched", coordinationv1.OldestEmulationVersion, nil)
	tu.putCandidate(tb, "default", "sched-b", "sched", "Other", nil)
	report := func(owner TabUser, r tabproto.Report) {
		tb.Helper()
		if err := tu.hub.report(tu.hub.addTab(owner, func() {}), r); err != nil {
			tb.Fatal(err)
		}
	}
	report(TabUser{}, tabproto.Report{Identity: "tab-a", Namespace: "default", Lease: "demo", State: "leader", Role: "leader", Holder: "tab-a",
		LastLog: tabproto.LogLine{At: 1, Kind: "renewed", Text: "renewed"}})
	report(TabUser{}, tabproto.Report{Identity: "tab-b", Namespace: "default", Lease: "demo", State: "follower", Role: "follower", Holder: "tab-a",
		Faults: tabproto.Faults{LatencyMs: 2000, ClockOffsetMs: -3000, ClockRate: 2}})
	report(TabUser{Name: "p1", Namespaces: []string{"p1", "arena"}}, tabproto.Report{Identity: "tab-p", Namespace: "p1", Lease: "mine",
		State: "stopped", Role: "follower", Faults: tabproto.Faults{Paused: true, LossPercent: 30}})
	return tu
}

// TestLiveFragmentsAreThePage: the dashboard's stream sends each card, row and count as the
// page renders it. For the same state, every fragment of its first message is, byte for byte,
// in the page: in English and in Chinese, for a participant (whose cards and tab rows say what
// they may do) and for the instructor (with the room). Then a lease is renewed, a tab joins,
// says a new decision (sent alone), is paused and leaves: the fragments sent are again the
// page's.
func TestLiveFragmentsAreThePage(t *testing.T) {
	tu := setUpLiveDashboard(t)
	for _, c := range []struct {
		user, ns string
		lang     i18n.Lang
	}{{"", "", i18n.EN}, {"", "", i18n.ZH}, {"p1", "p1", i18n.EN}, {"instructor", "", i18n.ZH}} {
		_, m := tu.mustFollow(t, c.ns, c.user, c.lang)
		page := tu.mustGetBody(t, "/?lang="+string(c.lang)+"&namespace="+c.ns, c.user)
		what := "as " + c.user + " in " + string(c.lang)
		mustBeInPage(t, page, m.Put, what)
		ids := map[string]bool{}
		for _, f := range m.Put {
			ids[f.ID] = true
		}
		want := []string{templates.CardID("p1", "mine"), templates.TabCountID, templates.LeaseNamesID}
		if c.ns == "" {
			want = append(want, templates.CardID("default", "demo"), templates.ElectionID("default", "sched"), templates.CandidateID("default", "sched-a"))
		}
		for _, id := range want {
			if !ids[id] {
				t.Errorf("%s: the first message lacks %s", what, id)
			}
		}
		if room := ids[templates.RoomListID]; room != (c.user == "instructor") {
			t.Errorf("%s: the room is sent: %v", what, room)
		}
		if len(m.Feed) == 0 {
			t.Errorf("%s: no feed", what)
		}
		for _, f := range m.Feed {
			if !strings.Contains(page, f) {
				t.Errorf("%s: the stream's feed line is not the page's: %s", what, f)
			}
		}
	}

	// The live part changes: the fragments sent are the page's again.
	sub, _ := tu.mustFollow(t, "", "", i18n.EN)
	tu.putLease(t, lease("default", "demo", "tab-a", t0, 10, 2), t0)
	card := mustDashMessageWith(t, sub, templates.CardID("default", "demo"))
	page := tu.mustGetBody(t, "/", "")
	mustBeInPage(t, page, []dashFragment{card}, "renewed")
	if !strings.Contains(card.HTML, `data-renew="`+strconv.FormatInt(t0.UnixMilli(), 10)+`"`) {
		t.Errorf("the renewed card: %s", card.HTML)
	}
	// A dashboard that connects now is sent the live part as it is now.
	_, late := tu.mustFollow(t, "", "", i18n.EN)
	mustBeInPage(t, page, late.Put, "a dashboard that connected later")

	// A tab's newest decision changes, and nothing else of its row: that alone is sent.
	tab := tu.hub.addTab(TabUser{}, func() {})
	follower := tabproto.Report{Identity: "tab-c", Namespace: "default", Lease: "demo", State: "follower", Role: "follower",
		LastLog: tabproto.LogLine{At: 1, Kind: "waiting", Text: "waiting"}}
	if err := tu.hub.report(tab, follower); err != nil {
		t.Fatal(err)
	}
	mustDashMessageWith(t, sub, templates.TabRowID(tab.id))
	follower.LastLog = tabproto.LogLine{At: 2, Kind: "waiting", Msg: &tabproto.Msg{Key: "log.lostRace", Args: []tabproto.Arg{{S: "tab-a"}}}}
	if err := tu.hub.report(tab, follower); err != nil {
		t.Fatal(err)
	}
	log := mustDashMessageWith(t, sub, templates.TabLogID(tab.id))
	mustBeInPage(t, tu.mustGetBody(t, "/", ""), []dashFragment{log}, "a decision")
	if log.In != "" || !strings.Contains(log.HTML, "tab-a was faster") {
		t.Errorf("the decision is sent as %+v", log)
	}

	// The tab is paused: its row is sent again.
	if err := tu.hub.report(tab, tabproto.Report{Identity: "tab-c", Namespace: "default", Lease: "demo", State: "paused", Role: "follower", Faults: tabproto.Faults{Paused: true}}); err != nil {
		t.Fatal(err)
	}
	row := mustDashMessageWith(t, sub, templates.TabRowID(tab.id))
	page = tu.mustGetBody(t, "/", "")
	mustBeInPage(t, page, []dashFragment{row}, "a tab paused")
	// It goes where the page has it.
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if next := doc.Find("#" + templates.TabsID + " > li#" + templates.TabRowID(tab.id)).Next(); row.In != templates.TabsID || row.Before != next.AttrOr("id", "") || row.Before == "" {
		t.Errorf("the new tab row goes in %q before %q; the page has it before %q", row.In, row.Before, next.AttrOr("id", ""))
	}
	tu.hub.removeTab(tab)
	for range 50 {
		m := mustDashMessage(t, sub)
		if len(m.Gone) > 0 {
			if m.Gone[0] != templates.TabRowID(tab.id) || !m.History {
				t.Errorf("the tab left: %+v", m)
			}
			mustBeInPage(t, tu.mustGetBody(t, "/", ""), m.Put, "a tab left")
			return
		}
	}
	t.Fatal("the tab's leaving is never told")
}

// TestLateDashboardIsSentTheLivePartAsItIs: a dashboard that connects is sent every card as
// it is now, also one that changed while no dashboard showed it.
func TestLateDashboardIsSentTheLivePartAsItIs(t *testing.T) {
	tu := setUpLiveDashboard(t)
	tu.mustFollow(t, "p1", "", i18n.EN)
	tu.putLease(t, lease("default", "demo", "tab-b", t0, 10, 3), t0)
	poll.Until(t, 10*time.Second, "a dashboard that connects shows tab-b holding default/demo", func() (bool, string) {
		sub, m := tu.mustFollow(t, "", "", i18n.EN)
		defer tu.dashboard.board.unfollow(sub)
		for _, f := range m.Put {
			if f.ID == templates.CardID("default", "demo") {
				return strings.Contains(f.HTML, `data-holder="tab-b"`), f.HTML
			}
		}
		return false, "no card"
	})
	_, m := tu.mustFollow(t, "", "", i18n.EN)
	mustBeInPage(t, tu.mustGetBody(t, "/", ""), m.Put, "a dashboard that connected after a change")
}

// TestLiveFragmentsSayWhatTheUserMayDo: a participant is sent the same card and tab row as
// the instructor, but for data-writable and data-commandable, as the page says them to each.
func TestLiveFragmentsSayWhatTheUserMayDo(t *testing.T) {
	tu := setUpLiveDashboard(t)
	attrs := func(user string) string {
		_, m := tu.mustFollow(t, "", user, i18n.EN)
		var got []string
		for _, f := range m.Put {
			if f.ID != templates.CardID("p1", "mine") && !strings.HasPrefix(f.ID, "tab-") || f.ID == templates.TabCountID {
				continue
			}
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(f.HTML))
			if err != nil {
				t.Fatal(err)
			}
			el := doc.Find("li").First()
			got = append(got, el.AttrOr("data-identity", el.AttrOr("data-name", ""))+" "+el.AttrOr("data-writable", "")+el.AttrOr("data-commandable", ""))
		}
		slices.Sort(got) // tabs that connected at one moment are listed in the order of their ids
		return strings.Join(got, ", ")
	}
	for user, want := range map[string]string{
		"instructor": "mine true, tab-a true, tab-b true, tab-p true",
		"p1":         "mine true, tab-a false, tab-b false, tab-p true",
		"p2":         "mine false, tab-a false, tab-b false, tab-p false",
	} {
		if got := attrs(user); got != want {
			t.Errorf("%s is sent %q, want %q", user, got, want)
		}
	}
}

// TestDashboardWatch: /ui/dashboard/watch sends the live part and takes fault commands for
// the tabs, answering a refused one.
func TestDashboardWatch(t *testing.T) {
	tu := setUpLiveDashboard(t)
	srv := httptest.NewServer(tu.echo)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dash := dialAs(t, ctx, srv, "/ui/dashboard/watch?namespace=p1&page-lang=zh", "instructor")
	m := readJSON(t, ctx, dash)
	puts, _ := m["put"].([]any)
	if m["type"] != "dash" || m["reset"] != true || len(puts) == 0 {
		t.Fatalf("first message: %v", m)
	}
	for _, p := range puts {
		f := p.(map[string]any)
		if id := f["id"].(string); strings.Contains(id, "default/") {
			t.Errorf("p1's dashboard is sent %s", id)
		}
		if f["id"] == templates.CardID("p1", "mine") && !strings.Contains(f["html"].(string), "候选者标签页") {
			t.Errorf("the card is not in Chinese: %s", f["html"])
		}
	}
	writeJSON(t, ctx, dash, map[string]any{"type": "command", "tab": "nope", "command": map[string]any{"type": "pause"}})
	if m := readJSON(t, ctx, dash); m["type"] != "error" || m["tab"] != "nope" || !strings.Contains(m["error"].(string), "no such tab") {
		t.Errorf("a command for no tab: %v", m)
	}
}

// TestLiveTellsATabsConflict: a tab that has just lost a race for its lease has it told in the
// feed of the dashboards open then, in each one's language, with what it said; what a tab
// says is text, never markup.
func TestLiveTellsATabsConflict(t *testing.T) {
	tu := setUpLiveDashboard(t)
	zh, _ := tu.mustFollow(t, "", "", i18n.ZH)
	tab := tu.hub.addTab(TabUser{}, func() {})
	say := func(at int64, kind string, msg *tabproto.Msg) {
		t.Helper()
		if err := tu.hub.report(tab, tabproto.Report{Identity: "<b>x</b>", Namespace: "default", Lease: "demo", State: "follower", Role: "follower",
			LastLog: tabproto.LogLine{At: at, Kind: kind, Text: "conflict: tab-a was faster", Msg: msg}}); err != nil {
			t.Fatal(err)
		}
	}
	say(1, "waiting", nil)
	row := mustDashMessageWith(t, zh, templates.TabRowID(tab.id))
	if strings.Contains(row.HTML, "<b>x</b>") || !strings.Contains(row.HTML, "&lt;b&gt;x&lt;/b&gt;") {
		t.Errorf("the identity is not escaped: %s", row.HTML)
	}
	say(2, "conflict", &tabproto.Msg{Key: "log.lostRace", Args: []tabproto.Arg{{S: "tab-a"}}})
	for range 50 {
		m := mustDashMessage(t, zh)
		if len(m.Feed) == 0 {
			continue
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(m.Feed[0]))
		if err != nil {
			t.Fatal(err)
		}
		li := doc.Find("li.feed-item")
		if got := strings.TrimSpace(li.Find("[data-field=text]").Text()); got != "<b>x</b>: 冲突：tab-a 更快" || !li.HasClass("feed-conflict") || !li.HasClass("fresh") {
			t.Errorf("the conflict is told as %q in %s", got, m.Feed[0])
		}
		return
	}
	t.Fatal("the conflict is never told")
}

// TestLiveNamespaceFilter: a namespace that comes into being, and one a lease is written in,
// are offered by the namespace filter of the dashboards open, as the page offers them, the
// namespace shown selected.
func TestLiveNamespaceFilter(t *testing.T) {
	tu := setUpLiveDashboard(t)
	sub, _ := tu.mustFollow(t, "p1", "", i18n.EN)
	tu.st.put(store.Key{Resource: tu.namespaces.StorageResource(), Name: "team-y"},
		[]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-y"}}`), t0)
	tu.putLease(t, lease("team-x", "demo", "", time.Time{}, 0, 0), t0)
	for range 50 {
		for _, f := range mustDashMessage(t, sub).Put {
			if f.ID != templates.NamespaceFilterID || !strings.Contains(f.HTML, `value="team-x"`) || !strings.Contains(f.HTML, `value="team-y"`) {
				continue
			}
			mustBeInPage(t, tu.mustGetBody(t, "/?namespace=p1", ""), []dashFragment{f}, "a namespace came")
			if !strings.Contains(f.HTML, `<option value="p1" selected>`) {
				t.Errorf("the filter does not show p1: %s", f.HTML)
			}
			return
		}
	}
	t.Fatal("the filter never offers team-x")
}

// TestLargeLivePartComesInParts: a room of many tabs is sent to a dashboard that connects in
// several messages, each small enough for one write; the first names every card and row.
func TestLargeLivePartComesInParts(t *testing.T) {
	tu := setUpLiveDashboard(t)
	for i := range 150 {
		if err := tu.hub.report(tu.hub.addTab(TabUser{}, func() {}), tabproto.Report{Identity: "tab-" + strconv.Itoa(i), Namespace: "default",
			Lease: "demo", State: "follower", Role: "follower"}); err != nil {
			t.Fatal(err)
		}
	}
	sub, first, err := tu.dashboard.board.follow(context.Background(), "", templates.SignedIn{})
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unfollow(sub)
	if len(first) < 3 {
		t.Errorf("the live part of 153 tabs comes in %d messages", len(first))
	}
	rows, keep := 0, 0
	for i, data := range first {
		var m dashMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if len(data) > resetChunk+64<<10 {
			t.Errorf("message %d is %d bytes", i, len(data))
		}
		if i == 0 {
			keep = len(m.Keep)
		}
		for _, f := range m.Put {
			if f.In == templates.TabsID {
				rows++
			}
		}
	}
	if rows != 153 || keep != 153+3+2+1 {
		t.Errorf("%d tab rows sent, %d elements kept; want 153 rows and 159 elements", rows, keep)
	}
}

// BenchmarkLiveFlush is one flush of the board in a room: 20 participants with 10 tabs each in
// their own namespace, every tab with a new decision in its log, followed by the instructor's
// dashboard (every namespace) and each participant's (their own). It reports the bytes sent
// to the instructor and to one participant per flush.
func BenchmarkLiveFlush(b *testing.B) {
	tu := mustNewUI(b, t0, workshopUsers, func(o *Options) {
		o.MayCommandTabs = func(r *http.Request) bool { return r.Header.Get("X-Test-User") == "instructor" }
	})
	type seat struct {
		tab *hubTab
		r   tabproto.Report
	}
	var seats []seat
	for p := range 20 {
		owner := "participant-" + strconv.Itoa(p)
		tu.putLease(b, lease(owner, "mine", "", time.Time{}, 0, 0), t0)
		for i := range 10 {
			s := seat{tu.hub.addTab(TabUser{Name: owner, Namespaces: []string{owner, "arena"}}, func() {}),
				tabproto.Report{Identity: owner + "-" + strconv.Itoa(i), Namespace: owner, Lease: "mine", State: "follower", Role: "follower"}}
			seats = append(seats, s)
			if err := tu.hub.report(s.tab, s.r); err != nil {
				b.Fatal(err)
			}
		}
	}
	var subs []*dashSub
	for _, user := range []string{"instructor", "participant-0"} {
		ns := map[string]string{"instructor": ""}[user]
		if user != "instructor" {
			ns = user
		}
		sub, _ := tu.mustFollow(b, ns, user, i18n.EN)
		subs = append(subs, sub)
	}
	for p := 1; p < 20; p++ {
		sub, _ := tu.mustFollow(b, "participant-"+strconv.Itoa(p), "participant-"+strconv.Itoa(p), i18n.EN)
		subs = append(subs, sub)
	}
	drain := func(s *dashSub) (n int) {
		for {
			select {
			case m := <-s.msgs:
				n += len(m)
			default:
				return n
			}
		}
	}
	ctx := context.Background()
	var instructor, participant int
	b.ResetTimer()
	for i := range b.N {
		for _, s := range seats {
			s.r.LastLog = tabproto.LogLine{At: int64(i + 1), Kind: "waiting", Text: "waiting " + strconv.Itoa(i)}
			if err := tu.hub.report(s.tab, s.r); err != nil {
				b.Fatal(err)
			}
		}
		tu.dashboard.board.apply(ctx, nil)
		instructor += drain(subs[0])
		participant += drain(subs[1])
		for _, s := range subs[2:] {
			drain(s)
		}
	}
	b.ReportMetric(float64(instructor)/float64(b.N), "instructor-B/flush")
	b.ReportMetric(float64(participant)/float64(b.N), "participant-B/flush")
}
