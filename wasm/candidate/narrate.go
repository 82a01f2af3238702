package candidate

import (
	"errors"
	"fmt"
	"time"
)

// logLine is one sentence of the decision log, before it is stamped. Lines
// with the same kind and a non-empty fold key merge into the newest entry.
type logLine struct {
	kind LogKind
	fold string
	text string
}

// scene is what the narrator knows besides the outcome: the candidate's
// configuration, the clocks and, while leading, the current renew round's
// deadline.
type scene struct {
	cfg   Config
	now   time.Time // the real clock
	own   time.Time // the candidate's own clock (real plus offset)
	round time.Time // the renew round's deadline while leading; zero while following
}

// narrate turns an outcome into the decision log's sentence. It reports
// false for outcomes the log does not tell (an interrupted step, a keeper
// look with nothing due, a network error on the fast path, which shows up
// again in the read that follows).
func narrate(o outcome, s scene) (logLine, bool) {
	if l, ok := narrateAttempt(o, s); ok {
		return l, true
	}
	if l, ok := narrateFailure(o, s); ok {
		return l, true
	}
	if l, ok := narrateKeeper(o, s); ok {
		return l, true
	}
	return narrateLifecycle(o, s)
}

// narrateAttempt tells how an attempt of the elector ended, and what it did
// on the way.
func narrateAttempt(o outcome, s scene) (logLine, bool) {
	r := o.rec
	switch o.kind {
	case outCreated:
		return logLine{LogAcquired, "", "the lease did not exist: created it and acquired it (transitions 0)"}, true
	case outAcquired:
		return logLine{LogAcquired, "", fmt.Sprintf("acquired (transitions %d)", r.Transitions)}, true
	case outRenewed:
		switch {
		case o.fast || !s.round.IsZero():
			return logLine{LogRenewed, "renew", "renewed"}, true
		case s.cfg.Coordinated:
			return logLine{LogAcquired, "", "the server picked me: renewed the lease and lead"}, true
		}
		return logLine{LogAcquired, "", fmt.Sprintf("the lease still names me: renewed it and lead again (transitions %d)", r.Transitions)}, true
	case outHeld:
		return narrateHeld(o, s), true
	case outExpired:
		return logLine{LogWaiting, "wait:expired", "the lease has expired by my clock: waiting for the server to pick a leader" + leadNote(s)}, true
	case outNoLease:
		return logLine{LogWaiting, "wait:", "no lease yet: waiting for the server to pick a leader" + leadNote(s)}, true
	case outEndOfTerm:
		if !s.round.IsZero() {
			return logLine{LogWaiting, "prefer:" + r.PreferredHolder, fmt.Sprintf("the server prefers %s: stepping down at my renew deadline%s", r.PreferredHolder, leadNote(s))}, true
		}
		return logLine{LogWaiting, "prefer:" + r.PreferredHolder, fmt.Sprintf("the lease names me but the server prefers %s: not renewing it", r.PreferredHolder)}, true
	case outLostRace:
		return logLine{LogConflict, "", fmt.Sprintf("conflict: %s was faster", r.Holder)}, true
	case outGoingFor:
		if r.Holder == "" {
			return logLine{LogTrying, "", "lease is free (no holder): trying to acquire"}, true
		}
		return logLine{LogTrying, "", fmt.Sprintf("lease held by %s expired by my clock (no change seen for %s): trying to acquire",
			r.Holder, secsRound(o.unchangedFor))}, true
	case outReleased:
		return logLine{LogReleased, "", "released the lease: holder cleared and leaseDurationSeconds 1, so another candidate can take it at once"}, true
	case outNotReleased:
		return logLine{LogStopped, "", "not releasing: the last record I saw names " + nameOrNobody(r.Holder)}, true
	case outGone:
		return logLine{LogStopped, "", "nothing to release: the lease is gone"}, true
	}
	return logLine{}, false
}

