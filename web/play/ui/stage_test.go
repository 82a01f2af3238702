package ui

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/lease/election"
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
	tap := newRequestTap(func() time.Time { return now })
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
