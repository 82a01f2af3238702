package ui

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/lease/recording"
	"github.com/leaselab/leaselab/web/lease/traffic"
)

// TestStageDraws: the stage draws each candidate's role, its timers placed on the server's
// clock, its requests (one answered, one in flight), the record, and a client seen at the
// door; without a lease named it answers 400.
func TestStageDraws(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tu := mustNewUI(t, now)
	tu.putLease(t, lease("default", "demo", "alice", now.Add(-time.Second), 15, 2), now.Add(-time.Second))
	ms := now.UnixMilli()
	alice := tu.hub.Enter(TabUser{}, func(tabproto.Command) error { return nil })
	// alice's clock runs 10 s ahead: her timers and requests are placed by the report's arrival.
	own := ms + 10_000
	alice.Report(tabproto.Report{Identity: "alice", Namespace: "default", Lease: "demo", State: tabproto.StateLeader,
		Role: tabproto.RoleLeader, Holder: "alice", Clock: own,
		Timers:  &tabproto.Timers{ExpiresInMs: 14_000, RenewByMs: 9_000, RetryInMs: 1_500, LeaseMs: 15_000, RenewDeadlineMs: 10_000, RetryPeriodMs: 2_000},
		Flights: []tabproto.Flight{{ID: 1, Verb: "PUT", StartMs: own - 300, EndMs: own - 200, Outcome: "200"}, {ID: 2, Verb: "GET", StartMs: own - 50}}})
	bob := tu.hub.Enter(TabUser{}, func(tabproto.Command) error { return nil })
	bob.Report(tabproto.Report{Identity: "bob", Namespace: "default", Lease: "demo", State: tabproto.StatePaused,
		Role: tabproto.RoleFollower, Holder: "alice", Clock: ms, Faults: tabproto.Faults{Paused: true}})
	tu.tap.finish(tapKey{"default", "demo"}, tu.tap.begin(tapKey{"default", "demo"}, "kubectl", "PUT"), http.StatusConflict)

	doc := tu.mustGetDoc(t, "/stage?namespace=default&lease=demo", http.StatusOK)
	roles := map[string]string{}
	doc.Find(`[data-testid=stage-candidate]`).Each(func(_ int, s *goquery.Selection) {
		roles[s.AttrOr("data-identity", "")] = s.AttrOr("data-role", "")
	})
	if roles["alice"] != "leader" || roles["bob"] != "paused" || roles["kubectl"] != "client" || len(roles) != 3 {
		t.Errorf("roles %v", roles)
	}
	due := func(ring string) string {
		return doc.Find(`[data-identity=alice] [data-timer=`+ring+`]`).AttrOr("data-due-ms", "none")
	}
	for ring, in := range map[string]int64{"expiry": 14_000, "renew": 9_000, "retry": 1_500} {
		if got := due(ring); got != strconv.FormatInt(ms+in, 10) {
			t.Errorf("alice's %s ring due %s, want %d", ring, got, ms+in)
		}
	}
	if n := doc.Find(`[data-identity=bob] [data-timer]`).Length(); n != 0 {
		t.Errorf("bob reported no timers, yet has %d rings", n)
	}
	reqs := map[string]string{}
	doc.Find(`[data-testid=stage-request]`).Each(func(_ int, s *goquery.Selection) {
		reqs[s.AttrOr("data-identity", "")+" "+s.AttrOr("data-verb", "")] = s.AttrOr("data-outcome", "") + "@" + s.AttrOr("data-start-ms", "")
	})
	want := map[string]string{"alice PUT": "200@" + strconv.FormatInt(ms-300, 10), "alice GET": "@" + strconv.FormatInt(ms-50, 10),
		"kubectl PUT": "409@" + strconv.FormatInt(ms, 10)}
	for k, v := range want {
		if reqs[k] != v {
			t.Errorf("request %s: %q, want %q (all %v)", k, reqs[k], v, reqs)
		}
	}
	if h := doc.Find(`[data-testid=stage-holder]`).Text(); h != "alice" {
		t.Errorf("record holder %q", h)
	}
	tu.mustGetDoc(t, "/stage?namespace=default", http.StatusBadRequest)
}

