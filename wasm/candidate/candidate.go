package candidate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// phase is where the elector is in client-go's Run: the acquire loop, the
// renew loop, or returned.
type phase int

const (
	phaseFollowing phase = iota
	phaseLeading
	phaseStopped
)

// Causes of a cancelled step context.
var (
	errRenewDeadline = errors.New("renew deadline passed")
	errInterrupted   = errors.New("interrupted by a command")
)

// DefaultLogLimit is how many decisions the log keeps.
const DefaultLogLimit = 200

// Options are a Candidate's dependencies.
type Options struct {
	// Clock is the real clock; nil means SystemClock. The clock-offset fault
	// is applied on top of it.
	Clock Clock
	// Transport carries the requests below the fault layer; nil means the
	// platform's default (FetchTransport in the browser, HTTPTransport
	// natively).
	Transport Transport
	// Rand returns the acquire loop's jitter in [0, 1); nil means
	// math/rand/v2.Float64.
	Rand func() float64
	// LogLimit bounds the decision log; 0 means DefaultLogLimit.
	LogLimit int
}

// Candidate is one leader-election candidate: the algorithm, its faults, its
// decision log and the snapshot the page draws.
//
// Drive it either with Run (a loop on the clock) or, in deterministic tests,
// by calling Step whenever the time it returned has come; never both at once.
// The fault and command methods, Snapshot and Subscribe may be called from
// any goroutine.
type Candidate struct {
	cfg      Config
	clock    Clock
	rand     func() float64
	net      *Network
	client   *Client
	logLimit int
	offset   atomic.Int64 // clock offset in nanoseconds

	mu sync.Mutex

	// What one run of the elector knows; a rejoin or a restart after a loss
	// forgets it all, as a new process would.
	phase         phase
	cached        *Lease // the lock's copy: last object read or written
	observed      record
	observedKey   recordKey
	haveKey       bool
	observedTime  time.Time // real clock (client-go's monotonic reading)
	conflict      bool      // a write lost a race: name the winner on the next read
	roundDeadline time.Time // end of the current renew round; zero between rounds
	lastRenew     time.Time // when the last acquisition or renewal succeeded, while leading
	next          time.Time // when Step should next run; zero when stopped
	lastErr       string
	stopReason    string

	// The LeaseCandidate keeper (coordinated mode only).
	candNext    time.Time // when to look at the LeaseCandidate next (real clock)
	candRenewed time.Time // last successful create or renew (real clock); zero: none yet in this run

	// Faults and pending commands.
	paused      bool
	pausedAt    time.Time
	resumed     chan struct{} // closed while not paused
	afterResume []func()      // deadlines that fell during the pause
	crashReq    bool
	releaseReq  bool
	rejoinReq   bool
	cancelStep  context.CancelCauseFunc
	wake        chan struct{}

	// Output.
	log     []LogEntry
	version uint64
	subs    map[chan struct{}]struct{}
}

// New returns a candidate that will act as soon as it is stepped or run. It
// returns a *ConfigError when cfg is refused.
func New(cfg Config, opts Options) (*Candidate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Candidate{
		cfg:      cfg,
		clock:    opts.Clock,
		rand:     opts.Rand,
		logLimit: opts.LogLimit,
		wake:     make(chan struct{}, 1),
		resumed:  make(chan struct{}),
		subs:     map[chan struct{}]struct{}{},
	}
	close(c.resumed)
	if c.clock == nil {
		c.clock = SystemClock{}
	}
	if c.rand == nil {
		c.rand = rand.Float64
	}
	if c.logLimit <= 0 {
		c.logLimit = DefaultLogLimit
	}
	c.net = NewNetwork(opts.Transport, c.clock)
	c.client = &Client{BaseURL: cfg.BaseURL, Token: cfg.Token, Transport: c.net}
	c.next = c.clock.Now()
	c.candNext = c.next
	c.logLocked(LogJoined, "", fmt.Sprintf("joined: competing for %s/%s as %s (lease %s, renew deadline %s, retry every %s)",
		cfg.Namespace, cfg.LeaseName, cfg.Identity, secs(cfg.LeaseDuration), secs(cfg.RenewDeadline), secs(cfg.RetryPeriod)))
	if cfg.Coordinated {
		c.logLocked(LogJoined, "", fmt.Sprintf("coordinated mode: binary %s, emulation %s; the server picks the leader among the candidates",
			cfg.BinaryVersion, cfg.EmulationVersion))
	}
	return c, nil
}

