package views

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "views.db"), sqlite.Options{CompactInterval: -1}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var t0 = time.Date(2026, 11, 25, 14, 2, 0, 0, time.UTC)

func report(identity string, state tabproto.State, role tabproto.Role, holder string, clock, roleSince time.Time) tabproto.Report {
	return tabproto.Report{
		Identity: identity, Namespace: "ns", Lease: "x", State: state, Role: role, Holder: holder,
		LastLog: tabproto.LogLine{Kind: "renewed", Text: "renewed"},
		Clock:   clock.UnixMilli(), RoleSince: roleSince.UnixMilli(),
	}
}

// TestRecordAndRead records what tabs report and reads it back as the judge's views: a role
// change is dated by the candidate's own account, a report that changes nothing of note writes
// nothing, and a tab that goes away reads as stopped.
func TestRecordAndRead(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	rec := NewRecorder(ctx, db, slog.New(slog.DiscardHandler))
	rev := func() int64 {
		cur, _, err := db.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return cur
	}

	// alice's own clock runs 30 s ahead; she became leader 400 ms before her report arrived.
	skew := 30 * time.Second
	rec.Report(report("alice", tabproto.StateFollower, tabproto.RoleFollower, "", t0.Add(skew), t0.Add(skew)), SourceTab, t0)
	rec.Report(report("alice", tabproto.StateLeader, tabproto.RoleLeader, "alice", t0.Add(skew+5*time.Second), t0.Add(skew+4600*time.Millisecond)), SourceTab, t0.Add(5*time.Second))
	before := rev()
	// Renewals: only the decision's time and text move.
	for i := range 5 {
		r := report("alice", tabproto.StateLeader, tabproto.RoleLeader, "alice", t0.Add(skew+time.Duration(6+i)*time.Second), t0.Add(skew+4600*time.Millisecond))
		r.LastLog.Text = "renewed again"
		rec.Report(r, SourceTab, t0.Add(time.Duration(6+i)*time.Second))
	}
	if got := rev(); got != before {
		t.Fatalf("renewals wrote %d changes, want none", got-before)
	}
	// Paused: a change of note, dated on receipt (the role did not change).
	paused := report("alice", tabproto.StatePaused, tabproto.RoleLeader, "alice", t0.Add(skew+12*time.Second), t0.Add(skew+4600*time.Millisecond))
	paused.Faults.Paused = true
	rec.Report(paused, SourceTab, t0.Add(12*time.Second))
	rec.Report(report("bob", tabproto.StateLeader, tabproto.RoleLeader, "bob", t0.Add(20*time.Second), t0.Add(20*time.Second)), SourceTab, t0.Add(20*time.Second))
	rec.Gone("alice", "ns", "x", SourceTab, t0.Add(25*time.Second))

	vs, err := NewReader(db, 1000).Views(ctx, "ns", "x")
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		identity, state string
		at              time.Time
		leads, paused   bool
	}
	wants := []want{
		{"alice", "follower", t0, false, false},
		{"alice", "leader", t0.Add(4600 * time.Millisecond), true, false},
		{"alice", "paused", t0.Add(12 * time.Second), true, true},
		{"bob", "leader", t0.Add(20 * time.Second), true, false},
	}
	wants = append(wants, want{"alice", "stopped", t0.Add(25 * time.Second), false, false})
	if len(vs) != len(wants) {
		t.Fatalf("%d views, want %d: %+v", len(vs), len(wants), vs)
	}
	for i, w := range wants {
		v := vs[i]
		if v.Identity != w.identity || v.State != w.state || !v.At.Equal(w.at) || v.Leads != w.leads || v.Faults.Paused != w.paused {
			t.Errorf("view %d: %s %s at %s leads=%v paused=%v, want %+v", i, v.Identity, v.State, v.At.Format(time.StampMilli), v.Leads, v.Faults.Paused, w)
		}
	}
	// Views are not served as API objects of any kind the registry knows, and they are in
	// the change log under their own resource.
	if _, err := db.Get(ctx, store.Key{Resource: Resource, Namespace: "ns", Name: Name("x", "bob")}); err != nil {
		t.Fatalf("bob's views object: %v", err)
	}
}

// TestReportDatingIsBounded: a report cannot date a role change further back than
// MaxReportDelay, whatever clock the candidate claims.
func TestReportDatingIsBounded(t *testing.T) {
	r := report("alice", tabproto.StateLeader, tabproto.RoleLeader, "alice", t0, t0.Add(-time.Hour))
	rec := FromReport(r, SourceTab, t0, "follower")
	if got, want := time.UnixMilli(rec.AtMs), t0.Add(-MaxReportDelay); !got.Equal(want) {
		t.Fatalf("at %s, want %s", got, want)
	}
	if rec := FromReport(r, SourceTab, t0, "leader"); rec.AtMs != t0.UnixMilli() {
		t.Fatalf("no role change: at %d, want the receipt %d", rec.AtMs, t0.UnixMilli())
	}
}