// TestRequestTap: the door sees a client's request on a lease with its verb and status, and
// leaves a candidate's (which reports its own) and every other resource alone.
func TestRequestTap(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tap := newRequestTap(func() time.Time { return now }, nil)
	serve := func(info request.Info, header http.Header) {
		r := httptest.NewRequest(http.MethodPut, "/x", nil)
		r.Header = header
		r = r.WithContext(request.WithInfo(r.Context(), info))
		c := echo.New().NewContext(r, httptest.NewRecorder())
		if err := tap.middleware(func(c echo.Context) error { return echo.NewHTTPError(http.StatusConflict) })(c); err == nil {
			t.Fatal("the handler's error was lost")
		}
	}
	lease := request.Info{IsResourceRequest: true, Group: "coordination.k8s.io", Resource: "leases", Namespace: "default", Name: "demo", Verb: "update"}
	serve(lease, http.Header{"User-Agent": {"kubectl/v1.36.0 (linux/amd64)"}})
	serve(lease, http.Header{CandidateHeader: {"alice"}})
	other := lease
	other.Resource = "leasecandidates"
	serve(other, http.Header{})
	got := tap.recent("default", "demo", now.Add(-time.Minute))
	if len(got) != 1 || got[0].who != "kubectl" || got[0].verb != "PUT" || got[0].status != http.StatusConflict {
		t.Errorf("seen %+v", got)
	}

	// The writes that succeeded are counted, a candidate's too (it reports its own requests, but
	// the stage redraws sooner after a write): the stage's watch follows the count.
	_, unsubscribe := tap.subscribe("default", "demo")
	defer unsubscribe()
	ok := func(header http.Header) {
		r := httptest.NewRequest(http.MethodPut, "/x", nil)
		r.Header = header
		r = r.WithContext(request.WithInfo(r.Context(), lease))
		c := echo.New().NewContext(r, httptest.NewRecorder())
		if err := tap.middleware(func(c echo.Context) error { return c.NoContent(http.StatusOK) })(c); err != nil {
			t.Fatal(err)
		}
	}
	before := tap.writes("default", "demo")
	ok(http.Header{CandidateHeader: {"alice"}})
	ok(http.Header{"User-Agent": {"kubectl/v1.36.0 (linux/amd64)"}})
	serve(lease, http.Header{CandidateHeader: {"alice"}}) // a 409: not a write
	if n := tap.writes("default", "demo") - before; n != 2 {
		t.Errorf("%d writes counted, want 2: a candidate's and kubectl's, not the refused one", n)
	}
}

// TestStageCrowd: beyond stageMaxShown candidates the stage draws the leader and the faulted
// one by one, and the rest as a crowd per role that counts them.
func TestStageCrowd(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tu := mustNewUI(t, now)
	const n = stageMaxShown + 30
	for i := range n {
		seat := tu.hub.Enter(TabUser{}, func(tabproto.Command) error { return nil })
		r := tabproto.Report{Identity: "c" + strconv.Itoa(i), Namespace: "default", Lease: "room", State: tabproto.StateFollower,
			Role: tabproto.RoleFollower, Holder: "c53", Clock: now.UnixMilli()}
		if i == n-1 { // the last to connect leads: it is drawn all the same
			r.State, r.Role = tabproto.StateLeader, tabproto.RoleLeader
		}
		if i == n-2 {
			r.State, r.Faults.Paused = tabproto.StatePaused, true
		}
		seat.Report(r)
	}
	doc := tu.mustGetDoc(t, "/stage?namespace=default&lease=room", http.StatusOK)
	if got := doc.Find(`[data-testid=stage-candidate]`).Length(); got != stageMaxShown {
		t.Errorf("%d candidates drawn one by one, want %d", got, stageMaxShown)
	}
	for _, id := range []string{"c53", "c52"} {
		if doc.Find(`[data-testid=stage-candidate][data-identity=`+id+`]`).Length() != 1 {
			t.Errorf("%s (leading or paused) is not drawn", id)
		}
	}
	crowd := doc.Find(`[data-testid=stage-crowd]`)
	if crowd.Length() != 1 || crowd.AttrOr("data-role", "") != "follower" || crowd.AttrOr("data-count", "") != strconv.Itoa(n-stageMaxShown) {
		t.Errorf("crowd: %d, role %q, count %q", crowd.Length(), crowd.AttrOr("data-role", ""), crowd.AttrOr("data-count", ""))
	}
}