// Identity returns the candidate's identity.
func (c *Candidate) Identity() string { return c.cfg.Identity }

// Config returns the candidate's configuration.
func (c *Candidate) Config() Config { return c.cfg }

// Next returns when the candidate next wants to be stepped (real clock);
// zero when it is stopped.
func (c *Candidate) Next() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nextLocked()
}

// nextLocked is the elector's next attempt or, in coordinated mode, the
// LeaseCandidate keeper's next look, whichever comes first.
func (c *Candidate) nextLocked() time.Time {
	if !c.cfg.Coordinated || c.next.IsZero() || c.next.Before(c.candNext) {
		return c.next
	}
	return c.candNext
}

// ownNow is the candidate's own clock: the real clock plus the offset fault.
// It stamps what the candidate writes and logs. Expiry decisions use the real
// clock, as client-go's do through Go's monotonic clock reading: a constant
// offset cancels out of "observed + duration > now", and changing the offset
// jumps only the wall clock, which the monotonic reading ignores.
func (c *Candidate) ownNow() time.Time {
	return c.clock.Now().Add(time.Duration(c.offset.Load()))
}

// Run drives the candidate on its clock until ctx is done, then returns
// ctx's error. Ending ctx is a crash: nothing is released.
func (c *Candidate) Run(ctx context.Context) error {
	for {
		if err := c.waitDue(ctx); err != nil {
			return err
		}
		c.Step(ctx)
	}
}

