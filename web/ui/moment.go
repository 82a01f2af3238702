package ui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/views"
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
func (u *UI) momentAt(ctx context.Context, at time.Time) (moment, error) {
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
func (u *UI) judgeTime(m moment) time.Time {
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
func (u *UI) momentOfRequest(c echo.Context) (m moment, ok bool, err error) {
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
func (u *UI) failMoment(c echo.Context, at time.Time, err error) error {
	if !errors.Is(err, store.ErrCompacted) {
		return err
	}
	return u.failSays(c, http.StatusGone, i18n.Say("error.compacted", at.Local().Format("2006-01-02 15:04:05.000")))
}

// momentView is m for the templates; liveLink is the live page.
func (u *UI) momentView(m moment, liveLink string) templates.Moment {
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
func (u *UI) decisionsAt(m moment) func(namespace, lease string) []templates.DecisionView {
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
func (u *UI) tabRows(ctx context.Context, m moment, ns, lease string) ([]templates.Tab, error) {
	var out []templates.Tab
	if !m.past() {
		for _, t := range u.hub.Tabs() {
			if (ns == "" || t.Namespace == ns) && (lease == "" || t.Lease == lease) {
				out = append(out, tabView(t))
			}
		}
		return out, nil
	}
	res, err := u.list(ctx, m, store.ListOptions{Resource: views.Resource, Namespace: ns})
	if err != nil {
		return nil, fmt.Errorf("list candidate views: %w", err)
	}
	for _, o := range res.Objects {
		rec, err := views.RecordOf(o)
		if err != nil {
			return nil, err
		}
		if rec.State == string(tabproto.StateStopped) || (lease != "" && rec.Lease != lease) {
			continue
		}
		t := tabView(TabInfo{Report: rec.Report()})
		t.Recorded = true
		out = append(out, t)
	}
	return out, nil
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