// TestRetriedConflictIsNotTheHeadline: a ping that met a newer version, which the controller
// retries, does not bury the decision before it on the dashboard's elections table.
func TestRetriedConflictIsNotTheHeadline(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	ds := []templates.DecisionView{
		{Kind: string(election.KindElect), At: now.Add(-time.Minute), Message: "created the lease with holder bob"},
		{Kind: string(election.KindRetry), At: now.Add(-time.Second), Message: "ping met a newer version, and is tried again: conflict"},
	}
	got, ok := latestDecision(func(string, string) []templates.DecisionView { return ds }, leaseKey{"default", "demo"}, now)
	if !ok || got.Kind != string(election.KindElect) {
		t.Errorf("headline %q: %s", got.Kind, got.Message)
	}
}

// keptRequestsUI is a UI whose lease default/demo had, at t0+50ms, alice's PUT leave (it was
// answered 200 at t0+1.5s) and, at t0+100ms, kubectl's PUT answered 409 at the door; its
// clock (and its store's) stands a minute later.
func keptRequestsUI(t *testing.T, t0 time.Time) *testUI {
	t.Helper()
	var mu sync.Mutex
	now := t0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	st := newTestStore(t, t0)
	tu := mustNewUIOn(t, st, t0, func(o *Options) { o.Now = clock })
	at := func(at time.Time) { mu.Lock(); now = at; mu.Unlock(); st.setNow(at) }
	ctx := context.Background()

	tu.putLease(t, lease("default", "demo", "alice", t0, 15, 1), t0)
	alice := tu.hub.Enter(TabUser{}, func(tabproto.Command) error { return nil })
	report := func(clock time.Time, flights ...tabproto.Flight) {
		alice.Report(tabproto.Report{Identity: "alice", Namespace: "default", Lease: "demo", State: tabproto.StateLeader,
			Role: tabproto.RoleLeader, Holder: "alice", Clock: clock.UnixMilli(), Flights: flights})
	}
	ms := func(d time.Duration) int64 { return t0.Add(d).UnixMilli() }
	at(t0.Add(100 * time.Millisecond))
	report(t0.Add(100*time.Millisecond), tabproto.Flight{ID: 1, Verb: "PUT", StartMs: ms(50 * time.Millisecond)})
	key := tapKey{"default", "demo"}
	tu.tap.finish(key, tu.tap.begin(key, "kubectl", "PUT"), http.StatusConflict)
	tu.requests.Flush(ctx)
	at(t0.Add(2 * time.Second))
	report(t0.Add(2*time.Second), tabproto.Flight{ID: 1, Verb: "PUT", StartMs: ms(50 * time.Millisecond), EndMs: ms(1500 * time.Millisecond), Outcome: "200"})
	tu.requests.Flush(ctx)
	at(t0.Add(time.Minute))
	return tu
}

// stageRequestsDrawn are the requests a stage draws one by one, as "identity verb" to outcome.
func stageRequestsDrawn(doc *goquery.Document) map[string]string {
	got := map[string]string{}
	doc.Find(`[data-testid=stage-request]`).Each(func(_ int, s *goquery.Selection) {
		got[s.AttrOr("data-identity", "")+" "+s.AttrOr("data-verb", "")] = s.AttrOr("data-outcome", "")
	})
	return got
}

