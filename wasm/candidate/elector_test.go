//go:build !js

package candidate_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/candidate/candidatetest"
)

func TestOneLeaderAmongSeveral(t *testing.T) {
	s := newSim(t)
	s.atMostOneLeader()
	for i := range 5 {
		s.add(testConfig(fmt.Sprintf("tab-%d", i+1)))
	}
	s.runFor(2 * time.Minute)

	l := s.leaders()
	if len(l) != 1 {
		t.Fatalf("leaders = %v, want exactly one", l)
	}
	holder, transitions := s.srv.holder(testNS, testLease)
	if holder != l[0] || transitions != 0 {
		t.Errorf("server record: holder %q transitions %d, want %q and 0", holder, transitions, l[0])
	}
	for _, w := range s.srv.allWrites() {
		if w.Holder != l[0] {
			t.Errorf("write by %q at rv %d: only the leader should ever have written", w.Holder, w.RV)
		}
	}
	for _, c := range s.cands {
		snap := c.Snapshot()
		if snap.Holder != l[0] {
			t.Errorf("%s believes the holder is %q", c.Identity(), snap.Holder)
		}
		if c.Identity() != l[0] && !logHas(c, candidate.LogWaiting, "lease held by "+l[0]) {
			t.Errorf("%s never logged waiting", c.Identity())
			dumpLog(t, c)
		}
	}
	// A healthy leader renews about every RetryPeriod.
	if n := len(s.srv.allWrites()); n < 50 || n > 65 {
		t.Errorf("%d writes in 2 minutes, want about one per 2 s", n)
	}
}

func TestFollowerWaitsFullLeaseDurationFromOwnObservation(t *testing.T) {
	s := newSim(t)
	// Abandoned an hour ago, by the record's own renewTime.
	old := epoch.Add(-time.Hour).Format(candidate.RFC3339Micro)
	s.srv.put(t, testNS, testLease, `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1",
		"metadata":{"name":"demo","namespace":"default"},
		"spec":{"holderIdentity":"ghost","leaseDurationSeconds":10,"acquireTime":"`+old+`","renewTime":"`+old+`","leaseTransitions":3}}`)
	a := s.add(testConfig("tab-a"))

	s.runFor(9900 * time.Millisecond)
	if snap := a.Snapshot(); snap.Role != candidate.RoleFollower || snap.Holder != "ghost" {
		t.Fatalf("before a full lease duration of its own observation: %v", snap)
	}
	if h, _ := s.srv.holder(testNS, testLease); h != "ghost" {
		t.Fatalf("holder = %q before the lease expired by the candidate's clock", h)
	}
	if !logHas(a, candidate.LogWaiting, "its renewTime says it expired") {
		t.Error("the log does not explain why an old renewTime is not trusted")
		dumpLog(t, a)
	}
	snap := a.Snapshot()
	if !snap.ObservedExpiry.Equal(epoch.Add(10*time.Second)) || !snap.RecordExpiry.Equal(epoch.Add(-time.Hour+10*time.Second)) {
		t.Errorf("observed expiry %s, record expiry %s", snap.ObservedExpiry, snap.RecordExpiry)
	}

	s.runFor(10 * time.Second)
	h, transitions := s.srv.holder(testNS, testLease)
	if h != "tab-a" || transitions != 4 {
		t.Fatalf("after expiry: holder %q transitions %d, want tab-a and 4", h, transitions)
	}
	w := s.srv.allWrites()[0]
	if !w.At.After(epoch.Add(10 * time.Second)) {
		t.Errorf("took over at +%s, before its own observation had expired", w.At.Sub(epoch))
	}
	if !logHas(a, candidate.LogTrying, "lease held by ghost expired by my clock") || !logHas(a, candidate.LogAcquired, "acquired (transitions 4)") {
		dumpLog(t, a)
		t.Error("decision log is missing the takeover")
	}
}

