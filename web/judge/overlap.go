package judge

import "time"

// View is what one candidate said about itself at one moment, as the server recorded it: the
// candidates' side of the story, beside the server's record (the lease's changes).
type View struct {
	Identity string
	// At is when the candidate's role took this value, on the server's clock: the server's
	// receive time, less how long before reporting the candidate says its role changed (by its
	// own clock).
	At time.Time
	// Leads is true while the candidate believes it leads: from client-go's OnStartedLeading
	// to its OnStoppedLeading, paused, partitioned or not.
	Leads bool
	// State is the candidate's one word: leader, follower, paused, partitioned or stopped.
	State string
	// Holder is the holder in the lease record the candidate last read.
	Holder string
	// Faults in effect when it reported.
	Paused      bool
	Partitioned bool
	Latency     time.Duration // added round trip
	ClockOffset time.Duration // its clock minus the real one
	// Decision is the kind of its newest decision ("released", "lost", "renewed", ...).
	Decision string
}

// Causes of an overlap, from what the stale believer recorded.
const (
	CausePaused      = "paused"
	CausePartitioned = "partitioned"
	CauseSlowNetwork = "slow-network"
	CauseClockOffset = "clock-offset"
	CauseReleased    = "released" // released the lease while still working
	CauseUnknown     = "unknown"
)

// OverlapGrace is the shortest disagreement reported: a candidate's report of a role change
// reaches the server a little after the write that caused it, and a clean release or
// takeover must not read as split brain.
const OverlapGrace = 250 * time.Millisecond

// Overlap is one interval in which more than one candidate believed it led the same lease, or
// a candidate believed it led while the server's record named another holder (or nobody).
type Overlap struct {
	// Identities are everyone involved, sorted: the believers and the record's holder.
	Identities []string
	// Believers are those who believed they led, sorted; Stale those of them the record did
	// not name.
	Believers []string
	Stale     []string
	// Holder is the record's holder when the interval began ("" for nobody).
	Holder string
	Start  time.Time
	// End is when it ended; zero while it lasts.
	End   time.Time
	Cause string
	// Text says in a sentence who, for how long and why; Advice what real code does about it.
	Text   string
	Advice string
}
