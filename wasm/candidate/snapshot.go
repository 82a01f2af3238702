package candidate

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// State is the one word the page shows (data-state); the list of states is
// the tab protocol's.
type State = tabproto.State

// States, in order of precedence (see stateOf).
const (
	StateStopped     = tabproto.StateStopped
	StatePaused      = tabproto.StatePaused
	StatePartitioned = tabproto.StatePartitioned
	StateLeader      = tabproto.StateLeader
	StateFollower    = tabproto.StateFollower
)

// Role is what the algorithm believes: leader between acquiring and losing
// the lease (client-go's OnStartedLeading .. OnStoppedLeading), follower while
// trying to acquire, none when stopped.
type Role = tabproto.Role

// Roles.
const (
	RoleLeader   = tabproto.RoleLeader
	RoleFollower = tabproto.RoleFollower
	RoleNone     = tabproto.RoleNone
)

// LogKind classifies a decision-log entry, for icons and colors.
type LogKind string

// Log kinds.
const (
	LogJoined    LogKind = "joined"    // started or rejoined
	LogWaiting   LogKind = "waiting"   // lease held by someone else and valid
	LogTrying    LogKind = "trying"    // lease expired by my clock or free: going for it
	LogAcquired  LogKind = "acquired"  // took or created the lease
	LogRenewed   LogKind = "renewed"   // renewed while leading
	LogConflict  LogKind = "conflict"  // a write lost a race (409)
	LogError     LogKind = "error"     // a request failed
	LogLost      LogKind = "lost"      // renew deadline passed: stopped leading
	LogReleased  LogKind = "released"  // wrote holderIdentity ""
	LogStopped   LogKind = "stopped"   // crashed or stopped
	LogFault     LogKind = "fault"     // a fault was switched on or off
	LogPinged    LogKind = "pinged"    // coordinated: the server pinged; answered
	LogCandidate LogKind = "candidate" // coordinated: declared or renewed the LeaseCandidate
)

// LogEntry is one plain-language decision. Repeated decisions (renewals,
// waiting for the same holder, the same error) fold into the newest entry,
// which then carries the latest time and text and a Count above 1.
type LogEntry struct {
	At   time.Time // the candidate's own clock
	Kind LogKind
	Text string
	// Msg is the same sentence as a message, for a page in another language.
	Msg   tabproto.Msg
	Count int
	fold  string
}

// Timings are the candidate's configured durations.
type Timings struct {
	LeaseDuration   time.Duration
	RenewDeadline   time.Duration
	RetryPeriod     time.Duration
	ReleaseOnCancel bool
	StopAfterLoss   bool
}