// checkPastRequests checks the stage of tu at t0+1s and its picture at t0+1.6s: alice's PUT
// in flight (without the outcome it had later) and kubectl's 409 just before; then alice's
// PUT answered.
func checkPastRequests(t *testing.T, tu *testUI, t0 time.Time) {
	t.Helper()
	got := stageRequestsDrawn(tu.mustGetDoc(t, "/stage?namespace=default&lease=demo&at="+t0.Add(time.Second).Format(time.RFC3339Nano), http.StatusOK))
	if outcome, ok := got["alice PUT"]; len(got) != 2 || !ok || outcome != "" || got["kubectl PUT"] != "409" {
		t.Errorf("at t0+1s: %v, want alice's PUT in flight and kubectl's 409", got)
	}
	got = stageRequestsDrawn(tu.mustGetDoc(t, "/stage/live?namespace=default&lease=demo&at="+t0.Add(1600*time.Millisecond).Format(time.RFC3339Nano), http.StatusOK))
	if got["alice PUT"] != "200" {
		t.Errorf("at t0+1.6s: %v, want alice's PUT answered 200", got)
	}
}

// TestStagePastDrawsKeptRequests: the requests on a lease are kept in the store, so that the
// stage of a past moment (its page and its picture) draws those in flight then. Live, a
// minute on, they are gone.
func TestStagePastDrawsKeptRequests(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tu := keptRequestsUI(t, t0)
	checkPastRequests(t, tu, t0)
	if got := stageRequestsDrawn(tu.mustGetDoc(t, "/stage?namespace=default&lease=demo", http.StatusOK)); len(got) != 0 {
		t.Errorf("live, a minute on: %v, want no request", got)
	}
}

