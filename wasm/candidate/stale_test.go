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
