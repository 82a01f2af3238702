package candidate

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// phase is where the candidate is in client-go's Run: the acquire loop, the
// renew loop, or returned.
type phase int

const (
	phaseFollowing phase = iota
	phaseLeading
	phaseStopped
)

// Options are a Candidate's dependencies.
type Options struct {
	// Clock is the real clock; nil means SystemClock. The clock-offset fault
	// is applied on top of it.
	Clock Clock
	// Transport carries the requests below the fault layer; nil means the
	// platform's default (FetchTransport in the browser, HTTPTransport
	// natively).
	Transport Transport
	// Rand returns the candidate's random draws in [0, 1): the acquire
	// loop's jitter and, under packet loss, each request's fate; nil means
	// math/rand/v2.Float64.
	Rand func() float64
	// LogLimit bounds the decision log; 0 means DefaultLogLimit.
	LogLimit int
	// Annotations, when set, returns annotations that every write of the lease carries, as
	// they stand at the write (a guided scenario's time scale); nil writes none.
	Annotations func() map[string]string
}

// Candidate is one leader-election candidate: client-go's loops around an
// elector (and, in coordinated mode, a LeaseCandidate keeper), the faults a
// workshop injects, the decision log its outcomes are told in, and the
// snapshot the page draws.
//
// Drive it either with Run (a loop on the clock) or, in deterministic tests,
// by calling Step whenever the time it returned has come; never both at once.
// The fault and command methods, Snapshot and Subscribe may be called from
// any goroutine.
type Candidate struct {
	cfg     Config
	clock   Clock
	rand    func() float64
	net     *Network
	flights *flightLog
	offset  atomic.Int64 // clock offset in nanoseconds
	drift   *RateClock   // the candidate's clock (clock), at the clock-rate fault's rate
	freezer *freezer
	elector *elector
	keeper  *candidateKeeper

	mu sync.Mutex

	// Where the loops are; a rejoin or a restart after a loss starts over.
	phase         phase
	roleSince     time.Time // when the role (roleOf(phase)) last changed
	roundDeadline time.Time // end of the current renew round; zero between rounds and while following
	next          time.Time // when the elector's next attempt is due; zero when stopped
	candNext      time.Time // when the keeper's next look is due (coordinated mode)
	lastErr       string
	stopReason    string

	// Pending commands.
	crashReq   bool
	releaseReq bool
	rejoinReq  bool
	cancelStep context.CancelCauseFunc
	wake       chan struct{}

	// Output.
	log     decisionLog
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
		cfg:     cfg,
		clock:   opts.Clock,
		rand:    opts.Rand,
		freezer: newFreezer(),
		wake:    make(chan struct{}, 1),
		log:     decisionLog{limit: opts.LogLimit},
		subs:    map[chan struct{}]struct{}{},
	}
	if c.clock == nil {
		c.clock = SystemClock{}
	}
	// The network's delays are real time; everything the candidate times is on its own clock.
	real := c.clock
	c.drift = NewRateClock(real, 1)
	c.clock = c.drift
	c.roleSince = c.clock.Now()
	if c.rand == nil {
		c.rand = rand.Float64
	}
	if c.log.limit <= 0 {
		c.log.limit = DefaultLogLimit
	}
	c.net = NewNetwork(opts.Transport, real)
	c.flights = &flightLog{now: c.ownNow, changed: c.flightsChanged,
		next: &timeoutTransport{next: c.net, clock: c.clock, timeout: cfg.requestTimeout(), freezer: c.freezer}}
	client := &Client{BaseURL: cfg.BaseURL, Token: cfg.Token, Transport: c.flights, Identity: cfg.Identity}
	c.elector = &elector{
		cfg:    cfg,
		clock:  c.clock,
		ownNow: c.ownNow,
		lock:   &leaseLock{client: client, namespace: cfg.Namespace, name: cfg.LeaseName, freezer: c.freezer, annotate: opts.Annotations},
		tell:   c.tell,
	}
	c.keeper = &candidateKeeper{cfg: cfg, clock: c.clock, ownNow: c.ownNow, client: client, freezer: c.freezer}
	c.next = c.clock.Now()
	c.candNext = c.next
	c.tellLocked(outcome{kind: outJoined})
	if cfg.Coordinated {
		c.tellLocked(outcome{kind: outCoordinatedMode})
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
	return c.drift.real(c.nextLocked())
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
		c.step(ctx)
	}
}

