package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/judge"
	"github.com/leaselab/leaselab/web/lease/views"
)

// tick is how often (on the run's clock) a run looks at the world while nothing wakes it.
const tick = 100 * time.Millisecond

// Stage is where a run's members are shown like candidate tabs (the dashboard's tab hub):
// each member reports its view there, and obeys the fault commands sent to it.
type Stage interface {
	Enter(obey func(tabproto.Command) error) Seat
}

// Seat is one member's place on a Stage.
type Seat interface {
	Report(tabproto.Report)
	Leave()
}

// Options are a run's dependencies and settings.
type Options struct {
	// Transport carries the members' and the run's requests to the API server, as a user
	// allowed to write in Namespace.
	Transport http.RoundTripper
	// BaseURL is the API server's URL as Transport expects it.
	BaseURL string
	// Namespace is where the run writes; it must exist or be creatable.
	Namespace string
	// Clock is the base clock; nil means the system clock. The run's clock is it at Speed.
	Clock candidate.Clock
	// Seed chooses every member's jitter.
	Seed uint64
	// Speed is the run's pace against the base clock; 0 means 1.
	Speed float64
	// Stage, when set, shows the members like tabs.
	Stage Stage
	// Room, in a room lesson, is where its candidates are: the tabs on its lease. Without it
	// the lesson's Cast plays the room.
	Room Room
	// Overlaps, when set, judges the run's lease with the server's record (its whole change
	// history) against the members' views; otherwise only the members' views are compared with
	// the changes the run itself saw.
	Overlaps func(ctx context.Context, namespace, lease string, views []judge.View) ([]judge.Overlap, error)
	Logger   *slog.Logger
}

// Event is something a run saw, at an offset from its start on its own clock: a step began,
// the lease changed hands, a member's role changed. The same seed gives the same events.
type Event struct {
	At   time.Duration
	Kind string // "step", "holder", "role"
	What string
}

func (e Event) String() string { return fmt.Sprintf("%7.3fs %s %s", e.At.Seconds(), e.Kind, e.What) }

// Run is one playing of a scenario.
type Run struct {
	sc      *Scenario
	opts    Options
	clock   *candidate.RateClock // the base clock at the run's speed: every member's and the schedule's
	log     *slog.Logger
	started time.Time
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	wake    chan struct{}

	mu      sync.Mutex
	members map[string]*member
	step    int // the furthest step reached
	shown   int // the step shown (Back and Next move it up to step)
	entered []time.Time
	// enteredBase is when each step began on the base clock (the server's), for links to the
	// moment.
	enteredBase []time.Time
	// readyBase is when each step reached was done, on the base clock: the moment the next
	// step's narration tells of, unless that step acts itself.
	readyBase []time.Time
	ready     bool
	auto      bool
	readyAt   time.Time
	lease     *coordinationv1.Lease
	leaseErr  string
	holder    string
	events    []Event
	views     []judge.View
	changes   []judge.Change
	notes     map[string]string
	ledger    *ledger // the shared resource the leaders' work writes (Scenario.Ledger); nil without
	outage    *outage // the API server as the members reach it
	api       apiServer
	// ballot holds the questions' votes and which is open: its step's faults wait for the reveal.
	ballot  *Ballot
	room    *Crowd // a room lesson's tabs as the run saw them (arena.go); nil in any other
	done    bool
	version uint64
	subs    map[chan struct{}]struct{}
}

type member struct {
	spec      Member
	cand      *candidate.Candidate
	seat      Seat
	started   bool
	role      candidate.Role
	workUntil time.Time // KeepWorking: believed to lead until then
	workFor   time.Duration
	views     []judge.View // what it believed, each change of note
	shown     shownOf      // what the lesson's page last showed of it
}

