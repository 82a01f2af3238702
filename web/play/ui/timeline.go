package ui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// Timeline geometry, in SVG user units.
const (
	tlWidth      = 800.0
	tlLabelWidth = 140.0
	tlLaneHeight = 36.0
	tlTop        = 8.0
	tlAxis       = 28.0
	tlRightPad   = 12.0
	// tlCharWidth is about how wide a character of an axis label is (app.css: 14px).
	tlCharWidth = 9.0
	tlMinSpan   = 30 * time.Second
	tlMaxSpan   = 5 * time.Minute
)

// timelineSpan is the window the drawing shows: from the first term (with a little room), at
// least tlMinSpan and at most maxSpan, ending now.
func timelineSpan(terms []judge.Term, now time.Time, maxSpan time.Duration) time.Duration {
	span := tlMinSpan
	if len(terms) > 0 {
		if d := now.Sub(terms[0].Start); d > 0 {
			span = d + d/20
		}
	}
	return min(max(span, tlMinSpan), maxSpan)
}

// layoutTimeline places terms on an SVG: one lane per holder in order of first appearance, a
// bar per term within the window, a marker at each term's end, a hatched band across the lanes
// for each split-brain interval, and a time axis.
// maxSpan is its longest window (timelineMax).
func layoutTimeline(terms []judge.Term, overlaps []judge.Overlap, now time.Time, maxSpan time.Duration) templates.Timeline {
	span := timelineSpan(terms, now, maxSpan)
	sc := timelineScale{from: now.Add(-span), now: now, span: span}
	visible := visibleTerms(terms, sc.from)
	lanes, laneOf := timelineLanes(visible)
	nLanes := max(len(lanes), 1)
	tl := templates.Timeline{
		Width:      tlWidth,
		Height:     tlTop + float64(nLanes)*tlLaneHeight + tlAxis,
		LabelWidth: tlLabelWidth,
		LaneHeight: tlLaneHeight,
		From:       clockTime(sc.from),
		To:         clockTime(now),
		Span:       spanText(span),
		SpanSays:   spanSays(span),
		NowX:       sc.x(now),
	}
	tl.Marks = timelineBars(lanes, laneOf, visible, sc)
	tl.Lanes = lanes
	tl.LanesBottom = tlTop + float64(nLanes)*tlLaneHeight
	tl.Bands = timelineBands(overlaps, sc)
	tl.Ticks = timelineTicks(sc.from, now, sc.x)
	tl.Terms = timelineTerms(visible, now)
	return tl
}

// timelineScale places the times of the window, from to now, along the plot.
type timelineScale struct {
	from, now time.Time
	span      time.Duration
}

// x is where t falls, t clamped to the window.
func (sc timelineScale) x(t time.Time) float64 {
	plot := tlWidth - tlLabelWidth - tlRightPad
	if t.Before(sc.from) {
		t = sc.from
	}
	if t.After(sc.now) {
		t = sc.now
	}
	return tlLabelWidth + float64(t.Sub(sc.from))/float64(sc.span)*plot
}

// visibleTerms are the terms still open or ended after from.
func visibleTerms(terms []judge.Term, from time.Time) []judge.Term {
	var visible []judge.Term
	for _, t := range terms {
		if t.End.IsZero() || t.End.After(from) {
			visible = append(visible, t)
		}
	}
	return visible
}

// timelineLanes are the lanes of the holders of terms, in order of first appearance, and each
// holder's lane.
func timelineLanes(terms []judge.Term) ([]templates.TimelineLane, map[string]int) {
	laneOf := map[string]int{}
	var lanes []templates.TimelineLane
	for _, t := range terms {
		if _, ok := laneOf[t.Holder]; ok {
			continue
		}
		laneOf[t.Holder] = len(lanes)
		y := tlTop + float64(len(lanes))*tlLaneHeight
		lanes = append(lanes, templates.TimelineLane{Identity: judge.Shown(t.Holder), Label: judge.Cut(t.Holder, 15), Y: y, LabelY: y + tlLaneHeight/2 + 5})
	}
	return lanes, laneOf
}

