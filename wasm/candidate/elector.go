package candidate

import (
	"context"
	"sync"
	"time"
)

// elector is client-go's LeaderElector without its loops: one attempt at a
// time (tryAcquireOrRenew, or tryCoordinatedRenew in coordinated mode) and
// the release, each returning its outcome. It knows what the candidate
// observed of the lease; the loops, the faults and the decision log belong
// to the Candidate.
type elector struct {
	cfg    Config
	clock  Clock
	ownNow func() time.Time // the candidate's own clock, which stamps what it writes
	lock   *leaseLock
	// tell hears what happens during an attempt, before it ends: where
	// client-go logs and carries on.
	tell func(outcome)

	mu           sync.Mutex
	observed     record
	observedKey  recordKey
	haveKey      bool
	observedTime time.Time // real clock (client-go's monotonic reading)
	lostRace     bool      // a write lost a race: the next read names the winner
}

// tryAcquireOrRenew is one attempt of client-go's tryAcquireOrRenew for a
// Lease lock: it acquires or renews the lease if it can, and returns what
// came of it. The caller bounds ctx (a leader's renew deadline cancels it
// with errCutOff).
func (le *elector) tryAcquireOrRenew(ctx context.Context) outcome {
	if le.cfg.Coordinated {
		return le.tryCoordinatedRenew(ctx)
	}
	now := le.clock.Now()
	stamp := le.ownNow()
	desired := record{
		Holder:          le.cfg.Identity,
		DurationSeconds: le.cfg.leaseDurationSeconds(),
		AcquireTime:     stamp,
		RenewTime:       stamp,
	}

	// 1. Fast path: a leader whose view is still valid writes over its cached
	// copy, optimistically assuming nobody else wrote since.
	if le.isLeader() && le.isLeaseValid(now) {
		old := le.observedRecord()
		desired.AcquireTime, desired.Transitions = old.AcquireTime, old.Transitions
		err := le.lock.update(ctx, desired)
		if err == nil {
			le.setObserved(desired)
			return outcome{kind: outRenewed, rec: desired, fast: true}
		}
		o := failed(ctx, opRenew, err)
		if o.kind == outInterrupted {
			return o
		}
		le.tell(o) // and fall back to the slow path
	}

	// 2. Read the lease; create it if it does not exist.
	rec, err := le.lock.get(ctx)
	if err != nil {
		if !IsNotFound(err) {
			return failed(ctx, opRead, err)
		}
		if err := le.lock.create(ctx, desired); err != nil {
			return le.noteRace(failed(ctx, opCreate, err))
		}
		le.setObserved(desired)
		return outcome{kind: outCreated, rec: desired}
	}

	// 3. Observe: a record that changed restarts the expiry countdown, on my
	// own clock. Held by someone else and not expired by it: wait.
	le.observe(rec)
	if rec.Holder != "" && le.isLeaseValid(now) && !le.isLeader() {
		return outcome{kind: outHeld, rec: rec, expiresIn: le.expiresIn()}
	}

	// 4. Expired, free, or mine: take it or keep it.
	leader := le.isLeader()
	if leader {
		desired.AcquireTime, desired.Transitions = rec.AcquireTime, rec.Transitions
	} else {
		desired.Transitions = rec.Transitions + 1
		le.tell(outcome{kind: outGoingFor, rec: rec, unchangedFor: le.unchangedFor()})
	}
	if err := le.lock.update(ctx, desired); err != nil {
		return le.noteRace(failed(ctx, opWrite, err))
	}
	le.setObserved(desired)
	if leader {
		return outcome{kind: outRenewed, rec: desired}
	}
	return outcome{kind: outAcquired, rec: desired}
}

// tryCoordinatedRenew is client-go's tryCoordinatedRenew: the attempt of both
// loops in coordinated mode. It never creates the lease and never takes an
// expired or someone else's lease: only the server assigns holders. It renews
// only a lease that names this candidate and no preferredHolder, copying
// acquireTime, leaseTransitions and strategy and clearing preferredHolder.
func (le *elector) tryCoordinatedRenew(ctx context.Context) outcome {
	now := le.clock.Now()

	// 1. Read the lease; the server creates it.
	rec, err := le.lock.get(ctx)
	if err != nil {
		if IsNotFound(err) {
			return outcome{kind: outNoLease, err: err}
		}
		return failed(ctx, opRead, err)
	}

	// 2. Observe, then check the expiry and the holder. A lease marked "end
	// of term" (a preferredHolder) is not renewed: it runs out, and the
	// server hands it on.
	le.observe(rec)
	switch {
	case le.hasExpired(now):
		return outcome{kind: outExpired, rec: rec}
	case !le.isLeader():
		return outcome{kind: outHeld, rec: rec}
	case rec.PreferredHolder != "":
		return outcome{kind: outEndOfTerm, rec: rec}
	}

	// 3. Renew.
	desired := record{
		Holder:          le.cfg.Identity,
		DurationSeconds: le.cfg.leaseDurationSeconds(),
		AcquireTime:     rec.AcquireTime,
		RenewTime:       le.ownNow(),
		Transitions:     rec.Transitions,
		Strategy:        rec.Strategy,
	}
	if err := le.lock.update(ctx, desired); err != nil {
		return failed(ctx, opWrite, err)
	}
	le.setObserved(desired)
	return outcome{kind: outRenewed, rec: desired}
}

