package candidate

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Clock is the candidate's source of time. Tests inject a ManualClock so that
// no test sleeps through a lease duration.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine (or, for a ManualClock, in the
	// goroutine that advances the clock) once d has elapsed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call and reports whether it was still pending.
	Stop() bool
}

// SystemClock is the real clock of the process.
type SystemClock struct{}

var _ Clock = SystemClock{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// ManualClock is a Clock that only moves when told to. Timers fire, in order
// of their due time, from Advance and Set, each seeing Now equal to its due
// time.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers []*manualTimer
}

var _ Clock = (*ManualClock)(nil)

type manualTimer struct {
	c   *ManualClock
	at  time.Time
	seq uint64
	f   func()
}

// NewManualClock returns a ManualClock reading start.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start}
}

// Now returns the clock's current reading.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f at Now()+d. A non-positive d calls f at once, in the
// calling goroutine.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	c.seq++
	t := &manualTimer{c: c, at: c.now.Add(d), seq: c.seq, f: f}
	if d <= 0 {
		c.mu.Unlock()
		f()
		return t
	}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return t
}

// Stop removes the timer if it has not fired yet.
func (t *manualTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.timers, t)
	if i < 0 {
		return false
	}
	c.timers = slices.Delete(c.timers, i, i+1)
	return true
}

// Advance moves the clock forward by d, firing every timer that falls due.
func (c *ManualClock) Advance(d time.Duration) {
	c.Set(c.Now().Add(d))
}

// Set moves the clock to t, firing every timer due at or before t. Setting a
// time before Now only changes the reading.
func (c *ManualClock) Set(t time.Time) {
	for {
		c.mu.Lock()
		var due *manualTimer
		for _, tm := range c.timers {
			if !tm.at.After(t) && (due == nil || tm.at.Before(due.at) || (tm.at.Equal(due.at) && tm.seq < due.seq)) {
				due = tm
			}
		}
		if due == nil {
			c.now = t
			c.mu.Unlock()
			return
		}
		c.timers = slices.DeleteFunc(c.timers, func(x *manualTimer) bool { return x == due })
		if due.at.After(c.now) {
			c.now = due.at
		}
		c.mu.Unlock()
		due.f()
	}
}

// Pending returns the number of timers not yet fired.
func (c *ManualClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// sleep waits d on clock, or until ctx is done.
func sleep(ctx context.Context, clock Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	done := make(chan struct{})
	t := clock.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	}
}
