package candidate

import (
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// Pause freezes the candidate as a GC pause or SIGSTOP would: no attempts, and
// a request in flight is not looked at until Resume. The clocks keep going.
func (c *Candidate) Pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ignoredLocked(tabproto.CommandPause, c.phase == phaseStopped) || !c.freezer.freeze(c.clock.Now()) {
		return
	}
	c.tellLocked(outcome{kind: outPaused})
	c.changedLocked()
}

// Resume ends a pause. The candidate carries on with what it believed before
// the pause, as the real algorithm would: overdue attempts run at once.
func (c *Candidate) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	since, ok := c.freezer.thaw()
	if !ok {
		return
	}
	c.signalLocked()
	c.tellLocked(outcome{kind: outResumed, d: c.clock.Now().Sub(since)})
	c.changedLocked()
}

// unpauseLocked ends a pause, if any, without a word: the candidate is
// stopping.
func (c *Candidate) unpauseLocked() {
	if _, ok := c.freezer.thaw(); ok {
		c.signalLocked()
	}
}

// Partition cuts the candidate's network (PartitionHang or PartitionFail);
// PartitionNone heals it.
func (c *Candidate) Partition(mode PartitionMode) {
	if old, _ := c.net.State(); old == mode {
		return
	}
	c.net.Partition(mode)
	c.tell(outcome{kind: outPartitioned, mode: mode})
}

// Heal ends a partition.
func (c *Candidate) Heal() { c.Partition(PartitionNone) }

// SetLatency adds d to every request's round trip; 0 restores the network.
func (c *Candidate) SetLatency(d time.Duration) {
	d = max(d, 0)
	if _, old := c.net.State(); old == d {
		return
	}
	c.net.SetLatency(d)
	c.tell(outcome{kind: outSlow, d: d})
}

// SetClockOffset sets the candidate's clock to the real clock plus d. The
// offset stamps what it writes (renewTime, acquireTime) and shows; its expiry
// judgement counts elapsed time and is unaffected, as client-go's is.
func (c *Candidate) SetClockOffset(d time.Duration) {
	if c.offset.Swap(int64(d)) == int64(d) {
		return
	}
	c.tell(outcome{kind: outClockOffset, d: d})
}

// ClockOffset returns the current clock offset.
func (c *Candidate) ClockOffset() time.Duration { return time.Duration(c.offset.Load()) }

// Release stops the candidate cleanly: the attempt in flight is abandoned
// and, if it leads, it releases the lease (holderIdentity "",
// leaseDurationSeconds 1) so that another candidate can take it at once. A
// paused candidate is resumed to do so.
func (c *Candidate) Release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ignoredLocked(tabproto.CommandRelease, c.phase == phaseStopped) {
		return
	}
	c.releaseReq = true
	c.unpauseLocked()
	c.interruptLocked()
}

// Crash stops the candidate at once, without releasing: a leader's lease
// stays on the server until the others see it expire.
func (c *Candidate) Crash() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ignoredLocked(tabproto.CommandCrash, c.phase == phaseStopped) {
		return
	}
	c.crashReq = true
	c.interruptLocked()
}

// Rejoin starts a stopped candidate again as a fresh process: same identity
// and faults, nothing observed.
func (c *Candidate) Rejoin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ignoredLocked(tabproto.CommandRejoin, c.phase != phaseStopped && !c.rejoinReq) {
		return
	}
	c.rejoinReq = true
	c.signalLocked()
}

// ignoredLocked reports ignore, and when it is true tells the decision log why the command
// cmd does nothing now: a stopped candidate cannot pause, release or crash, a running one
// cannot rejoin. A page disables those controls; a key or a dashboard command may still come.
func (c *Candidate) ignoredLocked(cmd string, ignore bool) bool {
	if ignore {
		c.tellLocked(outcome{kind: outIgnored, cmd: cmd})
		c.changedLocked()
	}
	return ignore
}

// interruptLocked cancels the step in flight, if any, and wakes Run.
func (c *Candidate) interruptLocked() {
	if c.cancelStep != nil {
		c.cancelStep(errInterrupted)
	}
	c.signalLocked()
}

// signalLocked wakes Run to look at what is due.
func (c *Candidate) signalLocked() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}
