package election

// The policy: pure functions of (candidates, lease, now) that the controller's loop calls. They
// read nothing and write nothing; each returns a human reason with its answer.

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/web/api/kinds/coordinationv1alpha1"
)

// Candidate is a LeaseCandidate as the controller reads it (the v1beta1 schema, which v1alpha2
// shares and in which leaselab stores every version).
type Candidate = coordinationv1beta1.LeaseCandidate

// Timing holds the constants the policy depends on. The zero value is not useful; start from
// DefaultTiming.
type Timing struct {
	// ElectionDuration is how long a ping waits for its answer, and how recent a renewTime must
	// be for a candidate to count as having answered (kube-apiserver: 5s).
	ElectionDuration time.Duration
	// CandidateValidDuration is how long a candidate counts without renewing; older candidates
	// are ignored and garbage-collected, and half of it forces a new election (30m).
	CandidateValidDuration time.Duration
	// LeaseDurationSeconds is the leaseDurationSeconds written with a new holder (5).
	LeaseDurationSeconds int32
}

// DefaultTiming returns kube-apiserver's constants.
func DefaultTiming() Timing {
	return Timing{
		ElectionDuration:       5 * time.Second,
		CandidateValidDuration: 30 * time.Minute,
		LeaseDurationSeconds:   5,
	}
}

// ConflictError reports candidates at the same (highest) binary version that ask for different
// strategies. The Lease is left alone until they agree.
type ConflictError struct {
	// First and Second name the two candidates; FirstStrategy and SecondStrategy are theirs.
	First, Second                 string
	FirstStrategy, SecondStrategy coordinationv1.CoordinatedLeaseStrategy
}

// Error returns kube-apiserver's message for the conflict.
func (e *ConflictError) Error() string { return e.Says().English() }

// Says is kube-apiserver's message for the conflict, as a sentence.
func (e *ConflictError) Says() Said {
	return say("election.conflictError", strconv.Quote(e.First), strconv.Quote(e.Second), e.FirstStrategy, e.SecondStrategy)
}

// parseVersion parses a version leniently, as kube-apiserver does (a leading "v" is allowed,
// a missing minor or patch is 0, leading zeros are dropped).
func parseVersion(s string) (semver.Version, bool) {
	v, err := semver.ParseTolerant(s)
	return v, err == nil
}

// versionOrZero is parseVersion with 0.0.0 for what does not parse.
func versionOrZero(s string) semver.Version {
	v, _ := parseVersion(s)
	return v
}

