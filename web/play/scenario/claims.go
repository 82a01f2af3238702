package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/said"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// A Claim is one thing a lesson's narration says its run shows, as data: the tests play every
// lesson at every speed its page offers, for each seed it offers, and check every claim against
// what the judge found, so that a lesson cannot say what its run did not do. The page lists
// the claims and, once the run has played its last step, whether each held.
type Claim struct {
	Kind ClaimKind
	// Who is the member the claim is about.
	Who string
	// Noted, when set, is the key under which a step noted the member the claim is about
	// (Actions.Note), instead of Who: a room lesson knows its cast only as it plays.
	Noted string
	// Cause is a split brain's cause (judge.Cause…).
	Cause string
	// Min and Max bound a length (0: no bound).
	Min, Max time.Duration
	// N is a count.
	N int
}

// ClaimKind says what a claim checks.
type ClaimKind string

// The kinds of claims.
const (
	// HandedOver: the lease ends held by a member other than Who.
	HandedOver ClaimKind = "handed-over"
	// EndsWith: the lease ends held by Who.
	EndsWith ClaimKind = "ends-with"
	// NoSplitBrain: the checker finds no interval of two believing they lead.
	NoSplitBrain ClaimKind = "no-split-brain"
	// SplitBrain: the checker finds Who believing it led beside another, for Cause, for at
	// least Min.
	SplitBrain ClaimKind = "split-brain"
	// Believers: at some moment at least N members believed they led at once.
	Believers ClaimKind = "believers"
	// PastLease: Who went on leading for at least Min after its lease ran out by the others'
	// count.
	PastLease ClaimKind = "past-lease"
	// TakeoverAfterRenewal: the first takeover from Who comes between Min and Max after the
	// last renewal of Who that the record shows.
	TakeoverAfterRenewal ClaimKind = "takeover-after-renewal"
	// TakeoverAfterStep: the first change of holder from Who after step N began comes between
	// Min and Max after it.
	TakeoverAfterStep ClaimKind = "takeover-after-step"
	// StepsDownFirst: Who stops believing it leads before the record names anyone else (the
	// first time after step N began, when N is set).
	StepsDownFirst ClaimKind = "steps-down-first"
	// Transitions: leaseTransitions ends at N.
	Transitions ClaimKind = "transitions"
	// SharedIdentity: at least N members whose identity is Who believe they lead at once, for
	// at least Min, while the record names Who: one identity, several leaders.
	SharedIdentity ClaimKind = "shared-identity"
	// NeverCompetesAgain: Who stops after leading (its Run returned) and, for at least Min
	// after, never follows or leads again.
	NeverCompetesAgain ClaimKind = "never-competes-again"
	// Leaderless: after the first leader, an interval of at least Min in which no member
	// believes it leads.
	Leaderless ClaimKind = "leaderless"
	// StepsDownAfterStep: Who, leading when step N began, stops believing it leads between Min
	// and Max after it.
	StepsDownAfterStep ClaimKind = "steps-down-after-step"
	// OneLeader: at the end, the record names a member that believes it leads, and no other
	// member believes it leads.
	OneLeader ClaimKind = "one-leader"
	// StaleWritesLand: at least N writes of Who's work land in the ledger without fencing
	// while the lease names another: damage.
	StaleWritesLand ClaimKind = "stale-writes-land"
	// StaleWritesRefused: with fencing, at least N writes of Who's work are refused (a 409,
	// then a newer token), and no fenced write of a stale leader lands.
	StaleWritesRefused ClaimKind = "stale-writes-refused"
)

