package ui

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/lease/judge"
	"github.com/leaselab/leaselab/web/lease/views"
)

// overlaps judges a lease's split-brain intervals up to now from its changes (up to now) and
// its candidates' recorded views; recorded says whether any view is on record. For a past
// moment the views are read from the change log up to then, past what the cache holds.
func (u *reader) overlaps(ctx context.Context, ns, name string, changes []judge.Change, now time.Time, past bool) (overlaps []judge.Overlap, vs []judge.View, err error) {
	return u.overlapsKnown(ctx, ns, name, changes, now, past, 0)
}

// overlapsKnown is overlaps with the views read only when the reader may miss one up to the
// revision knownViews (views.Reader.ViewsThrough); 0 reads whatever is new.
func (u *reader) overlapsKnown(ctx context.Context, ns, name string, changes []judge.Change, now time.Time, past bool, knownViews int64) (overlaps []judge.Overlap, vs []judge.View, err error) {
	if past {
		// A view is committed a little after the role change it dates.
		through, err := u.store.RevisionAt(ctx, now.Add(views.MaxReportDelay))
		if err != nil {
			return nil, nil, err
		}
		vs, err = u.views.Between(ctx, ns, name, 0, through)
		if err != nil {
			return nil, nil, err
		}
	} else if vs, err = u.views.ViewsThrough(ctx, ns, name, knownViews); err != nil {
		return nil, nil, err
	}
	vs = viewsUntil(vs, now)
	return judge.Overlaps(ns+"/"+name, changes, vs, now), vs, nil
}

// viewsUntil is the views that began at or before t (views are ordered by when they began).
func viewsUntil(vs []judge.View, t time.Time) []judge.View {
	n := len(vs)
	for n > 0 && vs[n-1].At.After(t) {
		n--
	}
	return vs[:n]
}

// overlapViews are the overlaps as the lease page lists them, newest first.
func overlapViews(overlaps []judge.Overlap, ns, name string, now time.Time) []templates.Overlap {
	out := make([]templates.Overlap, 0, len(overlaps))
	for _, o := range slices.Backward(overlaps) {
		end := o.End
		if end.IsZero() {
			end = now
		}
		start := o.Start.UTC().Format(momentLayout)
		length := lengthSays(end.Sub(o.Start))
		out = append(out, templates.Overlap{
			Identities:   strings.Join(o.Identities, ","),
			Start:        start,
			End:          end.UTC().Format(momentLayout),
			Ongoing:      o.End.IsZero(),
			StartText:    preciseTime(o.Start),
			EndText:      preciseTime(end),
			Duration:     length.En,
			DurationSays: length,
			Cause:        o.Cause,
			Text:         o.Text,
			Advice:       o.Advice,
			Says:         o.Says.Both(),
			AdviceSays:   o.AdviceSays.Both(),
			AtURL:        leaseURL(ns, name) + "?at=" + url.QueryEscape(momentText(toldAt(o.Start, end))),
			AtSays:       i18n.Say("lease.splitAtTitle", exactSecsText(judge.OverlapGrace)),
		})
	}
	return out
}

// toldAt is the first moment, to the millisecond, whose page tells a split brain that began
// at start and ended at end: a disagreement is one once it has lasted judge.OverlapGrace, and a
// moment written to the millisecond but before the instant itself would still show the one
// holder before it.
func toldAt(start, end time.Time) time.Time {
	at := start.Add(judge.OverlapGrace)
	if end.Before(at) {
		at = end
	}
	return ceilMillisecond(at)
}

// preciseTime is a clock time to the millisecond: "14:02:11.300".
func preciseTime(t time.Time) string { return t.Local().Format("15:04:05.000") }

// leaseStory is what the screens tell of one lease as of a moment: its card and its feed
// lines (terms and split-brain intervals), judged from its changes and its candidates' views.
type leaseStory struct {
	changes []judge.Change
	views   []judge.View
	cur     judge.Change
	card    templates.LeaseCard
	told    []judge.Told
	// disagreeing is true while a candidate believes it leads and the record names another.
	disagreeing bool
}

// story judges the lease l as of now from the change log and the views on record. When past
// is true, now is a past moment and l the lease as it was then: the changes and views after
// it are left out, and the lease's state is its last write by then.
func (u *reader) story(ctx context.Context, l *coordinationv1.Lease, now time.Time, past bool) (leaseStory, error) {
	return u.storyKnown(ctx, l, now, past, known{})
}

// known says up to which revisions the caches already hold a lease's changes and its
// candidates' views because a watch fed them (historyCache.observe, views.Reader.Observe):
// a story told with it reads the change log only for what they may miss. The zero value
// reads whatever is new.
type known struct{ changes, views int64 }

// storyKnown is story with what the caches are known to hold.
func (u *reader) storyKnown(ctx context.Context, l *coordinationv1.Lease, now time.Time, past bool, k known) (leaseStory, error) {
	changes, cur, err := u.storyChanges(ctx, l, now, past, k.changes)
	if err != nil {
		return leaseStory{}, err
	}
	s := leaseStory{cur: cur}
	overlaps, vs, err := u.overlapsKnown(ctx, l.Namespace, l.Name, changes, now, past, k.views)
	if err != nil {
		return leaseStory{}, err
	}
	s.changes, s.views = changes, vs
	s.disagreeing = judge.Disagreeing(vs, s.cur.Holder)
	s.card = leaseCard(l, s.cur, now)
	s.card.Overlaps = len(overlaps)
	if n := len(overlaps); n > 0 {
		s.card.OverlapText, s.card.OverlapSays = overlaps[n-1].Text, overlaps[n-1].Says.Both()
	}
	name := l.Namespace + "/" + l.Name
	s.told = append(judge.Tell(name, judge.TermsSeen(changes, vs, now)), judge.TellOverlaps(name, overlaps)...)
	return s, nil
}

// storyChanges reads the changes of the lease l and its state as its story as of now tells
// them (see story).
func (u *reader) storyChanges(ctx context.Context, l *coordinationv1.Lease, now time.Time, past bool, knownChanges int64) ([]judge.Change, judge.Change, error) {
	if !past {
		changes, err := u.hist.changesThrough(ctx, l.Namespace, l.Name, knownChanges)
		return changes, currentChange(l, changes), err
	}
	changes, err := u.hist.changesAt(ctx, l.Namespace, l.Name, now)
	if err != nil {
		return nil, judge.Change{}, err
	}
	cur, _, ok, err := u.changeAsOf(ctx, l.Namespace, l.Name, changes, now)
	if err == nil && !ok {
		cur = currentChange(l, changes) // the history read does not reach back to its last write
	}
	return changes, cur, err
}
