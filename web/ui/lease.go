package ui

import (
	"context"
	"fmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/web/judge"
)

// maxEvents is how many events the lease page lists.
const maxEvents = 50

// leasePage serves /leases/:namespace/:name.
func (u *UI) leasePage(c echo.Context) error {
	ns, name := c.Param("namespace"), c.Param("name")
	at, err := momentParam(c)
	if err != nil {
		return u.fail(c, http.StatusBadRequest, err.Error())
	}
	live, known, err := u.leaseLiveView(c.Request().Context(), ns, name, at)
	if err != nil {
		return err
	}
	if !known {
		return u.fail(c, http.StatusNotFound, "There is no lease "+ns+"/"+name+", none in the change log, and no LeaseCandidates for it.")
	}
	v := templates.LeasePage{
		Page:         u.page(ns+"/"+name, "lease"),
		Namespace:    ns,
		Name:         name,
		Live:         live,
		RV:           live.Revision,
		DeleteURL:    deleteURL(ns, name),
		PlayURL:      playURL(ns, name),
		LiveURL:      leaseURL(ns, name) + "/live",
		RecordingURL: recordingURL(ns, name),
	}
	if !at.IsZero() {
		v.At = at.UTC().Format(momentLayout)
		v.AtText = at.Local().Format("15:04:05.000")
		v.AtAge = ageText(at, u.opts.Now())
		v.LiveLink = leaseURL(ns, name)
		v.LiveURL += "?at=" + url.QueryEscape(v.At)
	}
	return u.render(c, http.StatusOK, templates.LeasePageView(v))
}

// momentLayout is how a moment is written in links: RFC 3339 with milliseconds.
const momentLayout = "2006-01-02T15:04:05.000Z07:00"

// momentParam reads the ?at= of a page that shows a past moment; zero when the page is live.
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

// leaseLive serves the live part of the lease page, which lease.js swaps in.
func (u *UI) leaseLive(c echo.Context) error {
	at, err := momentParam(c)
	if err != nil {
		return u.fail(c, http.StatusBadRequest, err.Error())
	}
	live, _, err := u.leaseLiveView(c.Request().Context(), c.Param("namespace"), c.Param("name"), at)
	if err != nil {
		return err
	}
	return u.render(c, http.StatusOK, templates.LeaseLiveView(live))
}

// leaseLiveView builds the lease page's live part, as of at when it is not zero (the changes up
// to then, drawn by the same judge). known is false when the lease neither exists nor has any
// change left in the log.
func (u *UI) leaseLiveView(ctx context.Context, ns, name string, at time.Time) (templates.LeaseLive, bool, error) {
	now := u.opts.Now()
	var live templates.LeaseLive
	rev, _, err := u.store.Revision(ctx)
	if err != nil {
		return live, false, err
	}
	live.Revision = strconv.FormatInt(rev, 10)
	changes, err := u.hist.changes(ctx, ns, name)
	if err != nil {
		return live, false, err
	}
	if !at.IsZero() {
		now = at
		changes = changesUntil(changes, at)
		if err := u.leaseAsOf(ctx, &live, ns, name, changes, at); err != nil {
			return live, false, err
		}
	} else if err := u.leaseNow(ctx, &live, ns, name, changes, now); err != nil {
		return live, false, err
	}
	live.Timeline = layoutTimeline(judge.Terms(changes, now), now)

	events, err := u.leaseEvents(ctx, ns, name)
	if err != nil {
		return live, false, err
	}
	live.Events = eventRows(events, now)

	cands, _, err := u.listCandidates(ctx, ns)
	if err != nil {
		return live, false, err
	}
	for _, lc := range cands {
		if lc.Spec.LeaseName == name {
			live.Candidates = append(live.Candidates, candidateRow(lc, now))
		}
	}
	for _, t := range u.hub.Tabs() {
		if t.Namespace == ns && t.Lease == name {
			live.Tabs = append(live.Tabs, tabView(t))
		}
	}
	if f := u.decisionsFunc(); f != nil {
		live.Election = true
		live.Decisions = decisionViews(f(ns, name), now)
		if len(live.Decisions) > 0 && live.Decisions[0].Kind == templates.DecisionConflict && len(live.Candidates) > 0 {
			live.Conflict = live.Decisions[0].Message
		}
	}
	// A lease that does not exist still has a page while candidates name it: the controller
	// may not have written it yet, or leave it alone, and its decisions say why.
	return live, live.Exists || len(changes) > 0 || len(live.Candidates) > 0, nil
}