// byName returns a copy of cands sorted by name, so that every answer is the same whatever
// order the informer's cache lists them in.
func byName(cands []*Candidate) []*Candidate {
	out := slices.Clone(cands)
	slices.SortFunc(out, func(a, b *Candidate) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func names(cands []*Candidate) Said {
	ns := make([]string, len(cands))
	for i, c := range cands {
		ns[i] = c.Name
	}
	return list(ns)
}

// CandidateExpired reports whether a candidate stopped renewing: no renewTime, or a renewTime
// older than validFor.
func CandidateExpired(c *Candidate, now time.Time, validFor time.Duration) bool {
	return c.Spec.RenewTime == nil || c.Spec.RenewTime.Add(validFor).Before(now)
}

// Admissible returns, sorted by name, the candidates for the Lease named lease that have renewed
// within t.CandidateValidDuration (step 1 of kube-apiserver's reconcile). The others are
// returned as expired; the garbage collector deletes them.
func Admissible(all []*Candidate, lease string, now time.Time, t Timing) (admissible, expired []*Candidate) {
	for _, c := range byName(all) {
		if c.Spec.LeaseName != lease {
			continue
		}
		if CandidateExpired(c, now, t.CandidateValidDuration) {
			expired = append(expired, c)
			continue
		}
		admissible = append(admissible, c)
	}
	return admissible, expired
}

// LeaseExpired reports whether a Lease has expired by the server's clock: no renewTime, no
// leaseDurationSeconds, or renewTime + leaseDurationSeconds before now. Unlike client-go, it
// trusts the object's timestamps.
func LeaseExpired(l *coordinationv1.Lease, now time.Time) bool {
	return l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil ||
		l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second).Before(now)
}

// holderOf returns the Lease's holderIdentity, "" when nil.
func holderOf(l *coordinationv1.Lease) string {
	if l == nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// StrategyChoice is the strategy the candidates settle on, and why (Reason in English, Says
// as a sentence).
type StrategyChoice struct {
	Strategy coordinationv1.CoordinatedLeaseStrategy
	Reason   string
	Says     Said
}

// chose is the choice of strategy s, because of why.
func chose(s coordinationv1.CoordinatedLeaseStrategy, why Said) StrategyChoice {
	return StrategyChoice{Strategy: s, Reason: why.English(), Says: why}
}

// ResolveStrategy settles the strategy of a set of candidates the v1beta1 way: the candidates
// at the highest binaryVersion decide (an unparsable version counts as 0.0.0); if two of them
// ask for different strategies, it returns a *ConflictError with kube-apiserver's message.
//
// kube-apiserver walks the candidates in its cache's order, so there a disagreement among older
// binaries can also be reported, depending on that order. Here only the highest binary version
// counts, which is the rule the API documents ("the strategy provided by the candidate with the
// latest BinaryVersion will be used; if there is still conflict, this is a user error"), and the
// answer does not depend on order. It returns an error for an empty list.
//
// When any candidate was written through v1alpha1, the v1alpha1 rules decide instead
// (ResolvePreferredStrategies, over every candidate's list; a newer candidate's list is its one
// strategy), and a disagreement is a *StrategyDisagreementError.
func ResolveStrategy(cands []*Candidate) (StrategyChoice, error) {
	if len(cands) == 0 {
		return StrategyChoice{}, errorf("election.noCandidates")
	}
	sorted := byName(cands)
	if lists, alpha1 := preferredLists(sorted); alpha1 {
		return ResolvePreferredStrategies(lists)
	}
	top := versionOrZero(sorted[0].Spec.BinaryVersion)
	for _, c := range sorted[1:] {
		if v := versionOrZero(c.Spec.BinaryVersion); v.GT(top) {
			top = v
		}
	}
	var decider *Candidate
	var atTop []*Candidate
	for _, c := range sorted {
		if !versionOrZero(c.Spec.BinaryVersion).EQ(top) {
			continue
		}
		atTop = append(atTop, c)
		if decider == nil {
			decider = c
			continue
		}
		if c.Spec.Strategy != decider.Spec.Strategy {
			return StrategyChoice{}, &ConflictError{
				First: decider.Name, Second: c.Name,
				FirstStrategy: decider.Spec.Strategy, SecondStrategy: c.Spec.Strategy,
			}
		}
	}
	s := decider.Spec.Strategy
	if len(sorted) == 1 {
		return chose(s, say("election.strategyOnly", s, decider.Name)), nil
	}
	if !slices.ContainsFunc(sorted, func(c *Candidate) bool { return c.Spec.Strategy != s }) {
		return chose(s, say("election.strategyEvery", s)), nil
	}
	return chose(s, say("election.strategyTop", s, names(atTop), top)), nil
}

// preferredLists returns every candidate's preferred strategies as v1alpha1 sees them, and
// whether any candidate was written through v1alpha1.
func preferredLists(cands []*Candidate) ([]PreferredStrategies, bool) {
	lists := make([]PreferredStrategies, len(cands))
	any := false
	for i, c := range cands {
		list, alpha1 := coordinationv1alpha1.PreferredStrategies(c)
		lists[i] = PreferredStrategies{Candidate: c.Name, Strategies: list}
		any = any || alpha1
	}
	return lists, any
}

// IsStrategyConflict reports whether err says the candidates disagree on the strategy, by the
// rules of either version (*ConflictError or *StrategyDisagreementError): the Lease is then
// left alone until they agree.
func IsStrategyConflict(err error) bool {
	var conflict *ConflictError
	var disagreement *StrategyDisagreementError
	return errors.As(err, &conflict) || errors.As(err, &disagreement)
}

// Pick is the winner of an election and why it won (Reason in English, Says as a sentence).
type Pick struct {
	// Winner is nil when no candidate has parsable versions.
	Winner *Candidate
	Reason string
	Says   Said
}

// picked is the pick of w, because of why.
func picked(w *Candidate, why Said) Pick { return Pick{Winner: w, Reason: why.English(), Says: why} }

// rank is a candidate with its parsed versions.
type rank struct {
	c                 *Candidate
	emulation, binary semver.Version
}

// compareRanks orders candidates for OldestEmulationVersion: lowest emulationVersion, then
// lowest binaryVersion, then earliest creationTimestamp, then name (kube-apiserver keeps its
// cache's order there, which is not deterministic).
func compareRanks(a, b rank) int {
	if c := a.emulation.Compare(b.emulation); c != 0 {
		return c
	}
	if c := a.binary.Compare(b.binary); c != 0 {
		return c
	}
	if c := a.c.CreationTimestamp.Time.Compare(b.c.CreationTimestamp.Time); c != 0 {
		return c
	}
	return strings.Compare(a.c.Name, b.c.Name)
}

// PickOldestEmulationVersion picks the holder under the OldestEmulationVersion strategy, as
// kube-apiserver's pickBestLeaderOldestEmulationVersion does: candidates whose emulationVersion
// or binaryVersion does not parse (leniently) are skipped; the lowest emulationVersion wins, then
// the lowest binaryVersion, then the earliest creationTimestamp; a full tie goes to the first
// name. The reason names the runner-up and what decided
// ("picked cand-b: emulation 1.35.0 < 1.36.0 of cand-a").
func PickOldestEmulationVersion(cands []*Candidate) Pick {
	var ranks []rank
	var skipped []Said
	for _, c := range byName(cands) {
		e, eok := parseVersion(c.Spec.EmulationVersion)
		b, bok := parseVersion(c.Spec.BinaryVersion)
		switch {
		case !eok:
			skipped = append(skipped, say("election.skippedEmulation", c.Name, strconv.Quote(c.Spec.EmulationVersion)))
			continue
		case !bok:
			skipped = append(skipped, say("election.skippedBinary", c.Name, strconv.Quote(c.Spec.BinaryVersion)))
			continue
		}
		ranks = append(ranks, rank{c: c, emulation: e, binary: b})
	}
	var tail Said
	if len(skipped) > 0 {
		tail = say("election.skipped", listSaid(skipped))
	}
	if len(ranks) == 0 {
		return picked(nil, say("election.noParsable", tail))
	}
	slices.SortStableFunc(ranks, compareRanks)
	w := ranks[0]
	if len(ranks) == 1 {
		return picked(w.c, say("election.pickedOnly", w.c.Name, w.emulation, w.binary, tail))
	}
	r := ranks[1]
	var why Said
	switch {
	case !w.emulation.EQ(r.emulation):
		why = say("election.whyEmulation", w.emulation, r.emulation, r.c.Name)
	case !w.binary.EQ(r.binary):
		why = say("election.whyBinary", w.emulation, r.c.Name, w.binary, r.binary)
	case !w.c.CreationTimestamp.Equal(&r.c.CreationTimestamp):
		why = say("election.whyCreated", r.c.Name, w.emulation, w.binary,
			w.c.CreationTimestamp.UTC().Format(time.RFC3339), r.c.CreationTimestamp.UTC().Format(time.RFC3339))
	default:
		why = say("election.whyName", r.c.Name, w.emulation, w.binary)
	}
	return picked(w.c, say("election.picked", w.c.Name, why, tail))
}

// Need says whether an election is needed and why (Reason in English, Says as a sentence).
type Need struct {
	Needed bool
	Reason string
	Says   Said
	// Best is the candidate that should hold the Lease when Needed is false because it already
	// does, or when a better candidate than the holder is the reason; otherwise nil.
	Best *Candidate
}

// ElectionNeeded decides step 2 of kube-apiserver's reconcile, for the admissible candidates of
// a Lease (nil when it does not exist). An election is needed when the Lease is missing, expired
// by now, or has no holder; when a candidate has not renewed for half of
// t.CandidateValidDuration (a periodic election refreshes every candidate); or when the
// OldestEmulationVersion winner is not the holder. When the candidates disagree on the
// strategy it returns the conflict (IsStrategyConflict), and no election.
func ElectionNeeded(cands []*Candidate, lease *coordinationv1.Lease, now time.Time, t Timing) (Need, error) {
	needed := func(why Said) Need { return Need{Needed: true, Reason: why.English(), Says: why} }
	switch {
	case lease == nil:
		return needed(say("election.noLease")), nil
	case lease.Spec.RenewTime == nil:
		return needed(say("election.noRenewTime")), nil
	case lease.Spec.LeaseDurationSeconds == nil:
		return needed(say("election.noDuration")), nil
	case LeaseExpired(lease, now):
		return needed(say("election.expired", now.Sub(lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds)*time.Second)).Round(time.Millisecond))), nil
	case holderOf(lease) == "":
		return needed(say("election.noHolder")), nil
	}
	for _, c := range byName(cands) {
		if c.Spec.RenewTime != nil && c.Spec.RenewTime.Add(t.CandidateValidDuration/2).Before(now) {
			return needed(say("election.notRenewed", c.Name, t.CandidateValidDuration/2)), nil
		}
	}
	notNeeded := func(why Said, best *Candidate) Need { return Need{Reason: why.English(), Says: why, Best: best} }
	choice, err := ResolveStrategy(cands)
	if err != nil {
		return notNeeded(ErrorSays(err), nil), err
	}
	if choice.Strategy != coordinationv1.OldestEmulationVersion {
		return notNeeded(say("election.leftToOther", choice.Says), nil), nil
	}
	pick := PickOldestEmulationVersion(cands)
	holder := holderOf(lease)
	switch {
	case pick.Winner == nil:
		return notNeeded(pick.Says, nil), nil
	case pick.Winner.Name == holder:
		return notNeeded(say("election.holderBest", holder, pick.Says), pick.Winner), nil
	}
	n := needed(say("election.holderNotBest", holder, pick.Says))
	n.Best = pick.Winner
	return n, nil
}

