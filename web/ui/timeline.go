package ui

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates"
)

// leaseChange is one state of a lease from its change log, reduced to what the holder timeline
// needs.
type leaseChange struct {
	Revision int64
	// At is when the change was committed, on the server's clock.
	At      time.Time
	Deleted bool
	Holder  string
	// Since is when the hold counts from (holdSince): spec.renewTime (written on the
	// writer's clock), else spec.acquireTime, else At.
	Since       time.Time
	Duration    time.Duration
	Transitions int32
	// Folded counts the writes by the same holder that history compaction folded into this
	// change (renewals between the first and the last write of a term).
	Folded int
}

// expiry is when the lease, as this change left it, runs out: Since + leaseDurationSeconds.
// Zero without a duration.
func (c leaseChange) expiry() time.Time {
	if c.Duration <= 0 {
		return time.Time{}
	}
	base := c.Since
	if base.IsZero() {
		base = c.At
	}
	return base.Add(c.Duration)
}

// holdSince is the one rule for when a lease's hold counts from, and so when it expires
// (holdSince + leaseDurationSeconds): spec.renewTime, else spec.acquireTime, else changedAt,
// the time of the change that last wrote the lease. The cards, the lease page, the feed and the
// timeline all use it; dashboard.js's holdSince is the same rule in the browser.
func holdSince(s coordinationv1.LeaseSpec, changedAt time.Time) time.Time {
	switch {
	case s.RenewTime != nil && !s.RenewTime.IsZero():
		return s.RenewTime.Time
	case s.AcquireTime != nil && !s.AcquireTime.IsZero():
		return s.AcquireTime.Time
	}
	return changedAt
}

// continuous reports whether b came before a ran out.
func continuous(a, b leaseChange) bool {
	exp := a.expiry()
	return exp.IsZero() || !exp.Before(b.At)
}

// How a term ended.
const (
	endHeld     = ""         // still held
	endReleased = "released" // the holder wrote holderIdentity ""
	endTakeover = "takeover" // another candidate wrote itself before the lease ran out
	endExpired  = "expired"  // renewTime + duration passed before anyone else took it
	endDeleted  = "deleted"  // the lease was deleted
)

// term is one holder's uninterrupted hold of a lease.
type term struct {
	Holder string
	Start  time.Time
	// End is when the term ended; zero while held.
	End   time.Time
	Ended string
	// Next is the holder after this term, when one took the lease (takeover, expiry).
	Next        string
	Transitions int32 // leaseTransitions when the term began
	Renewals    int
}

// computeTerms turns a lease's changes (oldest first) into terms. A term begins when a holder
// first appears and ends
//   - by release when holderIdentity becomes "",
//   - by takeover when another holder writes while the lease had not run out,
//   - by expiry when renewTime + leaseDurationSeconds passed before the next holder took it (or
//     before now, for the last term), and then ends at that instant,
//   - by deletion of the lease.
//
// A holder that writes again after its lease ran out starts a new term.
func computeTerms(changes []leaseChange, now time.Time) []term {
	var terms []term
	cur := -1 // index of the open term in terms
	var last leaseChange
	closeAt := func(at time.Time, next string, deleted bool) {
		t := &terms[cur]
		exp := last.expiry()
		switch {
		case !exp.IsZero() && exp.Before(at):
			t.End, t.Ended = exp, endExpired
			if !deleted {
				t.Next = next
			}
		case deleted:
			t.End, t.Ended = at, endDeleted
		case next == "":
			t.End, t.Ended = at, endReleased
		default:
			t.End, t.Ended, t.Next = at, endTakeover, next
		}
		cur = -1
	}
	for _, ch := range changes {
		if ch.Deleted {
			if cur >= 0 {
				closeAt(ch.At, "", true)
			}
			continue
		}
		if cur >= 0 && ch.Holder == terms[cur].Holder {
			if ch.Folded == 0 && !continuous(last, ch) {
				// The lease ran out, then its holder wrote again (a paused leader resuming,
				// say): the old term ended by expiry and a new one begins.
				terms[cur].End, terms[cur].Ended, terms[cur].Next = last.expiry(), endExpired, ch.Holder
				terms = append(terms, term{Holder: ch.Holder, Start: ch.At, Transitions: ch.Transitions, Renewals: ch.Folded})
				cur = len(terms) - 1
			} else {
				terms[cur].Renewals += 1 + ch.Folded
			}
			last = ch
			continue
		}
		if cur >= 0 {
			if ch.Holder == "" {
				// The holder itself cleared holderIdentity: a release, even if late.
				t := &terms[cur]
				t.End, t.Ended = ch.At, endReleased
				cur = -1
			} else {
				closeAt(ch.At, ch.Holder, false)
			}
		}
		if ch.Holder != "" {
			terms = append(terms, term{Holder: ch.Holder, Start: ch.At, Transitions: ch.Transitions, Renewals: ch.Folded})
			cur = len(terms) - 1
			last = ch
		}
	}
	if cur >= 0 {
		if exp := last.expiry(); !exp.IsZero() && !now.Before(exp) {
			terms[cur].End, terms[cur].Ended = exp, endExpired
		}
	}
	return terms
}