// shownOf is what a lesson's page shows of a member: its state and the countdown it acts on.
// Every change of it must reach the page, a follower's new observation of the lease included:
// the page counts down from the last figures it was given.
type shownOf struct {
	state          candidate.State
	role           candidate.Role
	holder         string
	stale          bool
	observedExpiry int64 // Unix ns: instants compare by value, not by their monotonic reading
	renewDeadline  int64
	renewRound     bool
	faults         tabproto.Faults
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func shownOfSnapshot(s candidate.Snapshot) shownOf {
	return shownOf{state: s.State, role: s.Role, holder: s.Holder, stale: s.Stale, observedExpiry: unixNano(s.ObservedExpiry),
		renewDeadline: unixNano(s.RenewDeadline), renewRound: s.RenewRound, faults: s.Faults}
}

// sameBelief reports whether two views of one member say the same of note: the split-brain
// checker needs each change of belief and of the faults that explain it, not each renewal.
func sameBelief(a, b judge.View) bool {
	a.At, b.At = time.Time{}, time.Time{}
	if a.Decision != "released" && b.Decision != "released" {
		a.Decision, b.Decision = "", ""
	}
	return a == b
}

// ErrNotReady is Next's error while the current step's condition does not hold yet.
var ErrNotReady = errors.New("the step is not done yet")

// Start begins a run of sc. The run ends when ctx is done or Stop is called; nothing is
// released then (the members stop as crashed processes do).
func Start(ctx context.Context, sc *Scenario, opts Options) (*Run, error) {
	if err := sc.check(); err != nil {
		return nil, err
	}
	if opts.Speed == 0 {
		opts.Speed = 1
	}
	if err := sc.CheckSpeed(opts.Speed); err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = candidate.SystemClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Run{
		sc:      sc,
		opts:    opts,
		clock:   candidate.NewRateClock(opts.Clock, opts.Speed),
		log:     opts.Logger.With(slog.String("scenario", sc.Name), slog.String("namespace", opts.Namespace)),
		wake:    make(chan struct{}, 1),
		members: map[string]*member{},
		notes:   map[string]string{},
		subs:    map[chan struct{}]struct{}{},
		outage:  newOutage(),
	}
	r.ballot = newBallot(sc, func() {
		r.mu.Lock()
		r.changedLocked()
		r.mu.Unlock()
	})
	r.room = newRoom(r)
	r.ctx, r.cancel = context.WithCancel(ctx)
	r.api = apiServer{ctx: r.ctx, transport: opts.Transport, baseURL: opts.BaseURL, namespace: opts.Namespace}
	r.started = r.clock.Now()
	if err := r.api.ensureNamespace(sc.Name); err != nil {
		r.cancel()
		return nil, err
	}
	for i, m := range sc.Cast {
		rnd := rand.New(rand.NewPCG(opts.Seed, uint64(i)+1))
		c, err := candidate.New(sc.config(m, opts.BaseURL, opts.Namespace), candidate.Options{
			Clock:     r.clock,
			Transport: r.outage.wrap(candidate.HTTPTransport{Client: &http.Client{Transport: opts.Transport}}),
			Rand:      rnd.Float64,
			// The judge counts the holds of a run at another speed on the run's clock.
			Annotations: r.timeScale,
		})
		if err != nil {
			r.cancel()
			return nil, err
		}
		r.members[m.name()] = &member{spec: m, cand: c, role: candidate.RoleNone}
	}
	r.mu.Lock()
	r.entered = []time.Time{r.started}
	r.enteredBase = []time.Time{opts.Clock.Now()}
	r.addEventLocked(r.started, "step", "1")
	r.enterLocked(0)
	r.mu.Unlock()
	for _, m := range sc.Cast {
		if m.Absent || sc.Room && opts.Room != nil { // the room plays, not the cast
			continue
		}
		id := m.name()
		if m.Joins <= 0 {
			r.join(id)
			continue
		}
		r.clock.AfterFunc(m.Joins, func() { r.join(id) })
	}
	if sc.Ledger {
		startLedger(r)
	}
	r.wg.Add(1)
	go r.loop()
	return r, nil
}

// CheckSpeed refuses a speed outside MinSpeed..MaxSpeed.
func CheckSpeed(speed float64) error {
	if !(speed >= MinSpeed && speed <= MaxSpeed) {
		return fmt.Errorf("speed must be between %g and %g, not %g", MinSpeed, MaxSpeed, speed)
	}
	return nil
}

// ErrRealTimeOnly refuses a coordinated lesson at any speed but 1: the election controller
// decides on the server's clock, which a run cannot speed up, while the members' renewTimes
// would run at the run's pace (at 2×, ahead of the server's clock by half the run's age).
var ErrRealTimeOnly = errors.New("a lesson of Coordinated Leader Election runs at speed 1 only: the election controller decides on the server's clock")

// CheckSpeed refuses a speed the scenario cannot run at: outside MinSpeed..MaxSpeed, or, for
// a coordinated one, any but 1 (ErrRealTimeOnly).
func (sc *Scenario) CheckSpeed(speed float64) error {
	if err := CheckSpeed(speed); err != nil {
		return err
	}
	if sc.Coordinated && speed != 1 {
		return ErrRealTimeOnly
	}
	if sc.Room && speed != 1 {
		return ErrRoomRealTime
	}
	return nil
}

// offeredSpeeds are the speeds a lesson's page offers, of those a lesson can run at.
var offeredSpeeds = []float64{0.25, 0.5, 1, 2, 4}

// Speeds are the speeds the lesson's page offers: every one its claims are checked at.
func (sc *Scenario) Speeds() []float64 {
	var out []float64
	for _, s := range offeredSpeeds {
		if sc.CheckSpeed(s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// DefaultSeeds are the seeds a lesson offers unless it says otherwise; the first is its
// default.
var DefaultSeeds = []uint64{1, 2, 3}

// Seeds are the seeds the lesson's page offers, its default first: every one its claims are
// checked at. A seed that cannot show the lesson is not among them.
func (sc *Scenario) Seeds() []uint64 {
	if len(sc.OfferedSeeds) > 0 {
		return sc.OfferedSeeds
	}
	return DefaultSeeds
}

// Stop ends the run: its members stop as crashed processes do, and leave the stage.
func (r *Run) Stop() {
	r.mu.Lock()
	r.cancel()
	r.mu.Unlock()
	r.wg.Wait()
}

// Done is closed when the run has ended.
func (r *Run) Done() <-chan struct{} { return r.ctx.Done() }

func (r *Run) join(id string) {
	r.mu.Lock()
	m := r.members[id]
	if m == nil || m.started || r.ctx.Err() != nil {
		r.mu.Unlock()
		return
	}
	m.started = true
	r.wg.Add(2) // under the lock: Stop cannot be waiting yet
	r.mu.Unlock()
	if r.opts.Stage != nil {
		c := m.cand
		m.seat = r.opts.Stage.Enter(func(cmd tabproto.Command) error {
			if err := cmd.Validate(); err != nil {
				return err
			}
			return c.Obey(cmd)
		})
	}
	changed, unsubscribe := m.cand.Subscribe()
	go func() {
		defer r.wg.Done()
		m.cand.Run(r.ctx)
	}()
	go func() {
		defer r.wg.Done()
		defer unsubscribe()
		defer func() {
			if m.seat != nil {
				m.seat.Leave()
			}
		}()
		for {
			r.observe(m)
			select {
			case <-r.ctx.Done():
				return
			case <-changed:
			}
		}
	}()
}

// observe takes in a member's change and shows it on the stage.
func (r *Run) observe(m *member) {
	r.mu.Lock()
	rep := r.observeLocked(m, m.cand.Snapshot(), r.clock.Now())
	seat := m.seat
	r.mu.Unlock()
	if seat != nil {
		seat.Report(rep)
	}
	r.poke()
}

// observeLocked takes in a member's snapshot: its role (an event) and its beliefs (a view),
// and returns its report. The run's loop calls it too, before it judges a step, so that what
// it judges is on record however its goroutines are scheduled.
func (r *Run) observeLocked(m *member, s candidate.Snapshot, now time.Time) tabproto.Report {
	rep := s.Report()
	if shown := shownOfSnapshot(s); shown != m.shown {
		m.shown = shown
		r.changedLocked()
	}
	if m.workFor > 0 && m.workUntil.IsZero() && m.role == candidate.RoleLeader && s.Role != candidate.RoleLeader {
		// Its work outlives its leadership (KeepWorking): it goes on acting as the leader.
		m.workUntil = now.Add(m.workFor)
		r.clock.AfterFunc(m.workFor, func() { r.observe(m) })
	}
	if now.Before(m.workUntil) {
		rep.Role, rep.State = tabproto.RoleLeader, tabproto.StateLeader
	} else if !m.workUntil.IsZero() {
		// It stopped acting as the leader when its work stopped, not when it let the lease go:
		// the server dates the role change by RoleSince (on the candidate's clock).
		rep.RoleSince = max(rep.RoleSince, rep.Clock-now.Sub(m.workUntil).Milliseconds())
	}
	rescaleRoleSince(&rep, r.clock.Rate())
	rescaleStage(&rep, r.clock.Rate())
	if rep.Role != m.role {
		m.role = rep.Role
		role := string(rep.Role)
		if role == "" {
			role = "stopped"
		}
		r.dropRoleLocked(now, m.spec.name())
		r.addEventLocked(now, "role", m.spec.name()+" "+role)
	}
	v := views.FromReport(rep, views.SourceTab, now, "").View()
	v.At = now
	if n := len(m.views); n == 0 || !sameBelief(m.views[n-1], v) {
		m.views = append(m.views, v)
		r.views = append(r.views, v)
	}
	return rep
}

// rescaleRoleSince moves a report's RoleSince so that Clock − RoleSince is the time since the
// role changed on the server's clock: the server dates a role change back by it, taken as its
// own milliseconds, while a run's members count on clocks at its speed (at 4x, a change 100 ms
// ago read 400 ms, and a new leader's view came before its own write).
func rescaleRoleSince(rep *tabproto.Report, speed float64) {
	if speed > 0 && speed != 1 && rep.RoleSince > 0 && rep.RoleSince <= rep.Clock {
		rep.RoleSince = rep.Clock - int64(float64(rep.Clock-rep.RoleSince)/speed)
	}
}

// rescaleStage puts a report's timers and requests at the server's pace, as rescaleRoleSince
// does its role change: the stage places them by how far they are from the report's clock
// reading, taken as the server's milliseconds.
func rescaleStage(rep *tabproto.Report, speed float64) {
	if speed <= 0 || speed == 1 {
		return
	}
	scale := func(ms int64) int64 { return int64(float64(ms) / speed) }
	if t := rep.Timers; t != nil {
		cp := *t
		cp.ExpiresInMs, cp.RenewByMs, cp.RetryInMs = scale(t.ExpiresInMs), scale(t.RenewByMs), scale(t.RetryInMs)
		cp.LeaseMs, cp.RenewDeadlineMs, cp.RetryPeriodMs = scale(t.LeaseMs), scale(t.RenewDeadlineMs), scale(t.RetryPeriodMs)
		rep.Timers = &cp
	}
	if len(rep.Flights) == 0 {
		return
	}
	flights := make([]tabproto.Flight, len(rep.Flights))
	for i, f := range rep.Flights {
		f.StartMs = rep.Clock - scale(rep.Clock-f.StartMs)
		if f.EndMs != 0 {
			f.EndMs = rep.Clock - scale(rep.Clock-f.EndMs)
		}
		flights[i] = f
	}
	rep.Flights = flights
}

func (r *Run) member(id string) *candidate.Candidate {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.members[id]; m != nil {
		return m.cand
	}
	return nil
}

func (r *Run) keepWorking(id string, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.members[id]; m != nil {
		m.workFor = d
	}
}

func (r *Run) note(key, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes[key] = value
}

func (r *Run) noted(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notes[key]
}

func (r *Run) holderNow() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.holder
}

func (r *Run) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// loop looks at the world on every change and every tick: it reads the lease, notes what
// changed, and offers (or, on auto-play, takes) the next step once the current one is done.
func (r *Run) loop() {
	defer r.wg.Done()
	var lastRead time.Time
	read := true
	for {
		if read {
			lastRead = r.opts.Clock.Now()
		}
		r.look(read)
		due := make(chan struct{})
		t := r.clock.AfterFunc(tick, func() { close(due) })
		select {
		case <-r.ctx.Done():
			t.Stop()
			r.mu.Lock()
			r.done = true
			r.changedLocked()
			r.mu.Unlock()
			return
		case <-r.wake:
			read = true // a member changed: it may have written
		case <-due:
			select {
			case <-r.wake:
				// Woken at the same instant: read, whichever case select happened to take.
				read = true
			default:
				// Time alone moved: the lease is read again at most every readEvery of the
				// server's time, whatever the speed (a controller may write it too).
				read = !r.opts.Clock.Now().Before(lastRead.Add(readEvery))
			}
		}
		t.Stop()
	}
}

// readEvery is how often a run reads its lease while no member changes.
const readEvery = 500 * time.Millisecond

// look reads the lease (when read is set), notes what changed, and judges the current step.
func (r *Run) look(read bool) {
	var lease *coordinationv1.Lease
	var err error
	if read {
		lease, err = r.api.getLease(r.sc.Lease)
	} else {
		r.mu.Lock()
		lease = r.lease
		r.mu.Unlock()
	}
	tabs := r.room.read()
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	r.room.seeLocked(now, tabs)
	if err != nil {
		if r.ctx.Err() == nil && r.leaseErr != err.Error() {
			r.log.Warn("scenario cannot read its lease", slog.Any("error", err))
		}
		r.leaseErr = err.Error()
	} else {
		r.leaseErr = ""
		if !sameLease(r.lease, lease) {
			r.lease = lease
			r.changedLocked()
			r.noteChangeLocked(now, lease)
		}
	}
	if r.ballot.isOpen() {
		if r.auto && !now.Before(revealAt(r.sc.Steps[r.step].Ask, r.entered[r.step], r.clock.Rate())) {
			r.revealLocked(now)
		}
		return
	}
	if !r.ready {
		w := r.worldLocked(now)
		if st := r.sc.Steps[r.step]; st.Until == nil || st.Until(w) {
			r.ready = true
			r.readyAt = now
			r.readyBase = append(r.readyBase[:min(r.step, len(r.readyBase))], r.opts.Clock.Now())
			r.changedLocked()
		}
	}
	if r.ready && r.auto && r.step+1 < len(r.sc.Steps) && !now.Before(r.autoNextLocked()) {
		r.advanceLocked(now)
	}
}

// autoPause is the least time auto-play leaves a finished step on screen, in real time.
const autoPause = 3 * time.Second

// readingPace is how long a reader takes over a word of narration, in real time: about
// 240 words a minute, read aloud to a room a little slower.
const readingPace = 300 * time.Millisecond

// autoNextLocked is when auto-play goes on from the current step, on the run's clock: once
// the step is done and has been on screen for autoPause, and not before its narration could be
// read. Both are real time, so at 4x they are four times as long on the run's clock.
func (r *Run) autoNextLocked() time.Time {
	speed := r.clock.Rate()
	read := time.Duration(len(strings.Fields(r.sc.Steps[r.step].Say.En))) * readingPace
	next := r.readyAt.Add(time.Duration(float64(autoPause) * speed))
	if byReading := r.entered[r.step].Add(time.Duration(float64(read) * speed)); byReading.After(next) {
		next = byReading
	}
	return next
}

func sameLease(a, b *coordinationv1.Lease) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ResourceVersion == b.ResourceVersion
}

// noteChangeLocked records a change of the lease record for the run's own judgement.
func (r *Run) noteChangeLocked(now time.Time, l *coordinationv1.Lease) {
	holder := ""
	ch := judge.Change{At: now}
	if l != nil {
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		ch.Holder = holder
		if l.Spec.LeaseDurationSeconds != nil {
			ch.Duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		}
		if l.Spec.LeaseTransitions != nil {
			ch.Transitions = *l.Spec.LeaseTransitions
		}
	} else {
		ch.Deleted = true
	}
	r.changes = append(r.changes, ch)
	if holder != r.holder {
		r.holder = holder
		who := holder
		if who == "" {
			who = "(none)"
		}
		r.addEventLocked(now, "holder", who)
	}
}

func (r *Run) addEventLocked(now time.Time, kind, what string) {
	e := Event{At: now.Sub(r.started).Round(time.Millisecond), Kind: kind, What: what}
	// Events of one instant are kept in one order (steps, then the lease, then the members),
	// however the goroutines that saw them were scheduled.
	i := len(r.events)
	for i > 0 && r.events[i-1].At == e.At && compareEvents(r.events[i-1], e) > 0 {
		i--
	}
	r.events = slices.Insert(r.events, i, e)
	r.changedLocked()
}

// dropRoleLocked forgets a role of id noted at the same instant: a role that lasted no time
// (a follower that leads in the same instant) is seen or not depending on how the goroutines
// of that instant ran, and is no event.
func (r *Run) dropRoleLocked(now time.Time, id string) {
	at := now.Sub(r.started).Round(time.Millisecond)
	for i := len(r.events) - 1; i >= 0 && r.events[i].At == at; i-- {
		if e := r.events[i]; e.Kind == "role" && strings.HasPrefix(e.What, id+" ") {
			r.events = slices.Delete(r.events, i, i+1)
		}
	}
}

var kindOrder = map[string]int{"step": 0, "holder": 1, "role": 2}

func compareEvents(a, b Event) int {
	if c := kindOrder[a.Kind] - kindOrder[b.Kind]; c != 0 {
		return c
	}
	return strings.Compare(a.What, b.What)
}

func (r *Run) worldLocked(now time.Time) *World {
	w := &World{Now: now, StepStarted: r.entered[r.step], Lease: r.lease, Members: map[string]candidate.Snapshot{}, Notes: r.notes,
		Started: r.started, run: r}
	for _, id := range r.memberIDs() {
		m := r.members[id]
		if !m.started {
			continue
		}
		w.Members[id] = r.snapshotLocked(m, now)
	}
	w.Events = r.events
	r.room.addToLocked(w)
	return w
}

// snapshotLocked is a started member's snapshot, taken in (observeLocked) so that what is
// judged or shown is on record, with the belief of work that outlived its leadership.
func (r *Run) snapshotLocked(m *member, now time.Time) candidate.Snapshot {
	s := m.cand.Snapshot()
	r.observeLocked(m, s, now)
	if now.Before(m.workUntil) {
		s.Role, s.State = candidate.RoleLeader, candidate.StateLeader
	}
	return s
}

// identityOf is the identity of the member called name: name itself when no member of the
// cast is called so (a tab of the room is called by its identity).
func (s *Scenario) identityOf(name string) string {
	for _, m := range s.Cast {
		if m.name() == name {
			return m.Identity
		}
	}
	return name
}

// memberIDs lists the members' names in the cast's order.
func (r *Run) memberIDs() []string {
	ids := make([]string, len(r.sc.Cast))
	for i, m := range r.sc.Cast {
		ids[i] = m.name()
	}
	return ids
}

// overlaps judges the run's lease; called with r.mu held (from a condition).
func (r *Run) overlaps() []judge.Overlap {
	now := r.clock.Now()
	vs := slices.Clone(r.views)
	if r.opts.Overlaps != nil {
		// The server's record is the truth; the hook reads it (without the run's lock held by
		// the server: it only reads the store).
		out, err := r.opts.Overlaps(r.ctx, r.opts.Namespace, r.sc.Lease, vs)
		if err == nil {
			// The lease's history holds earlier runs of the same seed too: only this run's
			// split brains count (they are on the server's clock, as the run's start is here).
			out = judge.OverlapsBetween(out, r.enteredBase[0], r.opts.Clock.Now())
			// Told on the run's clock, as everything a step or a claim compares them with: at
			// 4x a split brain of 2.5 s of the server's lasted 10 s of the candidates'.
			for i := range out {
				out[i].Start, out[i].End = r.clock.Own(out[i].Start), r.clock.Own(out[i].End)
			}
			return out
		}
		r.log.Debug("scenario overlap check failed", slog.Any("error", err))
	}
	return judge.Overlaps(r.sc.Lease, r.changes, vs, now)
}

// Next shows the next step: one already reached (after Back), or, once the current step is
// done, the next one of the script, whose faults it injects.
func (r *Run) Next() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shown < r.step {
		r.shown++
		r.changedLocked()
		return nil
	}
	if r.step+1 >= len(r.sc.Steps) {
		return errors.New("this is the last step")
	}
	if r.ballot.isOpen() {
		return ErrAsking
	}
	if !r.ready {
		return ErrNotReady
	}
	r.advanceLocked(r.clock.Now())
	return nil
}

// Back shows the step before the one shown. The run goes on: time does not go back, but the
// step's moment stays on record (its time is in the run's state).
func (r *Run) Back() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shown > 0 {
		r.shown--
		r.changedLocked()
	}
}