// narrateHeld tells that another candidate holds the lease: while leading,
// how long leadership lasts; while following, when the lease expires by this
// candidate's clock, and why an old renewTime does not make it expire sooner.
// In coordinated mode the server, not the expiry, decides what comes next.
func narrateHeld(o outcome, s scene) logLine {
	h := o.rec.Holder
	switch {
	case s.cfg.Coordinated && h == "":
		return logLine{LogWaiting, "wait:", "the lease has no holder: waiting for the server to pick a leader" + leadNote(s)}
	case s.cfg.Coordinated:
		return logLine{LogWaiting, "wait:" + h, fmt.Sprintf("lease held by %s: waiting for the server to pick a leader%s", h, leadNote(s))}
	case !s.round.IsZero():
		return logLine{LogWaiting, "wait:" + h, fmt.Sprintf("lease now held by %s (expires in %s by my clock)%s", h, secsRound(o.expiresIn), leadNote(s))}
	}
	return logLine{LogWaiting, "wait:" + h, fmt.Sprintf("lease held by %s, expires in %s by my clock%s: waiting", h, secsRound(o.expiresIn), recordAgeNote(o.rec, s))}
}

// narrateFailure tells a conflict or a failed request.
func narrateFailure(o outcome, s scene) (logLine, bool) {
	if o.kind == outConflict {
		switch o.op {
		case opCreate:
			return logLine{LogConflict, "", "conflict: someone else created the lease first"}, true
		case opRenew:
			return logLine{LogConflict, "", "renewal conflict: the lease changed since my last write; reading it again"}, true
		}
		if s.cfg.Coordinated {
			return logLine{LogConflict, "", "conflict: the lease changed after I read it; reading it again" + leadNote(s)}, true
		}
		return logLine{LogConflict, "", "conflict: the lease changed after I read it; someone else was faster" + leadNote(s)}, true
	}
	if o.kind != outFailed {
		return logLine{}, false
	}
	cause := o.err.Error()
	if o.cutOff {
		cause = "cut off by the renew deadline"
	}
	switch o.op {
	case opRead:
		return logLine{LogError, "read:" + cause, "could not read the lease: " + cause + leadNote(s)}, true
	case opCreate:
		return logLine{LogError, "create:" + cause, "could not create the lease: " + cause}, true
	case opWrite:
		return logLine{LogError, "write:" + cause, "could not write the lease: " + cause + leadNote(s)}, true
	case opRenew:
		// A refusal is news; a network error shows up again in the read that follows.
		var ae *APIError
		if errors.As(o.err, &ae) {
			return logLine{LogError, "", "renewal refused (" + o.err.Error() + "); reading the lease again"}, true
		}
		return logLine{}, false
	case opReleaseRead:
		return logLine{LogError, "", "could not release: could not read the lease: " + cause}, true
	case opReleaseWrite:
		return logLine{LogError, "", "could not release: " + cause}, true
	}
	var what string
	switch o.op {
	case opCandRead:
		what = "could not read my LeaseCandidate"
	case opCandCreate:
		what = "could not create my LeaseCandidate"
	case opCandRenew:
		what = "could not renew my LeaseCandidate"
	default:
		return logLine{}, false
	}
	msg := o.err.Error()
	if o.cutOff {
		msg = "no answer in time (cut off so that the elector is not held up)"
	}
	return logLine{LogError, "cand:" + what + msg, what + ": " + msg}, true
}

// narrateKeeper tells what the LeaseCandidate keeper did.
func narrateKeeper(o outcome, s scene) (logLine, bool) {
	c := s.cfg
	switch o.kind {
	case outDeclared:
		return logLine{LogCandidate, string(LogCandidate), fmt.Sprintf("declared my LeaseCandidate %s/%s for %s (binary %s, emulation %s)",
			c.Namespace, c.Identity, c.LeaseName, c.BinaryVersion, c.EmulationVersion)}, true
	case outCandidateRenewed:
		return logLine{LogCandidate, string(LogCandidate), "renewed my LeaseCandidate"}, true
	case outPinged:
		return logLine{LogPinged, string(LogPinged), "pinged by the server: answering (renewed my LeaseCandidate)"}, true
	}
	return logLine{}, false
}

