package candidate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// This file holds the faults a candidate takes, from the command to the effect: Obey and the
// methods it calls, the network that injects the network's faults (a partition, a delay, a
// share of requests lost), the faults as the snapshot carries them (tabproto.Faults) and how
// the decision log tells a fault switched. The pause's freezer (freeze.go) and the clock's
// rate (drift.go) are the other two mechanisms.

// Obey carries out a fault command, as a tab obeys its page's keys and the dashboard's
// buttons, clamping its values to the protocol's bounds. A snapshot command does nothing here:
// the caller reports.
func (c *Candidate) Obey(cmd tabproto.Command) error {
	switch cmd.Type {
	case tabproto.CommandPause:
		c.Pause()
	case tabproto.CommandResume:
		c.Resume()
	case tabproto.CommandPartition:
		mode := cmd.Mode
		if mode == PartitionNone {
			mode = PartitionHang
		}
		if mode != PartitionHang && mode != PartitionFail {
			return fmt.Errorf("partition mode must be %q or %q, not %q", PartitionHang, PartitionFail, cmd.Mode)
		}
		c.Partition(mode)
	case tabproto.CommandHeal:
		c.Heal()
	case tabproto.CommandSlow:
		cfg := c.Config()
		d := Timings{LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod}.SlowLatency()
		if cmd.LatencyMs != nil {
			d = time.Duration(math.Round(min(max(*cmd.LatencyMs, 0), tabproto.MaxLatencyMs))) * time.Millisecond
		}
		c.SetLatency(d)
	case tabproto.CommandClockOffset:
		if cmd.Seconds == nil {
			return errors.New(`clockOffset needs "seconds"`)
		}
		const bound = tabproto.MaxClockOffsetSeconds
		c.SetClockOffset(time.Duration(math.Round(min(max(*cmd.Seconds, -bound), bound)*1000)) * time.Millisecond)
	case tabproto.CommandClockRate:
		if cmd.Rate == nil {
			return errors.New(`clockRate needs "rate"`)
		}
		return c.SetClockRate(*cmd.Rate)
	case tabproto.CommandLoss:
		if cmd.LossPercent == nil {
			return errors.New(`loss needs "lossPercent"`)
		}
		c.SetLoss(*cmd.LossPercent)
	case tabproto.CommandRelease:
		c.Release()
	case tabproto.CommandCrash:
		c.Crash()
	case tabproto.CommandRejoin:
		c.Rejoin()
	case tabproto.CommandSnapshot:
	default:
		return fmt.Errorf("unknown message type %q", cmd.Type)
	}
	return nil
}

// Pause freezes the candidate as a GC pause or SIGSTOP would: no attempts, and
// a request in flight is not looked at until Resume. The clocks keep going.
func (c *Candidate) Pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ignoredLocked(tabproto.CommandPause, c.phase == phaseStopped) || !c.freezer.freeze(c.clock.Now()) {
		return
	}
	c.tellLocked(outcome{kind: outFault, cmd: tabproto.CommandPause})
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
	c.tellLocked(outcome{kind: outFault, cmd: tabproto.CommandResume, d: c.clock.Now().Sub(since)})
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
	c.tellFault(tabproto.CommandPartition)
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
	c.tellFault(tabproto.CommandSlow)
}

// SetLoss makes the network lose percent of the candidate's requests (clamped to 0 ..
// tabproto.MaxLossPercent; 0 ends it): each request is lost or not by a draw of the
// candidate's random source (Options.Rand, so a seeded run loses the same requests), and a
// lost one hangs until its timeout, or its renew deadline, cuts it off.
func (c *Candidate) SetLoss(percent int) {
	percent = min(max(percent, 0), tabproto.MaxLossPercent)
	if c.net.Faults().LossPercent == percent {
		return
	}
	c.net.SetLoss(percent, c.rand)
	c.tellFault(tabproto.CommandLoss)
}

// SetClockOffset sets the candidate's clock to the real clock plus d, whatever a clock rate
// other than 1 has added to it so far: an offset of 0 puts it back in sync. The offset stamps
// what it writes (renewTime, acquireTime) and shows; its expiry judgement counts elapsed time
// and is unaffected, as client-go's is.
func (c *Candidate) SetClockOffset(d time.Duration) {
	if d -= c.drift.Drift(); c.offset.Swap(int64(d)) == int64(d) {
		return
	}
	c.tellFault(tabproto.CommandClockOffset)
}

// ClockOffset returns how far the candidate's clock is from the real one: the offset set, and
// what a clock rate has added to it.
func (c *Candidate) ClockOffset() time.Duration {
	return time.Duration(c.offset.Load()) + c.drift.Drift()
}