// PingState is where a candidate stands in the ping/ack exchange.
type PingState int

const (
	// PingFresh: the candidate renewed within the election duration; it counts as answered.
	PingFresh PingState = iota + 1
	// PingWaiting: a ping is out, younger than the election duration, and not answered yet.
	PingWaiting
	// PingNeeded: the candidate must be pinged (never pinged, or its last ping was answered
	// and is older than the election duration).
	PingNeeded
	// PingUnanswered: its last ping timed out without an answer. It is not pinged again and
	// does not take part until it renews.
	PingUnanswered
)

func (s PingState) String() string {
	switch s {
	case PingFresh:
		return "fresh"
	case PingWaiting:
		return "waiting"
	case PingNeeded:
		return "needs ping"
	case PingUnanswered:
		return "unanswered"
	}
	return "unknown"
}

// answered reports whether the candidate renewed at or after its last ping.
func answered(c *Candidate) bool {
	return c.Spec.RenewTime != nil && c.Spec.PingTime != nil && !c.Spec.RenewTime.Before(c.Spec.PingTime)
}

// PingStateOf classifies one candidate at now, in kube-apiserver's order of checks (step 3).
// A candidate without renewTime is never PingNeeded: client-go's candidate helper would crash
// on the ping.
func PingStateOf(c *Candidate, now time.Time, electionDuration time.Duration) PingState {
	ping, renew := c.Spec.PingTime, c.Spec.RenewTime
	switch {
	case ping != nil && ping.Add(electionDuration).After(now) && !answered(c):
		return PingWaiting
	case renew != nil && renew.Add(electionDuration).After(now):
		return PingFresh
	case renew == nil:
		return PingUnanswered
	case ping == nil || (ping.Add(electionDuration).Before(now) && answered(c)):
		return PingNeeded
	}
	return PingUnanswered
}