// narrateLifecycle tells how the candidate started, stopped and started
// again, and which faults were switched on or off.
func narrateLifecycle(o outcome, s scene) (logLine, bool) {
	c := s.cfg
	switch o.kind {
	case outJoined:
		return logLine{LogJoined, "", fmt.Sprintf("joined: competing for %s/%s as %s (lease %s, renew deadline %s, retry every %s)",
			c.Namespace, c.LeaseName, c.Identity, secs(c.LeaseDuration), secs(c.RenewDeadline), secs(c.RetryPeriod))}, true
	case outCoordinatedMode:
		return logLine{LogJoined, "", fmt.Sprintf("coordinated mode: binary %s, emulation %s; the server picks the leader among the candidates",
			c.BinaryVersion, c.EmulationVersion)}, true
	case outRejoined:
		return logLine{LogJoined, "", "rejoined as a fresh candidate: nothing observed yet"}, true
	case outStartingOver:
		return logLine{LogJoined, "", "starting over as a fresh candidate, as a restarted process would: nothing observed yet"}, true
	case outLost:
		return logLine{LogLost, "", "renew deadline passed without a successful renewal: stopped leading"}, true
	case outCrashed:
		return logLine{LogStopped, "", "crashed: stopped"}, true
	case outCrashedLeading:
		return logLine{LogStopped, "", "crashed while leading: stopped without releasing, so the others must wait for the lease to expire"}, true
	case outStopping:
		return logLine{LogStopped, "", "stopping cleanly"}, true
	case outNothingToRelease:
		return logLine{LogStopped, "", "I was not leading, so there is nothing to release"}, true
	}
	return narrateFault(o)
}

// narrateFault tells a fault switched on or off.
func narrateFault(o outcome) (logLine, bool) {
	switch o.kind {
	case outPaused:
		return logLine{LogFault, "", "paused: frozen as in a long GC pause; the world goes on without me"}, true
	case outResumed:
		return logLine{LogFault, "", fmt.Sprintf("resumed after %s: acting on what I knew before the pause", secsRound(o.d))}, true
	case outPartitioned:
		switch o.mode {
		case PartitionHang:
			return logLine{LogFault, "", "network partitioned: my requests hang until it heals"}, true
		case PartitionFail:
			return logLine{LogFault, "", "network partitioned: my requests fail at once"}, true
		}
		return logLine{LogFault, "", "network healed"}, true
	case outSlow:
		if o.d == 0 {
			return logLine{LogFault, "", "network back to normal speed"}, true
		}
		return logLine{LogFault, "", "slow network: +" + secs(o.d) + " per request"}, true
	case outClockOffset:
		if o.d == 0 {
			return logLine{LogFault, "", "my clock is back in sync"}, true
		}
		return logLine{LogFault, "", "my " + describeOffset(o.d)}, true
	case outClockRate:
		if o.rate == 1 {
			return logLine{LogFault, "", "my clock runs at the real rate again"}, true
		}
		return logLine{LogFault, "", "my " + describeRate(o.rate) + ": I count leases, deadlines and retries on it"}, true
	}
	return logLine{}, false
}

// leadNote reminds, while leading, how long leadership lasts without a
// successful renewal.
func leadNote(s scene) string {
	if s.round.IsZero() {
		return ""
	}
	left := s.round.Sub(s.now)
	if left <= 0 {
		return "; my renew deadline has passed"
	}
	return fmt.Sprintf("; I keep leading until my renew deadline, in %s", secsRound(left))
}

// recordAgeNote explains, when the server's record looks long expired, why
// the candidate still waits: expiry counts from its own observation.
func recordAgeNote(r record, s scene) string {
	if r.RenewTime.IsZero() {
		return ""
	}
	late := s.own.Sub(r.RenewTime.Add(r.duration()))
	if late < time.Second {
		return ""
	}
	return fmt.Sprintf(" (its renewTime says it expired %s ago, but I count from when I saw it change)", secsRound(late))
}

// secsRound formats a duration to a tenth of a second: "4.1 s".
func secsRound(d time.Duration) string {
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// nameOrNobody names a holder, or nobody.
func nameOrNobody(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}