// claimWords are how the lesson page states each kind of claim.
var claimWords = said.Register(map[string]said.Text{
	"claim.handed-over":            {En: "the lease passes from %s to another candidate", Zh: "租约从 %s 转到另一个候选者"},
	"claim.ends-with":              {En: "the lease ends with %s", Zh: "租约最终由 %s 持有"},
	"claim.no-split-brain":         {En: "no split brain: never two leaders at once", Zh: "没有脑裂：从不同时出现两个领导者"},
	"claim.split-brain":            {En: "a split brain of at least %s, with %s stale (%s)", Zh: "至少 %s 的脑裂，%s 已过时（%s）"},
	"claim.believers":              {En: "at least %d candidates believe they lead at once", Zh: "至少 %d 个候选者同时认为自己是领导者"},
	"claim.past-lease":             {En: "%s leads for at least %s after its lease ran out", Zh: "%s 在租约到期后仍领导了至少 %s"},
	"claim.takeover-after-renewal": {En: "the takeover comes %s to %s after %s's last renewal", Zh: "接管发生在 %[3]s 最后一次续约后的 %[1]s 到 %[2]s 之间"},
	"claim.takeover-after-step":    {En: "%s's successor takes over within %s of step %d", Zh: "%s 的继任者在第 %[3]d 步开始后 %[2]s 内接管"},
	"claim.steps-down-first":       {En: "%s steps down before anyone else holds the lease", Zh: "%s 在任何其他候选者持有租约之前就放弃领导"},
	"claim.transitions":            {En: "leaseTransitions ends at %d", Zh: "leaseTransitions 最终为 %d"},
	"claim.shared-identity":        {En: "%[2]d processes with the identity %[1]s believe they lead at once for at least %[3]s, while the record names %[1]s", Zh: "%[2]d 个身份标识同为 %[1]s 的进程同时认为自己是领导者，持续至少 %[3]s，而记录写的是 %[1]s"},
	"claim.never-competes-again":   {En: "%s stops once it has lost the lease, and never competes again (for at least %s)", Zh: "%s 失去租约后就停下，再也不参与竞选（至少 %s）"},
	"claim.leaderless":             {En: "nobody leads for at least %s", Zh: "至少 %s 内没有任何领导者"},
	"claim.steps-down-after-step":  {En: "%s stops leading %s to %s after step %d begins", Zh: "%[1]s 在第 %[4]d 步开始后 %[2]s 到 %[3]s 之间停止领导"},
	"claim.one-leader":             {En: "at the end, one candidate leads, and the record names it", Zh: "最后只有一个候选者在领导，且记录写的正是它"},
	"claim.stale-writes-land":      {En: "without fencing, at least %[2]d writes of stale %[1]s land in the ledger", Zh: "没有防护时，过期的 %[1]s 至少有 %[2]d 次写入落入账本"},
	"claim.stale-writes-refused":   {En: "with fencing, at least %[2]d writes of stale %[1]s are refused (409), and no stale write lands", Zh: "有防护时，过期的 %[1]s 至少有 %[2]d 次写入被拒绝（409），且没有任何过期的写入落入账本"},
})

// Says is the claim in the page's words.
func (c Claim) Says() i18n.Text {
	if c.Noted != "" { // the member as the lesson calls it, set in the sentence's language
		t := c.says(notedWho(c.Noted))
		t.Zh = said.Space(t.Zh)
		return t
	}
	return c.says(c.Who)
}

// says is the claim in the page's words, about who.
func (c Claim) says(who any) i18n.Text {
	key := "claim." + string(c.Kind)
	switch c.Kind {
	case SplitBrain:
		return i18n.Say(key, secs(c.Min), who, c.Cause)
	case PastLease:
		return i18n.Say(key, who, secs(c.Min))
	case TakeoverAfterRenewal:
		return i18n.Say(key, secs(c.Min), secs(c.Max), who)
	case TakeoverAfterStep:
		return i18n.Say(key, who, secs(c.Max), c.N)
	case Believers, Transitions:
		return i18n.Say(key, c.N)
	case StaleWritesLand, StaleWritesRefused:
		return i18n.Say(key, who, c.N)
	case SharedIdentity:
		return i18n.Say(key, who, c.N, secs(c.Min))
	case NeverCompetesAgain:
		return i18n.Say(key, who, secs(c.Min))
	case StepsDownAfterStep:
		return i18n.Say(key, who, secs(c.Min), secs(c.Max), c.N)
	case Leaderless:
		return i18n.Say(key, secs(c.Min))
	case NoSplitBrain, OneLeader:
		return i18n.Say(key)
	}
	return i18n.Say(key, who)
}