// PingPlan is step 3 for a set of candidates.
type PingPlan struct {
	// ToPing are the candidates to ping now.
	ToPing []*Candidate
	// Waiting, Fresh and Unanswered name the others by state.
	Waiting, Fresh, Unanswered []string
}

// CanVote reports whether the election can go on to pick a holder: nothing to ping and no ping
// waiting for its answer.
func (p PingPlan) CanVote() bool { return len(p.ToPing) == 0 && len(p.Waiting) == 0 }

// PlanPings classifies every candidate (sorted by name) with PingStateOf.
func PlanPings(cands []*Candidate, now time.Time, electionDuration time.Duration) PingPlan {
	var p PingPlan
	for _, c := range byName(cands) {
		switch PingStateOf(c, now, electionDuration) {
		case PingNeeded:
			p.ToPing = append(p.ToPing, c)
		case PingWaiting:
			p.Waiting = append(p.Waiting, c.Name)
		case PingFresh:
			p.Fresh = append(p.Fresh, c.Name)
		default:
			p.Unanswered = append(p.Unanswered, c.Name)
		}
	}
	return p
}

// Acked returns, sorted by name, the candidates that renewed within electionDuration of now,
// the bound included (step 5): the electorate.
//
// kube-apiserver leaves the bound out. On a fake clock (a testing/synctest bubble) a candidate
// answers a ping at the very instant of the ping, and the controller, back after a requeue
// interval equal to the election duration (both 5 s by default), looks exactly at the bound:
// without it, the candidate that answered would not count, and with another one silent, the
// election would fail until the next periodic renewal, minutes later. On a real clock the bound
// is never hit exactly.
func Acked(cands []*Candidate, now time.Time, electionDuration time.Duration) []*Candidate {
	var out []*Candidate
	for _, c := range byName(cands) {
		if c.Spec.RenewTime != nil && !c.Spec.RenewTime.Add(electionDuration).Before(now) {
			out = append(out, c)
		}
	}
	return out
}