// waitDue returns when a command is pending, or when the next step is due
// and the candidate is not paused.
func (c *Candidate) waitDue(ctx context.Context) error {
	for {
		c.mu.Lock()
		pending := c.crashReq || c.releaseReq || c.rejoinReq
		paused, next := c.paused, c.nextLocked()
		c.mu.Unlock()
		if pending {
			return nil
		}
		var due chan struct{}
		var t Timer
		if !paused && !next.IsZero() {
			d := next.Sub(c.clock.Now())
			if d <= 0 {
				return nil
			}
			due = make(chan struct{})
			t = c.clock.AfterFunc(d, func() { close(due) })
		}
		select {
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			return ctx.Err()
		case <-c.wake:
		case <-due:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// Step runs what is due: a pending command (crash, release, rejoin) or one
// attempt of the acquire or renew loop, or the end of leadership when the
// renew deadline has passed. It returns when the candidate wants to be
// stepped next (real clock), or the zero time once stopped. Step does not
// wait for that time: the caller does.
//
// If the candidate is paused, its requests wait until it resumes.
func (c *Candidate) Step(ctx context.Context) time.Time {
	c.mu.Lock()
	switch {
	case c.crashReq:
		c.crashReq, c.releaseReq, c.rejoinReq = false, false, false
		if c.phase == phaseLeading {
			c.stopLocked("crashed", "crashed while leading: stopped without releasing, so the others must wait for the lease to expire")
		} else {
			c.stopLocked("crashed", "crashed: stopped")
		}
		c.mu.Unlock()
		return time.Time{}
	case c.releaseReq:
		c.releaseReq, c.rejoinReq = false, false
		leading := c.phase == phaseLeading
		c.stopLocked("released", "stopping cleanly")
		c.mu.Unlock()
		if leading {
			c.withStep(ctx, c.release)
		} else {
			c.logf(LogStopped, "", "I was not leading, so there is nothing to release")
		}
		return time.Time{}
	case c.rejoinReq:
		c.rejoinReq = false
		if c.phase == phaseStopped {
			c.restartLocked("rejoined as a fresh candidate: nothing observed yet")
		}
	}
	if c.phase == phaseStopped {
		c.mu.Unlock()
		return time.Time{}
	}
	if c.cfg.Coordinated {
		// The keeper's look, unless leadership is to end now: then that comes first.
		ending := c.phase == phaseLeading && !c.roundDeadline.IsZero() && !c.clock.Now().Before(c.roundDeadline)
		if !ending && !c.clock.Now().Before(c.candNext) {
			cut := c.clock.Now().Add(c.cfg.RetryPeriod)
			if c.phase == phaseLeading && !c.roundDeadline.IsZero() && c.roundDeadline.Before(cut) {
				cut = c.roundDeadline
			}
			c.mu.Unlock()
			c.withStep(ctx, func(ctx context.Context) { c.keepCandidate(ctx, cut) })
			c.mu.Lock()
			if c.phase == phaseStopped {
				c.mu.Unlock()
				return time.Time{}
			}
			c.candNext = c.clock.Now().Add(c.cfg.RetryPeriod)
		}
		if c.clock.Now().Before(c.next) || c.stopReqLocked() {
			n := c.nextLocked()
			if c.stopReqLocked() {
				n = c.clock.Now()
			}
			c.mu.Unlock()
			return n
		}
	}
	leading := c.phase == phaseLeading
	start := c.clock.Now()
	if leading {
		if c.roundDeadline.IsZero() {
			// A renew round: PollUntilContextTimeout(RetryPeriod, RenewDeadline).
			roundStart := start
			if c.cfg.Coordinated && c.next.Before(start) {
				// In client-go the LeaseCandidate helper runs on its own goroutine: a
				// round that fell due during the keeper's look started then.
				roundStart = c.next
			}
			c.roundDeadline = roundStart.Add(c.cfg.RenewDeadline)
		}
		if !start.Before(c.roundDeadline) {
			c.mu.Unlock()
			return c.loseLeadership(ctx)
		}
	}
	deadline := c.roundDeadline
	c.mu.Unlock()

	var ok bool
	c.withStep(ctx, func(ctx context.Context) {
		if leading {
			var cancel context.CancelFunc
			ctx, cancel = c.withDeadline(ctx, deadline)
			defer cancel()
		}
		ok = c.tryAcquireOrRenew(ctx, deadline)
	})

	end := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase == phaseStopped {
		return time.Time{}
	}
	switch {
	case !leading && ok:
		// The renew loop starts with an immediate attempt.
		c.phase = phaseLeading
		c.roundDeadline = time.Time{}
		c.lastRenew = end
		c.next = end
	case !leading:
		// JitterUntil, sliding: RetryPeriod plus up to 1.2 × RetryPeriod
		// after the attempt finished.
		c.next = end.Add(c.cfg.RetryPeriod + time.Duration(c.rand()*JitterFactor*float64(c.cfg.RetryPeriod)))
	case ok:
		// UntilWithContext, sliding: the next round starts RetryPeriod
		// after this one succeeded.
		c.roundDeadline = time.Time{}
		c.lastRenew = end
		c.next = end.Add(c.cfg.RetryPeriod)
	default:
		// Within the round the poll ticks every RetryPeriod from the start of
		// the previous attempt; the round ends at its deadline.
		c.next = start.Add(c.cfg.RetryPeriod)
		if end.After(c.next) {
			c.next = end
		}
		if !c.next.Before(deadline) {
			c.next = deadline
		}
	}
	c.changedLocked()
	return c.nextLocked()
}

// withStep runs f with a context that Crash and Release cancel.
func (c *Candidate) withStep(ctx context.Context, f func(context.Context)) {
	ctx, cancel := context.WithCancelCause(ctx)
	c.mu.Lock()
	c.cancelStep = cancel
	if c.stopReqLocked() {
		cancel(errInterrupted)
	}
	c.mu.Unlock()
	f(ctx)
	c.mu.Lock()
	c.cancelStep = nil
	c.mu.Unlock()
	cancel(nil)
}

func (c *Candidate) stopReqLocked() bool { return c.crashReq || c.releaseReq }

// loseLeadership ends leadership once a renew round found no success before
// its deadline: release if configured, then stop or start over.
func (c *Candidate) loseLeadership(ctx context.Context) time.Time {
	c.mu.Lock()
	c.logLocked(LogLost, "", "renew deadline passed without a successful renewal: stopped leading")
	c.phase = phaseStopped
	c.roundDeadline = time.Time{}
	c.next = time.Time{}
	c.changedLocked()
	c.mu.Unlock()
	if c.cfg.ReleaseOnCancel {
		c.withStep(ctx, c.release)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.StopAfterLoss || c.crashReq || c.releaseReq {
		c.crashReq, c.releaseReq = false, false
		c.stopLocked("lost leadership", "")
		return time.Time{}
	}
	c.restartLocked("starting over as a fresh candidate, as a restarted process would: nothing observed yet")
	c.changedLocked()
	return c.nextLocked()
}

// restartLocked forgets everything the previous run knew and starts the
// acquire loop now.
func (c *Candidate) restartLocked(why string) {
	c.phase = phaseFollowing
	c.cached = nil
	c.observed = record{}
	c.observedKey = recordKey{}
	c.haveKey = false
	c.observedTime = time.Time{}
	c.conflict = false
	c.roundDeadline = time.Time{}
	c.lastErr = ""
	c.stopReason = ""
	c.next = c.clock.Now()
	c.candNext = c.next
	c.candRenewed = time.Time{}
	c.logLocked(LogJoined, "", why)
}

func (c *Candidate) stopLocked(reason, text string) {
	c.phase = phaseStopped
	c.roundDeadline = time.Time{}
	c.next = time.Time{}
	c.stopReason = reason
	c.unpauseLocked()
	if text != "" {
		c.logLocked(LogStopped, "", text)
	}
	c.changedLocked()
}

// --- commands and faults ---

// Pause freezes the candidate as a GC pause or SIGSTOP would: no attempts, and
// a request in flight is not looked at until Resume. The clocks keep going.
func (c *Candidate) Pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused || c.phase == phaseStopped {
		return
	}
	c.paused = true
	c.pausedAt = c.clock.Now()
	c.resumed = make(chan struct{})
	c.logLocked(LogFault, "", "paused: frozen as in a long GC pause; the world goes on without me")
	c.changedLocked()
}

// Resume ends a pause. The candidate carries on with what it believed before
// the pause, as the real algorithm would: overdue attempts run at once.
func (c *Candidate) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.paused {
		return
	}
	d := c.clock.Now().Sub(c.pausedAt)
	c.unpauseLocked()
	c.logLocked(LogFault, "", fmt.Sprintf("resumed after %s: acting on what I knew before the pause", secsRound(d)))
	c.changedLocked()
}

func (c *Candidate) unpauseLocked() {
	if !c.paused {
		return
	}
	c.paused = false
	c.pausedAt = time.Time{}
	close(c.resumed)
	for _, f := range c.afterResume {
		f()
	}
	c.afterResume = nil
	c.signalLocked()
}

// withDeadline returns a context cancelled with errRenewDeadline once the
// clock reaches deadline. A deadline that falls during a pause takes effect
// on resume: a frozen process notices its timers only when it runs again.
func (c *Candidate) withDeadline(parent context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	expire := func() { cancel(errRenewDeadline) }
	t := c.clock.AfterFunc(deadline.Sub(c.clock.Now()), func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.paused {
			c.afterResume = append(c.afterResume, expire)
			return
		}
		expire()
	})
	return ctx, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}

// Partition cuts the candidate's network (PartitionHang or PartitionFail);
// PartitionNone heals it.
func (c *Candidate) Partition(mode PartitionMode) {
	old, _ := c.net.State()
	if old == mode {
		return
	}
	c.net.Partition(mode)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch mode {
	case PartitionNone:
		c.logLocked(LogFault, "", "network healed")
	case PartitionHang:
		c.logLocked(LogFault, "", "network partitioned: my requests hang until it heals")
	case PartitionFail:
		c.logLocked(LogFault, "", "network partitioned: my requests fail at once")
	}
	c.changedLocked()
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if d == 0 {
		c.logLocked(LogFault, "", "network back to normal speed")
	} else {
		c.logLocked(LogFault, "", "slow network: +"+secs(d)+" per request")
	}
	c.changedLocked()
}

// SetClockOffset sets the candidate's clock to the real clock plus d. The
// offset stamps what it writes (renewTime, acquireTime) and shows; its expiry
// judgement counts elapsed time and is unaffected, as client-go's is.
func (c *Candidate) SetClockOffset(d time.Duration) {
	if c.offset.Swap(int64(d)) == int64(d) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d == 0 {
		c.logLocked(LogFault, "", "my clock is back in sync")
	} else {
		c.logLocked(LogFault, "", "my "+describeOffset(d))
	}
	c.changedLocked()
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
	if c.phase == phaseStopped {
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
	if c.phase == phaseStopped {
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
	if c.phase != phaseStopped {
		return
	}
	c.rejoinReq = true
	c.signalLocked()
}

func (c *Candidate) interruptLocked() {
	if c.cancelStep != nil {
		c.cancelStep(errInterrupted)
	}
	c.signalLocked()
}

func (c *Candidate) signalLocked() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// awaitRunning blocks while the candidate is paused.
func (c *Candidate) awaitRunning(ctx context.Context) error {
	c.mu.Lock()
	resumed := c.resumed
	c.mu.Unlock()
	select {
	case <-resumed:
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// --- snapshot, log and listeners ---

// Subscribe returns a channel that receives a value after changes (coalesced:
// take a Snapshot when it fires) and a function that ends the subscription.
func (c *Candidate) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	c.subs[ch] = struct{}{}
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		delete(c.subs, ch)
		c.mu.Unlock()
	}
}

func (c *Candidate) changedLocked() {
	c.version++
	for ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Snapshot returns everything the page shows, consistently.
func (c *Candidate) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	off := time.Duration(c.offset.Load())
	own := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return t.Add(off)
	}
	mode, latency := c.net.State()
	s := Snapshot{
		Version:              c.version,
		Identity:             c.cfg.Identity,
		Namespace:            c.cfg.Namespace,
		Lease:                c.cfg.LeaseName,
		Holder:               c.observed.Holder,
		Transitions:          c.observed.Transitions,
		LeaseDurationSeconds: c.observed.DurationSeconds,
		Now:                  own(c.clock.Now()),
		NextRetry:            own(c.next),
		LastError:            c.lastErr,
		StopReason:           c.stopReason,
		Coordinated:          c.cfg.Coordinated,
		BinaryVersion:        c.cfg.BinaryVersion,
		EmulationVersion:     c.cfg.EmulationVersion,
		Strategy:             c.cfg.strategy(),
		Timings: Timings{
			LeaseDuration:   c.cfg.LeaseDuration,
			RenewDeadline:   c.cfg.RenewDeadline,
			RetryPeriod:     c.cfg.RetryPeriod,
			ReleaseOnCancel: c.cfg.ReleaseOnCancel,
			StopAfterLoss:   c.cfg.StopAfterLoss,
		},
		Faults: Faults{
			Paused:      c.paused,
			PausedSince: own(c.pausedAt),
			Partition:   mode,
			Latency:     latency,
			ClockOffset: off,
		},
	}
	if !c.observedTime.IsZero() {
		s.ObservedAt = own(c.observedTime)
		s.ObservedExpiry = own(c.observedTime.Add(c.observed.duration()))
	}
	if c.cached != nil {
		r := recordFromSpec(c.cached.Spec)
		s.RecordHolder = r.Holder
		s.RecordRenewTime = r.RenewTime
		if !r.RenewTime.IsZero() {
			s.RecordExpiry = r.RenewTime.Add(r.duration())
		}
		s.ResourceVersion = c.cached.Metadata.ResourceVersion
		s.PreferredHolder = r.PreferredHolder
	}
	switch c.phase {
	case phaseLeading:
		s.Role = RoleLeader
		// The renew deadline as a reader counts it: from the last successful renewal, so
		// that it drains between renewals and is never longer than the setting. (A round
		// that starts a retry period later has its own deadline, as in client-go, so
		// leadership may end up to one retry period after this.)
		if !c.lastRenew.IsZero() {
			s.RenewDeadline = own(c.lastRenew.Add(c.cfg.RenewDeadline))
		}
	case phaseFollowing:
		s.Role = RoleFollower
	}
	switch {
	case c.phase == phaseStopped:
		s.State = StateStopped
	case c.paused:
		s.State = StatePaused
	case mode != PartitionNone:
		s.State = StatePartitioned
	case c.phase == phaseLeading:
		s.State = StateLeader
	default:
		s.State = StateFollower
	}
	s.Log = make([]LogEntry, len(c.log))
	for i, e := range c.log {
		s.Log[len(c.log)-1-i] = e
	}
	return s
}

// logf appends a decision; fold, when not empty, merges it into the newest
// entry if that one has the same kind and fold key.
func (c *Candidate) logf(kind LogKind, fold, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logLocked(kind, fold, text)
	c.changedLocked()
}

func (c *Candidate) logLocked(kind LogKind, fold, text string) {
	at := c.ownNow()
	if n := len(c.log); n > 0 && fold != "" {
		if last := &c.log[n-1]; last.Kind == kind && last.fold == fold {
			last.At, last.Text = at, text
			last.Count++
			return
		}
	}
	c.log = append(c.log, LogEntry{At: at, Kind: kind, Text: text, Count: 1, fold: fold})
	if len(c.log) > c.logLimit {
		c.log = append(c.log[:0], c.log[len(c.log)-c.logLimit:]...)
	}
}

// secsRound formats a duration to a tenth of a second: "4.1 s".
func secsRound(d time.Duration) string {
	return fmt.Sprintf("%.1f s", d.Seconds())
}