// secs is a length as the claims say it: "10 s", "1.5 s".
func secs(d time.Duration) string { return fmt.Sprintf("%g s", d.Seconds()) }

// Check returns nil when the claim holds in w, else what the run did instead.
func (c Claim) Check(w *World) error {
	if c.Noted != "" {
		if c.Who = w.Notes[c.Noted]; c.Who == "" {
			return fmt.Errorf("no step noted %q", c.Noted)
		}
	}
	switch c.Kind {
	case HandedOver:
		return holderOtherThan(c.Who)(w)
	case EndsWith:
		if h := w.Holder(); h != c.Who {
			return fmt.Errorf("the lease ends with %q, not %s", h, c.Who)
		}
	case NoSplitBrain:
		return noOverlap(w)
	case SplitBrain:
		return c.splitBrain(w.Overlaps(), w.Now)
	case Believers:
		for _, o := range w.Overlaps() {
			if len(o.Believers) >= c.N {
				return nil
			}
		}
		return fmt.Errorf("never %d believers at once: %s", c.N, overlapList(w.Overlaps(), w.Now))
	case PastLease:
		return c.pastLease(w.PastLease(), w.Now)
	case TakeoverAfterRenewal:
		return c.takeover(w.run.changes)
	case TakeoverAfterStep:
		return c.takeoverAfterStep(w)
	case StepsDownFirst:
		return c.stepsDownFirst(w)
	case StaleWritesLand, StaleWritesRefused:
		return c.staleWrites(w.Effects())
	case SharedIdentity:
		return c.sharedIdentity(w)
	case NeverCompetesAgain:
		return c.neverCompetesAgain(w)
	case Leaderless:
		return c.leaderless(w)
	case StepsDownAfterStep:
		return c.stepsDownAfterStep(w)
	case OneLeader:
		if ls := w.Leaders(); len(ls) != 1 || w.run.sc.identityOf(ls[0]) != w.Holder() {
			return fmt.Errorf("at the end %v believe they lead, and the record names %q", ls, w.Holder())
		}
	case Transitions:
		if n := len(w.run.changes); n == 0 || int(w.run.changes[n-1].Transitions) != c.N {
			return fmt.Errorf("leaseTransitions is not %d at the end: changes %+v", c.N, w.run.changes[max(0, n-1):])
		}
	default:
		return fmt.Errorf("unknown claim %q", c.Kind)
	}
	return nil
}

func (c Claim) splitBrain(overlaps []judge.Overlap, now time.Time) error {
	for _, o := range overlaps {
		if slices.Contains(o.Stale, c.Who) && o.Cause == c.Cause && o.Length(now) >= c.Min {
			return nil
		}
	}
	return fmt.Errorf("no split brain of %v or more with %s stale for %s: %s", c.Min, c.Who, c.Cause, overlapList(overlaps, now))
}

func (c Claim) pastLease(past []judge.Overlap, now time.Time) error {
	for _, o := range past {
		if o.Holder == c.Who && o.Length(now) >= c.Min {
			return nil
		}
	}
	return fmt.Errorf("%s never led %v or more past its lease: %s", c.Who, c.Min, overlapList(past, now))
}

// takeover checks the time from Who's last renewal to the first change naming another.
func (c Claim) takeover(changes []judge.Change) error {
	var last time.Time
	for _, ch := range changes {
		switch {
		case ch.Holder == c.Who:
			last = ch.At
		case ch.Holder != "" && !last.IsZero():
			d := ch.At.Sub(last)
			if d < c.Min || c.Max > 0 && d > c.Max {
				return fmt.Errorf("%s took over %v after %s's last renewal, outside %v to %v", ch.Holder, d, c.Who, c.Min, c.Max)
			}
			return nil
		}
	}
	return fmt.Errorf("nobody took over from %s", c.Who)
}