func TestTakeoverAfterCrashOnlyOnceObservedLeaseExpired(t *testing.T) {
	s := newSim(t)
	s.atMostOneLeader()
	for _, id := range []string{"tab-1", "tab-2", "tab-3"} {
		s.add(testConfig(id))
	}
	s.runFor(30 * time.Second)
	old := s.leader()
	if old == nil {
		t.Fatal("no leader")
	}
	old.Crash()
	s.poke(old)
	s.runFor(time.Millisecond)
	if snap := old.Snapshot(); snap.State != candidate.StateStopped || snap.StopReason != "crashed" {
		t.Fatalf("after crash: %v", snap)
	}
	lastRenew := s.srv.allWrites()[len(s.srv.allWrites())-1]

	s.runFor(9 * time.Second)
	if h, _ := s.srv.holder(testNS, testLease); h != old.Identity() {
		t.Fatalf("holder %q less than a lease duration after the last renewal", h)
	}
	s.runUntilTrue(30*time.Second, "taken over", func() bool {
		h, _ := s.srv.holder(testNS, testLease)
		return h != old.Identity()
	})
	ws := s.srv.allWrites()
	takeover := ws[len(ws)-1]
	if gap := takeover.At.Sub(lastRenew.At); gap < 10*time.Second || gap > 10*time.Second+2*2200*time.Millisecond {
		t.Errorf("takeover %s after the last renewal, want between the lease duration and one jittered retry later", gap)
	}
	if _, tr := s.srv.holder(testNS, testLease); tr != 1 {
		t.Errorf("transitions = %d, want 1", tr)
	}
	// The crashed leader released nothing.
	for _, w := range ws {
		if w.Holder == "" {
			t.Errorf("a crash must not release: %+v", w)
		}
	}
}

func TestImmediateTakeoverAfterRelease(t *testing.T) {
	s := newSim(t)
	s.atMostOneLeader()
	a := s.add(testConfig("tab-a"))
	s.runFor(5 * time.Second)
	b := s.add(testConfig("tab-b"))
	s.runFor(10 * time.Second)
	if a.Snapshot().Role != candidate.RoleLeader {
		t.Fatal("tab-a should lead")
	}

	released := s.clock.Now()
	a.Release()
	s.poke(a)
	s.runFor(time.Millisecond)
	if snap := a.Snapshot(); snap.State != candidate.StateStopped || snap.StopReason != "released" || snap.Holder != "" {
		t.Fatalf("after release: %v", snap)
	}
	ws := s.srv.allWrites()
	if rel := ws[len(ws)-1]; rel.Holder != "" || rel.Duration != 1 {
		t.Fatalf("release wrote holder %q duration %d, want \"\" and 1", rel.Holder, rel.Duration)
	}
	if !logHas(a, candidate.LogReleased, "released the lease") {
		dumpLog(t, a)
	}

	s.runUntilTrue(5*time.Second, "acquired by tab-b", func() bool { return b.Snapshot().Role == candidate.RoleLeader })
	if d := s.clock.Now().Sub(released); d > 2200*time.Millisecond+100*time.Millisecond {
		t.Errorf("took %s to take a released lease: it should not wait for the lease duration", d)
	}
	if h, tr := s.srv.holder(testNS, testLease); h != "tab-b" || tr != 1 {
		t.Errorf("holder %q transitions %d", h, tr)
	}
	if !logHas(b, candidate.LogTrying, "lease is free") {
		dumpLog(t, b)
		t.Error("tab-b did not log the free lease")
	}

	// A released candidate rejoins as a follower.
	a.Rejoin()
	s.poke(a)
	s.runFor(5 * time.Second)
	if snap := a.Snapshot(); snap.State != candidate.StateFollower || snap.Holder != "tab-b" {
		t.Errorf("after rejoin: %v", snap)
	}
}

