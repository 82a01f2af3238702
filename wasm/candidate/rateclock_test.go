//go:build !js

package candidate_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// TestRateClockWaitReachesItsTime: a wait on a clock running at another rate ends no earlier
// than the reading it waited for, whatever the rate and however short the wait, so that a
// caller waiting for a reading (the candidate's loop) never waits again for a rest that its
// base clock cannot time (a scenario at 2x spun so, in a bubble, on a 1 ns rest).
func TestRateClockWaitReachesItsTime(t *testing.T) {
	for _, rate := range []float64{0.25, 0.5, 0.67, 0.8, 1.25, 1.5, 2, 3, 4} {
		synctest.Test(t, func(t *testing.T) {
			c := candidate.NewRateClock(candidate.SystemClock{}, rate)
			time.Sleep(1234567 * time.Nanosecond) // an anchor the rate does not divide
			for _, d := range []time.Duration{1, 2, 3, 7, 999, time.Millisecond + 1, 3*time.Second + 7} {
				target := c.Now().Add(d)
				waits := 0
				for c.Now().Before(target) {
					if waits++; waits > 2 {
						t.Fatalf("rate %g: waiting %v took %d waits, now %v short", rate, d, waits, target.Sub(c.Now()))
					}
					fired := make(chan struct{})
					c.AfterFunc(target.Sub(c.Now()), func() { close(fired) })
					<-fired
				}
			}
		})
	}
}