// takeoverAfterStep checks the time from step N's start to the first holder other than Who.
func (c Claim) takeoverAfterStep(w *World) error {
	began, ok := w.StepAt(c.N)
	if !ok {
		return fmt.Errorf("step %d never began", c.N)
	}
	for _, e := range w.Events {
		at := w.Started.Add(e.At)
		if e.Kind == "holder" && !at.Before(began) && e.What != c.Who && e.What != "(none)" {
			if d := at.Sub(began); d < c.Min || c.Max > 0 && d > c.Max {
				return fmt.Errorf("%s took over %v after step %d began, outside %v to %v", e.What, d, c.N, c.Min, c.Max)
			}
			return nil
		}
	}
	return fmt.Errorf("nobody took over from %s after step %d", c.Who, c.N)
}

// stepsDownFirst checks that Who's last role change to something else comes before the record
// first names another holder after Who held it.
func (c Claim) stepsDownFirst(w *World) error {
	from := w.Started
	if c.N > 0 {
		from, _ = w.StepAt(c.N)
	}
	held := false
	var gaveUp time.Time
	for _, e := range w.Events {
		at := w.Started.Add(e.At)
		switch {
		case from.IsZero() || at.Before(from):
			// Before step N: only whether Who holds the lease as it begins.
			if e.Kind == "holder" {
				held = e.What == c.Who
			}
		case e.Kind == "holder" && e.What == c.Who:
			held, gaveUp = true, time.Time{}
		case e.Kind == "role" && held && gaveUp.IsZero() && strings.HasPrefix(e.What, c.Who+" ") && e.What != c.Who+" leader":
			gaveUp = at
		case e.Kind == "holder" && held && e.What != c.Who && e.What != "(none)":
			if gaveUp.IsZero() {
				return fmt.Errorf("%s still led when %s took the lease", c.Who, e.What)
			}
			return nil
		}
	}
	return fmt.Errorf("nobody took the lease from %s", c.Who)
}

// sharedIdentity checks, from the run's events, the longest interval in which N or more
// members of identity Who believed they led while the record named Who.
func (c Claim) sharedIdentity(w *World) error {
	identity := map[string]string{}
	for _, m := range w.run.sc.Cast {
		identity[m.name()] = m.Identity
	}
	leading := map[string]bool{}
	holder := ""
	var since time.Time
	var longest time.Duration
	for _, e := range w.Events {
		at := w.Started.Add(e.At)
		switch e.Kind {
		case "holder":
			holder = e.What
		case "role":
			name, role, _ := strings.Cut(e.What, " ")
			leading[name] = role == string(candidate.RoleLeader)
		}
		n := 0
		for name, on := range leading {
			if on && identity[name] == c.Who {
				n++
			}
		}
		switch on := n >= c.N && holder == c.Who; {
		case on && since.IsZero():
			since = at
		case !on && !since.IsZero():
			longest, since = max(longest, at.Sub(since)), time.Time{}
		}
	}
	if !since.IsZero() {
		longest = max(longest, w.Now.Sub(since))
	}
	if longest < c.Min || longest == 0 {
		return fmt.Errorf("%d members of identity %s led at once under its name for %v at most, want %v", c.N, c.Who, longest, c.Min)
	}
	return nil
}

// neverCompetesAgain checks Who's role events: it led, then stopped, and no role followed.
func (c Claim) neverCompetesAgain(w *World) error {
	var led bool
	var stopped time.Time
	for _, e := range w.Events {
		name, role, _ := strings.Cut(e.What, " ")
		if e.Kind != "role" || name != c.Who {
			continue
		}
		switch {
		case role == string(candidate.RoleLeader):
			led, stopped = true, time.Time{}
		case role == "stopped" && led:
			stopped = w.Started.Add(e.At)
		case !stopped.IsZero():
			return fmt.Errorf("%s competed again (%s at %v)", c.Who, role, e.At)
		}
	}
	if stopped.IsZero() {
		return fmt.Errorf("%s never stopped after leading", c.Who)
	}
	if d := w.Now.Sub(stopped); d < c.Min {
		return fmt.Errorf("%s was seen stopped for %v only, want %v", c.Who, d, c.Min)
	}
	return nil
}

