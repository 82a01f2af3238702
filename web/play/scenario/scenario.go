// Package scenario runs leaselab's guided lessons: the classic lease incidents (a leader that
// crashes, pauses, loses its network or its sense of time) as scripts of narrated steps,
// played by candidates that need no audience.
//
// A run's candidates are the browser tab's candidate (wasm/candidate), natively, each with its
// own simulated clock and network, writing through the server's own API in a namespace of the
// run. A step says what to look at and why, injects its faults as it begins, and says what
// must be true before the next step is offered ("until bob's clock says the lease expired").
// A run is seeded: the candidates' jitter comes from the seed, so the same seed gives the
// same sequence of events on a virtual clock. Every clock of a run goes at the run's speed.
package scenario

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// Scenario is one lesson: its cast, its timings and its script.
type Scenario struct {
	// Name is the scenario's URL name (/scenarios/{name}).
	Name    string
	Title   i18n.Text
	Summary i18n.Text
	// Teaches is what the lesson teaches, in one line: the library lists it beside the title.
	Teaches i18n.Text
	// Incident is the address of the upstream issue, pull request or documentation the lesson
	// retells ("" for none): the page links it, so that a reader can check the story.
	Incident string
	// Lease is the name of the lease the cast competes for, in the run's namespace.
	Lease string
	// LeaseDuration, RenewDeadline and RetryPeriod are the cast's timings, unless a member
	// says otherwise.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Coordinated runs the cast in Coordinated Leader Election: the server's controller picks
	// the holder among their LeaseCandidates.
	Coordinated bool
	// Room makes the room the cast: the candidate tabs on the lesson's lease (Options.Room), or,
	// without a room, its Cast, which then plays the room (arena.go). It runs at 1× only.
	Room bool
	// Namespace, when set, is where every run of the lesson plays, whatever its seed: the
	// arena's, shared by the room, which a run neither clears nor deletes.
	Namespace string
	Cast      []Member
	Steps     []Step
	// Claims are what the narration says the run shows, as data (claims.go): the tests check
	// them at every speed and seed the page offers, and the page says whether they held.
	Claims []Claim
	// Ledger gives the lesson a shared resource that its leaders' work writes through the API
	// (ledger.go): every write, and what came of it, is shown and checked.
	Ledger bool
	// Length is how long a run takes at 1×, from Start to its last step with Next taken as soon
	// as it is offered (TestLessonLengths keeps it true); reading and talk come on top.
	Length time.Duration
	// OfferedSeeds are the seeds the page offers, its default first; nil offers DefaultSeeds.
	OfferedSeeds []uint64
}

// Member is one candidate of a scenario's cast.
type Member struct {
	// Name is the member's name in the run (its card, its events, the script's handle on it)
	// when it is not its Identity: two processes that share an identity are two members.
	Name     string
	Identity string
	// Joins is how long after the start (scenario time) the member starts; members start one
	// after another so that who leads first does not depend on a race.
	Joins time.Duration
	// Absent members do not start with the run: a step brings them in (Join).
	Absent bool
	// RenewDeadline, when set, replaces the scenario's for this member.
	RenewDeadline time.Duration
	// ReleaseOnCancel is client-go's option of the same name.
	ReleaseOnCancel bool
	// RequestTimeout and WaitsOutRenewals are the member's client and elector, when not
	// today's client-go's (candidate.Config): an elector that waits for its renewal however long
	// it takes, and a client without a timeout.
	RequestTimeout   time.Duration
	WaitsOutRenewals bool
	// StopAfterLoss leaves the member stopped once it has lost the lease, as a program that
	// calls client-go's Run once and neither loops nor exits when it returns: its process lives
	// on and never competes again. By default a member starts over, as a supervised process.
	StopAfterLoss bool
	// BinaryVersion and EmulationVersion, in a coordinated scenario.
	BinaryVersion, EmulationVersion string
}

// name is the member's name in the run: its Name, or its Identity when it has none.
func (m Member) name() string {
	if m.Name != "" {
		return m.Name
	}
	return m.Identity
}

// Step is one sentence of the lesson.
type Step struct {
	// Say is the narration: what to look at and why.
	Say i18n.Text
	// Tell, in a room lesson, says after Say what the room's tabs did, from what the run saw.
	Tell func(w *World) i18n.Text
	// Do injects the step's faults as it begins.
	Do func(r *Actions)
	// Until must be true before the next step is offered; nil offers it at once.
	Until func(w *World) bool
	// Waiting says what the step waits for while Until is false.
	Waiting i18n.Text
	// Ask, when set, is asked before the step runs: the room predicts, the instructor
	// reveals the answer, and only then are the step's faults injected (predict, then watch).
	Ask *Question
}