// SetAuto turns auto-play on or off: the next step follows the current one once it is done
// and has been shown for a few seconds.
func (r *Run) SetAuto(on bool) {
	r.mu.Lock()
	r.auto = on
	r.changedLocked()
	r.mu.Unlock()
	r.poke()
}

// timeScale is the annotation every member's write carries: the run's speed at the write.
func (r *Run) timeScale() map[string]string {
	return map[string]string{judge.TimeScaleAnnotation: strconv.FormatFloat(r.clock.Rate(), 'g', -1, 64)}
}

// SetSpeed changes the pace of every clock of the run.
func (r *Run) SetSpeed(speed float64) error {
	if err := r.sc.CheckSpeed(speed); err != nil {
		return err
	}
	r.clock.SetRate(speed)
	r.mu.Lock()
	r.changedLocked()
	r.mu.Unlock()
	r.poke()
	return nil
}

func (r *Run) advanceLocked(now time.Time) {
	r.room.keepToldLocked(now)
	r.step++
	r.shown = r.step
	r.entered = append(r.entered, now)
	r.enteredBase = append(r.enteredBase, r.opts.Clock.Now())
	r.ready = false
	if r.sc.Steps[r.step].Ask != nil {
		// Asked first: the step begins at the reveal.
		r.ballot.openAt(r.step)
		r.changedLocked()
		r.poke()
		return
	}
	r.addEventLocked(now, "step", fmt.Sprint(r.step+1))
	r.enterLocked(r.step)
}

