package candidate

import (
	"sync"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// Bounds of the clock-rate fault: a clock that runs at half speed up to twice as fast.
const (
	MinClockRate = tabproto.MinClockRate
	MaxClockRate = tabproto.MaxClockRate
)

// RateClock is a clock that runs at rate times its base clock: a second of it lasts 1/rate
// seconds of the base. A timer pending when the rate changes keeps its base delay, as a sleep
// in progress would.
//
// It is the candidate's own clock under the clock-rate fault: everything the candidate times
// (its lease's expiry as it observed it, its renew deadline, its retry period) is counted on
// it, as a process counts on its own clock; that is why a clock that runs fast is the case
// client-go cannot absorb, where an offset cancels out. A guided scenario runs its members on
// one at the scenario's speed.
type RateClock struct {
	base Clock

	mu         sync.Mutex
	rate       float64
	anchorBase time.Time // the base clock's reading when the rate last changed
	anchorOwn  time.Time // this clock's reading then
}

var _ Clock = (*RateClock)(nil)

// NewRateClock returns a clock that reads as base does now and runs at rate from there.
func NewRateClock(base Clock, rate float64) *RateClock {
	now := base.Now()
	return &RateClock{base: base, rate: rate, anchorBase: now, anchorOwn: now}
}

func (d *RateClock) Now() time.Time {
	now := d.base.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ownLocked(now)
}

// ownLocked is this clock's reading when the base clock reads base.
func (d *RateClock) ownLocked(base time.Time) time.Time {
	if d.rate == 1 {
		return d.anchorOwn.Add(base.Sub(d.anchorBase))
	}
	return d.anchorOwn.Add(time.Duration(float64(base.Sub(d.anchorBase)) * d.rate))
}

func (d *RateClock) AfterFunc(dur time.Duration, f func()) Timer {
	d.mu.Lock()
	rate := d.rate
	d.mu.Unlock()
	if rate != 1 && dur > 0 {
		// One nanosecond more than the quotient, which truncates: a wait cut to less than
		// its length on this clock would have a caller that waits for a reading wait again
		// for the rest, forever once the rest is shorter than a base nanosecond.
		dur = time.Duration(float64(dur)/rate) + 1
	}
	return d.base.AfterFunc(dur, f)
}

// Own is this clock's reading when the base clock reads base (zero for zero): exact for an
// instant since the rate last changed, and, before it, as if the rate had always been the
// current one.
func (d *RateClock) Own(base time.Time) time.Time {
	if base.IsZero() {
		return base
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ownLocked(base)
}

// real is the base clock's reading when this clock reads own (zero for zero).
func (d *RateClock) real(own time.Time) time.Time {
	if own.IsZero() {
		return own
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rate == 1 {
		return d.anchorBase.Add(own.Sub(d.anchorOwn))
	}
	return d.anchorBase.Add(time.Duration(float64(own.Sub(d.anchorOwn)) / d.rate))
}

// SetRate changes the rate from now on; it reports whether it changed.
func (d *RateClock) SetRate(rate float64) bool {
	now := d.base.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rate == rate {
		return false
	}
	d.anchorOwn, d.anchorBase, d.rate = d.ownLocked(now), now, rate
	return true
}

// Drift is how far this clock has run ahead of its base (behind, when negative): what its rates
// other than 1 have added up to so far.
func (d *RateClock) Drift() time.Duration {
	now := d.base.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ownLocked(now).Sub(now)
}

// Rate returns the clock's rate.
func (d *RateClock) Rate() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rate
}