func TestTransitionsCountedOnTakeoverOnly(t *testing.T) {
	s := newSim(t)
	s.atMostOneLeader()
	ids := []string{"tab-1", "tab-2", "tab-3", "tab-4"}
	for _, id := range ids {
		s.add(testConfig(id))
	}
	s.runFor(20 * time.Second)
	for want := int64(1); want <= 3; want++ {
		l := s.leader()
		l.Crash()
		s.poke(l)
		s.runUntilTrue(30*time.Second, "a new leader", func() bool {
			n := s.leader()
			return n != nil && n != l
		})
		s.runFor(20 * time.Second) // renewals must not count
		if _, tr := s.srv.holder(testNS, testLease); tr != want {
			t.Fatalf("after takeover %d: transitions = %d", want, tr)
		}
		if snap := s.leader().Snapshot(); snap.Transitions != int32(want) {
			t.Errorf("leader's snapshot transitions = %d, want %d", snap.Transitions, want)
		}
	}
}

func TestConflictSomeoneElseWasFaster(t *testing.T) {
	s := newSim(t)
	old := epoch.Add(-time.Hour).Format(candidate.RFC3339Micro)
	s.srv.put(t, testNS, testLease, `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1",
		"metadata":{"name":"demo","namespace":"default"},
		"spec":{"holderIdentity":"ghost","leaseDurationSeconds":10,"renewTime":"`+old+`","leaseTransitions":0}}`)
	a := s.add(testConfig("tab-a"))
	// While tab-a's takeover is on its way, tab-2 writes first.
	s.srv.beforePut = func(srv *leaseServer, key string, body map[string]any) {
		spec, _ := body["spec"].(map[string]any)
		if spec["holderIdentity"] != "tab-a" {
			return
		}
		srv.beforePut = nil
		now := srv.now().UTC().Format(candidate.RFC3339Micro)
		srv.putLocked(key, map[string]any{
			"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
			"metadata": map[string]any{"name": "demo", "namespace": "default"},
			"spec": map[string]any{"holderIdentity": "tab-2", "leaseDurationSeconds": json.Number("10"),
				"acquireTime": now, "renewTime": now, "leaseTransitions": json.Number("1")},
		})
	}
	s.runFor(20 * time.Second)
	snap := a.Snapshot()
	if snap.Role != candidate.RoleFollower || snap.Holder != "tab-2" {
		t.Fatalf("after losing the race: %v", snap)
	}
	if !logHas(a, candidate.LogConflict, "someone else was faster") || !logHas(a, candidate.LogConflict, "conflict: tab-2 was faster") {
		dumpLog(t, a)
		t.Error("the conflict is not explained")
	}
	if !strings.Contains(snap.LastError, "the object has been modified") && snap.LastError != "" {
		t.Errorf("last error %q", snap.LastError)
	}
}

func TestLeaderOverwrittenStepsDownAfterRenewDeadline(t *testing.T) {
	s := newSim(t)
	a := s.add(testConfig("tab-a"))
	s.runFor(10 * time.Second)
	// Someone else (kubectl, say) writes the lease behind the leader's back.
	now := s.clock.Now().UTC().Format(candidate.RFC3339Micro)
	s.srv.put(t, testNS, testLease, `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1",
		"metadata":{"name":"demo","namespace":"default"},
		"spec":{"holderIdentity":"intruder","leaseDurationSeconds":30,"acquireTime":"`+now+`","renewTime":"`+now+`","leaseTransitions":7}}`)
	overwritten := s.clock.Now()
	s.runUntilTrue(15*time.Second, "stepped down", func() bool { return a.Snapshot().Role != candidate.RoleLeader })
	if d := s.clock.Now().Sub(overwritten); d > candidate.DefaultRenewDeadline+candidate.DefaultRetryPeriod {
		t.Errorf("stepped down %s after losing the lease", d)
	}
	for _, w := range s.srv.allWrites() {
		if w.At.After(overwritten) {
			t.Errorf("tab-a wrote over the intruder: %+v", w)
		}
	}
	if !logHas(a, candidate.LogConflict, "renewal conflict") || !logHas(a, candidate.LogWaiting, "lease now held by intruder") ||
		!logHas(a, candidate.LogLost, "renew deadline passed") {
		dumpLog(t, a)
		t.Error("decision log incomplete")
	}
	// It starts over as a fresh follower.
	if snap := a.Snapshot(); snap.State != candidate.StateFollower {
		t.Errorf("after the loss: %v", snap)
	}
}

