package ui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/views"
)

// moment is what a screen shows: the present (the zero moment), or the past moment at, seen
// through rev, the last revision committed by then (0 when nothing was yet).
type moment struct {
	at  time.Time
	rev int64
}

// past says whether m is a past moment rather than the present.
func (m moment) past() bool { return !m.at.IsZero() }

// momentAt is the moment at, the present when at is zero; a moment still to come is now. It
// returns a *store.CompactedError when the change log no longer reaches back to at.
func (u *reader) momentAt(ctx context.Context, at time.Time) (moment, error) {
	if at.IsZero() {
		return moment{}, nil
	}
	if now := u.opts.Now(); at.After(now) {
		at = now // the history says nothing of what is to come
	}
	rev, err := u.store.RevisionAt(ctx, at)
	if err != nil {
		return moment{}, fmt.Errorf("revision at %s: %w", at.UTC().Format(momentLayout), err)
	}
	return moment{at: at, rev: rev}, nil
}

// judgeTime is the time the judge decides a screen of m by: the moment, or now.
func (u *reader) judgeTime(m moment) time.Time {
	if m.past() {
		return m.at
	}
	return u.opts.Now()
}

// momentParam reads the ?at= of a screen that shows a past moment; zero when it is live.
func momentParam(c echo.Context) (time.Time, error) {
	s := c.QueryParam("at")
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("at=%q is not a moment: write it in RFC 3339, such as 2026-11-25T14:02:11.300Z", s)
	}
	return t, nil
}

// momentOfRequest reads the request's ?at= and finds its moment. On a bad or compacted
// moment it has answered the request (400 or 410, with the reason) and returns ok false.
func (u *pages) momentOfRequest(c echo.Context) (m moment, ok bool, err error) {
	at, err := momentParam(c)
	if err != nil {
		return moment{}, false, u.failSays(c, http.StatusBadRequest, i18n.Say("error.badMoment", c.QueryParam("at")))
	}
	m, err = u.momentAt(c.Request().Context(), at)
	if err != nil {
		return moment{}, false, u.failMoment(c, at, err)
	}
	return m, true, nil
}

// failMoment answers err, met while showing the moment at: a moment the change log no longer
// reaches back to is a 410 that says so; other errors are the server's.
func (u *pages) failMoment(c echo.Context, at time.Time, err error) error {
	if !errors.Is(err, store.ErrCompacted) {
		return err
	}
	return u.failSays(c, http.StatusGone, i18n.Say("error.compacted", at.Local().Format("2006-01-02 15:04:05.000")))
}

// momentView is m for the templates; liveLink is the live page.
func (u *pages) momentView(m moment, liveLink string) templates.Moment {
	if !m.past() {
		return templates.Moment{}
	}
	return templates.Moment{
		At:       m.at.UTC().Format(momentLayout),
		Text:     preciseTime(m.at),
		Age:      ageText(m.at, u.opts.Now()),
		AgeSays:  ageSays(m.at, u.opts.Now()),
		LiveLink: liveLink,
	}
}

// decisionsAt is the source of the election controller's decisions as of m: every decision
// when live, those taken by then at a past moment; nil when the controller does not run.
func (u *reader) decisionsAt(m moment) func(namespace, lease string) []templates.DecisionView {
	f := u.decisionsFunc()
	if f == nil || !m.past() {
		return f
	}
	return func(namespace, lease string) []templates.DecisionView {
		ds := f(namespace, lease) // oldest first
		n := 0
		for n < len(ds) && !ds[n].At.After(m.at) {
			n++
		}
		return ds[:n]
	}
}

// tabRows are the candidate tabs a screen of m lists, of the namespace ns (all when empty) and
// the lease (all when empty): the connected tabs when live; at a past moment, each candidate's
// latest view recorded by then, unless it had stopped.
func (u *reader) tabRows(ctx context.Context, m moment, ns, lease string) ([]templates.Tab, error) {
	var out []templates.Tab
	if !m.past() {
		for _, t := range u.hub.Tabs() {
			if (ns == "" || t.Namespace == ns) && (lease == "" || t.Lease == lease) {
				out = append(out, tabView(t))
			}
		}
		return out, nil
	}
	recs, err := u.viewsAt(ctx, m, ns)
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		if rec.State == string(tabproto.StateStopped) || (lease != "" && rec.Lease != lease) {
			continue
		}
		t := tabView(TabInfo{Report: rec.Report(), Owner: rec.Owner})
		t.Recorded = true
		out = append(out, t)
	}
	return out, nil
}

// viewsAt is each candidate's latest view of the namespace ns (every namespace when empty) that
// began by the moment m, ordered by namespace and name as the store lists them. A view is recorded when its report
// arrives, a little after it began (a role change is dated back to when the candidate says it
// happened, and a report arrives within the millisecond its moment is written in), so the views
// recorded up to views.MaxReportDelay after m are read too, and each candidate's latest that
// began by then is taken, as the split-brain checker takes them.
func (u *reader) viewsAt(ctx context.Context, m moment, ns string) ([]views.Record, error) {
	res, err := u.list(ctx, m, store.ListOptions{Resource: views.Resource, Namespace: ns})
	if err != nil {
		return nil, fmt.Errorf("list candidate views: %w", err)
	}
	later, err := u.store.RevisionAt(ctx, m.at.Add(views.MaxReportDelay))
	if err != nil {
		return nil, fmt.Errorf("list candidate views: %w", err)
	}
	var after store.ListResult
	if later > m.rev {
		if after, err = u.list(ctx, moment{at: m.at, rev: later}, store.ListOptions{Resource: views.Resource, Namespace: ns}); err != nil {
			return nil, fmt.Errorf("list candidate views: %w", err)
		}
	}
	began := m.at.UnixMilli()
	byKey := map[store.Key]views.Record{}
	for _, o := range res.Objects {
		rec, err := views.RecordOf(o)
		if err != nil {
			return nil, err
		}
		byKey[o.Key] = rec
	}
	for _, o := range after.Objects {
		if o.Revision <= m.rev {
			continue // the same view
		}
		// Changed since m: its views recorded after m, the latest that began by m wins.
		evs, err := u.store.HistoryBetween(ctx, o.Key, m.rev, later)
		if err != nil {
			return nil, fmt.Errorf("candidate views: %w", err)
		}
		for _, ev := range evs {
			if ev.Type == store.Deleted {
				continue // a deletion is dated by its commit, after m
			}
			rec, err := views.RecordOf(ev.Object)
			if err != nil {
				return nil, err
			}
			if rec = rec.Dated(ev.Time); rec.AtMs <= began {
				byKey[o.Key] = rec
			}
		}
	}
	keys := slices.SortedFunc(maps.Keys(byKey), func(a, b store.Key) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	recs := make([]views.Record, 0, len(keys))
	for _, k := range keys {
		recs = append(recs, byKey[k])
	}
	return recs, nil
}

// timeControl is the time bar of a page showing m, which swaps the element target for the
// fragment at fragment of the moment it shows: its moments are those of the namespace ns
// (every namespace when empty) and the lease (every lease when empty).
func timeControl(m moment, ns, lease, fragment, target string) templates.TimeControl {
	q := url.Values{}
	if ns != "" {
		q.Set("namespace", ns)
	}
	if lease != "" {
		q.Set("lease", lease)
	}
	tc := templates.TimeControl{MomentsURL: "/ui/moments", FragmentURL: fragment, Target: target}
	if len(q) > 0 {
		tc.MomentsURL += "?" + q.Encode()
	}
	if m.past() {
		tc.At = m.at.UTC().Format(momentLayout)
	}
	return tc
}
