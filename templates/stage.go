package templates

import (
	"context"

	"github.com/leaselab/leaselab/templates/i18n"
)

// StagePage is /stage: one lease's election as one picture.
type StagePage struct {
	Page
	Namespace, Name string
	// LiveURL serves the picture alone (StageLive), WatchURL says when it changed.
	LiveURL, WatchURL, LeaseURL string
	Live                        StageLive
}

// StageLive is the picture as of one moment: what stage.js swaps in when anything changes,
// and animates between (request dots, draining rings) from the instants it carries.
type StageLive struct {
	// NowMs is the server's clock for the picture (Unix ms); At the past moment it shows
	// (RFC 3339), "" when live.
	NowMs int64
	At    string
	// Record is the Lease as the server holds it.
	Record     StageRecord
	Candidates []StageCandidate
	Requests   []StageRequest
	// RequestGroups, beside a crowd, count the requests not drawn one by one (the crowds' and
	// the plain followers') per verb and outcome.
	RequestGroups []StageRequestGroup
	Lanes         StageLanes
	// Caption says in one short sentence what happened last, on screen and in the polite live
	// region (what changed).
	Caption i18n.Text
}

// StageRecord is the Lease record beside the server.
type StageRecord struct {
	Exists      bool
	Holder      string
	RenewTime   string // as written: RFC 3339 with microseconds
	Transitions int32
	RV          string
}

// StageCandidate is one candidate around the server: a browser tab, leaselab candidate, a
// lesson's member, or any other client that wrote the lease (Role "client").
type StageCandidate struct {
	Identity string
	// Role is leader, follower, stale, paused, partitioned, stopped or client.
	Role string
	// X and Y place it in the picture's 1000 by 600 frame; LinkX1.. the link to the server.
	X, Y float64
	// Link is how its link to the server is drawn: "" whole, "cut", "frozen", "lossy", "slow".
	Link string
	// Rings are its timers on its own clock, placed on the server's (Unix ms): the expiry it
	// acts on, its renew deadline while leading, its next retry. 0 when not running.
	ExpiresAtMs, RenewByMs, RetryAtMs int64
	LeaseMs, RenewDeadlineMs, RetryMs int64
	// Count, when not 0, makes this a crowd: that many candidates of one role, drawn as one
	// (Identity is "+N"), with Requests in flight or just ended among them.
	Count, Requests int
}

// StageRequest is one request on the lease: a candidate's, as it reported it (a request that
// hangs in a partition, one that crawls), or a client's, as the server saw it at its door.
type StageRequest struct {
	ID       string
	Identity string
	Verb     string
	// Outcome is the status code, "timeout" or "refused"; "" while in flight. Kind is how it
	// is coloured: "ok", "conflict", "failed", "" in flight.
	Outcome, Kind  string
	StartMs, EndMs int64 // server clock, Unix ms; EndMs 0 while in flight
	// FromX, FromY are the candidate's place; the server is at the frame's centre.
	FromX, FromY float64
	// Link is the candidate's link as the request met it ("cut": it hangs half way).
	Link string
}

// StageRequestGroup is Count requests with one verb and outcome (and so one Kind), drawn as
// one chip at X, Y under the server.
type StageRequestGroup struct {
	Verb, Outcome, Kind string
	Count               int
	X, Y                float64
}

// StageLanes are the record lane and one belief lane per candidate, over [FromMs, ToMs].
type StageLanes struct {
	FromMs, ToMs int64
	Record       []StageSegment
	Beliefs      []StageLane
	Overlaps     []StageSegment
	// PastLease are the stretches in which a leader acted after its lease ran out by the
	// others' count, nobody else holding it (judge.PastLease).
	PastLease []StageSegment
	Ticks     []StageTick
}

// StageLane is one candidate's beliefs.
type StageLane struct {
	Identity string
	Segments []StageSegment
}

// StageSegment is a stretch of a lane, in percent of the lanes' width. Kind is the belief
// (leading, following, paused, partitioned, stale), or on the record lane the holder's term
// ("held", "expired": the stretch after it ran out unrenewed), or a split brain.
type StageSegment struct {
	Kind   string
	Holder string
	X, W   float64
	// FromMs and ToMs are its instants, for zooming to it.
	FromMs, ToMs int64
	Title        string
}

// StageTick is a time label under the lanes.
type StageTick struct {
	X     float64
	Label string
	// Anchor is the label's text-anchor: "end" when centring it would cross the right edge.
	Anchor string
	// Late is a tick close enough to the right edge that a phone's narrower lanes end its
	// label at it.
	Late bool
	// OnPhone is a label a phone shows: about every other one.
	OnPhone bool
}

// outcomeWords is a request's outcome in words: in flight, timed out, refused, or answered
// with its status code.
func outcomeWords(ctx context.Context, outcome string) string {
	switch outcome {
	case "":
		return tr(ctx, "stage.outcome.inFlight")
	case "timeout", "refused":
		return tr(ctx, "stage.outcome."+outcome)
	}
	return tr(ctx, "stage.outcome.status", outcome)
}
