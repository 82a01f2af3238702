package judge

import (
	"testing"
	"time"
)

// TestPastLease: alice's lease runs out at 10 s while nobody takes it, and she goes on leading
// until 13.5 s: one past-lease interval, [10 s, 13.5 s]. bob's lease, renewed in time, has none;
// a takeover ends the interval where the split brain begins.
func TestPastLease(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	changes := []Change{{Revision: 1, At: at(0), Holder: "alice", Observed: at(0), Duration: 10 * time.Second}}
	views := []View{
		{Identity: "alice", At: at(0), Leads: true, State: "leader", Holder: "alice"},
		{Identity: "alice", At: at(13500), State: "follower", Holder: "alice"},
	}
	got := PastLease("default/demo", changes, views, at(20000))
	if len(got) != 1 || !got[0].Start.Equal(at(10000)) || !got[0].End.Equal(at(13500)) || got[0].Cause != CausePastLease {
		t.Fatalf("past-lease intervals %+v", got)
	}
	if got[0].Text != "alice went on leading default/demo for 3.5 s after its lease ran out at "+clock(at(10000))+" by the others' count: anyone could have taken it meanwhile" {
		t.Errorf("text: %s", got[0].Text)
	}
	// Renewed in time: none.
	renewed := append(changes, Change{Revision: 2, At: at(8000), Holder: "alice", Observed: at(8000), Duration: 10 * time.Second})
	if got := PastLease("default/demo", renewed, views, at(20000)); len(got) != 0 {
		t.Errorf("renewed in time, yet %+v", got)
	}
	// bob takes over at 12 s: the interval ends there (a split brain from then on).
	taken := append(changes, Change{Revision: 2, At: at(12000), Holder: "bob", Observed: at(12000), Duration: 10 * time.Second})
	if got := PastLease("default/demo", taken, views, at(20000)); len(got) != 1 || !got[0].End.Equal(at(12000)) {
		t.Errorf("with a takeover at 12 s: %+v", got)
	}
}