// waitDue returns when a command is pending, or when the next step is due
// and the candidate is not paused.
func (c *Candidate) waitDue(ctx context.Context) error {
	for {
		c.mu.Lock()
		pending := c.crashReq || c.releaseReq || c.rejoinReq
		next := c.nextLocked()
		c.mu.Unlock()
		if pending {
			return nil
		}
		paused, _ := c.freezer.state()
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

// Step runs what is due: a pending command (crash, release, rejoin), in
// coordinated mode a look at the LeaseCandidate, and one attempt of the
// acquire or renew loop, or the end of leadership when the renew deadline has
// passed. It returns when the candidate wants to be stepped next (real
// clock), or the zero time once stopped. Step does not wait for that time:
// the caller does.
//
// If the candidate is paused, its requests wait until it resumes.
func (c *Candidate) Step(ctx context.Context) time.Time {
	return c.drift.real(c.step(ctx))
}

// step is Step on the candidate's own clock.
func (c *Candidate) step(ctx context.Context) time.Time {
	if next, done := c.runCommand(ctx); done {
		return next
	}
	if c.cfg.Coordinated {
		if next, wait := c.lookAtCandidate(ctx); wait {
			return next
		}
	}
	return c.attempt(ctx)
}

// runCommand carries out a pending crash, release or rejoin. It reports
// true, with the time of the next step, when Step has nothing more to do.
func (c *Candidate) runCommand(ctx context.Context) (time.Time, bool) {
	c.mu.Lock()
	switch {
	case c.crashReq:
		c.crashReq, c.releaseReq, c.rejoinReq = false, false, false
		if c.phase == phaseLeading {
			c.tellLocked(outcome{kind: outCrashedLeading})
		} else {
			c.tellLocked(outcome{kind: outCrashed})
		}
		c.stopLocked("crashed")
		c.mu.Unlock()
		return time.Time{}, true
	case c.releaseReq:
		c.releaseReq, c.rejoinReq = false, false
		leading := c.phase == phaseLeading
		c.tellLocked(outcome{kind: outStopping})
		c.stopLocked("released")
		c.mu.Unlock()
		if leading {
			c.release(ctx)
		} else {
			c.tell(outcome{kind: outNothingToRelease})
		}
		return time.Time{}, true
	case c.rejoinReq:
		c.rejoinReq = false
		if c.phase == phaseStopped {
			c.restartLocked(outcome{kind: outRejoined})
		}
	}
	stopped := c.phase == phaseStopped
	c.mu.Unlock()
	return time.Time{}, stopped
}

// lookAtCandidate gives the LeaseCandidate keeper its look when one is due,
// unless leadership is to end now: that comes first. The look is cut off
// after a retry period, or at a leader's renew deadline if sooner, so that a
// hanging network cannot stall the elector; in client-go the keeper runs on
// a goroutine of its own. It reports true, with the time of the next step,
// when the elector's attempt is not due yet or a command is pending.
func (c *Candidate) lookAtCandidate(ctx context.Context) (time.Time, bool) {
	c.mu.Lock()
	now := c.clock.Now()
	leadingRound := c.phase == phaseLeading && !c.roundDeadline.IsZero()
	if ending := leadingRound && !now.Before(c.roundDeadline); !ending && !now.Before(c.candNext) {
		cut := now.Add(c.cfg.RetryPeriod)
		if leadingRound && c.roundDeadline.Before(cut) {
			cut = c.roundDeadline
		}
		c.mu.Unlock()
		c.withStep(ctx, func(ctx context.Context) {
			ctx, cancel := c.withDeadline(ctx, cut)
			defer cancel()
			c.tell(c.keeper.keep(ctx))
		})
		c.mu.Lock()
		if c.phase == phaseStopped {
			c.mu.Unlock()
			return time.Time{}, true
		}
		c.candNext = c.clock.Now().Add(c.cfg.RetryPeriod)
	}
	defer c.mu.Unlock()
	switch {
	case c.stopReqLocked():
		return c.clock.Now(), true
	case c.clock.Now().Before(c.next):
		return c.nextLocked(), true
	}
	return time.Time{}, false
}

// attempt runs one attempt of the acquire or renew loop, or ends leadership
// once the renew round's deadline has passed, and returns when Step should
// run next.
func (c *Candidate) attempt(ctx context.Context) time.Time {
	c.mu.Lock()
	leading := c.phase == phaseLeading
	start := c.clock.Now()
	if leading {
		if c.roundDeadline.IsZero() {
			// A renew round: PollUntilContextTimeout(RetryPeriod, RenewDeadline).
			roundStart := start
			if c.cfg.Coordinated && c.next.Before(start) {
				// In client-go the LeaseCandidate keeper runs on its own goroutine: a
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

	var o outcome
	c.withStep(ctx, func(ctx context.Context) {
		if leading && !c.cfg.WaitsOutRenewals {
			var cancel context.CancelFunc
			ctx, cancel = c.withDeadline(ctx, deadline)
			defer cancel()
		}
		o = c.elector.tryAcquireOrRenew(ctx)
	})
	c.tell(o)
	return c.schedule(leading, o.holds(), start, deadline)
}

// schedule moves between the loops after an attempt that started at start
// and returns when Step should run next, as client-go's loops would.
func (c *Candidate) schedule(leading, ok bool, start, deadline time.Time) time.Time {
	end := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase == phaseStopped {
		return time.Time{}
	}
	switch {
	case !leading && ok:
		// The renew loop starts with an immediate attempt.
		c.setPhaseLocked(phaseLeading)
		c.roundDeadline = time.Time{}
		c.next = end
	case !leading:
		// JitterUntil, sliding: RetryPeriod plus up to 1.2 × RetryPeriod
		// after the attempt finished.
		c.next = end.Add(c.cfg.RetryPeriod + time.Duration(c.rand()*JitterFactor*float64(c.cfg.RetryPeriod)))
	case ok:
		// UntilWithContext, sliding: the next round starts RetryPeriod
		// after this one succeeded.
		c.roundDeadline = time.Time{}
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

// stopReqLocked reports whether a crash or a release is pending.
func (c *Candidate) stopReqLocked() bool { return c.crashReq || c.releaseReq }

// withDeadline returns a context cancelled with errCutOff once the clock
// reaches deadline. A deadline that falls during a pause takes effect on
// resume: a frozen process notices its timers only when it runs again.
func (c *Candidate) withDeadline(parent context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	t := c.clock.AfterFunc(deadline.Sub(c.clock.Now()), func() {
		c.freezer.whenRunning(func() { cancel(errCutOff) })
	})
	return ctx, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}

// loseLeadership ends leadership once a renew round found no success before
// its deadline: release if configured, then stop or start over.
func (c *Candidate) loseLeadership(ctx context.Context) time.Time {
	c.mu.Lock()
	c.tellLocked(outcome{kind: outLost})
	c.setPhaseLocked(phaseStopped)
	c.roundDeadline = time.Time{}
	c.next = time.Time{}
	c.changedLocked()
	c.mu.Unlock()
	if c.cfg.ReleaseOnCancel {
		c.release(ctx)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg.StopAfterLoss || c.crashReq || c.releaseReq {
		c.crashReq, c.releaseReq = false, false
		c.stopLocked(StopLostLeadership)
		return time.Time{}
	}
	c.restartLocked(outcome{kind: outStartingOver})
	c.changedLocked()
	return c.nextLocked()
}

// release has the elector release the lease, giving up after RenewDeadline.
func (c *Candidate) release(ctx context.Context) {
	c.withStep(ctx, func(ctx context.Context) {
		ctx, cancel := c.withDeadline(ctx, c.clock.Now().Add(c.cfg.RenewDeadline))
		defer cancel()
		c.tell(c.elector.release(ctx))
	})
}

// StopLostLeadership is a snapshot's StopReason once a candidate with StopAfterLoss has lost
// the lease (the page words it, by this key).
const StopLostLeadership = "lost leadership"

// restartLocked forgets everything the previous run knew, as a new process
// would, tells o and starts the acquire loop now.
func (c *Candidate) restartLocked(o outcome) {
	c.elector.forget()
	c.keeper.renewed = time.Time{}
	c.setPhaseLocked(phaseFollowing)
	c.roundDeadline = time.Time{}
	c.lastErr = ""
	c.stopReason = ""
	c.next = c.clock.Now()
	c.candNext = c.next
	c.tellLocked(o)
}

// setPhaseLocked moves to phase p, noting when the role changed: the server dates a
// candidate's belief by it, not by when the report arrived.
func (c *Candidate) setPhaseLocked(p phase) {
	if roleOf(p) != roleOf(c.phase) {
		c.roleSince = c.clock.Now()
	}
	c.phase = p
}

// stopLocked stops the candidate for reason, ending any pause.
func (c *Candidate) stopLocked(reason string) {
	c.setPhaseLocked(phaseStopped)
	c.roundDeadline = time.Time{}
	c.next = time.Time{}
	c.stopReason = reason
	c.unpauseLocked()
	c.changedLocked()
}

// tell updates the last error and the decision log with o.
func (c *Candidate) tell(o outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tellLocked(o) {
		c.changedLocked()
	}
}

// tellLocked updates the last error and the decision log with o, and
// reports whether either changed.
func (c *Candidate) tellLocked(o outcome) bool {
	msg, setsErr := o.lastError()
	if setsErr {
		c.lastErr = msg
	}
	s := scene{cfg: c.cfg, now: c.clock.Now(), own: c.ownNow(), round: c.roundDeadline}
	line, told := tell(o, s)
	if told {
		c.log.add(s.own, line)
	}
	return setsErr || told
}

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

// flightsChanged tells the subscribers that a request left or came back. Requests are never
// sent with c.mu held.
func (c *Candidate) flightsChanged() {
	c.mu.Lock()
	c.changedLocked()
	c.mu.Unlock()
}

// changedLocked bumps the snapshot's version and tells the subscribers.
func (c *Candidate) changedLocked() {
	c.version++
	for ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
