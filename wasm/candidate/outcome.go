package candidate

import (
	"context"
	"errors"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// outcomeKind says what a step of the candidate came to.
type outcomeKind int

// Outcome kinds. The elector's attempt ends in one of the first group; the
// second group is said during an attempt, before it ends (where client-go
// logs); the rest come from a release, from the LeaseCandidate keeper, and
// from the candidate's lifecycle and faults.
const (
	// outInterrupted: a command or the end of Run cut the step short, so the
	// failed request is not news. Nothing is told.
	outInterrupted outcomeKind = iota

	// The end of an attempt (tryAcquireOrRenew, tryCoordinatedRenew).
	outCreated   // the lease did not exist: created it, holding it (transitions 0)
	outAcquired  // took a free or expired lease (rec.Transitions)
	outRenewed   // wrote over a record that names this candidate (fast: over the cached copy)
	outHeld      // held by another (coordinated: or by nobody) and not expired by my observation
	outExpired   // coordinated: expired by my observation; the server picks the next holder
	outNoLease   // coordinated: the lease does not exist yet
	outEndOfTerm // coordinated: the lease names me, but the server prefers rec.PreferredHolder
	outConflict  // a write lost a race (op)
	outFailed    // a request failed (op, err, cutOff)

	// Said during an attempt.
	outLostRace // the read after a lost race names the winner (rec.Holder)
	outGoingFor // the lease is free or expired by my observation: writing to take it

	// The end of a release.
	outReleased    // wrote holderIdentity "" and leaseDurationSeconds 1
	outNotReleased // the last record observed names another (rec.Holder), so it is not mine to release
	outGone        // nothing to release: the lease does not exist

	// The LeaseCandidate keeper.
	outDeclared         // created the LeaseCandidate
	outCandidateRenewed // renewed the LeaseCandidate, on schedule
	outPinged           // renewed the LeaseCandidate because the server pinged it
	outIdle             // nothing was due

	// The candidate's lifecycle.
	outJoined           // started
	outCoordinatedMode  // started in coordinated mode
	outRejoined         // started again after a stop
	outStartingOver     // started again after losing the lease
	outLost             // the renew deadline passed without a successful renewal
	outCrashed          // crashed while not leading
	outCrashedLeading   // crashed while leading: nothing released
	outStopping         // a release command: stopping cleanly
	outNothingToRelease // a release command while not leading
	outIgnored          // a command that cannot act now (cmd): pause, release or crash while stopped, rejoin while running

	// A fault switched on or off (or to another value), by the command cmd (tabproto's command
	// type), leaving the faults; d is how long a pause lasted (cmd "resume").
	outFault
)

// op is the request an outcome is about.
type op int

// Requests.
const (
	opRead         op = iota // GET the lease
	opCreate                 // POST the lease
	opWrite                  // PUT the lease after reading it
	opRenew                  // PUT the lease over the cached copy (the fast path)
	opReleaseRead            // GET the lease before releasing it
	opReleaseWrite           // PUT the released record
	opCandRead               // GET the LeaseCandidate
	opCandCreate             // POST the LeaseCandidate
	opCandRenew              // PUT the LeaseCandidate
)

// outcome is what one step of the candidate came to: the result of an
// attempt of the elector, of a release or of a look at the LeaseCandidate, or
// a change of the candidate's lifecycle or faults. The loop reads only
// whether the lease is held (holds); the narrator turns the rest into the
// decision log's sentences.
type outcome struct {
	kind outcomeKind
	// op is the request that failed or conflicted.
	op op
	// err is what the server or the network answered, for outConflict,
	// outFailed, outNoLease and outGone.
	err error
	// cutOff is true when the failed request was cut off by a deadline (the
	// renew deadline, or the keeper's own) rather than answered.
	cutOff bool
	// rec is the record read or written.
	rec record
	// expiresIn is, for outHeld, how long until the lease expires by this
	// candidate's own observation (observedTime + leaseDurationSeconds), not
	// by the record's renewTime.
	expiresIn time.Duration
	// unchangedFor is, for outGoingFor, how long the record had not changed.
	unchangedFor time.Duration
	// fast is true for a renewal over the cached copy (client-go's fast path).
	fast bool
	// d is, for outFault, how long the pause that ended lasted.
	d time.Duration
	// faults are, for outFault, the faults the switch left.
	faults tabproto.Faults
	// cmd is the command that could not act (outIgnored) or that switched a fault (outFault):
	// tabproto's command type.
	cmd string
}

// holds reports whether the candidate holds the lease after the attempt.
func (o outcome) holds() bool {
	switch o.kind {
	case outCreated, outAcquired, outRenewed:
		return true
	}
	return false
}

// lastError returns what the page's "last error" becomes after o, and false
// when o leaves it as it was. A failure sets it; a success or a look at a
// lease held by another clears it; the keeper's successes and the log's
// asides leave it alone.
func (o outcome) lastError() (string, bool) {
	if o.err != nil {
		return o.err.Error(), true
	}
	switch o.kind {
	case outCreated, outAcquired, outRenewed, outHeld, outExpired, outEndOfTerm, outReleased:
		return "", true
	}
	return "", false
}

// Causes of a cancelled step context.
var (
	errCutOff      = errors.New("cut off by a deadline")
	errInterrupted = errors.New("interrupted by a command")
)

// failed is the outcome of a request that returned err: nothing when ctx was
// ended by a command or by the end of Run, a conflict when a write lost a
// race, otherwise a failure, cut off or answered.
func failed(ctx context.Context, o op, err error) outcome {
	cutOff := ctx.Err() != nil
	if cutOff && !errors.Is(context.Cause(ctx), errCutOff) {
		return outcome{kind: outInterrupted}
	}
	switch {
	case o == opCreate && IsAlreadyExists(err), (o == opWrite || o == opRenew) && IsConflict(err):
		return outcome{kind: outConflict, op: o, err: err}
	}
	return outcome{kind: outFailed, op: o, err: err, cutOff: cutOff}
}