// appendCompact appends a change, folding the middle writes of a run by the same holder: a
// run keeps its first change (the term's start) and its last (its expiry). A write that comes
// after the previous one ran out is kept: it starts a new term.
func appendCompact(changes []leaseChange, c leaseChange) []leaseChange {
	n := len(changes)
	if n >= 2 && !c.Deleted && c.Holder != "" {
		prev, lastC := changes[n-2], changes[n-1]
		// Fold only a run without gaps, so that a folded change (Folded > 0) stands for
		// writes that each came before the previous one ran out.
		if !prev.Deleted && !lastC.Deleted && prev.Holder == c.Holder && lastC.Holder == c.Holder &&
			continuous(lastC, c) && (lastC.Folded > 0 || continuous(prev, lastC)) {
			c.Folded = lastC.Folded + 1
			changes[n-1] = c
			return changes
		}
	}
	return append(changes, c)
}

// Timeline geometry, in SVG user units.
const (
	tlWidth      = 800.0
	tlLabelWidth = 140.0
	tlLaneHeight = 36.0
	tlTop        = 8.0
	tlAxis       = 28.0
	tlRightPad   = 12.0
	tlMinSpan    = 30 * time.Second
	tlMaxSpan    = 5 * time.Minute
)

// timelineSpan is the window the drawing shows: from the first term (with a little room), at
// least tlMinSpan and at most tlMaxSpan, ending now.
func timelineSpan(terms []term, now time.Time) time.Duration {
	span := tlMinSpan
	if len(terms) > 0 {
		if d := now.Sub(terms[0].Start); d > 0 {
			span = d + d/20
		}
	}
	return min(max(span, tlMinSpan), tlMaxSpan)
}

// layoutTimeline places terms on an SVG: one lane per holder in order of first appearance, a
// bar per term within the window, a marker at each term's end, and a time axis.
func layoutTimeline(terms []term, now time.Time) templates.Timeline {
	span := timelineSpan(terms, now)
	from := now.Add(-span)
	plot := tlWidth - tlLabelWidth - tlRightPad
	x := func(t time.Time) float64 {
		if t.Before(from) {
			t = from
		}
		if t.After(now) {
			t = now
		}
		return tlLabelWidth + float64(t.Sub(from))/float64(span)*plot
	}

	var visible []term
	for _, t := range terms {
		if t.End.IsZero() || t.End.After(from) {
			visible = append(visible, t)
		}
	}
	laneOf := map[string]int{}
	var lanes []templates.TimelineLane
	for _, t := range visible {
		if _, ok := laneOf[t.Holder]; ok {
			continue
		}
		laneOf[t.Holder] = len(lanes)
		y := tlTop + float64(len(lanes))*tlLaneHeight
		lanes = append(lanes, templates.TimelineLane{Identity: t.Holder, Label: shorten(t.Holder, 15), Y: y, LabelY: y + tlLaneHeight/2 + 5})
	}
	nLanes := max(len(lanes), 1)
	tl := templates.Timeline{
		Width:      tlWidth,
		Height:     tlTop + float64(nLanes)*tlLaneHeight + tlAxis,
		LabelWidth: tlLabelWidth,
		LaneHeight: tlLaneHeight,
		From:       clockTime(from),
		To:         clockTime(now),
		Span:       spanText(span),
		NowX:       x(now),
	}
	for _, t := range visible {
		li := laneOf[t.Holder]
		lane := &lanes[li]
		end := t.End
		open := end.IsZero()
		if open {
			end = now
		}
		x1, x2 := x(t.Start), x(end)
		lane.Bars = append(lane.Bars, templates.TimelineBar{
			X: x1, Y: lane.Y + 8, W: max(x2-x1, 2), H: tlLaneHeight - 16,
			Open: open, Ended: t.Ended, Title: termTitle(t),
		})
		if !open && !t.End.Before(from) {
			tl.Marks = append(tl.Marks, templates.TimelineMark{
				X: x2, Y: lane.Y + tlLaneHeight/2, Kind: t.Ended, Title: endedText(t) + " at " + clockTime(t.End),
			})
		}
	}
	tl.Lanes = lanes
	tl.Ticks = timelineTicks(from, now, x)
	for i := len(visible) - 1; i >= 0; i-- {
		t := visible[i]
		row := templates.TimelineTerm{
			Holder:      t.Holder,
			Start:       clockTime(t.Start),
			Ended:       t.Ended,
			EndedText:   endedText(t),
			Transitions: t.Transitions,
			Renewals:    t.Renewals,
		}
		end := now
		if !t.End.IsZero() {
			end = t.End
			row.End = clockTime(t.End)
		}
		row.Duration = secsText(end.Sub(t.Start))
		tl.Terms = append(tl.Terms, row)
	}
	return tl
}

// tickSteps are the axis steps to choose from.
var tickSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second,
	30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
}