// enterLocked injects step i's faults. They run without the lock: they call members.
func (r *Run) enterLocked(i int) {
	st := r.sc.Steps[i]
	if st.Do == nil {
		r.poke()
		return
	}
	a := &Actions{run: r}
	r.mu.Unlock()
	st.Do(a)
	r.mu.Lock()
	r.poke()
}

// Events returns what the run saw so far.
func (r *Run) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Outcome checks the scenario's claims against the world now: nil when every one holds.
func (r *Run) Outcome() error { return errors.Join(append(r.Claims(), r.Answers()...)...) }

// Subscribe returns a channel signalled (coalesced) after every change of the run's state,
// and a function that ends the subscription.
func (r *Run) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	r.subs[ch] = struct{}{}
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		delete(r.subs, ch)
		r.mu.Unlock()
	}
}

func (r *Run) changedLocked() {
	r.version++
	for ch := range r.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func leasePath(namespace, lease string) string {
	return leasesPath(namespace) + "/" + url.PathEscape(lease)
}

func leasesPath(namespace string) string {
	return "/apis/coordination.k8s.io/v1/namespaces/" + url.PathEscape(namespace) + "/leases"
}

// Clear deletes what a run of this scenario left in namespace, the run's own (its Leases and
// LeaseCandidates), so that a new run starts from nothing.
func Clear(ctx context.Context, transport http.RoundTripper, baseURL, namespace string, sc *Scenario) error {
	if sc.Namespace != "" {
		return nil // the arena's lease and tabs are the room's
	}
	paths := []string{
		"/apis/coordination.k8s.io/v1/namespaces/" + url.PathEscape(namespace) + "/leases",
		"/apis/coordination.k8s.io/v1beta1/namespaces/" + url.PathEscape(namespace) + "/leasecandidates",
	}
	for _, p := range paths {
		code, body, err := call(ctx, transport, baseURL, http.MethodDelete, p, "")
		if err != nil {
			return err
		}
		if code >= 300 && code != http.StatusNotFound {
			return fmt.Errorf("delete %s: %d %s", p, code, body)
		}
	}
	return nil
}

// call makes one request with transport and returns the status code and the body.
func call(ctx context.Context, transport http.RoundTripper, baseURL, method, path, body string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(baseURL, "/")+path, rd)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := transport.RoundTrip(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, "", err
	}
	return resp.StatusCode, string(b), nil
}