// Snapshot is everything the candidate page shows. All instants are read on
// the candidate's own clock (the real clock plus the clock offset fault); zero
// means unknown or not applicable.
type Snapshot struct {
	// Version increases with every change.
	Version   uint64
	Identity  string
	Namespace string
	Lease     string
	State     State
	Role      Role
	// Holder, Transitions and LeaseDurationSeconds are the lease record as
	// this candidate last observed it (what it acts on).
	Holder               string
	Transitions          int32
	LeaseDurationSeconds int32
	// Stale is true while this candidate believes it leads but the record it last read names
	// another holder (Holder): a resumed or partitioned leader within its renew deadline.
	// client-go has no fencing, so a stale leader acts on its belief; the page says so.
	Stale bool
	// RoleSince is when Role last changed.
	RoleSince time.Time
	// Now is the candidate's clock when the snapshot was taken.
	Now time.Time
	// ObservedAt is when this candidate last saw the record change (or wrote
	// it); ObservedExpiry = ObservedAt + leaseDurationSeconds: the expiry it
	// acts on.
	ObservedAt     time.Time
	ObservedExpiry time.Time
	// RecordHolder, RecordRenewTime and RecordExpiry (renewTime +
	// leaseDurationSeconds) are the server's record as last read or written.
	// RecordRenewTime was written on the writer's clock, so with clock offsets
	// RecordExpiry and ObservedExpiry differ: that gap is the lesson.
	RecordHolder    string
	RecordRenewTime time.Time
	RecordExpiry    time.Time
	ResourceVersion string
	// RenewDeadline is, while leading, when leadership ends unless a renewal
	// succeeds first, as client-go acts on it: while a renew round runs
	// (RenewRound), the round's own deadline, its start plus the renew
	// deadline; between rounds, the deadline the next round will have when it
	// starts on time (NextRetry plus the renew deadline), up to retryPeriod +
	// renewDeadline after the last renewal. A page shows at most the setting
	// of it, so that the bar stays full between rounds and drains while a
	// round tries. A paused leader between rounds starts its round when it
	// resumes.
	RenewDeadline time.Time
	// RenewRound is true while a renew round runs: from the first try after a
	// retry period until a renewal succeeds or the round's deadline passes.
	RenewRound bool
	// NextRetry is when the candidate next acts (it may be in the past while
	// paused); zero when stopped.
	NextRetry  time.Time
	LastError  string
	StopReason string
	// Coordinated, BinaryVersion and EmulationVersion are the coordinated
	// mode's configuration; Strategy is the strategy its LeaseCandidate
	// declares ("" when not coordinated); PreferredHolder is the server's
	// request, in the record last read, that the holder step down for that
	// candidate.
	Coordinated      bool
	BinaryVersion    string
	EmulationVersion string
	Strategy         string
	PreferredHolder  string
	Timings          Timings
	// Faults are the faults in effect, the pause's start included.
	Faults tabproto.Faults
	// Log is the decision log, newest first.
	Log []LogEntry
	// Flights are the newest requests on the lease, oldest first (for the stage).
	Flights []tabproto.Flight
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
	faults := c.faultsLocked()
	observed, observedAt := c.elector.view()
	s := Snapshot{
		Version:              c.version,
		Identity:             c.cfg.Identity,
		Namespace:            c.cfg.Namespace,
		Lease:                c.cfg.LeaseName,
		State:                stateOf(c.phase, faults.Paused, faults.Partition),
		Role:                 roleOf(c.phase),
		Holder:               observed.Holder,
		Transitions:          observed.Transitions,
		LeaseDurationSeconds: observed.DurationSeconds,
		RoleSince:            own(c.roleSince),
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
		Faults:  faults,
		Log:     c.log.newestFirst(),
		Flights: c.flights.flights(),
	}
	if !observedAt.IsZero() {
		s.ObservedAt = own(observedAt)
		s.ObservedExpiry = own(observedAt.Add(observed.duration()))
	}
	s.setRecord(c.elector.lock.lease())
	// The renew deadline the elector acts on: the running round's, or between rounds the
	// one the next round will have (a paused leader's round starts when it resumes).
	if c.phase == phaseLeading {
		switch {
		case !c.roundDeadline.IsZero():
			s.RenewDeadline, s.RenewRound = own(c.roundDeadline), true
		case !c.next.IsZero():
			start := c.next
			if now := c.clock.Now(); faults.Paused && start.Before(now) {
				start = now
			}
			s.RenewDeadline = own(start.Add(c.cfg.RenewDeadline))
		}
	}
	s.Stale = tabproto.StaleLeader(s.Role, s.Holder, s.Identity)
	return s
}

// setRecord fills in the server's record as last read or written; lease is
// nil when there is none.
func (s *Snapshot) setRecord(lease *Lease) {
	if lease == nil {
		return
	}
	r := recordFromSpec(lease.Spec)
	s.RecordHolder = r.Holder
	s.RecordRenewTime = r.RenewTime
	if !r.RenewTime.IsZero() {
		s.RecordExpiry = r.RenewTime.Add(r.duration())
	}
	s.ResourceVersion = lease.Metadata.ResourceVersion
	s.PreferredHolder = r.PreferredHolder
}

// stateOf is the one word the page shows, in order of precedence: a stopped
// candidate is "stopped" whatever its faults; a paused one is "paused" even
// when also partitioned.
func stateOf(p phase, paused bool, mode PartitionMode) State {
	switch {
	case p == phaseStopped:
		return StateStopped
	case paused:
		return StatePaused
	case mode != PartitionNone:
		return StatePartitioned
	case p == phaseLeading:
		return StateLeader
	}
	return StateFollower
}

