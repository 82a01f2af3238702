//go:build !js

package candidate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// TestStaleLeader: a leader paused past its lease resumes believing it leads; once it has read
// the record that names the new holder it is a stale leader until its renew deadline, then a
// follower. The snapshot says so, and so does its JSON.
func TestStaleLeader(t *testing.T) {
	s := newSim(t)
	a := s.add(testConfig("tab-a"))
	s.runFor(5 * time.Second)
	b := s.add(testConfig("tab-b"))
	s.runFor(10 * time.Second)
	if a.Snapshot().Stale || b.Snapshot().Stale {
		t.Fatal("stale before anything happened")
	}
	a.Pause()
	s.runUntilTrue(30*time.Second, "taken over by tab-b", func() bool { return b.Snapshot().Role == candidate.RoleLeader })
	s.runFor(5 * time.Second)
	a.Resume()
	if a.Snapshot().Stale {
		t.Error("stale before it read the record: it cannot know yet")
	}
	s.runFor(time.Millisecond)
	snap := a.Snapshot()
	if !snap.Stale || snap.Holder != "tab-b" || snap.State != candidate.StateLeader {
		t.Fatalf("after reading the record: %v stale=%v", snap, snap.Stale)
	}
	if js, _ := snap.MarshalJSON(); !strings.Contains(string(js), `"stale":true`) {
		t.Errorf("JSON: %s", js)
	}
	if b.Snapshot().Stale {
		t.Error("the true leader is stale")
	}
	s.runUntilTrue(30*time.Second, "tab-a gives up at its renew deadline", func() bool { return a.Snapshot().Role == candidate.RoleFollower })
	if a.Snapshot().Stale {
		t.Error("a follower is stale")
	}
}

// TestSlowClockLeaderOutlivesItsLease: a leader whose clock runs at half speed is cut off by a
// partition. Its renew deadline (7 s) lasts 14 real seconds on that clock, while the others
// count the 10 s lease on theirs: one takes the lease while the slow leader still believes it
// leads. An offset cannot do this; a rate can.
func TestSlowClockLeaderOutlivesItsLease(t *testing.T) {
	s := newSim(t)
	slow := s.add(testConfig("tab-slow"))
	s.runUntilTrue(10*time.Second, "tab-slow leads", func() bool { return s.leader() == slow })
	s.add(testConfig("tab-other"))
	s.runFor(3 * time.Second)
	if err := slow.SetClockRate(0.5); err != nil {
		t.Fatal(err)
	}
	if err := slow.SetClockRate(3); err == nil {
		t.Fatal("a rate of 3 was accepted")
	}
	s.poke(slow)
	slow.Partition(candidate.PartitionFail)
	s.runUntilTrue(30*time.Second, "tab-other takes over", func() bool {
		h, _ := s.srv.holder(testNS, testLease)
		return h == "tab-other"
	})
	took := s.clock.Now()
	if got := slow.Snapshot().Role; got != candidate.RoleLeader {
		t.Fatalf("when tab-other took the lease, the slow leader's role is %q, want leader", got)
	}
	s.runUntilTrue(30*time.Second, "the slow leader gives up", func() bool { return slow.Snapshot().Role != candidate.RoleLeader })
	if d := s.clock.Now().Sub(took); d < time.Second {
		t.Errorf("the slow leader gave up %s after the takeover; want it to believe for a while", d)
	}
	if !logHas(slow, candidate.LogFault, "clock runs 50% slow") {
		dumpLog(t, slow)
		t.Error("the log does not say the clock runs slow")
	}
}