// timelineBars puts a bar for each term on its holder's lane and returns the markers of the
// terms that ended within the window.
func timelineBars(lanes []templates.TimelineLane, laneOf map[string]int, terms []judge.Term, sc timelineScale) []templates.TimelineMark {
	var marks []templates.TimelineMark
	for _, t := range terms {
		lane := &lanes[laneOf[t.Holder]]
		end := t.End
		open := end.IsZero()
		if open {
			end = sc.now
		}
		x1, x2 := sc.x(t.Start), sc.x(end)
		lane.Bars = append(lane.Bars, templates.TimelineBar{
			X: x1, Y: lane.Y + 8, W: max(x2-x1, 2), H: tlLaneHeight - 16,
			Open: open, Ended: t.Ended, Title: termTitle(t), TitleSays: termTitleSays(t),
		})
		if !open && !t.End.Before(sc.from) {
			title := markTitleSays(t)
			marks = append(marks, templates.TimelineMark{
				X: x2, Y: lane.Y + tlLaneHeight/2, Kind: t.Ended, Title: title.En, TitleSays: title,
			})
		}
	}
	return marks
}

// timelineBands are the hatched bands of the split-brain intervals within the window, and of
// the intervals in which a leader acted past its lease.
func timelineBands(overlaps []judge.Overlap, sc timelineScale) []templates.TimelineBand {
	var bands []templates.TimelineBand
	for _, o := range overlaps {
		end := o.End
		if end.IsZero() {
			end = sc.now
		}
		if end.Before(sc.from) {
			continue
		}
		x1, x2 := sc.x(o.Start), sc.x(end)
		kind := "split-brain"
		if o.Cause == judge.CausePastLease {
			kind = judge.CausePastLease // a leader past its lease, nobody else holding it
		}
		bands = append(bands, templates.TimelineBand{Kind: kind, X: x1, W: max(x2-x1, 2), Title: o.Text, TitleSays: o.Says.Both()})
	}
	return bands
}

// timelineTerms are the rows of the table under the drawing, newest term first.
func timelineTerms(terms []judge.Term, now time.Time) []templates.TimelineTerm {
	var rows []templates.TimelineTerm
	for i := len(terms) - 1; i >= 0; i-- {
		t := terms[i]
		row := templates.TimelineTerm{
			Holder:      judge.Shown(t.Holder),
			Start:       clockTime(t.Start),
			Ended:       t.Ended,
			EndedText:   judge.EndedText(t),
			EndedSays:   judge.EndedSays(t).Both(),
			Transitions: t.Transitions,
			Renewals:    t.Renewals,
		}
		end := now
		if !t.End.IsZero() {
			end = t.End
			row.End = clockTime(t.End)
		}
		row.DurationSays = lengthSays(end.Sub(t.Start))
		row.Duration = row.DurationSays.En
		rows = append(rows, row)
	}
	return rows
}

// timelineMax is the longest window the holder timeline shows: tlMaxSpan, the recent past of a
// live lease; on a replay, which has no now to follow, the whole recording, up to an hour.
func (u *leaseScreen) timelineMax() time.Duration {
	if r := u.opts.Replay; r != nil {
		return min(max(tlMaxSpan, r.To.Sub(r.From)*21/20), time.Hour)
	}
	return tlMaxSpan
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
		k := templates.TimelineTick{X: x(t), Label: clockTime(t)}
		// A label centred on a tick near the right edge would be cut off: it ends there.
		if k.X+tlCharWidth*float64(len(k.Label))/2 > tlWidth {
			k.Anchor = "end"
		}
		ticks = append(ticks, k)
	}
	return ticks
}

// markTitleSays is the hover text of the mark where the term t ended: how and when; when the
// lease ran out before the next holder wrote itself, both when it expired and when that was.
func markTitleSays(t judge.Term) i18n.Text {
	if t.Ended == judge.EndExpired && t.Next != "" && !t.NextAt.IsZero() {
		key := "timeline.expiredThenTook"
		if t.Next == t.Holder {
			key = "timeline.expiredThenLate"
		}
		return i18n.Say(key, clockTime(t.End), judge.Shown(t.Next), clockTime(t.NextAt))
	}
	return i18n.Say("timeline.endedAt", judge.EndedSays(t).Both(), clockTime(t.End))
}

// termTitle is a bar's hover text.
func termTitle(t judge.Term) string { return termTitleSays(t).En }

