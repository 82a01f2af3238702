// Package poll is how tests wait on observed state instead of sleeping for a guessed time:
// they poll a condition until it holds, and fail with the condition's last account of what it
// saw when a generous bound passes. It depends on the standard library only, so that the
// tests of any package may use it.
package poll

import (
	"testing"
	"time"
)

// Interval is how often Until looks again.
const Interval = 10 * time.Millisecond

// Until polls cond every Interval until it returns true, and fails tb with what and cond's last
// description of the state it saw once within has passed. within is an upper bound for a busy
// machine, not a guess at how long things take.
func Until(tb testing.TB, within time.Duration, what string, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %s; last: %s", what, within, state)
		}
		time.Sleep(Interval) // the poll interval
	}
}