// Speed is the run's pace.
func (r *Run) Speed() float64 { return r.clock.Rate() }

// State is a run's state as a page shows it.
type State struct {
	// Step is the furthest step reached (from 0), Shown the one shown; Ready says Step is done.
	Step, Shown int
	Ready       bool
	Auto        bool
	Stopped     bool
	Speed       float64
	// Entered is when each step reached began, on the base clock (the server's: the moment
	// the lease page shows).
	Entered []time.Time
	// Moments are the moments each step reached tells of, on the base clock, for its link to
	// the lease page: momentAfter past what it does (its faults), or past the moment the step
	// before it was done when it does nothing itself (its narration then tells what that step
	// waited for, however long the reader took to press Next). Never after now.
	Moments []time.Time
	// Holder and Transitions are the lease's record; Overlaps the split brains found so far.
	Holder      string
	Transitions int32
	Overlaps    int
	// Members are the started members' snapshots, in the cast's order (with the belief of
	// work that outlived leadership).
	Members []MemberState
	// Ledger is the shared resource the leaders' work writes, in a lesson that has one.
	Ledger *LedgerState
	// Outage is the API server's outage in effect (candidate.PartitionNone for none).
	Outage candidate.PartitionMode
	// Question is the shown step's question, when it asks one.
	Question *QuestionState
}

