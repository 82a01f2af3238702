package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// mustNewClockedUI is a UI whose clock stands at t0 until the test moves it (clock holds Unix
// nanoseconds).
func mustNewClockedUI(tb testing.TB) (*testUI, *atomic.Int64) {
	tb.Helper()
	clock := &atomic.Int64{}
	clock.Store(t0.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	return mustNewUI(tb, t0, func(o *Options) { o.Now = now }), clock
}

// mustBoardMessage waits for the next message of a board subscription.
func mustBoardMessage(tb testing.TB, sub *boardSub) boardMessage {
	tb.Helper()
	select {
	case data := <-sub.msgs:
		var m boardMessage
		if err := json.Unmarshal(data, &m); err != nil {
			tb.Fatal(err)
		}
		return m
	case <-sub.dropped:
		tb.Fatal("the subscription was dropped")
	case <-time.After(10 * time.Second):
		tb.Fatal("no board message within 10 s")
	}
	return boardMessage{}
}

func feedTexts(items []boardFeedItem) string {
	var s []string
	for _, f := range items {
		s = append(s, f.Kind+": "+f.Text)
	}
	return strings.Join(s, "\n")
}

// TestBoardTellsOnce: the board sends a dashboard the whole board, then each change as the
// judge reads it, and tells an expiry itself, once, when the hold runs out.
func TestBoardTellsOnce(t *testing.T) {
	tu, clock := mustNewClockedUI(t)
	ctx := context.Background()
	tu.putLease(t, lease("default", "demo", "a", t0, 2, 0), t0)

	sub, err := tu.dashboard.board.subscribe(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unsubscribe(sub)
	m := mustBoardMessage(t, sub)
	if !m.Reset || len(m.Cards) != 1 || m.Cards[0].Status != judge.StatusHeld || m.Cards[0].ExpiresMs != t0.Add(2*time.Second).UnixMilli() {
		t.Fatalf("first message: %+v", m)
	}
	if got, want := feedTexts(m.Feed), "acquired: a acquired default/demo (transitions 0)"; got != want {
		t.Errorf("first feed %q, want %q", got, want)
	}

	// A renewal is counted, not told.
	clock.Store(t0.Add(time.Second).UnixNano())
	tu.putLease(t, lease("default", "demo", "a", t0.Add(time.Second), 2, 0), t0.Add(time.Second))
	m = mustBoardMessage(t, sub)
	if m.Reset || m.Renewals != 1 || len(m.Feed) != 0 || len(m.Cards) != 1 || m.Cards[0].ExpiresMs != t0.Add(3*time.Second).UnixMilli() {
		t.Fatalf("after a renewal: %+v", m)
	}

	// The hold runs out: the server tells it.
	clock.Store(t0.Add(3500 * time.Millisecond).UnixNano())
	tu.dashboard.board.apply(ctx, nil)
	m = mustBoardMessage(t, sub)
	if len(m.Cards) != 1 || m.Cards[0].Status != judge.StatusExpired {
		t.Fatalf("after it ran out: %+v", m)
	}
	if got, want := feedTexts(m.Feed), "expired: a's hold on default/demo expired: not renewed in time"; got != want {
		t.Errorf("feed %q, want %q", got, want)
	}
	// Told once.
	tu.dashboard.board.apply(ctx, nil)
	select {
	case data := <-sub.msgs:
		t.Errorf("told again: %s", data)
	default:
	}

	// Another holder takes it; a dashboard that connects now gets the whole story.
	clock.Store(t0.Add(4 * time.Second).UnixNano())
	tu.putLease(t, lease("default", "demo", "b", t0.Add(4*time.Second), 2, 1), t0.Add(4*time.Second))
	m = mustBoardMessage(t, sub)
	if got, want := feedTexts(m.Feed), "acquired: b acquired default/demo after a's hold expired (transitions 1)"; got != want {
		t.Errorf("feed %q, want %q", got, want)
	}
	late, err := tu.dashboard.board.subscribe(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unsubscribe(late)
	m = mustBoardMessage(t, late)
	want := "acquired: a acquired default/demo (transitions 0)\n" +
		"expired: a's hold on default/demo expired: not renewed in time\n" +
		"acquired: b acquired default/demo after a's hold expired (transitions 1)"
	if got := feedTexts(m.Feed); !m.Reset || got != want {
		t.Errorf("a late dashboard's feed:\n%s\nwant:\n%s", got, want)
	}
}

// TestBoardCandidates: LeaseCandidate rows come with their strategies worded by the server,
// the whole v1alpha1 list in order for a candidate written through v1alpha1.
// TestBoardTellsDeletion: the board tells that a held lease was deleted when it happens, and a
// lease created again under the same name does not tell its history before that once more.
func TestBoardTellsDeletion(t *testing.T) {
	tu, clock := mustNewClockedUI(t)
	ctx := context.Background()
	tu.putLease(t, lease("arena", "shared", "a", t0, 10, 0), t0)
	sub, err := tu.dashboard.board.subscribe(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unsubscribe(sub)
	mustBoardMessage(t, sub)

	clock.Store(t0.Add(3 * time.Second).UnixNano())
	tu.st.remove(store.Key{Resource: "leases.coordination.k8s.io", Namespace: "arena", Name: "shared"}, t0.Add(3*time.Second))
	m := mustBoardMessage(t, sub)
	if len(m.Gone) != 1 {
		t.Fatalf("after the deletion: %+v", m)
	}
	if got, want := feedTexts(m.Feed), "deleted: arena/shared was deleted while a held it"; got != want {
		t.Errorf("feed %q, want %q", got, want)
	}

	clock.Store(t0.Add(5 * time.Second).UnixNano())
	tu.putLease(t, lease("arena", "shared", "a", t0.Add(5*time.Second), 10, 0), t0.Add(5*time.Second))
	m = mustBoardMessage(t, sub)
	if got, want := feedTexts(m.Feed), "acquired: a acquired arena/shared (transitions 0)"; got != want {
		t.Errorf("feed once created again:\n%s\nwant:\n%s", got, want)
	}
	late, err := tu.dashboard.board.subscribe(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unsubscribe(late)
	want := "acquired: a acquired arena/shared (transitions 0)\n" +
		"deleted: arena/shared was deleted while a held it\n" +
		"acquired: a acquired arena/shared (transitions 0)"
	if got := feedTexts(mustBoardMessage(t, late).Feed); got != want {
		t.Errorf("a late dashboard's feed:\n%s\nwant:\n%s", got, want)
	}
}

func TestBoardCandidates(t *testing.T) {
	tu := mustNewUI(t, t0)
	ctx := context.Background()
	tu.putCandidate(t, "default", "c1", "demo", coordinationv1.OldestEmulationVersion, nil)
	sub, err := tu.dashboard.board.subscribe(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unsubscribe(sub)
	m := mustBoardMessage(t, sub)
	if len(m.Candidates) != 1 || m.Candidates[0].Strategies != "OldestEmulationVersion" || m.Candidates[0].V1alpha1 {
		t.Fatalf("first message's candidates: %+v", m.Candidates)
	}
	tu.putCandidate(t, "default", "c2", "demo", "example.com/custom", []string{"example.com/custom", "OldestEmulationVersion"})
	m = mustBoardMessage(t, sub)
	if len(m.Candidates) != 1 || m.Candidates[0].Name != "c2" || m.Candidates[0].Strategies != "example.com/custom > OldestEmulationVersion" || !m.Candidates[0].V1alpha1 {
		t.Fatalf("a v1alpha1 candidate: %+v", m.Candidates)
	}
	if _, err := tu.st.Delete(ctx, store.Key{Resource: "leasecandidates.coordination.k8s.io", Namespace: "default", Name: "c1"}, 0); err != nil {
		t.Fatal(err)
	}
	m = mustBoardMessage(t, sub)
	if len(m.CandidatesGone) != 1 || m.CandidatesGone[0].Name != "c1" {
		t.Fatalf("after a delete: %+v", m)
	}
}

// TestHugeHolderIsShownShort: a megabyte holderIdentity (valid, as in Kubernetes) is shown cut
// on the cards, in the feed and on the timeline; only the object's YAML has it whole.
func TestHugeHolderIsShownShort(t *testing.T) {
	tu := mustNewUI(t, t0.Add(10*time.Second))
	huge := strings.Repeat("h", 1<<20)
	for i, holder := range []string{huge, "b", huge + "2", "c"} {
		at := t0.Add(time.Duration(i) * 2 * time.Second)
		tu.putLease(t, lease("default", "big", holder, at, 10, int32(i)), at)
	}
	rec := tu.do(t, httptest.NewRequest(http.MethodGet, "/", nil))
	if n := rec.Body.Len(); rec.Code != http.StatusOK || n > 100<<10 {
		t.Errorf("dashboard: %d, %d bytes; want under 100 KiB", rec.Code, n)
	}
	rec = tu.do(t, httptest.NewRequest(http.MethodGet, "/leases/default/big", nil))
	if n := rec.Body.Len(); rec.Code != http.StatusOK || n > (1<<20)+100<<10 {
		t.Errorf("lease page: %d, %d bytes; want the YAML's megabyte and under 100 KiB more", rec.Code, n)
	}
	sub, err := tu.dashboard.board.subscribe(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unsubscribe(sub)
	data := <-sub.msgs
	if len(data) > 20<<10 {
		t.Errorf("the board's first message is %d bytes", len(data))
	}
	if !strings.Contains(string(data), strings.Repeat("h", judge.MaxShown-1)+"…") {
		t.Errorf("the board does not show the holder cut")
	}
}

// TestBoardJudgesFromItsWatch: once the board has read a lease's history and its candidates'
// views, the changes its watches deliver (renewals, a takeover, a candidate's view) are
// handed to those caches as they arrive, and judging the lease reads nothing more from the
// change log; its card and feed are what a board that reads the whole log tells.
func TestBoardJudgesFromItsWatch(t *testing.T) {
	tu, clock := mustNewClockedUI(t)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ctx := context.Background()
	tu.putLease(t, lease("default", "x", "alice", at(0), 10, 0), at(0))
	tu.recordView("alice", tabproto.StateLeader, tabproto.RoleLeader, "alice", 0.5)

	sub, err := tu.dashboard.board.subscribe(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unsubscribe(sub)
	mustBoardMessage(t, sub)
	reads := tu.st.historyReads.Load()

	for _, s := range []float64{2, 4, 6} {
		clock.Store(at(s).UnixNano())
		tu.putLease(t, lease("default", "x", "alice", at(s), 10, 0), at(s))
		mustBoardMessage(t, sub)
	}
	clock.Store(at(20).UnixNano())
	tu.putLease(t, lease("default", "x", "bob", at(20), 10, 1), at(20))
	mustBoardMessage(t, sub)
	tu.recordView("bob", tabproto.StateLeader, tabproto.RoleLeader, "bob", 20.2)
	mustBoardMessage(t, sub)
	if n := tu.st.historyReads.Load() - reads; n != 0 {
		t.Errorf("the board read the change log %d times for changes its watches delivered", n)
	}

	// A board over the same store that reads everything from the log tells the same.
	fresh := mustNewUIOn(t, tu.st, t0, func(o *Options) { o.Now = tu.opts.Now }) // the same clock
	fsub, err := fresh.dashboard.board.subscribe(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.dashboard.board.unsubscribe(fsub)
	want := mustBoardMessage(t, fsub)
	tu.dashboard.board.mu.Lock()
	bl := tu.dashboard.board.leases[leaseKey{"default", "x"}]
	got := bl.card
	tu.dashboard.board.mu.Unlock()
	if len(want.Cards) != 1 {
		t.Fatalf("fresh board: %+v", want.Cards)
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want.Cards[0])
	if string(gj) != string(wj) {
		t.Errorf("card from the watch\n%s\nfrom the log\n%s", gj, wj)
	}
	var told []string
	for _, f := range tu.dashboard.board.feed {
		told = append(told, f.Kind+": "+f.Text)
	}
	if got, want := strings.Join(told, "\n"), feedTexts(want.Feed); got != want {
		t.Errorf("feed from the watch\n%s\nfrom the log\n%s", got, want)
	}
}

// TestBoardFollowsOneNamespace: a dashboard that follows one namespace gets that namespace's
// cards, feed and renewals only, nothing at all for a change elsewhere, and the whole
// namespace when it connects; a dashboard that follows every namespace gets everything.
func TestBoardFollowsOneNamespace(t *testing.T) {
	tu, clock := mustNewClockedUI(t)
	ctx := context.Background()
	tu.putLease(t, lease("team-a", "demo", "a", t0, 10, 0), t0)
	tu.putLease(t, lease("team-b", "demo", "b", t0, 10, 0), t0)

	all, err := tu.dashboard.board.subscribe(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unsubscribe(all)
	one, err := tu.dashboard.board.subscribe(ctx, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	defer tu.dashboard.board.unsubscribe(one)
	if m := mustBoardMessage(t, all); !m.Reset || len(m.Cards) != 2 || len(m.Feed) != 2 {
		t.Fatalf("every namespace, first message: %+v", m)
	}
	m := mustBoardMessage(t, one)
	if !m.Reset || len(m.Cards) != 1 || m.Cards[0].Namespace != "team-a" || len(m.Feed) != 1 || m.Feed[0].Namespace != "team-a" {
		t.Fatalf("team-a, first message: %+v", m)
	}

	// A renewal in team-b: told to the dashboard of every namespace, not to team-a's.
	clock.Store(t0.Add(time.Second).UnixNano())
	tu.putLease(t, lease("team-b", "demo", "b", t0.Add(time.Second), 10, 0), t0.Add(time.Second))
	if m := mustBoardMessage(t, all); m.Renewals != 1 || len(m.Cards) != 1 || m.Cards[0].Namespace != "team-b" {
		t.Fatalf("every namespace, after team-b's renewal: %+v", m)
	}
	// Then one in team-a: the next message team-a's dashboard gets is about team-a alone.
	clock.Store(t0.Add(2 * time.Second).UnixNano())
	tu.putLease(t, lease("team-a", "demo", "c", t0.Add(2*time.Second), 10, 1), t0.Add(2*time.Second))
	if m := mustBoardMessage(t, all); len(m.Cards) != 1 || m.Cards[0].Namespace != "team-a" || m.Cards[0].Holder != "c" {
		t.Fatalf("every namespace, after team-a's takeover: %+v", m)
	}
	m = mustBoardMessage(t, one)
	if m.Reset || m.Renewals != 0 || len(m.Cards) != 1 || m.Cards[0].Namespace != "team-a" || m.Cards[0].Holder != "c" {
		t.Fatalf("team-a, after the renewal elsewhere and its own takeover: %+v", m)
	}
	for _, f := range m.Feed {
		if f.Namespace != "team-a" {
			t.Errorf("team-a's dashboard was told %+v", f)
		}
	}
	select {
	case data := <-one.msgs:
		t.Errorf("team-a's dashboard got more: %s", data)
	default:
	}
}
