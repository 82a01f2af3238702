package candidate

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// Bounds of the clock-rate fault: a clock that runs at half speed up to twice as fast.
const (
	MinClockRate = tabproto.MinClockRate
	MaxClockRate = tabproto.MaxClockRate
)

// driftClock is the candidate's own clock when it runs at another rate than the real one: a
// second of it lasts 1/rate real seconds. Everything the candidate times (its lease's expiry as
// it observed it, its renew deadline, its retry period) is counted on it, as a process counts
// on its own clock; that is why a clock that runs fast is the case client-go cannot absorb,
// where an offset cancels out. A timer pending when the rate changes keeps its real delay.
type driftClock struct {
	base Clock

	mu         sync.Mutex
	rate       float64
	anchorBase time.Time // the base clock's reading when the rate last changed
	anchorOwn  time.Time // this clock's reading then
}

func newDriftClock(base Clock) *driftClock {
	now := base.Now()
	return &driftClock{base: base, rate: 1, anchorBase: now, anchorOwn: now}
}

func (d *driftClock) Now() time.Time {
	now := d.base.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rate == 1 {
		return d.anchorOwn.Add(now.Sub(d.anchorBase))
	}
	return d.anchorOwn.Add(time.Duration(float64(now.Sub(d.anchorBase)) * d.rate))
}

func (d *driftClock) AfterFunc(dur time.Duration, f func()) Timer {
	d.mu.Lock()
	rate := d.rate
	d.mu.Unlock()
	if rate != 1 {
		dur = time.Duration(float64(dur) / rate)
	}
	return d.base.AfterFunc(dur, f)
}

// real is the base clock's reading when this clock reads own (zero for zero).
func (d *driftClock) real(own time.Time) time.Time {
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

// setRate changes the rate from now on; it reports whether it changed.
func (d *driftClock) setRate(rate float64) bool {
	own := d.Now()
	now := d.base.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rate == rate {
		return false
	}
	d.rate, d.anchorBase, d.anchorOwn = rate, now, own
	return true
}

func (d *driftClock) getRate() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rate
}

// SetClockRate makes the candidate's clock run at rate times the real one (1 is the real
// rate), between MinClockRate and MaxClockRate. Unlike an offset, a rate changes how long the
// candidate believes a lease lasts: a fast clock sees the holder's lease run out early and may
// take it while the holder still renews in time.
func (c *Candidate) SetClockRate(rate float64) error {
	if math.IsNaN(rate) || rate < MinClockRate || rate > MaxClockRate {
		return fmt.Errorf("clock rate must be between %g and %g", MinClockRate, MaxClockRate)
	}
	if c.drift.setRate(rate) {
		c.mu.Lock()
		c.signalLocked() // what is due is due on the new clock
		c.mu.Unlock()
		c.tell(outcome{kind: outClockRate, rate: rate})
	}
	return nil
}

// ClockRate returns the rate of the candidate's clock.
func (c *Candidate) ClockRate() float64 { return c.drift.getRate() }