// Desired is the Lease an election wants: its strategy, and its holder when the strategy is
// OldestEmulationVersion (other strategies are left to other controllers: Holder is nil).
type Desired struct {
	Strategy             coordinationv1.CoordinatedLeaseStrategy
	Holder               *string
	LeaseDurationSeconds int32
	// Reason is why, in English; Says as a sentence.
	Reason string
	Says   Said
}

// DesiredLease runs the election among the acked candidates (steps 6 to 8). It returns the
// strategy conflict (IsStrategyConflict) when they disagree, and an error when none is acked
// or, for OldestEmulationVersion, none has parsable versions.
func DesiredLease(acked []*Candidate, t Timing) (Desired, error) {
	if len(acked) == 0 {
		return Desired{}, errorf("election.noAvailable")
	}
	choice, err := ResolveStrategy(acked)
	if err != nil {
		return Desired{}, err
	}
	d := Desired{Strategy: choice.Strategy, LeaseDurationSeconds: t.LeaseDurationSeconds}
	if choice.Strategy != coordinationv1.OldestEmulationVersion {
		d.Says = say("election.notHandled", choice.Says)
		d.Reason = d.Says.English()
		return d, nil
	}
	pick := PickOldestEmulationVersion(acked)
	if pick.Winner == nil {
		return Desired{}, errorf("election.noSuitable", pick.Says)
	}
	name := pick.Winner.Name
	d.Holder = &name
	d.Reason, d.Says = pick.Reason, pick.Says
	return d, nil
}