// SetClockRate makes the candidate's clock run at rate times the real one (1 is the real
// rate), between MinClockRate and MaxClockRate. Unlike an offset, a rate changes how long the
// candidate believes a lease lasts: a fast clock sees the holder's lease run out early and may
// take it while the holder still renews in time.
func (c *Candidate) SetClockRate(rate float64) error {
	if math.IsNaN(rate) || rate < MinClockRate || rate > MaxClockRate {
		return fmt.Errorf("clock rate must be between %g and %g", MinClockRate, MaxClockRate)
	}
	if c.drift.SetRate(rate) {
		c.mu.Lock()
		c.signalLocked() // what is due is due on the new clock
		c.mu.Unlock()
		c.tellFault(tabproto.CommandClockRate)
	}
	return nil
}

// ClockRate returns the rate of the candidate's clock.
func (c *Candidate) ClockRate() float64 { return c.drift.Rate() }

// KillConnection kills the candidate's connection to the server without a word (see
// Network.KillConnection): its requests hang until its client finds the connection dead, d
// from now.
func (c *Candidate) KillConnection(d time.Duration) {
	c.net.KillConnection(d)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tellLocked(outcome{kind: outFault, cmd: cmdKillConnection, d: d, faults: c.faultsLocked()}) {
		c.changedLocked()
	}
}

// cmdKillConnection is how the decision log tells a connection killed; a lesson kills it, no
// page command does.
const cmdKillConnection = "killConnection"

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

// tellFault tells the decision log that the command cmd switched a fault, leaving the faults
// as they are now.
func (c *Candidate) tellFault(cmd string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tellLocked(outcome{kind: outFault, cmd: cmd, faults: c.faultsLocked()}) {
		c.changedLocked()
	}
}

// faultsLocked are the faults in effect, the pause's start on the candidate's own clock.
func (c *Candidate) faultsLocked() tabproto.Faults {
	f := c.net.Faults()
	off := time.Duration(c.offset.Load())
	paused, since := c.freezer.state()
	f.Paused = paused
	if paused {
		f.PausedSince = since.Add(off).UnixMilli()
	}
	// The whole offset, the drift a clock rate added included: a tab that ran fast for a minute
	// and is back at the real rate is a minute ahead, and says so.
	whole := off
	if drift := c.drift.Drift(); drift != 0 {
		whole = (off + drift).Round(time.Second) // it moves every instant: said to the second
	}
	f.ClockOffsetMs = whole.Milliseconds()
	if rate := c.drift.Rate(); rate != 1 {
		f.ClockRate = rate // reports carry 0 for the real rate
	}
	return f
}

// narrateFault tells a fault switched on or off (outFault): by the command o.cmd, leaving the
// faults o.faults.
func narrateFault(o outcome) (said, bool) {
	if o.kind != outFault {
		return said{}, false
	}
	f := o.faults
	var m tabproto.Msg
	switch o.cmd {
	case tabproto.CommandPause:
		m = say("log.paused")
	case tabproto.CommandResume:
		m = say("log.resumed", secsRound(o.d))
	case tabproto.CommandPartition:
		switch f.Partition {
		case PartitionHang:
			m = say("log.partitionHang")
		case PartitionFail:
			m = say("log.partitionFail")
		default:
			m = say("log.healed")
		}
	case tabproto.CommandSlow:
		m = say("log.normalSpeed")
		if f.LatencyMs > 0 {
			m = say("log.slow", secs(f.Latency()))
		}
	case tabproto.CommandClockOffset:
		m = say("log.clockInSync")
		if f.ClockOffsetMs != 0 {
			m = say("log.myClock", tabproto.DescribeOffset(f.ClockOffset()))
		}
	case cmdKillConnection:
		m = say("log.deadConnection", secsRound(o.d))
	case tabproto.CommandLoss:
		m = say("log.lossOff")
		if f.LossPercent > 0 {
			m = say("log.loss", f.LossPercent)
		}
	case tabproto.CommandClockRate:
		m = say("log.realRate")
		if f.ClockRate != 0 && f.ClockRate != 1 {
			m = say("log.myRate", tabproto.DescribeRate(f.ClockRate))
		}
	default:
		return said{}, false
	}
	return line(LogFault, "", m), true
}

// PartitionMode says how requests behave while the network is partitioned;
// the modes are the tab protocol's.
type PartitionMode = tabproto.Partition

// Partition modes (see tabproto).
const (
	PartitionNone = tabproto.PartitionNone
	PartitionHang = tabproto.PartitionHang
	PartitionFail = tabproto.PartitionFail
)

// ErrPartitioned is returned by requests that meet a failing partition.
var ErrPartitioned = errors.New("network unreachable (partitioned)")