// MemberState is one started member of a run as its page shows it.
type MemberState struct {
	// Name is the member's name in the run: its identity, unless it shares that with another.
	Name string
	// StopsAfterLoss is the member's Member.StopAfterLoss: stopped after losing the lease, its
	// process lives on without competing.
	StopsAfterLoss bool
	candidate.Snapshot
}

// momentAfter is how long after what a step tells of its link shows the lease page: long
// enough for the candidates to have reported what it did to them.
const momentAfter = 500 * time.Millisecond

// momentsLocked are State.Moments.
func (r *Run) momentsLocked() []time.Time {
	now := r.opts.Clock.Now()
	out := make([]time.Time, len(r.enteredBase))
	for i, at := range r.enteredBase {
		if i > 0 && r.sc.Steps[i].Do == nil && i-1 < len(r.readyBase) {
			at = r.readyBase[i-1]
		}
		if at = at.Add(momentAfter); at.After(now) {
			at = now
		}
		out[i] = at
	}
	return out
}

// State returns the run's state.
func (r *Run) State() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := State{Step: r.step, Shown: r.shown, Ready: r.ready, Auto: r.auto, Stopped: r.done || r.ctx.Err() != nil,
		Speed: r.clock.Rate(), Entered: slices.Clone(r.enteredBase), Moments: r.momentsLocked(), Holder: r.holder}
	if r.lease != nil && r.lease.Spec.LeaseTransitions != nil {
		st.Transitions = *r.lease.Spec.LeaseTransitions
	}
	now := r.clock.Now()
	for _, id := range r.memberIDs() {
		if m := r.members[id]; m.started {
			st.Members = append(st.Members, MemberState{Name: id, StopsAfterLoss: m.spec.StopAfterLoss, Snapshot: r.snapshotLocked(m, now)})
		}
	}
	st.Overlaps = len(r.overlaps())
	if r.ledger != nil {
		st.Ledger = r.ledger.state()
	}
	st.Outage = r.outage.current()
	st.Question = r.ballot.state(r.shown, r.step)
	return st
}
