package candidate

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// tryAcquireOrRenew is one attempt of client-go's tryAcquireOrRenew for a
// Lease lock. deadline is the renew round's deadline while leading (zero
// while following); it only shapes the log. It reports whether the candidate
// holds the lease afterwards.
func (c *Candidate) tryAcquireOrRenew(ctx context.Context, deadline time.Time) bool {
	if c.cfg.Coordinated {
		return c.tryCoordinatedRenew(ctx, deadline)
	}
	now := c.clock.Now()
	stamp := c.ownNow()
	desired := record{
		Holder:          c.cfg.Identity,
		DurationSeconds: c.cfg.leaseDurationSeconds(),
		AcquireTime:     stamp,
		RenewTime:       stamp,
	}

	// 1. Fast path: a leader whose view is still valid writes over its cached
	// copy, optimistically assuming nobody else wrote since.
	if c.isLeader() && c.isLeaseValid(now) {
		old := c.observedRecord()
		desired.AcquireTime = old.AcquireTime
		desired.Transitions = old.Transitions
		err := c.update(ctx, desired)
		if err == nil {
			c.setObserved(desired)
			c.succeeded(LogRenewed, "renew", "renewed")
			return true
		}
		if c.quiet(ctx) {
			return false
		}
		c.noteErr(err)
		switch {
		case IsConflict(err):
			c.logf(LogConflict, "", "renewal conflict: the lease changed since my last write; reading it again")
		case isAPIError(err):
			c.logf(LogError, "", "renewal refused ("+err.Error()+"); reading the lease again")
		}
		// Network errors show up again in the read below.
	}

	// 2. Read the lease; create it if it does not exist.
	lease, err := c.get(ctx)
	if err != nil {
		if c.quiet(ctx) {
			return false
		}
		c.noteErr(err)
		if !IsNotFound(err) {
			c.logf(LogError, "read:"+c.describeErr(ctx, err), "could not read the lease: "+c.describeErr(ctx, err)+c.leadNote(deadline))
			return false
		}
		if _, err := c.create(ctx, desired); err != nil {
			if c.quiet(ctx) {
				return false
			}
			c.noteErr(err)
			if IsAlreadyExists(err) {
				c.mu.Lock()
				c.conflict = true
				c.mu.Unlock()
				c.logf(LogConflict, "", "conflict: someone else created the lease first")
			} else {
				c.logf(LogError, "create:"+c.describeErr(ctx, err), "could not create the lease: "+c.describeErr(ctx, err))
			}
			return false
		}
		c.setObserved(desired)
		c.succeeded(LogAcquired, "", "the lease did not exist: created it and acquired it (transitions 0)")
		return true
	}

	// 3. Observe: a record that changed restarts the expiry countdown, on my
	// own clock.
	rec := recordFromSpec(lease.Spec)
	c.mu.Lock()
	c.observeLocked(rec)
	leader := c.observed.Holder == c.cfg.Identity
	valid := c.isLeaseValidLocked(now)
	expiresIn := c.observedTime.Add(c.observed.duration()).Sub(c.clock.Now())
	unchangedFor := c.clock.Now().Sub(c.observedTime)
	lostRace := c.conflict
	c.conflict = false
	c.mu.Unlock()
	if lostRace && rec.Holder != "" && rec.Holder != c.cfg.Identity {
		c.logf(LogConflict, "", fmt.Sprintf("conflict: %s was faster", rec.Holder))
	}

	// 4. Held by someone else and not expired by my clock: wait.
	if rec.Holder != "" && valid && !leader {
		c.setErr("")
		if !deadline.IsZero() {
			c.logf(LogWaiting, "wait:"+rec.Holder, fmt.Sprintf("lease now held by %s (expires in %s by my clock)%s",
				rec.Holder, secsRound(expiresIn), c.leadNote(deadline)))
		} else {
			c.logf(LogWaiting, "wait:"+rec.Holder, fmt.Sprintf("lease held by %s, expires in %s by my clock%s: waiting",
				rec.Holder, secsRound(expiresIn), c.recordAgeNote(rec)))
		}
		return false
	}

	// 5. Expired, free, or mine: take it or keep it.
	if leader {
		desired.AcquireTime = rec.AcquireTime
		desired.Transitions = rec.Transitions
	} else {
		desired.Transitions = rec.Transitions + 1
		if rec.Holder == "" {
			c.logf(LogTrying, "", "lease is free (no holder): trying to acquire")
		} else {
			c.logf(LogTrying, "", fmt.Sprintf("lease held by %s expired by my clock (no change seen for %s): trying to acquire",
				rec.Holder, secsRound(unchangedFor)))
		}
	}
	if err := c.update(ctx, desired); err != nil {
		if c.quiet(ctx) {
			return false
		}
		c.noteErr(err)
		if IsConflict(err) {
			c.mu.Lock()
			c.conflict = true
			c.mu.Unlock()
			c.logf(LogConflict, "", "conflict: the lease changed after I read it; someone else was faster"+c.leadNote(deadline))
		} else {
			c.logf(LogError, "write:"+c.describeErr(ctx, err), "could not write the lease: "+c.describeErr(ctx, err)+c.leadNote(deadline))
		}
		return false
	}
	c.setObserved(desired)
	switch {
	case !leader:
		c.succeeded(LogAcquired, "", fmt.Sprintf("acquired (transitions %d)", desired.Transitions))
	case deadline.IsZero():
		c.succeeded(LogAcquired, "", fmt.Sprintf("the lease still names me: renewed it and lead again (transitions %d)", desired.Transitions))
	default:
		c.succeeded(LogRenewed, "renew", "renewed")
	}
	return true
}