// termTitleSays is termTitle in both languages.
func termTitleSays(t judge.Term) i18n.Text {
	if t.End.IsZero() {
		return i18n.Say("timeline.holds", judge.Shown(t.Holder), clockTime(t.Start), t.Transitions, judge.EndedSays(t).Both())
	}
	return i18n.Say("timeline.held", judge.Shown(t.Holder), clockTime(t.Start), clockTime(t.End), lengthSays(t.End.Sub(t.Start)), t.Transitions, judge.EndedSays(t).Both())
}

// historyCache keeps, per lease, the compacted changes read so far from the store's change
// log, so that the dashboard and the lease page read only what is new: a lease renewed every
// two seconds for a day has tens of thousands of changes, but only a few terms.
type historyCache struct {
	st       store.Interface
	resource string
	lookback int64 // historyLookback; tests set less
	decode   func(store.Object) (*coordinationv1.Lease, error)
	// whole reads each lease's history from the start of the log, not historyLookback back.
	whole bool

	mu     sync.Mutex
	leases map[store.Key]*leaseHistory
}

type leaseHistory struct {
	mu sync.Mutex
	// start is the revision the cache read from; rev the last it read.
	start, rev int64
	// read is set once the log was read; covered is a revision up to which changes holds
	// every change of the lease (a read began after it was committed, or a watch delivered
	// every change up to it).
	read    bool
	covered int64
	changes []judge.Change
}

// maxHistoryChanges bounds the compacted changes kept per lease (a few per term).
const maxHistoryChanges = 3000

// historyLookback is how many revisions (of all objects) the first read of a lease's history
// goes back.
const historyLookback = 50_000

// maxHistoryLeases bounds the number of leases whose history is cached.
const maxHistoryLeases = 5000

// newHistoryCache returns a cache of the history of the leases of resource in st. whole reads
// every lease's history from the start of the log: on a replay, whose log holds only the
// recording (its revisions may be sparse, and every moment of it may be asked for).
func newHistoryCache(st store.Interface, resource string, decode func(store.Object) (*coordinationv1.Lease, error), whole bool) *historyCache {
	return &historyCache{st: st, resource: resource, lookback: historyLookback, decode: decode, whole: whole, leases: map[store.Key]*leaseHistory{}}
}

// changes returns the compacted changes of one lease, oldest first, reading the store's
// change log after what was read before.
func (h *historyCache) changes(ctx context.Context, ns, name string) ([]judge.Change, error) {
	return h.changesThrough(ctx, ns, name, 0)
}

// changesThrough is changes, reading the change log only when the cache may miss a change
// committed up to the revision through (committed before the call): when a watch fed the
// cache every change up to it (observe), it is not read at all. through <= 0 reads
// whatever is new.
func (h *historyCache) changesThrough(ctx context.Context, ns, name string, through int64) ([]judge.Change, error) {
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
	if through > 0 && lh.read && lh.covered >= through {
		return append([]judge.Change(nil), lh.changes...), nil
	}
	if lh.rev == 0 && !h.whole {
		// The first read looks back a bounded number of changes, not at a day of renewals:
		// the screens show minutes.
		cur, _, err := h.st.Revision(ctx)
		if err != nil {
			return nil, fmt.Errorf("lease history: %w", err)
		}
		lh.rev = max(0, cur-h.lookback)
		lh.start = lh.rev
	}
	evs, err := h.st.History(ctx, key, lh.rev)
	if err != nil {
		return nil, fmt.Errorf("lease history: %w", err)
	}
	if lh.changes, err = h.compact(lh.changes, evs); err != nil {
		return nil, err
	}
	if n := len(evs); n > 0 {
		lh.rev = evs[n-1].Object.Revision
	}
	lh.read = true
	lh.covered = max(lh.covered, lh.rev, through)
	lh.trim()
	return append([]judge.Change(nil), lh.changes...), nil
}

// trim keeps the newest maxHistoryChanges changes.
func (lh *leaseHistory) trim() {
	if n := len(lh.changes); n > maxHistoryChanges {
		lh.changes = append([]judge.Change(nil), lh.changes[n-maxHistoryChanges:]...)
		lh.start = lh.changes[0].Revision - 1
	}
}

