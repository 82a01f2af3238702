package ui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/judge"
	"github.com/leaselab/leaselab/web/lease/views"
)

// recordView records a tab's view of default/x as the hub does, received at s seconds.
func (tu *testUI) recordView(identity string, state tabproto.State, role tabproto.Role, holder string, s float64) {
	at := t0.Add(time.Duration(s * float64(time.Second)))
	r := tabproto.Report{Identity: identity, Namespace: "default", Lease: "x", State: state, Role: role, Holder: holder,
		Faults: tabproto.Faults{Paused: state == tabproto.StatePaused}, Clock: at.UnixMilli(), RoleSince: at.UnixMilli()}
	// The store commits it then, as it does a report it receives.
	defer tu.st.setNow(at)()
	tu.hub.views.Report(r, views.SourceTab, at)
}

// TestSplitBrainShown replays a GC pause: alice leads, is paused past her lease, bob takes
// over at 16 s, and alice learns of it at 21 s. The lease page lists the overlap with the
// contract's attributes and draws it on the timeline; a moment inside it shows it still
// lasting; a moment before it shows none and alice as the holder; the dashboard card counts
// it and the feed tells it.
func TestSplitBrainShown(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tu := mustNewUI(t, at(30))
	writeGCPause(t, tu)

	ms := func(s float64) string { return at(s).UTC().Format(momentLayout) }
	doc := tu.mustGetDoc(t, "/leases/default/x", 200)
	o := doc.Find("[data-testid=overlap]:not([data-cause=past-lease])")
	if o.Length() != 1 {
		t.Fatalf("%d overlaps listed, want 1", o.Length())
	}
	// Before bob took over, alice (paused) led past her lease, renewed last at 4 s: 14 s to 16 s.
	past := doc.Find("[data-testid=overlap][data-cause=past-lease]")
	if past.Length() != 1 || past.AttrOr("data-identities", "") != "alice" || past.AttrOr("data-start", "") != ms(14) || past.AttrOr("data-end", "") != ms(16) {
		t.Errorf("past-lease intervals: %d, %q from %q to %q; want alice from %s to %s", past.Length(), past.AttrOr("data-identities", ""),
			past.AttrOr("data-start", ""), past.AttrOr("data-end", ""), ms(14), ms(16))
	}
	for attr, want := range map[string]string{"data-identities": "alice,bob", "data-start": ms(16), "data-end": ms(21.5), "data-ongoing": "false", "data-cause": judge.CausePaused} {
		if got := o.AttrOr(attr, ""); got != want {
			t.Errorf("%s=%q, want %q", attr, got, want)
		}
	}
	if text := o.Find(".overlap-text").Text(); !strings.Contains(text, "alice") || !strings.Contains(text, "bob") || !strings.Contains(text, "5.5 s") {
		t.Errorf("overlap text %q does not say who and for how long", text)
	}
	if n := doc.Find("[data-testid=timeline-overlap]").Length(); n != 1 {
		t.Errorf("%d bands on the timeline, want 1", n)
	}
	if n := doc.Find("[data-testid=timeline-past-lease]").Length(); n != 1 {
		t.Errorf("%d past-lease bands on the timeline, want 1", n)
	}
	if n := doc.Find("[data-testid=past-lease-band][data-identity=alice]").Length(); n != 1 {
		t.Errorf("%d past-lease bands on the lanes, want 1", n)
	}
	if n := tu.mustGetDoc(t, "/stage?namespace=default&lease=x", 200).Find("[data-testid=past-lease-band][data-identity=alice]").Length(); n != 1 {
		t.Errorf("%d past-lease bands on the stage's lanes, want 1", n)
	}
	// Its start links the first moment that tells it: a disagreement is a split brain once it
	// has lasted the grace, and the instant it began still shows alice alone.
	link := o.Find("a[href*='?at=']")
	if want := "/leases/default/x?at=" + url.QueryEscape(ms(16.25)); link.AttrOr("href", "") != want {
		t.Errorf("the start links %q, want %q", link.AttrOr("href", ""), want)
	} else if at := tu.mustGetDoc(t, want, 200).Find("[data-testid=overlap]:not([data-cause=past-lease])"); at.Length() != 1 || at.AttrOr("data-ongoing", "") != "true" {
		t.Errorf("the linked moment lists %d overlaps, ongoing=%q; want the one, lasting", at.Length(), at.AttrOr("data-ongoing", ""))
	}

	doc = tu.mustGetDoc(t, "/leases/default/x?at="+url.QueryEscape(ms(18)), 200)
	o = doc.Find("[data-testid=overlap]:not([data-cause=past-lease])")
	if o.Length() != 1 || o.AttrOr("data-ongoing", "") != "true" || o.AttrOr("data-end", "") != ms(18) {
		t.Errorf("at 18 s: %d overlaps, ongoing=%q end=%q; want one lasting, ending at the moment", o.Length(), o.AttrOr("data-ongoing", ""), o.AttrOr("data-end", ""))
	}
	// A past moment's lasting interval runs to that moment, not to "now".
	if when := strings.Join(strings.Fields(o.Find(".overlap-when").Text()), " "); strings.Contains(when, "now") || !strings.Contains(when, "STILL GOING THEN") {
		t.Errorf("at 18 s the interval reads %q, want it to last up to the moment, still going then", when)
	}
	if h := doc.Find("[data-testid=holder]").Text(); h != "bob" {
		t.Errorf("at 18 s the holder is %q, want bob", h)
	}
	doc = tu.mustGetDoc(t, "/leases/default/x?at="+url.QueryEscape(ms(10)), 200)
	if n := doc.Find("[data-testid=overlap]").Length(); n != 0 {
		t.Errorf("at 10 s: %d overlaps, want none", n)
	}
	if h := doc.Find("[data-testid=holder]").Text(); h != "alice" {
		t.Errorf("at 10 s the holder is %q, want alice", h)
	}

	doc = tu.mustGetDoc(t, "/", 200)
	split := doc.Find("[data-lease-card][data-name=x] [data-testid=card-overlaps]")
	if _, hidden := split.Attr("hidden"); split.Length() != 1 || hidden || !strings.Contains(split.Text(), "1 split brain") {
		t.Errorf("card count: %d elements, hidden=%v, %q", split.Length(), hidden, split.Text())
	}
	sub, err := tu.dashboard.board.subscribe(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unsubscribe(sub)
	m := mustBoardMessage(t, sub)
	if len(m.Cards) != 1 || m.Cards[0].Overlaps != 1 {
		t.Fatalf("board cards %+v, want one with 1 overlap", m.Cards)
	}
	feed := feedTexts(m.Feed)
	if !strings.Contains(feed, "split-brain: split brain: alice believes it leads default/x while bob holds it") ||
		!strings.Contains(feed, "split-brain: alice and bob both believed") {
		t.Errorf("feed does not tell the split brain:\n%s", feed)
	}
}

// TestMomentBeyondTheCache: a moment older than what the history cache reads back is read from
// the change log around it, so its page names the holder of then and the term's true start.
func TestMomentBeyondTheCache(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tu := mustNewUI(t, at(300))
	tu.hist.lookback = 10
	for s := 0.0; s < 40; s += 2 {
		tu.putLease(t, lease("default", "x", "alice", at(s), 10, 0), at(s))
	}
	for s := 40.0; s < 200; s += 2 {
		tu.putLease(t, lease("default", "x", "bob", at(s), 10, 1), at(s))
	}
	// The live page reads the cache first: it reaches back 10 revisions only.
	tu.mustGetDoc(t, "/leases/default/x", 200)
	ms := at(30).UTC().Format(momentLayout)
	doc := tu.mustGetDoc(t, "/leases/default/x?at="+url.QueryEscape(ms), 200)
	if h := doc.Find("[data-testid=holder]").Text(); h != "alice" {
		t.Fatalf("holder at 30 s %q, want alice", h)
	}
	first := doc.Find("[data-testid=term]").Last()
	if got, want := first.AttrOr("data-holder", ""), "alice"; got != want {
		t.Fatalf("oldest term of %q, want %q", got, want)
	}
	if got, want := first.Find("td").Eq(1).Text(), clockTime(at(0)); got != want {
		t.Errorf("alice's term starts at %q, want %q", got, want)
	}
}

// TestBoardTellsSplitBrainWithoutAnotherChange: bob takes the lease while alice, paused,
// still believes she leads; nothing else changes. Once the disagreement has lasted the grace,
// the board counts it on the card and tells it, without waiting for another write.
func TestBoardTellsSplitBrainWithoutAnotherChange(t *testing.T) {
	tu, clock := mustNewClockedUI(t)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ctx := context.Background()
	tu.putLease(t, lease("default", "x", "alice", at(0), 10, 0), at(0))
	tu.recordView("alice", tabproto.StatePaused, tabproto.RoleLeader, "alice", 1)

	sub, err := tu.dashboard.board.subscribe(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unsubscribe(sub)
	if m := mustBoardMessage(t, sub); len(m.Cards) != 1 || m.Cards[0].Overlaps != 0 {
		t.Fatalf("first message %+v", m)
	}
	clock.Store(at(12).UnixNano())
	tu.putLease(t, lease("default", "x", "bob", at(12), 10, 1), at(12))
	m := mustBoardMessage(t, sub)
	if len(m.Cards) != 1 || m.Cards[0].Holder != "bob" || m.Cards[0].Overlaps != 0 {
		t.Fatalf("at the takeover: %+v", m.Cards)
	}
	// Nothing else is written; the board's own timer judges the lease again.
	clock.Store(at(12.5).UnixNano())
	tu.dashboard.board.apply(ctx, nil)
	m = mustBoardMessage(t, sub)
	if len(m.Cards) != 1 || m.Cards[0].Overlaps != 1 {
		t.Fatalf("after the grace: %+v", m.Cards)
	}
	if got := feedTexts(m.Feed); got != "split-brain: split brain: alice believes it leads default/x while bob holds it" {
		t.Errorf("feed %q", got)
	}
}

// writeGCPause writes the GC-pause story of TestSplitBrainShown in the order of time, as the
// server commits it: alice leads, is paused past her lease, bob takes over at 16 s, and alice
// learns of it at 21 s.
func writeGCPause(t *testing.T, tu *testUI) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// Written in the order of time, as the server commits them.
	write := func(holder string, s float64, transitions int32) func() {
		return func() { tu.putLease(t, lease("default", "x", holder, at(s), 10, transitions), at(s)) }
	}
	view := func(identity string, state tabproto.State, role tabproto.Role, holder string, s float64) func() {
		return func() { tu.recordView(identity, state, role, holder, s) }
	}
	for _, step := range []func(){
		write("alice", 0, 0), view("alice", tabproto.StateLeader, tabproto.RoleLeader, "alice", 0.1),
		view("bob", tabproto.StateFollower, tabproto.RoleFollower, "", 0.5),
		write("alice", 2, 0), write("alice", 4, 0),
		view("alice", tabproto.StatePaused, tabproto.RoleLeader, "alice", 5),
		write("bob", 16, 1), view("bob", tabproto.StateLeader, tabproto.RoleLeader, "bob", 16.05),
		write("bob", 18, 1), write("bob", 20, 1),
		view("alice", tabproto.StateLeader, tabproto.RoleLeader, "bob", 21),
		view("alice", tabproto.StateFollower, tabproto.RoleFollower, "bob", 21.5),
		write("bob", 22, 1), write("bob", 24, 1), write("bob", 26, 1), write("bob", 28, 1),
	} {
		step()
	}
}

// TestRecordingReplaysTheSplitBrain: the recording of a lease downloaded from the lease page,
// imported as leaselab replay does, shows the same holder at the same moments and the same
// split-brain interval.
func TestRecordingReplaysTheSplitBrain(t *testing.T) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tu := mustNewUI(t, at(30))
	writeGCPause(t, tu)
	w := tu.do(t, httptest.NewRequest(http.MethodGet, "/ui/history?namespace=default&lease=x", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("download: %d %s", w.Code, w.Body.String())
	}
	path := filepath.Join(t.TempDir(), "replay.db")
	sum, err := sqlite.Import(context.Background(), path, w.Body, tu.records.rec.Checker())
	if err != nil {
		t.Fatal(err)
	}
	replay := &Replay{File: "x.jsonl", From: at(0), To: at(30), FirstRevision: sum.FirstRevision, LastRevision: sum.LastRevision, Changes: sum.Changes}
	rp := mustNewUIOn(t, openTestStore(t, path, at(30)), at(30), func(o *Options) { o.Replay = replay })

	overlaps := func(u *testUI, path string) string {
		var out []string
		u.mustGetDoc(t, path, http.StatusOK).Find("[data-testid=overlap]").Each(func(_ int, o *goquery.Selection) {
			out = append(out, o.AttrOr("data-identities", "")+" "+o.AttrOr("data-start", "")+" "+o.AttrOr("data-end", ""))
		})
		return strings.Join(out, "\n")
	}
	for _, p := range []string{"/leases/default/x", "/leases/default/x?at=" + url.QueryEscape(at(18).UTC().Format(momentLayout))} {
		want, got := overlaps(tu, p), overlaps(rp, p)
		if want == "" || got != want {
			t.Errorf("%s: replay lists overlaps %q, the server %q", p, got, want)
		}
	}
	for _, s := range []float64{3, 18, 29} {
		p := "/leases/default/x?at=" + url.QueryEscape(at(s).UTC().Format(momentLayout))
		want := tu.mustGetDoc(t, p, http.StatusOK).Find("[data-testid=holder]").Text()
		if got := rp.mustGetDoc(t, p, http.StatusOK).Find("[data-testid=holder]").Text(); got != want || want == "" {
			t.Errorf("%s: replay holder %q, the server's %q", p, got, want)
		}
	}
}

// TestToldAt: the moment a split brain's link opens is OverlapGrace into it, rounded up to the
// millisecond the moment is written in, and never past its end.
func TestToldAt(t *testing.T) {
	start := t0.Add(10*time.Second + 32*time.Millisecond + 400*time.Microsecond)
	for _, c := range []struct {
		end  time.Time
		want time.Time
	}{
		{start.Add(5 * time.Second), t0.Add(10*time.Second + 283*time.Millisecond)},
		{start.Add(100 * time.Millisecond), t0.Add(10*time.Second + 133*time.Millisecond)},
		{t0.Add(10*time.Second + 282*time.Millisecond), t0.Add(10*time.Second + 282*time.Millisecond)},
	} {
		if got := toldAt(start, c.end); !got.Equal(c.want) {
			t.Errorf("toldAt(…, end %v) = %v, want %v", c.end.Sub(t0), got.Sub(t0), c.want.Sub(t0))
		}
	}
}

// TestPastTabsKeepTheirMode: at a past moment a coordinated candidate's row shows its mode, as
// it did live, not plain.
func TestPastTabsKeepTheirMode(t *testing.T) {
	tu := mustNewUI(t, t0.Add(10*time.Second))
	tu.putLease(t, lease("default", "x", "alice", t0, 60, 0), t0)
	at := t0.Add(time.Second)
	r := tabproto.Report{Identity: "alice", Namespace: "default", Lease: "x", State: tabproto.StateLeader, Role: tabproto.RoleLeader,
		Holder: "alice", Clock: at.UnixMilli(), RoleSince: at.UnixMilli(),
		Coordinated: true, BinaryVersion: "1.36.0", EmulationVersion: "1.35.0", Strategy: "OldestEmulationVersion"}
	restore := tu.st.setNow(at)
	tu.hub.views.Report(r, views.SourceTab, at)
	restore()
	doc := tu.mustGetDoc(t, atPath("/", 2), http.StatusOK)
	row := doc.Find(`[data-tab-row][data-identity=alice]`)
	if row.Length() != 1 || row.Find(`[data-testid=tab-mode]`).AttrOr("data-mode", "") != "coordinated" {
		html, _ := row.Html()
		t.Errorf("alice's row at a past moment (%d rows): mode %q\n%s", row.Length(), row.Find(`[data-testid=tab-mode]`).AttrOr("data-mode", ""), html)
	}
}
