package candidate_test

import (
	"testing"
	"time"
)

// TestClockRateLeavesAnOffsetThatIsSaid: a tab's clock that ran at 2x for ten seconds and is
// back at the real rate is ten seconds ahead, and says so (its faults' clock offset); an offset
// of 0 puts it back in sync.
func TestClockRateLeavesAnOffsetThatIsSaid(t *testing.T) {
	s := newSim(t)
	c := s.add(testConfig("drifter"))
	if err := c.SetClockRate(2); err != nil {
		t.Fatal(err)
	}
	s.runFor(10 * time.Second)
	if err := c.SetClockRate(1); err != nil {
		t.Fatal(err)
	}
	s.runFor(time.Second)
	if got := c.Snapshot().Faults.ClockOffsetMs; got != 10000 {
		t.Errorf("after 10 s at 2x: the tab says its clock is %d ms off, want 10000", got)
	}
	if got := c.ClockOffset(); got.Round(time.Millisecond) != 10*time.Second {
		t.Errorf("ClockOffset %v, want 10s", got)
	}
	c.SetClockOffset(0)
	s.runFor(time.Second)
	if got := c.Snapshot().Faults.ClockOffsetMs; got != 0 {
		t.Errorf("after an offset of 0: %d ms off", got)
	}
	if d := c.Snapshot().Now.Sub(s.clock.Now()); d != 0 {
		t.Errorf("after an offset of 0 the tab's clock is %v from the real one", d)
	}
}