// leaderless checks, from the run's role events, the longest interval after the first leader
// in which no member believed it led.
func (c Claim) leaderless(w *World) error {
	leading := map[string]bool{}
	var since time.Time
	var longest time.Duration
	seen := false
	for _, e := range w.Events {
		if e.Kind != "role" {
			continue
		}
		name, role, _ := strings.Cut(e.What, " ")
		leading[name] = role == string(candidate.RoleLeader)
		n := 0
		for _, on := range leading {
			if on {
				n++
			}
		}
		seen = seen || n > 0
		switch at := w.Started.Add(e.At); {
		case seen && n == 0 && since.IsZero():
			since = at
		case n > 0 && !since.IsZero():
			longest, since = max(longest, at.Sub(since)), time.Time{}
		}
	}
	if !since.IsZero() {
		longest = max(longest, w.Now.Sub(since))
	}
	if longest < c.Min || longest == 0 {
		return fmt.Errorf("nobody led for %v at most, want %v", longest, c.Min)
	}
	return nil
}

// stepsDownAfterStep checks when Who, leading as step N began, stopped believing it led.
func (c Claim) stepsDownAfterStep(w *World) error {
	began, ok := w.StepAt(c.N)
	if !ok {
		return fmt.Errorf("step %d never began", c.N)
	}
	leading := false
	for _, e := range w.Events {
		name, role, _ := strings.Cut(e.What, " ")
		if e.Kind != "role" || name != c.Who {
			continue
		}
		at := w.Started.Add(e.At)
		if at.Before(began) {
			leading = role == string(candidate.RoleLeader)
			continue
		}
		if !leading {
			return fmt.Errorf("%s did not lead when step %d began", c.Who, c.N)
		}
		if d := at.Sub(began); d < c.Min || d > c.Max {
			return fmt.Errorf("%s stopped leading %v after step %d began, outside %v to %v", c.Who, d, c.N, c.Min, c.Max)
		}
		return nil
	}
	return fmt.Errorf("%s never stopped leading after step %d began", c.Who, c.N)
}

// staleWrites checks what Who's stale writes to the ledger came to.
func (c Claim) staleWrites(effects []Effect) error {
	n := 0
	for _, e := range effects {
		switch {
		case c.Kind == StaleWritesLand && e.By == c.Who && !e.Fenced && e.Damage():
			n++
		case c.Kind == StaleWritesRefused && e.Fenced && e.Damage():
			return fmt.Errorf("a fenced write of stale %s landed: %+v", e.By, e)
		case c.Kind == StaleWritesRefused && e.By == c.Who && e.Refused():
			n++
		}
	}
	if n < c.N {
		return fmt.Errorf("%d writes of %s for %s, want %d or more: effects %+v", n, c.Who, c.Kind, c.N, effects)
	}
	return nil
}

// overlapList says what the checker found, for a failed claim.
//
//said:english a failed claim's detail, for developers
func overlapList(os []judge.Overlap, now time.Time) string {
	if len(os) == 0 {
		return "it found none"
	}
	s := "it found"
	for _, o := range os {
		s += fmt.Sprintf(" [%v stale %v for %v, %s]", o.Believers, o.Stale, o.Length(now), o.Cause)
	}
	return s
}

// Claims checks every claim of the run's scenario against the world now: nil when all hold.
func (r *Run) Claims() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.worldLocked(r.clock.Now())
	out := make([]error, len(r.sc.Claims))
	for i, c := range r.sc.Claims {
		out[i] = c.Check(w)
	}
	return out
}