// TestStageReplayDrawsKeptRequests: a recording of the lease carries its requests, and the
// stage of a replay of it draws them at a past moment as the server that recorded it did.
func TestStageReplayDrawsKeptRequests(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tu := keptRequestsUI(t, t0)
	w := tu.do(t, httptest.NewRequest(http.MethodGet, "/ui/history?namespace=default&lease=demo", nil))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"resource":"leaserequests.leaselab.dev"`) {
		t.Fatalf("recording: %d, without the requests:\n%s", w.Code, w.Body.String())
	}
	rec, err := recording.New(kinds.NewRegistry(kinds.DefaultOptions()))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "replay.db")
	if _, err := sqlite.Import(context.Background(), path, w.Body, rec.Checker()); err != nil {
		t.Fatalf("replay the recording: %v", err)
	}
	end := t0.Add(time.Minute)
	replay := &Replay{File: "demo.jsonl", From: t0, To: end}
	checkPastRequests(t, mustNewUIOn(t, openTestStore(t, path, end), end, func(o *Options) { o.Replay = replay }), t0)
}

// TestStageCrowdFoldsRequests: beside a crowd, the plain followers' requests are counted per
// verb and outcome, while the leader's still travel one by one.
func TestStageCrowdFoldsRequests(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tu := mustNewUI(t, now)
	const n = stageMaxShown + 10
	ms := now.UnixMilli()
	for i := range n {
		seat := tu.hub.Enter(TabUser{}, func(tabproto.Command) error { return nil })
		r := tabproto.Report{Identity: "c" + strconv.Itoa(i), Namespace: "default", Lease: "room", State: tabproto.StateFollower,
			Role: tabproto.RoleFollower, Holder: "c0", Clock: ms,
			Flights: []tabproto.Flight{{ID: 1, Verb: "GET", StartMs: ms - 100, EndMs: ms - 50, Outcome: "200"}}}
		switch i {
		case 0:
			r.State, r.Role, r.Flights[0].Verb = tabproto.StateLeader, tabproto.RoleLeader, "PUT"
		case 1:
			r.Flights[0].Outcome = tabproto.FlightTimeout
		}
		seat.Report(r)
	}
	doc := tu.mustGetDoc(t, "/stage?namespace=default&lease=room", http.StatusOK)
	if reqs := doc.Find(`[data-testid=stage-request]`); reqs.Length() != 1 || reqs.AttrOr("data-identity", "") != "c0" {
		t.Errorf("%d requests drawn one by one (%q), want the leader's alone", reqs.Length(), reqs.AttrOr("data-identity", ""))
	}
	groups := map[string]string{}
	doc.Find(`[data-testid=stage-request-group]`).Each(func(_ int, s *goquery.Selection) {
		groups[s.AttrOr("data-verb", "")+" "+s.AttrOr("data-outcome", "")] = s.AttrOr("data-count", "") + " " + s.AttrOr("data-kind", "")
	})
	if len(groups) != 2 || groups["GET 200"] != strconv.Itoa(n-2)+" ok" || groups["GET timeout"] != "1 failed" {
		t.Errorf("groups %v", groups)
	}
}

// BenchmarkRequestTap is what the stage's door costs a request on a lease: the tap alone, and
// with its requests handed to a traffic.Keeper for the store (which writes them in its own
// goroutine, every traffic.FlushEvery).
func BenchmarkRequestTap(b *testing.B) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	st := newTestStore(b, now)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	for _, keep := range []*traffic.Keeper{nil, traffic.NewKeeper(ctx, st, slog.New(slog.DiscardHandler), time.Now)} {
		name := "alone"
		if keep != nil {
			name = "kept"
		}
		b.Run(name, func(b *testing.B) {
			tap := newRequestTap(time.Now, keep)
			h := tap.middleware(func(c echo.Context) error { return c.NoContent(http.StatusOK) })
			info := request.Info{IsResourceRequest: true, Group: "coordination.k8s.io", Resource: "leases", Namespace: "default", Name: "demo", Verb: "update"}
			r := httptest.NewRequest(http.MethodPut, "/x", nil)
			r.Header.Set("User-Agent", "bench/v1")
			r = r.WithContext(request.WithInfo(r.Context(), info))
			e := echo.New()
			for b.Loop() {
				if err := h(e.NewContext(r, httptest.NewRecorder())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestStageTicksFit: whatever the lanes' span, the time labels keep apart and inside the lanes,
// all of them on a wide screen, those marked for it (half or more) on a phone, each as wide as
// its half in percent says and centred on its instant unless it ends there.
func TestStageTicksFit(t *testing.T) {
	from := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	for span := time.Second; span <= 5*time.Minute; span += 250 * time.Millisecond {
		to := from.Add(span)
		x := func(at time.Time) float64 { return 100 * float64(at.Sub(from)) / float64(span) }
		ticks := stageTicks(from, to, x)
		phone := 0
		for _, k := range ticks {
			if k.OnPhone {
				phone++
			}
		}
		if len(ticks) > 1 && phone < len(ticks)/2 {
			t.Fatalf("span %s: a phone shows %d of %d labels", span, phone, len(ticks))
		}
		for _, screen := range []struct {
			name  string
			half  float64
			shows func(templates.StageTick) bool
			end   func(templates.StageTick) bool
		}{
			{"wide", stageTickHalfWide, func(templates.StageTick) bool { return true }, func(k templates.StageTick) bool { return k.Anchor == "end" }},
			{"phone", stageTickHalfPhone, func(k templates.StageTick) bool { return k.OnPhone }, func(k templates.StageTick) bool { return k.Late }},
		} {
			lastRight := -100.0
			for i := range ticks {
				if !screen.shows(ticks[i]) {
					continue
				}
				k := ticks[i]
				left, right := k.X-screen.half, k.X+screen.half
				if screen.end(k) {
					left, right = k.X-2*screen.half, k.X
				}
				if right > 100 || left < lastRight {
					t.Fatalf("span %s, %s screen: the label %s at %.1f%% spans [%.1f, %.1f], after one ending at %.1f", span, screen.name, k.Label, k.X, left, right, lastRight)
				}
				lastRight = right
			}
		}
	}
}