// observe adds one change of a lease that a watch delivered (l is nil for a deletion) to what
// the cache holds, so that the next read need not fetch it from the change log. prev is the
// revision of the change of the same lease the watch delivered before it, or the revision
// the watch started after: the watch saw none in between. A cache that does not reach prev
// (or never read the lease) is left to read the log.
func (h *historyCache) observe(ns, name string, l *coordinationv1.Lease, rev int64, at time.Time, prev int64) {
	key := store.Key{Resource: h.resource, Namespace: ns, Name: name}
	h.mu.Lock()
	lh := h.leases[key]
	h.mu.Unlock()
	if lh == nil {
		return
	}
	lh.mu.Lock()
	defer lh.mu.Unlock()
	if !lh.read || lh.covered < prev || rev <= lh.covered {
		return
	}
	lh.changes = judge.Append(lh.changes, l, rev, at)
	lh.rev, lh.covered = rev, rev
	lh.trim()
}

// compact adds the changes evs made to changes, compacted as the judge does.
func (h *historyCache) compact(changes []judge.Change, evs []store.Event) ([]judge.Change, error) {
	for _, ev := range evs {
		var l *coordinationv1.Lease // nil: deleted
		if ev.Type != store.Deleted {
			var err error
			if l, err = h.decode(ev.Object); err != nil {
				return nil, err
			}
		}
		changes = judge.Append(changes, l, ev.Object.Revision, ev.Time)
	}
	return changes, nil
}

// momentLookback is how far before a past moment its page reads the lease's history: more
// than the longest window the timeline draws, so that the terms it shows begin where they did.
const momentLookback = 3 * tlMaxSpan

// changesAt returns the compacted changes of one lease committed up to the moment at: from the
// cache when it reaches back far enough, else read from the change log around at, so that a
// moment deep in a long history costs what the minutes before it cost, not the whole log.
func (h *historyCache) changesAt(ctx context.Context, ns, name string, at time.Time) ([]judge.Change, error) {
	all, err := h.changes(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	from, err := h.st.RevisionAt(ctx, at.Add(-momentLookback))
	if err != nil && !errors.Is(err, store.ErrCompacted) {
		return nil, fmt.Errorf("lease history: %w", err)
	}
	key := store.Key{Resource: h.resource, Namespace: ns, Name: name}
	h.mu.Lock()
	lh := h.leases[key]
	h.mu.Unlock()
	if lh != nil {
		lh.mu.Lock()
		start := lh.start
		lh.mu.Unlock()
		if start <= from {
			return h.cutAt(ctx, key, all, from, at)
		}
	}
	through, err := h.st.RevisionAt(ctx, at)
	if err != nil {
		return nil, fmt.Errorf("lease history: %w", err)
	}
	evs, err := h.st.HistoryBetween(ctx, key, from, through)
	if err != nil {
		return nil, fmt.Errorf("lease history: %w", err)
	}
	return h.compact(nil, evs)
}

// cutAt is the compacted changes all of the lease key cut at the moment at, as they were
// compacted then. A run of renewals keeps only its first and its last write, so when the run
// goes on past at, the writes of it up to at are read again from the change log (from the
// run's first write, or from the revision from when the run began before it): cut at its
// first write, the term would look unrenewed since then, and expired.
func (h *historyCache) cutAt(ctx context.Context, key store.Key, all []judge.Change, from int64, at time.Time) ([]judge.Change, error) {
	cut := changesUntil(all, at)
	n := len(cut)
	if n == 0 || n == len(all) || all[n].Folded == 0 {
		return cut, nil // at falls between two writes the cache holds as they were
	}
	through, err := h.st.RevisionAt(ctx, at)
	if err != nil {
		return nil, fmt.Errorf("lease history: %w", err)
	}
	first := cut[n-1] // the run's first write
	after := max(first.Revision, from)
	evs, err := h.st.HistoryBetween(ctx, key, after, through)
	if err != nil {
		return nil, fmt.Errorf("lease history: %w", err)
	}
	changes := append([]judge.Change(nil), cut...)
	if after > first.Revision && len(evs) > 0 && evs[0].Type != store.Deleted {
		// The run began before from: its first write read stands for the renewals before
		// it, so that it continues the run rather than starting a term of its own.
		l, err := h.decode(evs[0].Object)
		if err != nil {
			return nil, err
		}
		c := judge.ChangeOf(l, evs[0].Object.Revision, evs[0].Time, &first)
		c.Folded = 1
		changes = append(changes, c)
		evs = evs[1:]
	}
	return h.compact(changes, evs)
}