func TestRenewDeadlineStepsDownBeforeOthersTakeOver(t *testing.T) {
	s := newSim(t)
	s.atMostOneLeader()
	a := s.add(testConfig("tab-a"))
	s.runFor(3 * time.Second)
	b := s.add(testConfig("tab-b"))
	s.runFor(20 * time.Second)

	a.Partition(candidate.PartitionFail)
	if st := a.Snapshot().State; st != candidate.StatePartitioned {
		t.Fatalf("state %s, want partitioned", st)
	}
	var lostAt time.Time
	s.runUntilTrue(15*time.Second, "stepped down", func() bool {
		if a.Snapshot().Role != candidate.RoleLeader {
			lostAt = s.clock.Now()
			return true
		}
		return false
	})
	ws := s.srv.allWrites()
	lastRenew := ws[len(ws)-1].At
	if d := lostAt.Sub(lastRenew); d > candidate.DefaultRetryPeriod+candidate.DefaultRenewDeadline+10*time.Millisecond {
		t.Errorf("stepped down %s after the last renewal", d)
	}
	s.runUntilTrue(15*time.Second, "taken over by tab-b", func() bool { return b.Snapshot().Role == candidate.RoleLeader })
	if !logHas(a, candidate.LogError, "network unreachable") || !logHas(a, candidate.LogLost, "") {
		dumpLog(t, a)
	}

	// Healed, tab-a follows tab-b.
	a.Heal()
	s.runFor(10 * time.Second)
	if snap := a.Snapshot(); snap.State != candidate.StateFollower || snap.Holder != "tab-b" {
		t.Errorf("after heal: %v", snap)
	}
}

func TestPausedLeaderDoesNotOverwriteNewLeader(t *testing.T) {
	for _, release := range []bool{false, true} {
		t.Run(fmt.Sprintf("releaseOnCancel=%v", release), func(t *testing.T) {
			s := newSim(t)
			cfgA, cfgB := testConfig("tab-a"), testConfig("tab-b")
			cfgA.ReleaseOnCancel, cfgB.ReleaseOnCancel = release, release
			a := s.add(cfgA)
			s.runFor(5 * time.Second)
			b := s.add(cfgB)
			s.runFor(10 * time.Second)

			a.Pause()
			paused := s.clock.Now()
			if st := a.Snapshot().State; st != candidate.StatePaused {
				t.Fatalf("state %s, want paused", st)
			}
			s.runUntilTrue(30*time.Second, "taken over by tab-b", func() bool { return b.Snapshot().Role == candidate.RoleLeader })
			s.runFor(5 * time.Second)

			a.Resume()
			// Stale belief: right after resuming it still thinks it leads.
			if snap := a.Snapshot(); snap.Role != candidate.RoleLeader || snap.Holder != "tab-a" {
				t.Fatalf("just resumed: %v", snap)
			}
			s.runFor(time.Millisecond)
			if snap := a.Snapshot(); snap.Role != candidate.RoleLeader || snap.Holder != "tab-b" {
				t.Errorf("first attempt after resume: %v (it should see tab-b and still lead until its renew deadline)", snap)
			}
			s.runFor(30 * time.Second)

			for _, w := range s.srv.allWrites() {
				if w.At.After(paused) && w.Holder != "tab-b" {
					t.Errorf("write by %q after the pause: %+v", w.Holder, w)
				}
			}
			if h, _ := s.srv.holder(testNS, testLease); h != "tab-b" {
				t.Errorf("holder = %q", h)
			}
			if snap := a.Snapshot(); snap.Role != candidate.RoleFollower || snap.Holder != "tab-b" {
				t.Errorf("in the end: %v", snap)
			}
			if !logHas(a, candidate.LogFault, "resumed after") || !logHas(a, candidate.LogWaiting, "lease now held by tab-b") ||
				!logHas(a, candidate.LogLost, "") {
				dumpLog(t, a)
				t.Error("decision log incomplete")
			}
		})
	}
}