// Question is what a step asks the room before it runs.
type Question struct {
	// Ask sets the scene and asks; it stands in for the step's narration until the reveal,
	// which would give the answer away.
	Ask i18n.Text
	// Choices are the answers offered, two to four; Answer is the right one's index.
	Choices []i18n.Text
	Answer  int
	// Why says why the answer is right, at the reveal.
	Why i18n.Text
	// Shown are the claims by which the run shows the answer: the tests check them at every
	// speed and seed the page offers, so that a lesson's answer is what its run does.
	Shown []Claim
}

// check refuses a question that cannot be asked.
func (q *Question) check() error {
	if q.Ask.En == "" || q.Ask.Zh == "" || q.Why.En == "" || q.Why.Zh == "" {
		return errors.New("its question or its answer's reason is missing a language")
	}
	if len(q.Choices) < 2 || len(q.Choices) > 4 || q.Answer < 0 || q.Answer >= len(q.Choices) {
		return fmt.Errorf("%d choices with answer %d: want two to four, the answer among them", len(q.Choices), q.Answer)
	}
	for _, c := range q.Choices {
		if c.En == "" || c.Zh == "" {
			return errors.New("a choice is missing a language")
		}
	}
	if len(q.Shown) == 0 {
		return errors.New("nothing on the run shows its answer")
	}
	return nil
}

// names of scenarios and identities are URL path segments and parts of a namespace.
var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// check refuses a scenario that cannot run: a slip in the library, caught by its tests.
func (s *Scenario) check() error {
	if !nameRE.MatchString(s.Name) {
		return fmt.Errorf("scenario name %q is not a DNS label", s.Name)
	}
	if len(s.Steps) == 0 || len(s.Cast) == 0 {
		return fmt.Errorf("scenario %s has no steps or no cast", s.Name)
	}
	if s.Teaches.En == "" || s.Teaches.Zh == "" {
		return fmt.Errorf("scenario %s: what it teaches is missing a language", s.Name)
	}
	seen := map[string]bool{}
	for _, m := range s.Cast {
		if !nameRE.MatchString(m.name()) || !nameRE.MatchString(m.Identity) || seen[m.name()] {
			return fmt.Errorf("scenario %s: member %q (identity %q) is not a unique DNS label", s.Name, m.name(), m.Identity)
		}
		seen[m.name()] = true
		if _, err := candidate.New(s.config(m, "", "ns"), candidate.Options{}); err != nil {
			return fmt.Errorf("scenario %s, %s: %w", s.Name, m.Identity, err)
		}
	}
	for i, st := range s.Steps {
		if st.Say.En == "" || st.Say.Zh == "" {
			return fmt.Errorf("scenario %s, step %d: narration missing a language", s.Name, i+1)
		}
		if st.Until != nil && (st.Waiting.En == "" || st.Waiting.Zh == "") {
			return fmt.Errorf("scenario %s, step %d: what it waits for is missing a language", s.Name, i+1)
		}
		if st.Ask != nil {
			if i == 0 {
				return fmt.Errorf("scenario %s: the first step cannot ask, it runs at Start", s.Name)
			}
			if err := st.Ask.check(); err != nil {
				return fmt.Errorf("scenario %s, step %d: %w", s.Name, i+1, err)
			}
		}
	}
	return nil
}

// config is the candidate configuration of member m.
func (s *Scenario) config(m Member, baseURL, namespace string) candidate.Config {
	cfg := candidate.Config{
		BaseURL:          baseURL,
		Namespace:        namespace,
		LeaseName:        s.Lease,
		Identity:         m.Identity,
		LeaseDuration:    s.LeaseDuration,
		RenewDeadline:    s.RenewDeadline,
		RetryPeriod:      s.RetryPeriod,
		ReleaseOnCancel:  m.ReleaseOnCancel,
		StopAfterLoss:    m.StopAfterLoss,
		RequestTimeout:   m.RequestTimeout,
		WaitsOutRenewals: m.WaitsOutRenewals,
		// Unless StopAfterLoss, a member that loses the lease starts over as a follower, as a
		// supervised process.
		Coordinated:      s.Coordinated,
		BinaryVersion:    m.BinaryVersion,
		EmulationVersion: m.EmulationVersion,
	}
	if m.RenewDeadline > 0 {
		cfg.RenewDeadline = m.RenewDeadline
	}
	return cfg
}