// ErrConnectionLost is returned by requests that waited on a dead connection until the client
// found it dead.
var ErrConnectionLost = errors.New("connection found dead")

// Network is a Transport that injects network faults in front of another
// one: a partition (requests hang or fail), added latency (half on the way
// out, half on the way back, waited on the injected clock) and a share of
// requests lost (each hangs, as in a hanging partition, until its context ends).
type Network struct {
	next  Transport
	clock Clock

	mu      sync.Mutex
	mode    PartitionMode
	healed  chan struct{} // closed while the network is healthy
	latency time.Duration
	loss    int            // percent of requests lost
	draw    func() float64 // each request's fate, in [0, 1): lost below loss/100
	// found is closed when the client finds its dead connection dead; nil while the
	// connection is sound.
	found chan struct{}
}

var _ Transport = (*Network)(nil)

// NewNetwork returns a healthy Network in front of next (nil means the
// platform's default: fetch in the browser, net/http natively), waiting on
// clock.
func NewNetwork(next Transport, clock Clock) *Network {
	if next == nil {
		next = defaultTransport()
	}
	healed := make(chan struct{})
	close(healed)
	return &Network{next: next, clock: clock, healed: healed}
}

// Partition cuts the network; mode PartitionNone heals it.
func (n *Network) Partition(mode PartitionMode) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if mode == PartitionNone {
		if n.mode != PartitionNone {
			close(n.healed)
		}
	} else if n.mode == PartitionNone {
		n.healed = make(chan struct{})
	}
	n.mode = mode
}

// SetLatency sets the round-trip time added to every request (0: none).
func (n *Network) SetLatency(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.latency = max(d, 0)
}

// SetLoss makes the network lose percent of the requests (0: none), each
// request's fate drawn from draw, which returns a number in [0, 1) (nil means
// math/rand/v2's). Nothing is drawn while no request is lost.
func (n *Network) SetLoss(percent int, draw func() float64) {
	if draw == nil {
		draw = rand.Float64
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.loss, n.draw = max(percent, 0), draw
}

// KillConnection kills the connection to the server without a word, as a peer that lost power
// does: no reset ever comes. Every request on it hangs until its context ends or, d after the
// kill, the client finds the connection dead (an HTTP/2 health check, TCP giving up on its
// retransmissions); the requests then waiting fail with ErrConnectionLost, and later ones go
// through a new connection. A request cut off by its context leaves the connection as dead as
// it was.
func (n *Network) KillConnection(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.found != nil {
		return
	}
	found := make(chan struct{})
	n.found = found
	n.clock.AfterFunc(max(d, 0), func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		close(found)
		n.found = nil
	})
}

// deadConnection waits, while the connection is dead, until the client finds it dead
// (ErrConnectionLost) or ctx ends; it returns nil at once while the connection is sound.
func (n *Network) deadConnection(ctx context.Context) error {
	n.mu.Lock()
	found := n.found
	n.mu.Unlock()
	if found == nil {
		return nil
	}
	select {
	case <-found:
		return ErrConnectionLost
	case <-ctx.Done():
		return ctx.Err()
	}
}

// State returns the current partition mode and latency.
func (n *Network) State() (PartitionMode, time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mode, n.latency
}

// Faults returns the network's faults, the rest of the Faults zero.
func (n *Network) Faults() tabproto.Faults {
	n.mu.Lock()
	defer n.mu.Unlock()
	return tabproto.Faults{Partition: n.mode, LatencyMs: n.latency.Milliseconds(), LossPercent: n.loss, DeadConnection: n.found != nil}
}

// RoundTrip sends req through the faults and then through the next
// transport. A partition met on the way back loses the response: the server
// may have applied the request although the caller sees an error. A request
// lost to packet loss never reaches the server.
func (n *Network) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	if err := n.deadConnection(ctx); err != nil {
		return nil, err
	}
	if err := n.travel(ctx); err != nil {
		return nil, err
	}
	if n.lost() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	resp, err := n.next.RoundTrip(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := n.travel(ctx); err != nil {
		return nil, err
	}
	return resp, nil
}

// lost draws whether a request is lost.
func (n *Network) lost() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.loss > 0 && n.draw()*100 < float64(n.loss)
}

// travel is one direction of a trip: half the latency, then the partition.
func (n *Network) travel(ctx context.Context) error {
	n.mu.Lock()
	latency := n.latency
	n.mu.Unlock()
	if err := sleep(ctx, n.clock, latency/2); err != nil {
		return err
	}
	for {
		n.mu.Lock()
		mode, healed := n.mode, n.healed
		n.mu.Unlock()
		switch mode {
		case PartitionNone:
			return ctx.Err()
		case PartitionFail:
			return ErrPartitioned
		}
		select {
		case <-healed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