func TestClockOffsetDoesNotProduceTwoHolders(t *testing.T) {
	s := newSim(t)
	s.atMostOneLeader()
	offsets := map[string]time.Duration{"tab-behind": -45 * time.Second, "tab-sync": 0, "tab-ahead": 30 * time.Second, "tab-hour": time.Hour}
	for _, id := range []string{"tab-behind", "tab-sync", "tab-ahead", "tab-hour"} {
		c := s.add(testConfig(id))
		c.SetClockOffset(offsets[id])
	}
	s.runFor(time.Minute)
	l := s.leader()
	if l == nil {
		t.Fatal("no leader")
	}
	// The record carries the leader's own clock.
	ws := s.srv.allWrites()
	last := ws[len(ws)-1]
	renew, err := time.Parse(candidate.RFC3339Micro, last.Renew)
	if err != nil {
		t.Fatal(err)
	}
	if d := renew.Sub(last.At); d != offsets[l.Identity()] {
		t.Errorf("renewTime is %s off the real clock, want the leader's offset %s", d, offsets[l.Identity()])
	}
	// A follower sees the record expire at a different time than it acts on.
	for _, c := range s.cands {
		if c == l {
			continue
		}
		snap := c.Snapshot()
		if gap := snap.ObservedExpiry.Sub(snap.RecordExpiry); gap < offsets[c.Identity()]-offsets[l.Identity()]-3*time.Second ||
			gap > offsets[c.Identity()]-offsets[l.Identity()]+3*time.Second {
			t.Errorf("%s: observed expiry minus record expiry = %s, want about the clock difference", c.Identity(), gap)
		}
	}

	// Jumping the followers' clocks does not make them take the lease early:
	// expiry counts elapsed time, as Go's monotonic clock does.
	for _, c := range s.cands {
		if c != l {
			c.SetClockOffset(offsets[c.Identity()] + 2*time.Hour)
		}
	}
	s.runFor(time.Minute)
	if s.leader() != l {
		t.Fatalf("leader changed after clock jumps: %v", s.leaders())
	}

	l.Crash()
	s.poke(l)
	s.runFor(time.Millisecond)
	crashed := s.clock.Now()
	s.runUntilTrue(30*time.Second, "a new leader", func() bool { n := s.leader(); return n != nil && n != l })
	if d := s.clock.Now().Sub(crashed); d < 8*time.Second {
		t.Errorf("taken over %s after the crash, before the lease could have expired", d)
	}
	s.runFor(time.Minute)
	if got := s.leaders(); len(got) != 1 {
		t.Errorf("leaders = %v", got)
	}
}

