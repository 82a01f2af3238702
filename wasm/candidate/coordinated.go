package candidate

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// CandidateRenewInterval is how often the LeaseCandidate is renewed without
// a ping (client-go's requeueInterval).
const CandidateRenewInterval = 5 * time.Minute

// tryCoordinatedRenew is client-go's tryCoordinatedRenew: the attempt of both
// loops in coordinated mode. It never creates the Lease and never takes an
// expired or someone else's lease: only the server assigns holders. It
// renews only a lease that names this candidate and no preferredHolder,
// copying acquireTime, leaseTransitions and strategy and clearing
// preferredHolder.
func (c *Candidate) tryCoordinatedRenew(ctx context.Context, deadline time.Time) bool {
	now := c.clock.Now()
	lease, err := c.get(ctx)
	if err != nil {
		if c.quiet(ctx) {
			return false
		}
		c.noteErr(err)
		if IsNotFound(err) {
			c.logf(LogWaiting, "wait:", "no lease yet: waiting for the server to pick a leader"+c.leadNote(deadline))
			return false
		}
		c.logf(LogError, "read:"+c.describeErr(ctx, err), "could not read the lease: "+c.describeErr(ctx, err)+c.leadNote(deadline))
		return false
	}

	rec := recordFromSpec(lease.Spec)
	c.mu.Lock()
	c.observeLocked(rec)
	expired := c.observedTime.Add(c.observed.duration()).Before(now)
	c.mu.Unlock()
	c.setErr("")

	switch {
	case expired:
		c.logf(LogWaiting, "wait:expired", "the lease has expired by my clock: waiting for the server to pick a leader"+c.leadNote(deadline))
		return false
	case rec.Holder != c.cfg.Identity:
		if rec.Holder == "" {
			c.logf(LogWaiting, "wait:", "the lease has no holder: waiting for the server to pick a leader"+c.leadNote(deadline))
		} else {
			c.logf(LogWaiting, "wait:"+rec.Holder, fmt.Sprintf("lease held by %s: waiting for the server to pick a leader%s", rec.Holder, c.leadNote(deadline)))
		}
		return false
	case rec.PreferredHolder != "":
		if !deadline.IsZero() {
			c.logf(LogWaiting, "prefer:"+rec.PreferredHolder, fmt.Sprintf("the server prefers %s: stepping down at my renew deadline%s", rec.PreferredHolder, c.leadNote(deadline)))
		} else {
			c.logf(LogWaiting, "prefer:"+rec.PreferredHolder, fmt.Sprintf("the lease names me but the server prefers %s: not renewing it", rec.PreferredHolder))
		}
		return false
	}

	desired := record{
		Holder:          c.cfg.Identity,
		DurationSeconds: c.cfg.leaseDurationSeconds(),
		AcquireTime:     rec.AcquireTime,
		RenewTime:       c.ownNow(),
		Transitions:     rec.Transitions,
		Strategy:        rec.Strategy,
	}
	if err := c.update(ctx, desired); err != nil {
		if c.quiet(ctx) {
			return false
		}
		c.noteErr(err)
		if IsConflict(err) {
			c.logf(LogConflict, "", "conflict: the lease changed after I read it; reading it again"+c.leadNote(deadline))
		} else {
			c.logf(LogError, "write:"+c.describeErr(ctx, err), "could not write the lease: "+c.describeErr(ctx, err)+c.leadNote(deadline))
		}
		return false
	}
	c.setObserved(desired)
	if deadline.IsZero() {
		c.succeeded(LogAcquired, "", "the server picked me: renewed the lease and lead")
	} else {
		c.succeeded(LogRenewed, "renew", "renewed")
	}
	return true
}

// keepCandidate is client-go's LeaseCandidate helper, polled once per retry
// period: it creates the LeaseCandidate when missing, renews it when the
// server pinged it (pingTime after renewTime), at the start of each run and
// every CandidateRenewInterval, and never deletes it. A look is cut off at
// cut (one retry period, or a leader's renew deadline if sooner) so that a
// hanging network cannot stall the elector.
func (c *Candidate) keepCandidate(ctx context.Context, cut time.Time) {
	ctx, cancel := c.withDeadline(ctx, cut)
	defer cancel()
	ns, name := c.cfg.Namespace, c.cfg.Identity
	lc, err := gate(c, ctx, func(ctx context.Context) (*LeaseCandidate, error) {
		return c.client.GetLeaseCandidate(ctx, ns, name)
	})
	if err != nil && !IsNotFound(err) {
		c.candidateErr(ctx, "could not read my LeaseCandidate", err)
		return
	}
	stamp := c.ownNow()
	if err != nil {
		lc = &LeaseCandidate{
			Kind:       LeaseCandidateKind,
			APIVersion: LeaseCandidateAPIVersion,
			Metadata:   ObjectMeta{Name: name, Namespace: ns},
			Spec: LeaseCandidateSpec{
				LeaseName:        c.cfg.LeaseName,
				RenewTime:        &MicroTime{Time: stamp},
				BinaryVersion:    c.cfg.BinaryVersion,
				EmulationVersion: c.cfg.EmulationVersion,
				Strategy:         c.cfg.strategy(),
			},
		}
		if _, err := gate(c, ctx, func(ctx context.Context) (*LeaseCandidate, error) {
			return c.client.CreateLeaseCandidate(ctx, lc)
		}); err != nil {
			c.candidateErr(ctx, "could not create my LeaseCandidate", err)
			return
		}
		c.candidateRenewed(LogCandidate, fmt.Sprintf("declared my LeaseCandidate %s/%s for %s (binary %s, emulation %s)",
			ns, name, c.cfg.LeaseName, c.cfg.BinaryVersion, c.cfg.EmulationVersion))
		return
	}
	c.mu.Lock()
	renewed := c.candRenewed
	c.mu.Unlock()
	pinged := lc.Spec.pinged()
	due := renewed.IsZero() || !c.clock.Now().Before(renewed.Add(CandidateRenewInterval))
	if !pinged && !due {
		return
	}
	lc.Kind, lc.APIVersion = LeaseCandidateKind, LeaseCandidateAPIVersion
	lc.Spec.RenewTime = &MicroTime{Time: stamp}
	if _, err := gate(c, ctx, func(ctx context.Context) (*LeaseCandidate, error) {
		return c.client.UpdateLeaseCandidate(ctx, lc)
	}); err != nil {
		c.candidateErr(ctx, "could not renew my LeaseCandidate", err)
		return
	}
	if pinged {
		c.candidateRenewed(LogPinged, "pinged by the server: answering (renewed my LeaseCandidate)")
	} else {
		c.candidateRenewed(LogCandidate, "renewed my LeaseCandidate")
	}
}

func (c *Candidate) candidateRenewed(kind LogKind, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.candRenewed = c.clock.Now()
	c.logLocked(kind, string(kind), text)
	c.changedLocked()
}

func (c *Candidate) candidateErr(ctx context.Context, what string, err error) {
	if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errRenewDeadline) {
		return
	}
	msg := err.Error()
	if ctx.Err() != nil {
		msg = "no answer in time (cut off so that the elector is not held up)"
	}
	c.noteErr(err)
	c.logf(LogError, "cand:"+what+msg, what+": "+msg)
}

// gate runs one request as a frozen process would: not sent while paused,
// and its answer not looked at until resumed.
func gate[T any](c *Candidate, ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := c.awaitRunning(ctx); err != nil {
		return zero, err
	}
	v, err := f(ctx)
	if werr := c.awaitRunning(ctx); werr != nil {
		return zero, werr
	}
	return v, err
}