// TestDatedBackNeverBeforeThePreviousView: a role change dated back lands no earlier than the
// candidate's previous view, so that, read in the order of their dates, its last view is the
// last it reported (a stop dated to before the report that had it leading left it leading for
// ever on the lease page).
func TestDatedBackNeverBeforeThePreviousView(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	rec := NewRecorder(ctx, db, slog.New(slog.DiscardHandler))
	rec.Report(report("alice", tabproto.StateLeader, tabproto.RoleLeader, "alice", t0, t0), SourceTab, t0)
	// Leading still, as alice sees it, with the record naming nobody: received 2 ms later.
	rec.Report(report("alice", tabproto.StateLeader, tabproto.RoleLeader, "", t0.Add(2*time.Millisecond), t0), SourceTab, t0.Add(2*time.Millisecond))
	// Stopped, with its role change dated to 1 ms after t0: before the view above.
	rec.Report(report("alice", tabproto.StateStopped, tabproto.RoleNone, "", t0.Add(3*time.Second), t0.Add(time.Millisecond)), SourceTab, t0.Add(3*time.Second))
	vs, err := NewReader(db, 1000).Views(ctx, "ns", "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 || vs[2].State != "stopped" || !vs[2].At.Equal(t0.Add(2*time.Millisecond)) {
		t.Fatalf("views %+v: want the stop dated at the previous view, 2 ms after t0", vs)
	}
}

// TestReportDatingFollowsTheClockRate: a candidate whose clock runs at twice the real rate
// counts two of its milliseconds for each of the server's since its role changed.
func TestReportDatingFollowsTheClockRate(t *testing.T) {
	r := report("alice", tabproto.StateLeader, tabproto.RoleLeader, "alice", t0, t0.Add(-2*time.Second))
	r.Faults.ClockRate = 2
	if rec := FromReport(r, SourceTab, t0, "follower"); !time.UnixMilli(rec.AtMs).Equal(t0.Add(-time.Second)) {
		t.Fatalf("at %s, want 1 s before the receipt", time.UnixMilli(rec.AtMs))
	}
}

// TestStoredViewsReadAsBefore: a view stored before the record took tabproto.Faults reads with
// its faults where they were, and a view stored now keeps their names.
func TestStoredViewsReadAsBefore(t *testing.T) {
	const old = `{"identity":"alice","namespace":"default","lease":"x","source":"tab","state":"paused","role":"leader","leads":true,"stale":false,"holder":"alice",` +
		`"paused":true,"partition":"hang","latencyMs":1500,"clockOffsetMs":-5000,"clockRate":1.5,"activeFaults":["paused"],"decision":"renewed","receivedMs":1,"atMs":1}`
	r, err := decode([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	want := tabproto.Faults{Paused: true, Partition: tabproto.PartitionHang, LatencyMs: 1500, ClockOffsetMs: -5000, ClockRate: 1.5}
	if r.Faults != want || r.Identity != "alice" || r.Decision != "renewed" {
		t.Fatalf("read %+v", r)
	}
	if v := r.View(); v.Faults != want {
		t.Errorf("the judge reads %+v", v.Faults)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`"paused":true`, `"partition":"hang"`, `"latencyMs":1500`, `"clockOffsetMs":-5000`, `"clockRate":1.5`} {
		if !strings.Contains(string(b), name) {
			t.Errorf("stored as %s: no %s", b, name)
		}
	}
	if again, err := decode(b); err != nil || !reflect.DeepEqual(again, r) {
		t.Errorf("round trip: %+v, %v", again, err)
	}
}

// TestClear: Clear deletes a namespace's views and no other's (the change log keeps their
// history, where the deletion reads as the candidate going away), and the recorder writes the
// next report there afresh, though it reads as what it last wrote.
func TestClear(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	rec := NewRecorder(ctx, db, slog.New(slog.DiscardHandler))
	leader := report("alice", tabproto.StateLeader, tabproto.RoleLeader, "alice", t0, t0)
	other := leader
	other.Namespace = "other"
	rec.Report(leader, SourceTab, t0)
	rec.Report(other, SourceTab, t0)
	if err := rec.Clear(ctx, "ns"); err != nil {
		t.Fatal(err)
	}
	read := func(ns string) int {
		res, err := db.List(ctx, store.ListOptions{Resource: Resource, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Objects)
	}
	if read("ns") != 0 || read("other") != 1 {
		t.Fatalf("after Clear: %d views in ns, %d in other; want 0 and 1", read("ns"), read("other"))
	}
	rec.Report(leader, SourceTab, t0.Add(time.Second))
	if read("ns") != 1 {
		t.Fatal("the same report after Clear was not written again")
	}
}
