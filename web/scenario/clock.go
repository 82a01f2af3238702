package scenario

import (
	"sync"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// Speeds a run may go at: a quarter of real time up to four times as fast.
const (
	MinSpeed = 0.25
	MaxSpeed = 4.0
)

// speedClock is a run's clock: the base clock at the run's speed. Every candidate of a run is
// built on it, and so is the run's own schedule, so that changing the speed changes all of
// the scenario's clocks together: a second of it lasts 1/speed seconds of the base clock. A
// timer pending when the speed changes keeps its base delay, as a sleep in progress would.
type speedClock struct {
	base candidate.Clock

	mu         sync.Mutex
	speed      float64
	anchorBase time.Time
	anchorOwn  time.Time
}

var _ candidate.Clock = (*speedClock)(nil)

func newSpeedClock(base candidate.Clock, speed float64) *speedClock {
	now := base.Now()
	return &speedClock{base: base, speed: speed, anchorBase: now, anchorOwn: now}
}

func (c *speedClock) Now() time.Time {
	now := c.base.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ownLocked(now)
}

func (c *speedClock) ownLocked(base time.Time) time.Time {
	d := base.Sub(c.anchorBase)
	if c.speed != 1 {
		d = time.Duration(float64(d) * c.speed)
	}
	return c.anchorOwn.Add(d)
}

func (c *speedClock) AfterFunc(d time.Duration, f func()) candidate.Timer {
	c.mu.Lock()
	speed := c.speed
	c.mu.Unlock()
	if speed != 1 {
		d = time.Duration(float64(d) / speed)
	}
	return c.base.AfterFunc(d, f)
}

// setSpeed changes the speed from now on.
func (c *speedClock) setSpeed(speed float64) {
	now := c.base.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.anchorOwn = c.ownLocked(now)
	c.anchorBase = now
	c.speed = speed
}

func (c *speedClock) getSpeed() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.speed
}