// release is client-go's release: re-read the lease (for a fresh
// resourceVersion) and, if the last record this candidate observed names it,
// write holderIdentity "" and leaseDurationSeconds 1. Like client-go it
// decides on the observed record, not on the one it just read. It gives up
// after RenewDeadline.
func (c *Candidate) release(ctx context.Context) {
	ctx, cancel := c.withDeadline(ctx, c.clock.Now().Add(c.cfg.RenewDeadline))
	defer cancel()
	lease, err := c.get(ctx)
	if err != nil {
		if c.quiet(ctx) {
			return
		}
		c.noteErr(err)
		if IsNotFound(err) {
			c.logf(LogStopped, "", "nothing to release: the lease is gone")
		} else {
			c.logf(LogError, "", "could not release: could not read the lease: "+c.describeErr(ctx, err))
		}
		return
	}
	if !c.isLeader() {
		c.logf(LogStopped, "", fmt.Sprintf("not releasing: the last record I saw names %s", nameOrNobody(c.observedRecord().Holder)))
		return
	}
	stamp := c.ownNow()
	rel := record{
		DurationSeconds: 1,
		AcquireTime:     stamp,
		RenewTime:       stamp,
		Transitions:     recordFromSpec(lease.Spec).Transitions,
	}
	if err := c.update(ctx, rel); err != nil {
		if c.quiet(ctx) {
			return
		}
		c.noteErr(err)
		c.logf(LogError, "", "could not release: "+c.describeErr(ctx, err))
		return
	}
	c.setObserved(rel)
	c.setErr("")
	c.logf(LogReleased, "", "released the lease: holder cleared and leaseDurationSeconds 1, so another candidate can take it at once")
}

// --- the lock: cached Lease plus gated requests ---

func (c *Candidate) get(ctx context.Context) (*Lease, error) {
	l, err := c.call(ctx, func(ctx context.Context) (*Lease, error) {
		return c.client.GetLease(ctx, c.cfg.Namespace, c.cfg.LeaseName)
	})
	if err == nil {
		c.mu.Lock()
		c.cached = l
		c.mu.Unlock()
	}
	return l, err
}