// timelineTicks returns at most about seven labelled instants on round times.
func timelineTicks(from, to time.Time, x func(time.Time) float64) []templates.TimelineTick {
	span := to.Sub(from)
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if span/s <= 6 {
			step = s
			break
		}
	}
	var ticks []templates.TimelineTick
	for t := from.Truncate(step).Add(step); !t.After(to); t = t.Add(step) {
		ticks = append(ticks, templates.TimelineTick{X: x(t), Label: clockTime(t)})
	}
	return ticks
}

// endedText says how a term ended, in words.
func endedText(t term) string {
	switch t.Ended {
	case endHeld:
		return "still held"
	case endReleased:
		return "released"
	case endTakeover:
		return "taken over by " + t.Next
	case endExpired:
		if t.Next == t.Holder {
			return "expired, then " + t.Holder + " wrote it again late"
		}
		if t.Next != "" {
			return "expired, then " + t.Next + " took it"
		}
		return "expired"
	case endDeleted:
		return "lease deleted"
	}
	return t.Ended
}

// termTitle is a bar's hover text.
func termTitle(t term) string {
	if t.End.IsZero() {
		return fmt.Sprintf("%s holds it since %s (transitions %d); %s", t.Holder, clockTime(t.Start), t.Transitions, endedText(t))
	}
	return fmt.Sprintf("%s held it from %s to %s (%s, transitions %d); %s",
		t.Holder, clockTime(t.Start), clockTime(t.End), secsText(t.End.Sub(t.Start)), t.Transitions, endedText(t))
}

// historyCache keeps, per lease, the compacted changes read so far from the store's change
// log, so that the dashboard and the lease page read only what is new: a lease renewed every
// two seconds for a day has tens of thousands of changes, but only a few terms.
type historyCache struct {
	st       store.Interface
	resource string
	decode   func(store.Object) (*coordinationv1.Lease, error)

	mu     sync.Mutex
	leases map[store.Key]*leaseHistory
}

type leaseHistory struct {
	mu      sync.Mutex
	rev     int64
	changes []leaseChange
}

// maxHistoryChanges bounds the compacted changes kept per lease (a few per term).
const maxHistoryChanges = 3000

// historyLookback is how many revisions (of all objects) the first read of a lease's history
// goes back.
const historyLookback = 50_000

// maxHistoryLeases bounds the number of leases whose history is cached.
const maxHistoryLeases = 5000

func newHistoryCache(st store.Interface, resource string, decode func(store.Object) (*coordinationv1.Lease, error)) *historyCache {
	return &historyCache{st: st, resource: resource, decode: decode, leases: map[store.Key]*leaseHistory{}}
}

// changes returns the compacted changes of one lease, oldest first, reading the store's
// change log after what was read before.
func (h *historyCache) changes(ctx context.Context, ns, name string) ([]leaseChange, error) {
	key := store.Key{Resource: h.resource, Namespace: ns, Name: name}
	h.mu.Lock()
	lh := h.leases[key]
	if lh == nil {
		if len(h.leases) >= maxHistoryLeases {
			clear(h.leases)
		}
		lh = &leaseHistory{}
		h.leases[key] = lh
	}
	h.mu.Unlock()

	lh.mu.Lock()
	defer lh.mu.Unlock()
	if lh.rev == 0 {
		// The first read looks back a bounded number of changes, not at a day of renewals:
		// the screens show minutes.
		cur, _, err := h.st.Revision(ctx)
		if err != nil {
			return nil, fmt.Errorf("lease history: %w", err)
		}
		lh.rev = max(0, cur-historyLookback)
	}
	evs, err := h.st.History(ctx, key, lh.rev)
	if err != nil {
		return nil, fmt.Errorf("lease history: %w", err)
	}
	for _, ev := range evs {
		c := leaseChange{Revision: ev.Object.Revision, At: ev.Time}
		if ev.Type == store.Deleted {
			c.Deleted = true
		} else {
			l, err := h.decode(ev.Object)
			if err != nil {
				return nil, err
			}
			c = changeOf(l, ev.Object.Revision, ev.Time)
		}
		lh.changes = appendCompact(lh.changes, c)
		lh.rev = ev.Object.Revision
	}
	if n := len(lh.changes); n > maxHistoryChanges {
		lh.changes = append([]leaseChange(nil), lh.changes[n-maxHistoryChanges:]...)
	}
	return append([]leaseChange(nil), lh.changes...), nil
}

// changeOf reduces a lease to a timeline change.
func changeOf(l *coordinationv1.Lease, rev int64, at time.Time) leaseChange {
	c := leaseChange{Revision: rev, At: at}
	s := l.Spec
	if s.HolderIdentity != nil {
		c.Holder = *s.HolderIdentity
	}
	c.Since = holdSince(s, at)
	if s.LeaseDurationSeconds != nil {
		c.Duration = time.Duration(*s.LeaseDurationSeconds) * time.Second
	}
	if s.LeaseTransitions != nil {
		c.Transitions = *s.LeaseTransitions
	}
	return c
}

// shorten cuts s to n runes, marking the cut with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