func TestWritesKeepUnknownFields(t *testing.T) {
	s := newSim(t)
	old := epoch.Add(-time.Hour).Format(candidate.RFC3339Micro)
	s.srv.put(t, testNS, testLease, `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1",
		"metadata":{"name":"demo","namespace":"default","labels":{"team":"a"},"annotations":{"note":"keep me"},
			"generation":3,"creationTimestamp":"2024-01-01T00:00:00Z",
			"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"2024-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}],
			"futureMeta":{"x":1}},
		"spec":{"holderIdentity":"","leaseDurationSeconds":1,"renewTime":"`+old+`","leaseTransitions":5,
			"strategy":"OldestEmulationVersion","preferredHolder":"tab-z","futureSpecField":[1,2,{"k":"v"}]},
		"status":{"futureStatus":true}}`)
	a := s.add(testConfig("tab-a"))
	s.runFor(5 * time.Second)
	if a.Snapshot().Role != candidate.RoleLeader {
		t.Fatal("tab-a should have taken the free lease")
	}
	ws := s.srv.allWrites()
	if len(ws) < 2 {
		t.Fatalf("writes: %d", len(ws))
	}
	for _, w := range ws {
		var body map[string]any
		if err := json.Unmarshal(w.Body, &body); err != nil {
			t.Fatal(err)
		}
		m := body["metadata"].(map[string]any)
		spec := body["spec"].(map[string]any)
		checks := map[string]bool{
			"labels":          fmt.Sprint(m["labels"]) == "map[team:a]",
			"annotations":     fmt.Sprint(m["annotations"]) == "map[note:keep me]",
			"generation":      fmt.Sprint(m["generation"]) == "3",
			"managedFields":   m["managedFields"] != nil,
			"futureMeta":      fmt.Sprint(m["futureMeta"]) == "map[x:1]",
			"futureSpecField": fmt.Sprint(spec["futureSpecField"]) == "[1 2 map[k:v]]",
			"status":          fmt.Sprint(body["status"]) == "map[futureStatus:true]",
			// client-go's non-coordinated path replaces the spec: these go.
			"no strategy":        spec["strategy"] == nil,
			"no preferredHolder": spec["preferredHolder"] == nil,
			"holder":             spec["holderIdentity"] == "tab-a",
		}
		for name, ok := range checks {
			if !ok {
				t.Errorf("%s write rv %d: %s not as expected: %s", w.Verb, w.RV, name, w.Body)
			}
		}
	}
	if _, tr := s.srv.holder(testNS, testLease); tr != 6 {
		t.Errorf("transitions = %d, want 6", tr)
	}
}

func TestCreatesMissingLease(t *testing.T) {
	s := newSim(t)
	a := s.add(testConfig("tab-a"))
	b := s.add(testConfig("tab-b"))
	s.runFor(time.Millisecond)
	if a.Snapshot().Role != candidate.RoleLeader || b.Snapshot().Role != candidate.RoleFollower {
		t.Fatalf("a: %v, b: %v", a.Snapshot(), b.Snapshot())
	}
	ws := s.srv.allWrites()
	if ws[0].Verb != "POST" || ws[0].Holder != "tab-a" {
		t.Errorf("first write %+v, want tab-a's POST", ws[0])
	}
	obj := s.srv.object(testNS, testLease)
	spec := obj["spec"].(map[string]any)
	if spec["acquireTime"] != spec["renewTime"] || spec["leaseTransitions"] != float64(0) || spec["leaseDurationSeconds"] != float64(10) {
		t.Errorf("created spec %v", spec)
	}
	if !logHas(a, candidate.LogAcquired, "created it") {
		dumpLog(t, a)
	}
}

func TestCreateRaceAlreadyExists(t *testing.T) {
	s := newSim(t)
	// Between tab-a's GET (404) and its POST, tab-2 creates the lease.
	inner := s.srv.handler()
	raced := false
	tr := candidatetest.HandlerTransport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" && !raced {
			raced = true
			now := s.clock.Now().UTC().Format(candidate.RFC3339Micro)
			s.srv.put(t, testNS, testLease, `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"demo","namespace":"default"},
				"spec":{"holderIdentity":"tab-2","leaseDurationSeconds":10,"acquireTime":"`+now+`","renewTime":"`+now+`","leaseTransitions":0}}`)
		}
		inner.ServeHTTP(w, r)
	})}
	a := s.addWith(testConfig("tab-a"), tr)
	s.runFor(5 * time.Second)
	if snap := a.Snapshot(); snap.Role != candidate.RoleFollower || snap.Holder != "tab-2" {
		t.Fatalf("%v", snap)
	}
	if !logHas(a, candidate.LogConflict, "someone else created the lease first") || !logHas(a, candidate.LogConflict, "tab-2 was faster") {
		dumpLog(t, a)
		t.Error("create conflict not explained")
	}
}

