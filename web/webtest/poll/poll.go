// Package poll is how tests wait on observed state instead of sleeping for a guessed time:
// they poll a condition until it holds, and fail with the condition's last account of what it
// saw when a generous bound passes. It depends on the standard library only, so that the
// tests of any package may use it.
package poll

import (
	"testing"
	"time"
)

// Interval is how often Until looks again at first, for the first Patience of a wait.
const Interval = 10 * time.Millisecond

// Patience is how long Until looks every Interval; past it, it looks every Slower. A condition
// still false then waits on something slow (an election, a page), and in a browser test each
// look is a round trip through Chromium to a page's script: a hundred a second, for every
// test waiting, is work taken from the pages under test.
const Patience = 200 * time.Millisecond

// Slower is how often Until looks once Patience has passed.
const Slower = 50 * time.Millisecond

// Until polls cond until it returns true, every Interval and then every Slower, and fails tb
// with what and cond's last description of the state it saw once within has passed. within is
// an upper bound for a busy machine, not a guess at how long things take.
func Until(tb testing.TB, within time.Duration, what string, cond func() (bool, string)) {
	tb.Helper()
	start := time.Now()
	deadline := start.Add(within)
	for {
		ok, state := cond()
		if ok {
			return
		}
		now := time.Now()
		if now.After(deadline) {
			tb.Fatalf("%s: not within %s; last: %s", what, within, state)
		}
		if now.Sub(start) < Patience {
			time.Sleep(Interval)
		} else {
			time.Sleep(Slower)
		}
	}
}