func (c *Candidate) create(ctx context.Context, r record) (*Lease, error) {
	l := &Lease{
		Kind:       LeaseKind,
		APIVersion: LeaseAPIVersion,
		Metadata:   ObjectMeta{Name: c.cfg.LeaseName, Namespace: c.cfg.Namespace},
		Spec:       specFromRecord(r, nil),
	}
	out, err := c.call(ctx, func(ctx context.Context) (*Lease, error) { return c.client.CreateLease(ctx, l) })
	if err == nil {
		c.mu.Lock()
		c.cached = out
		c.mu.Unlock()
	}
	return out, err
}

// update PUTs the cached Lease with its spec replaced by r, keeping every
// other field (and unknown spec fields) as last read. Like client-go it drops
// strategy and preferredHolder unless r carries them.
func (c *Candidate) update(ctx context.Context, r record) error {
	c.mu.Lock()
	l := c.cached.DeepCopy()
	c.mu.Unlock()
	if l == nil {
		return errors.New("lease not read yet")
	}
	l.Kind, l.APIVersion = LeaseKind, LeaseAPIVersion
	l.Spec = specFromRecord(r, l.Spec.Unknown)
	out, err := c.call(ctx, func(ctx context.Context) (*Lease, error) { return c.client.UpdateLease(ctx, l) })
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.cached = out
	c.mu.Unlock()
	return nil
}

// call runs one request as a frozen process would: not sent while paused, and
// its answer not looked at until resumed.
func (c *Candidate) call(ctx context.Context, f func(context.Context) (*Lease, error)) (*Lease, error) {
	if err := c.awaitRunning(ctx); err != nil {
		return nil, err
	}
	l, err := f(ctx)
	if werr := c.awaitRunning(ctx); werr != nil {
		return nil, werr
	}
	return l, err
}

// --- observed record ---

func (c *Candidate) setObserved(r record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.observed = r
	c.observedTime = c.clock.Now()
}

func (c *Candidate) observedRecord() record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.observed
}

func (c *Candidate) isLeader() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.observed.Holder == c.cfg.Identity
}

func (c *Candidate) isLeaseValid(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.isLeaseValidLocked(now)
}

// isLeaseValidLocked is client-go's isLeaseValid: observedTime +
// leaseDurationSeconds is after now.
func (c *Candidate) isLeaseValidLocked(now time.Time) bool {
	return c.observedTime.Add(c.observed.duration()).After(now)
}

// --- log helpers ---

func (c *Candidate) succeeded(kind LogKind, fold, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr = ""
	c.logLocked(kind, fold, text)
	c.changedLocked()
}

func (c *Candidate) noteErr(err error) {
	c.setErr(err.Error())
}

func (c *Candidate) setErr(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr = s
}

// quiet reports whether ctx was ended by a command or by the end of Run, in
// which case the failed request is not news.
func (c *Candidate) quiet(ctx context.Context) bool {
	return ctx.Err() != nil && !errors.Is(context.Cause(ctx), errRenewDeadline)
}

func (c *Candidate) describeErr(ctx context.Context, err error) string {
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), errRenewDeadline) {
		return "cut off by the renew deadline"
	}
	return err.Error()
}

// leadNote reminds, while leading, how long leadership lasts without a
// successful renewal.
func (c *Candidate) leadNote(deadline time.Time) string {
	if deadline.IsZero() {
		return ""
	}
	left := deadline.Sub(c.clock.Now())
	if left <= 0 {
		return "; my renew deadline has passed"
	}
	return fmt.Sprintf("; I keep leading until my renew deadline, in %s", secsRound(left))
}

// recordAgeNote explains, when the server's record looks long expired, why
// the candidate still waits: expiry counts from its own observation.
func (c *Candidate) recordAgeNote(r record) string {
	if r.RenewTime.IsZero() {
		return ""
	}
	late := c.ownNow().Sub(r.RenewTime.Add(r.duration()))
	if late < time.Second {
		return ""
	}
	return fmt.Sprintf(" (its renewTime says it expired %s ago, but I count from when I saw it change)", secsRound(late))
}

func isAPIError(err error) bool {
	var ae *APIError
	return errors.As(err, &ae)
}

func nameOrNobody(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
}