func TestStopAfterLoss(t *testing.T) {
	s := newSim(t)
	cfg := testConfig("tab-a")
	cfg.StopAfterLoss = true
	a := s.add(cfg)
	s.runFor(5 * time.Second)
	a.Partition(candidate.PartitionFail)
	s.runFor(15 * time.Second)
	if snap := a.Snapshot(); snap.State != candidate.StateStopped || snap.StopReason != "lost leadership" {
		t.Fatalf("%v", snap)
	}
	if !a.Next().IsZero() {
		t.Error("a stopped candidate has no next step")
	}
	a.Heal()
	a.Rejoin()
	s.poke(a)
	s.runFor(3 * time.Second)
	if snap := a.Snapshot(); snap.Role != candidate.RoleLeader {
		t.Fatalf("after rejoin: %v", snap)
	}
	if !logHas(a, candidate.LogAcquired, "the lease still names me") {
		dumpLog(t, a)
	}
}

func TestDecisionLogFoldsAndIsBounded(t *testing.T) {
	s := newSim(t)
	a := s.add(testConfig("tab-a"))
	s.runFor(10 * time.Minute)
	snap := a.Snapshot()
	if len(snap.Log) > candidate.DefaultLogLimit {
		t.Fatalf("log has %d entries", len(snap.Log))
	}
	newest := snap.Log[0]
	if newest.Kind != candidate.LogRenewed || newest.Count < 250 {
		t.Errorf("newest entry %+v: renewals should fold into one", newest)
	}
	if age := s.clock.Now().Sub(newest.At); age < 0 || age > 3*time.Second {
		t.Errorf("newest entry is %s old: folding should move its time", age)
	}
}

// TestRenewDeadlineIsTheRoundsDeadline checks the renew deadline a leader shows against
// what it does: between rounds it is the deadline the next round will have (a retry period
// after the last renewal, plus the renew deadline), so a page showing at most the setting
// shows it full; while a round runs it is that round's deadline, fixed, and the leader stops
// leading exactly then, as the log's "in N s" says; a leader paused between rounds starts its
// round when it resumes.
func TestRenewDeadlineIsTheRoundsDeadline(t *testing.T) {
	s := newSim(t)
	a := s.add(testConfig("tab-a"))
	s.runUntilTrue(5*time.Second, "leading", func() bool { return a.Snapshot().Role == candidate.RoleLeader })
	rd, rp := candidate.DefaultRenewDeadline, candidate.DefaultRetryPeriod
	for range 50 {
		s.runFor(100 * time.Millisecond)
		snap := a.Snapshot()
		if snap.RenewRound {
			t.Fatalf("at %s: a renew round still runs on a healthy network", snap.Now.Sub(epoch))
		}
		if want := snap.NextRetry.Add(rd); !snap.RenewDeadline.Equal(want) {
			t.Fatalf("at %s: between rounds the renew deadline is %s, want the next round's, %s",
				snap.Now.Sub(epoch), snap.RenewDeadline.Sub(epoch), want.Sub(epoch))
		}
		if left := snap.RenewDeadline.Sub(snap.Now); left < rd || left > rd+rp {
			t.Fatalf("at %s: between rounds the renew deadline is in %s, want within [%s, %s]", snap.Now.Sub(epoch), left, rd, rd+rp)
		}
	}

	// Cut off: the next round's deadline is the one it keeps, and leadership ends then.
	ws := s.srv.allWrites()
	lastRenew := ws[len(ws)-1].At
	a.Partition(candidate.PartitionFail)
	want := a.Snapshot().RenewDeadline
	if d := want.Sub(lastRenew); d != rp+rd {
		t.Errorf("partitioned: renew deadline %s after the last renewal, want retryPeriod + renewDeadline = %s", d, rp+rd)
	}
	s.runUntilTrue(rp+time.Second, "in a renew round", func() bool { return a.Snapshot().RenewRound })
	for a.Snapshot().Role == candidate.RoleLeader {
		snap := a.Snapshot()
		if !snap.RenewRound || !snap.RenewDeadline.Equal(want) {
			t.Fatalf("at %s: renew round %v, deadline %s, want %s", snap.Now.Sub(epoch), snap.RenewRound, snap.RenewDeadline.Sub(epoch), want.Sub(epoch))
		}
		if e := snap.Log[0]; e.Kind == candidate.LogError {
			if in := "in " + strconv.FormatFloat(want.Sub(e.At).Seconds(), 'f', 1, 64) + " s"; !strings.Contains(e.Text, in) {
				t.Errorf("at %s the log says %q, want the renew deadline %s", e.At.Sub(epoch), e.Text, in)
			}
		}
		if snap.Now.After(want) {
			t.Fatalf("still leading at %s, after the renew deadline %s", snap.Now.Sub(epoch), want.Sub(epoch))
		}
		s.runFor(50 * time.Millisecond)
	}
	lost, ok := firstLog(a, candidate.LogLost, "")
	if !ok || !lost.At.Equal(want) {
		dumpLog(t, a)
		t.Errorf("lost leadership at %s, want at the renew deadline shown, %s", lost.At.Sub(epoch), want.Sub(epoch))
	}

	// Paused between rounds: the round begins when it resumes, with the whole deadline.
	a.Heal()
	s.runUntilTrue(20*time.Second, "leading again", func() bool { return a.Snapshot().Role == candidate.RoleLeader })
	s.runFor(rp / 2)
	a.Pause()
	s.runFor(20 * time.Second)
	snap := a.Snapshot()
	if snap.RenewRound || snap.RenewDeadline.Sub(snap.Now) != rd {
		t.Errorf("paused between rounds for 20 s: renew round %v, renew deadline in %s, want %s from when it resumes",
			snap.RenewRound, snap.RenewDeadline.Sub(snap.Now), rd)
	}
}