// roleOf is what the algorithm believes in phase p.
func roleOf(p phase) Role {
	switch p {
	case phaseLeading:
		return RoleLeader
	case phaseFollowing:
		return RoleFollower
	}
	return RoleNone
}

// snapshotJSON is the wire form posted to the page: instants as Unix
// milliseconds on the candidate's clock (0 when unknown), durations in
// milliseconds. Coordinated mode: "coordinated" (bool), "binaryVersion",
// "emulationVersion" (as configured), "strategy" (as its LeaseCandidate
// declares it) and "preferredHolder" (the server's spec.preferredHolder in
// the last record read; "" when none).
type snapshotJSON struct {
	Version              uint64          `json:"version"`
	Identity             string          `json:"identity"`
	Namespace            string          `json:"namespace"`
	Lease                string          `json:"lease"`
	State                State           `json:"state"`
	Role                 Role            `json:"role"`
	Holder               string          `json:"holder"`
	Stale                bool            `json:"stale"`
	Transitions          int32           `json:"transitions"`
	LeaseDurationSeconds int32           `json:"leaseDurationSeconds"`
	Now                  int64           `json:"now"`
	ObservedAt           int64           `json:"observedAt"`
	ObservedExpiry       int64           `json:"observedExpiry"`
	RecordHolder         string          `json:"recordHolder"`
	RecordRenewTime      int64           `json:"recordRenewTime"`
	RecordExpiry         int64           `json:"recordExpiry"`
	ResourceVersion      string          `json:"resourceVersion"`
	RenewDeadline        int64           `json:"renewDeadline"`
	RenewRound           bool            `json:"renewRound"`
	NextRetry            int64           `json:"nextRetry"`
	LastError            string          `json:"lastError"`
	StopReason           string          `json:"stopReason"`
	Coordinated          bool            `json:"coordinated"`
	BinaryVersion        string          `json:"binaryVersion"`
	EmulationVersion     string          `json:"emulationVersion"`
	Strategy             string          `json:"strategy"`
	PreferredHolder      string          `json:"preferredHolder"`
	Timings              timingsJSON     `json:"timings"`
	Faults               tabproto.Faults `json:"faults"`
	ActiveFaults         []string        `json:"activeFaults"`
	ActiveFaultsMsg      []tabproto.Msg  `json:"activeFaultsMsg"`
	Log                  []logEntryJSON  `json:"log"`
}

type timingsJSON struct {
	LeaseDurationMs int64 `json:"leaseDurationMs"`
	RenewDeadlineMs int64 `json:"renewDeadlineMs"`
	RetryPeriodMs   int64 `json:"retryPeriodMs"`
	ReleaseOnCancel bool  `json:"releaseOnCancel"`
	StopAfterLoss   bool  `json:"stopAfterLoss"`
}

type logEntryJSON struct {
	At    int64         `json:"at"`
	Kind  LogKind       `json:"kind"`
	Text  string        `json:"text"`
	Msg   *tabproto.Msg `json:"msg,omitempty"`
	Count int           `json:"count"`
}

func unixMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// MarshalJSON writes the snapshot in the form the worker posts to the page
// (see Worker).
func (s Snapshot) MarshalJSON() ([]byte, error) {
	j := snapshotJSON{
		Version:              s.Version,
		Identity:             s.Identity,
		Namespace:            s.Namespace,
		Lease:                s.Lease,
		State:                s.State,
		Role:                 s.Role,
		Holder:               s.Holder,
		Stale:                s.Stale,
		Transitions:          s.Transitions,
		LeaseDurationSeconds: s.LeaseDurationSeconds,
		Now:                  unixMs(s.Now),
		ObservedAt:           unixMs(s.ObservedAt),
		ObservedExpiry:       unixMs(s.ObservedExpiry),
		RecordHolder:         s.RecordHolder,
		RecordRenewTime:      unixMs(s.RecordRenewTime),
		RecordExpiry:         unixMs(s.RecordExpiry),
		ResourceVersion:      s.ResourceVersion,
		RenewDeadline:        unixMs(s.RenewDeadline),
		RenewRound:           s.RenewRound,
		NextRetry:            unixMs(s.NextRetry),
		LastError:            s.LastError,
		StopReason:           s.StopReason,
		Coordinated:          s.Coordinated,
		BinaryVersion:        s.BinaryVersion,
		EmulationVersion:     s.EmulationVersion,
		Strategy:             s.Strategy,
		PreferredHolder:      s.PreferredHolder,
		Timings: timingsJSON{
			LeaseDurationMs: s.Timings.LeaseDuration.Milliseconds(),
			RenewDeadlineMs: s.Timings.RenewDeadline.Milliseconds(),
			RetryPeriodMs:   s.Timings.RetryPeriod.Milliseconds(),
			ReleaseOnCancel: s.Timings.ReleaseOnCancel,
			StopAfterLoss:   s.Timings.StopAfterLoss,
		},
		Faults:          s.Faults,
		ActiveFaults:    tabproto.Words(s.Faults.Describe(), "en"),
		ActiveFaultsMsg: s.Faults.Describe(),
		Log:             make([]logEntryJSON, len(s.Log)),
	}
	for i, e := range s.Log {
		j.Log[i] = logEntryJSON{At: unixMs(e.At), Kind: e.Kind, Text: e.Text, Msg: msgOrNil(e.Msg), Count: e.Count}
	}
	return json.Marshal(j)
}

// msgOrNil is m, nil when it is no message.
func msgOrNil(m tabproto.Msg) *tabproto.Msg {
	if m.IsZero() {
		return nil
	}
	return &m
}

// String is a one-line summary, for test failures.
func (s Snapshot) String() string {
	return fmt.Sprintf("%s: state=%s role=%s holder=%q transitions=%d rv=%s", s.Identity, s.State, s.Role, s.Holder, s.Transitions, s.ResourceVersion)
}

// Report is what the tab tells the server's tab hub about itself: the
// snapshot in the tab protocol's words, with the newest decision.
func (s Snapshot) Report() tabproto.Report {
	r := tabproto.Report{
		Identity:         s.Identity,
		Namespace:        s.Namespace,
		Lease:            s.Lease,
		State:            s.State,
		Role:             s.Role,
		Holder:           s.Holder,
		Faults:           s.Faults,
		ActiveFaults:     tabproto.Words(s.Faults.Describe(), "en"),
		Coordinated:      s.Coordinated,
		BinaryVersion:    s.BinaryVersion,
		EmulationVersion: s.EmulationVersion,
		Strategy:         s.Strategy,
		PreferredHolder:  s.PreferredHolder,
		Clock:            unixMs(s.Now),
		RoleSince:        unixMs(s.RoleSince),
		Timers:           s.timers(),
		Flights:          s.Flights,
	}
	r.Faults.PausedSince = 0 // the page's alone: a report has never carried it
	if len(s.Log) > 0 {
		e := s.Log[0]
		r.LastLog = tabproto.LogLine{At: unixMs(e.At), Kind: string(e.Kind), Text: e.Text, Msg: msgOrNil(e.Msg)}
	}
	return r
}

// timers are the snapshot's running timers from its moment (Now), for the stage; nil when
// the candidate is stopped.
func (s Snapshot) timers() *tabproto.Timers {
	if s.Now.IsZero() || s.State == tabproto.StateStopped {
		return nil
	}
	in := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.Sub(s.Now).Milliseconds()
	}
	t := &tabproto.Timers{
		ExpiresInMs:     in(s.ObservedExpiry),
		RetryInMs:       in(s.NextRetry),
		LeaseMs:         s.Timings.LeaseDuration.Milliseconds(),
		RenewDeadlineMs: s.Timings.RenewDeadline.Milliseconds(),
		RetryPeriodMs:   s.Timings.RetryPeriod.Milliseconds(),
	}
	if s.Role == RoleLeader {
		t.RenewByMs = in(s.RenewDeadline)
	}
	return t
}