// leaseNow fills the state of the lease as it is now.
func (u *UI) leaseNow(ctx context.Context, live *templates.LeaseLive, ns, name string, changes []judge.Change, now time.Time) error {
	o, err := u.store.Get(ctx, store.Key{Resource: u.leases.StorageResource(), Namespace: ns, Name: name})
	switch {
	case notFound(err):
		return nil
	case err != nil:
		return err
	}
	l, err := u.decodeLease(o)
	if err != nil {
		return err
	}
	live.Exists = true
	live.Card = leaseCard(l, currentChange(l, changes), now)
	live.YAML, err = leaseYAML(l)
	return err
}

// leaseAsOf fills the state of the lease at the moment at: the last write committed by then,
// read from the change log (the history cache keeps only the first and last renewal of a term),
// judged against the change before it.
func (u *UI) leaseAsOf(ctx context.Context, live *templates.LeaseLive, ns, name string, changes []judge.Change, at time.Time) error {
	n := len(changes)
	if n == 0 || changes[n-1].Deleted {
		return nil
	}
	cur := changes[n-1]
	live.Exists = true
	meta := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	live.Card = leaseCard(meta, cur, at)
	evs, err := u.store.History(ctx, store.Key{Resource: u.leases.StorageResource(), Namespace: ns, Name: name}, cur.Revision-1)
	if err != nil {
		return err
	}
	last := -1
	for i, ev := range evs {
		if ev.Time.After(at) || ev.Type == store.Deleted {
			break
		}
		last = i
	}
	if last < 0 {
		return nil // compacted since: the page shows no object
	}
	l, err := u.decodeLease(evs[last].Object)
	if err != nil {
		return err
	}
	if evs[last].Object.Revision != cur.Revision {
		live.Card = leaseCard(meta, judge.ChangeOf(l, evs[last].Object.Revision, evs[last].Time, &cur), at)
	}
	live.YAML, err = leaseYAML(l)
	return err
}

// changesUntil is the changes committed at or before at.
func changesUntil(changes []judge.Change, at time.Time) []judge.Change {
	n := 0
	for n < len(changes) && !changes[n].At.After(at) {
		n++
	}
	return changes[:n]
}

// leaseYAML is the lease as `kubectl get -o yaml` shows it: apiVersion and kind, the
// resourceVersion, no managedFields.
func leaseYAML(l *coordinationv1.Lease) (string, error) {
	cp := l.DeepCopy()
	cp.APIVersion = coordinationv1.SchemeGroupVersion.String()
	cp.Kind = "Lease"
	cp.ManagedFields = nil
	b, err := yaml.Marshal(cp)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// eventRows lists events newest first.
func eventRows(events []*corev1.Event, now time.Time) []templates.EventRow {
	last := func(e *corev1.Event) time.Time {
		switch {
		case !e.LastTimestamp.IsZero():
			return e.LastTimestamp.Time
		case e.EventTime.Time != time.Time{}:
			return e.EventTime.Time
		case !e.FirstTimestamp.IsZero():
			return e.FirstTimestamp.Time
		}
		return e.CreationTimestamp.Time
	}
	slices.SortStableFunc(events, func(a, b *corev1.Event) int { return last(b).Compare(last(a)) })
	if len(events) > maxEvents {
		events = events[:maxEvents]
	}
	rows := make([]templates.EventRow, 0, len(events))
	for _, e := range events {
		src := strings.TrimSpace(e.Source.Component + " " + e.Source.Host)
		if src == "" {
			src = e.ReportingController
		}
		rows = append(rows, templates.EventRow{
			Type:    judge.Shown(e.Type),
			Reason:  judge.Shown(e.Reason),
			Message: judge.Cut(e.Message, maxEventMessage),
			Count:   e.Count,
			Last:    clockTime(last(e)),
			Age:     ageText(last(e), now),
			Source:  judge.Shown(src),
		})
	}
	return rows
}

// maxEventMessage is how much of an Event's message the lease page shows: kube-apiserver keeps
// up to 1 KiB of it, and so do the screens.
const maxEventMessage = 1024