// release is client-go's release: re-read the lease (for a fresh
// resourceVersion) and, if the last record this candidate observed names it,
// write holderIdentity "" and leaseDurationSeconds 1. Like client-go it
// decides on the observed record, not on the one it just read. The caller
// bounds ctx.
func (le *elector) release(ctx context.Context) outcome {
	rec, err := le.lock.get(ctx)
	if err != nil {
		if IsNotFound(err) {
			return outcome{kind: outGone, err: err}
		}
		return failed(ctx, opReleaseRead, err)
	}
	if !le.isLeader() {
		return outcome{kind: outNotReleased, rec: le.observedRecord()}
	}
	stamp := le.ownNow()
	released := record{
		DurationSeconds: 1,
		AcquireTime:     stamp,
		RenewTime:       stamp,
		Transitions:     rec.Transitions,
	}
	if err := le.lock.update(ctx, released); err != nil {
		return failed(ctx, opReleaseWrite, err)
	}
	le.setObserved(released)
	return outcome{kind: outReleased, rec: released}
}

// observe takes in a record read from the server: one that differs from the
// last one observed restarts the expiry countdown on the real clock, as
// client-go's observedTime does. After a lost race, it tells who won.
func (le *elector) observe(rec record) {
	le.mu.Lock()
	if key := rec.key(); !le.haveKey || key != le.observedKey {
		le.observed = rec
		le.observedTime = le.clock.Now()
		le.observedKey = key
		le.haveKey = true
	}
	lost := le.lostRace
	le.lostRace = false
	le.mu.Unlock()
	if lost && rec.Holder != "" && rec.Holder != le.cfg.Identity {
		le.tell(outcome{kind: outLostRace, rec: rec})
	}
}

// noteRace remembers a write that lost a race, so that the next read names
// the winner, and returns o.
func (le *elector) noteRace(o outcome) outcome {
	if o.kind == outConflict {
		le.mu.Lock()
		le.lostRace = true
		le.mu.Unlock()
	}
	return o
}

// setObserved records what this candidate just wrote as observed now.
func (le *elector) setObserved(r record) {
	le.mu.Lock()
	defer le.mu.Unlock()
	le.observed = r
	le.observedTime = le.clock.Now()
}

// observedRecord returns the record last observed.
func (le *elector) observedRecord() record {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observed
}

// view returns the observed record and when it was observed (real clock).
func (le *elector) view() (record, time.Time) {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observed, le.observedTime
}

// isLeader is client-go's IsLeader: the record last observed names this
// candidate.
func (le *elector) isLeader() bool {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observed.Holder == le.cfg.Identity
}

// isLeaseValid is client-go's isLeaseValid: observedTime +
// leaseDurationSeconds is after now.
func (le *elector) isLeaseValid(now time.Time) bool {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observedTime.Add(le.observed.duration()).After(now)
}

// hasExpired is tryCoordinatedRenew's test: observedTime +
// leaseDurationSeconds is before now. (At that very instant the lease is
// neither valid nor expired.)
func (le *elector) hasExpired(now time.Time) bool {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observedTime.Add(le.observed.duration()).Before(now)
}

// expiresIn is how long until the observed record expires by this
// candidate's own observation; negative once it has.
func (le *elector) expiresIn() time.Duration {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observedTime.Add(le.observed.duration()).Sub(le.clock.Now())
}

// unchangedFor is how long the observed record has not changed.
func (le *elector) unchangedFor() time.Duration {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.clock.Now().Sub(le.observedTime)
}

// forget drops everything observed, as a new process would know nothing.
func (le *elector) forget() {
	le.mu.Lock()
	le.observed, le.observedKey, le.haveKey = record{}, recordKey{}, false
	le.observedTime, le.lostRace = time.Time{}, false
	le.mu.Unlock()
	le.lock.keep(nil)
}