// World is what a step's condition looks at: the lease as the server has it, every member's
// own view, and the time, all on the run's clock.
type World struct {
	// Now is the run's clock; StepStarted when the current step began.
	Now         time.Time
	StepStarted time.Time
	// Lease is the server's record; nil while there is none.
	Lease *coordinationv1.Lease
	// Members are the running members' snapshots (stopped ones included), by name.
	Members map[string]candidate.Snapshot
	// Notes holds what the script noted (Actions.Note), by key.
	Notes map[string]string
	// Started is when the run started; Events what it saw since.
	Started time.Time
	Events  []Event

	run *Run
}

// Holder is the lease's holderIdentity ("" when free or absent).
func (w *World) Holder() string {
	if w.Lease == nil || w.Lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *w.Lease.Spec.HolderIdentity
}

// Leads reports whether member id believes it leads.
func (w *World) Leads(id string) bool {
	s, ok := w.Members[id]
	return ok && s.Role == candidate.RoleLeader
}

// Leaders lists the members that believe they lead, sorted.
func (w *World) Leaders() []string {
	var out []string
	for id, s := range w.Members {
		if s.Role == candidate.RoleLeader {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// SeesExpired reports whether member id's own clock says the lease it observed has expired:
// what client-go acts on. It can be true for a moment only (the try that sees the expiry may
// take the lease), which a run looking late misses: a step waiting on it also ends on what
// follows it, as leader-crash's ends on a takeover.
func (w *World) SeesExpired(id string) bool {
	s, ok := w.Members[id]
	return ok && !s.ObservedExpiry.IsZero() && !s.Now.Before(s.ObservedExpiry)
}

// For reports whether d has passed since the step began.
func (w *World) For(d time.Duration) bool { return !w.Now.Before(w.StepStarted.Add(d)) }

// Overlaps is the split-brain checker's verdict on the run's lease so far: the record's
// changes against what every member believed.
func (w *World) Overlaps() []judge.Overlap { return w.run.overlaps() }

// PastLease are the intervals in which a member led after its lease ran out by the others'
// count, nobody else holding it (judge.PastLease), from the run's own record of the lease.
func (w *World) PastLease() []judge.Overlap {
	return judge.PastLease(w.run.sc.Lease, w.run.changes, w.run.views, w.Now)
}

// Actions are what a step may do as it begins.
type Actions struct {
	run *Run
}

// Member returns member id's candidate, for its faults and commands.
func (a *Actions) Member(id string) *candidate.Candidate {
	c := a.run.member(id)
	if c == nil {
		panic(fmt.Sprintf("scenario %s: no member %q", a.run.sc.Name, id))
	}
	return c
}

// Join starts an absent member.
func (a *Actions) Join(id string) { a.run.join(id) }

// Leader returns the identity the lease names as the step begins.
func (a *Actions) Leader() string { return a.run.holderNow() }

// KeepWorking makes member id believe it still leads for d after it stops leading: its work,
// started when it began leading, does not watch the context that ends it (client-go's
// OnStoppedLeading is called, the work goes on).
func (a *Actions) KeepWorking(id string, d time.Duration) { a.run.keepWorking(id, d) }

// Fence turns fencing on (or off) for the ledger's writes to come: each carries its writer's
// token and is refused when the ledger has taken a newer one.
func (a *Actions) Fence(on bool) {
	if a.run.ledger == nil {
		panic(fmt.Sprintf("scenario %s has no ledger to fence", a.run.sc.Name))
	}
	a.run.ledger.setFenced(on)
}

// Outage takes the API server away from every member at once (candidate.PartitionHang: their
// requests hang; candidate.PartitionFail: they are refused), or brings it back
// (candidate.PartitionNone).
func (a *Actions) Outage(mode candidate.PartitionMode) {
	a.run.outage.set(mode)
	a.run.mu.Lock()
	a.run.changedLocked()
	a.run.mu.Unlock()
}

// Note keeps value under key, for later steps and conditions (World.Notes).
func (a *Actions) Note(key, value string) { a.run.note(key, value) }

// Noted returns what a step noted under key.
func (a *Actions) Noted(key string) string { return a.run.noted(key) }

// Since returns when the first event of kind and what happened at or after from (the run's
// clock), and whether one did.
func (w *World) Since(from time.Time, kind, what string) (time.Time, bool) {
	for _, e := range w.Events {
		at := w.Started.Add(e.At)
		if e.Kind == kind && e.What == what && !at.Before(from) {
			return at, true
		}
	}
	return time.Time{}, false
}

// Effects are the ledger's writes so far (none in a lesson without a ledger).
func (w *World) Effects() []Effect {
	if w.run.ledger == nil {
		return nil
	}
	return w.run.ledger.list()
}

// StepAt returns when step n (from 1) began, and whether it has.
func (w *World) StepAt(n int) (time.Time, bool) { return w.Since(w.Started, "step", fmt.Sprint(n)) }