// TestCommandsThatCannotActSaySo: a stopped candidate cannot pause, release or crash, and a
// running one cannot rejoin; each such command changes nothing and says why in the log.
func TestCommandsThatCannotActSaySo(t *testing.T) {
	s := newSim(t)
	a := s.add(testConfig("tab-a"))
	s.runUntilTrue(5*time.Second, "leading", func() bool { return a.Snapshot().Role == candidate.RoleLeader })
	a.Rejoin()
	if snap := a.Snapshot(); snap.State != candidate.StateLeader || snap.Log[0].Text != "rejoin: nothing happened, I am running already; rejoin starts a stopped candidate again" {
		t.Errorf("rejoin while leading: %v, log %q", snap, snap.Log[0].Text)
	}
	a.Crash()
	s.poke(a)
	s.runUntilTrue(time.Second, "stopped", func() bool { return a.Snapshot().State == candidate.StateStopped })
	for _, cmd := range []struct {
		do   func()
		want string
	}{
		{a.Pause, "pause: nothing happened, I am stopped and have nothing to pause; rejoin (J) first"},
		{a.Release, "release: nothing happened, I am stopped and hold nothing to release; rejoin (J) first"},
		{a.Crash, "crash: nothing happened, I am stopped already; rejoin (J) first"},
	} {
		cmd.do()
		s.runFor(100 * time.Millisecond)
		snap := a.Snapshot()
		if snap.State != candidate.StateStopped || snap.Faults.Paused {
			t.Errorf("after %q: %v, paused %v", cmd.want, snap, snap.Faults.Paused)
		}
		if e := snap.Log[0]; e.Kind != candidate.LogStopped || e.Text != cmd.want || e.Msg.In("zh") == e.Text {
			t.Errorf("log %s %q (zh %q), want %q", e.Kind, e.Text, e.Msg.In("zh"), cmd.want)
		}
	}
	a.Rejoin()
	s.poke(a)
	s.runUntilTrue(5*time.Second, "running again", func() bool { return a.Snapshot().State != candidate.StateStopped })
}
