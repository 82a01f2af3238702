// Package judge decides what a lease's history means: when a hold counts from and when it
// runs out, where a holder's term begins and how it ends (released, expired, taken over,
// stepped down for the election controller, deleted), and how each of these reads in words.
// Every screen renders its verdicts; no page script keeps a lease rule of its own.
//
// The hold counts from when the lease's election record last changed, as the server saw it,
// not from spec.renewTime: renewTime is written with the holder's clock, and client-go's
// candidates ignore it, counting leaseDurationSeconds from the moment they observed the record
// change. A leader whose clock runs behind still holds the lease for as long as it keeps
// writing; its renewTime merely looks old.
package judge

import (
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// Change is one state of a lease from its change log, reduced to what the rules need.
type Change struct {
	Revision int64
	// At is when the change was committed, on the server's clock.
	At      time.Time
	Deleted bool
	Holder  string
	// Observed is when the lease's election record (holder, durations, times, transitions,
	// strategy, preferred holder) last changed as of this change: At when this change altered
	// it, else the Observed of the change before. The hold counts from it.
	Observed time.Time
	// RenewTime is spec.renewTime as the holder wrote it, with its own clock; zero when unset.
	RenewTime       time.Time
	Duration        time.Duration
	Transitions     int32
	Strategy        string
	PreferredHolder string
	// Folded counts the writes by the same holder that Compact folded into this change
	// (renewals between the first and the last write of a term).
	Folded int

	record record
}

// record is what client-go compares to decide that it observed a new election record.
type record struct {
	holder, strategy, preferred string
	duration                    time.Duration
	acquire, renew              int64
	transitions                 int32
}

// ChangeOf reduces a lease written at revision rev, committed at at, to a Change. prev is the
// lease's change before it (nil when unknown): a write that leaves the election record as it
// was (a label, say) does not restart the hold.
func ChangeOf(l *coordinationv1.Lease, rev int64, at time.Time, prev *Change) Change {
	c := Change{Revision: rev, At: at}
	s := l.Spec
	if s.HolderIdentity != nil {
		c.Holder = *s.HolderIdentity
	}
	if s.LeaseDurationSeconds != nil {
		c.Duration = time.Duration(*s.LeaseDurationSeconds) * time.Second
	}
	written := c.Duration
	if scale := timeScale(l.Annotations[TimeScaleAnnotation]); scale != 1 {
		// The writer's clocks run scale times as fast as the server's: its hold lasts
		// leaseDurationSeconds of theirs.
		c.Duration = time.Duration(float64(c.Duration) / scale)
	}
	if s.LeaseTransitions != nil {
		c.Transitions = *s.LeaseTransitions
	}
	if s.Strategy != nil {
		c.Strategy = string(*s.Strategy)
	}
	if s.PreferredHolder != nil {
		c.PreferredHolder = *s.PreferredHolder
	}
	if s.RenewTime != nil && !s.RenewTime.IsZero() {
		c.RenewTime = s.RenewTime.Time
	}
	c.record = record{holder: c.Holder, strategy: c.Strategy, preferred: c.PreferredHolder, duration: written, transitions: c.Transitions}
	if !c.RenewTime.IsZero() {
		c.record.renew = c.RenewTime.UnixNano()
	}
	if s.AcquireTime != nil && !s.AcquireTime.IsZero() {
		c.record.acquire = s.AcquireTime.UnixNano()
	}
	c.Observed = at
	if prev != nil && !prev.Deleted && prev.record == c.record && !prev.Observed.IsZero() {
		c.Observed = prev.Observed
	}
	return c
}

// TimeScaleAnnotation, on a lease, says how many of its writers' seconds pass in one of the
// server's: a guided scenario run at 2x writes "2", and its holds last leaseDurationSeconds of
// the scenario's clock, half as many of the server's. The judge counts holds so.
const TimeScaleAnnotation = "leaselab.dev/time-scale"

// timeScale parses a TimeScaleAnnotation; 1 when it is missing or not a sensible scale.
func timeScale(v string) float64 {
	if v == "" {
		return 1
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= 0.01 && f <= 100) {
		return 1
	}
	return f
}

// Deletion is the change that deleted a lease.
func Deletion(rev int64, at time.Time) Change { return Change{Revision: rev, At: at, Deleted: true} }

// Since is when the hold counts from: Observed, else At.
func (c Change) Since() time.Time {
	if !c.Observed.IsZero() {
		return c.Observed
	}
	return c.At
}

// Expiry is when the lease, as this change left it, runs out: Since + leaseDurationSeconds.
// Zero without a holder or a duration.
func (c Change) Expiry() time.Time {
	if c.Holder == "" || c.Duration <= 0 {
		return time.Time{}
	}
	return c.Since().Add(c.Duration)
}

// Written is leaseDurationSeconds as the change wrote it, on its writers' clock; Duration is
// the hold on the server's (they differ under a TimeScaleAnnotation).
func (c Change) Written() time.Duration {
	if c.record.duration > 0 {
		return c.record.duration
	}
	return c.Duration
}

// RecordExpiry is when the record itself says the lease runs out, renewTime +
// leaseDurationSeconds on the holder's clock (the Coordinated Leader Election controller's
// reading); zero without a renewTime or a duration.
func (c Change) RecordExpiry() time.Time {
	if c.RenewTime.IsZero() || c.Written() <= 0 {
		return time.Time{}
	}
	return c.RenewTime.Add(c.Written()) // as written: on the holder's clock
}

// Status of a lease.
const (
	StatusFree    = "free"    // no holder
	StatusHeld    = "held"    // a holder, not run out
	StatusExpired = "expired" // a holder that did not write again within leaseDurationSeconds
)

// Status is a lease's status at now, as c left it.
func Status(c Change, now time.Time) string {
	switch exp := c.Expiry(); {
	case c.Holder == "":
		return StatusFree
	case !exp.IsZero() && !now.Before(exp):
		return StatusExpired
	}
	return StatusHeld
}

// continuous reports whether b came before a ran out.
func continuous(a, b Change) bool {
	exp := a.Expiry()
	return exp.IsZero() || !exp.Before(b.At)
}

// Compact appends a change, folding the middle writes of a run by the same holder: a run keeps
// its first change (the term's start) and its last (its expiry). A write that comes after the
// previous one ran out is kept: it starts a new term. Terms of the compacted changes are those
// of the full ones.
func Compact(changes []Change, c Change) []Change {
	n := len(changes)
	if n >= 2 && !c.Deleted && c.Holder != "" {
		prev, last := changes[n-2], changes[n-1]
		// Fold only a run without gaps and without a preferred holder, so that a folded change
		// stands for writes that each came before the previous one ran out.
		if !prev.Deleted && !last.Deleted && prev.Holder == c.Holder && last.Holder == c.Holder &&
			prev.PreferredHolder == "" && last.PreferredHolder == "" && c.PreferredHolder == "" &&
			continuous(last, c) && (last.Folded > 0 || continuous(prev, last)) {
			c.Folded = last.Folded + 1
			changes[n-1] = c
			return changes
		}
	}
	return append(changes, c)
}

// Append adds to changes, compacted as Compact leaves them, the change of one write read from
// the lease's change log: l as written at revision rev, committed at at, or nil for the write
// that deleted it. Reading a change log event by event through Append gives the changes Terms
// and Overlaps take.
func Append(changes []Change, l *coordinationv1.Lease, rev int64, at time.Time) []Change {
	if l == nil {
		return Compact(changes, Deletion(rev, at))
	}
	var prev *Change
	if n := len(changes); n > 0 {
		prev = &changes[n-1]
	}
	return Compact(changes, ChangeOf(l, rev, at, prev))
}

// Renewal reports whether cur renewed the hold prev left: the same holder wrote a new record
// before the lease ran out.
func Renewal(prev, cur Change) bool {
	return !prev.Deleted && !cur.Deleted && cur.Holder != "" && prev.Holder == cur.Holder &&
		cur.record != prev.record && continuous(prev, cur)
}