// NewLease is the Lease the controller creates when none exists.
func NewLease(namespace, name string, d Desired, now time.Time) *coordinationv1.Lease {
	strategy := d.Strategy
	duration := d.LeaseDurationSeconds
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: coordinationv1.LeaseSpec{
			Strategy:             &strategy,
			LeaseDurationSeconds: &duration,
			RenewTime:            &metav1.MicroTime{Time: now},
		},
	}
	if d.Holder != nil {
		holder := *d.Holder
		l.Spec.HolderIdentity = &holder
	}
	return l
}

// Action is what an update does to the holder of an existing Lease.
type Action int

const (
	// ActionNone leaves the holder alone.
	ActionNone Action = iota
	// ActionAssign sets the holder directly: the Lease had no holder, or expired with another.
	ActionAssign
	// ActionPrefer sets preferredHolder and lets the current holder step down.
	ActionPrefer
)

func (a Action) String() string {
	switch a {
	case ActionAssign:
		return "assign"
	case ActionPrefer:
		return "prefer"
	}
	return "none"
}

// LeaseUpdate is the change an election makes to an existing Lease.
type LeaseUpdate struct {
	// Lease is the updated copy; nil when nothing changes.
	Lease           *coordinationv1.Lease
	Action          Action
	StrategyChanged bool
	// Reason is what changes and why, in English; Says as a sentence.
	Reason string
	Says   Said
}

// PlanLeaseUpdate compares an existing Lease with the desired one (step 9, update half):
//   - a nil or different strategy is replaced;
//   - a desired holder is assigned directly when the Lease has no holder, or has expired by now
//     with another holder: holderIdentity set, preferredHolder, acquireTime cleared, renewTime
//     now, leaseDurationSeconds from d;
//   - otherwise a desired holder different from the current one becomes preferredHolder, and the
//     holder is expected to step down.
//
// kube-apiserver dereferences a nil holderIdentity in the last two checks; here a nil holder is
// the same as "".
func PlanLeaseUpdate(existing *coordinationv1.Lease, d Desired, now time.Time) LeaseUpdate {
	l := existing.DeepCopy()
	var u LeaseUpdate
	var parts []Said
	if l.Spec.Strategy == nil || *l.Spec.Strategy != d.Strategy {
		old := say("election.none")
		if l.Spec.Strategy != nil {
			old = same(string(*l.Spec.Strategy))
		}
		s := d.Strategy
		l.Spec.Strategy = &s
		u.StrategyChanged = true
		parts = append(parts, say("election.strategyWas", s, old))
	}
	holder := holderOf(existing)
	if d.Holder != nil {
		want := *d.Holder
		switch {
		case holder == "" || (LeaseExpired(existing, now) && holder != want):
			u.Action = ActionAssign
			l.Spec.HolderIdentity = &want
			l.Spec.PreferredHolder = nil
			l.Spec.RenewTime = &metav1.MicroTime{Time: now}
			duration := d.LeaseDurationSeconds
			l.Spec.LeaseDurationSeconds = &duration
			l.Spec.AcquireTime = nil
			if holder == "" {
				parts = append(parts, say("election.assignedNoHolder", want))
			} else {
				parts = append(parts, say("election.assignedExpired", want, holder))
			}
		case holder != want:
			if l.Spec.PreferredHolder == nil || *l.Spec.PreferredHolder != want {
				u.Action = ActionPrefer
				l.Spec.PreferredHolder = &want
				parts = append(parts, say("election.setPreferred", want, holder))
			}
		}
	}
	if len(parts) == 0 {
		u.Says = say("election.asWanted")
		u.Reason = u.Says.English()
		return u
	}
	u.Lease = l
	changes := parts[0]
	for _, p := range parts[1:] {
		changes = say("election.changes", changes, p)
	}
	why := d.Says
	if why.IsZero() {
		why = same(d.Reason) // a Desired made without its sentence
	}
	u.Says = say("election.because", changes, why)
	u.Reason = u.Says.English()
	return u
}
