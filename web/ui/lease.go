package ui

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	live, known, err := u.leaseLiveView(c.Request().Context(), ns, name)
	if err != nil {
		return err
	}
	if !known {
		return u.fail(c, http.StatusNotFound, "There is no lease "+ns+"/"+name+", none in the change log, and no LeaseCandidates for it.")
	}
	v := templates.LeasePage{
		Page:      u.page(ns+"/"+name, "lease"),
		Namespace: ns,
		Name:      name,
		Live:      live,
		RV:        live.Revision,
		DeleteURL: deleteURL(ns, name),
		PlayURL:   playURL(ns, name),
		LiveURL:   leaseURL(ns, name) + "/live",
	}
	return u.render(c, http.StatusOK, templates.LeasePageView(v))
}

// leaseLive serves the live part of the lease page, which lease.js swaps in.
func (u *UI) leaseLive(c echo.Context) error {
	live, _, err := u.leaseLiveView(c.Request().Context(), c.Param("namespace"), c.Param("name"))
	if err != nil {
		return err
	}
	return u.render(c, http.StatusOK, templates.LeaseLiveView(live))
}

// leaseLiveView builds the lease page's live part. known is false when the lease neither
// exists nor has any change left in the log.
func (u *UI) leaseLiveView(ctx context.Context, ns, name string) (templates.LeaseLive, bool, error) {
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
	o, err := u.store.Get(ctx, store.Key{Resource: u.leases.StorageResource(), Namespace: ns, Name: name})
	switch {
	case err == nil:
		l, err := u.decodeLease(o)
		if err != nil {
			return live, false, err
		}
		live.Exists = true
		live.Card = leaseCard(l, currentChange(l, changes), now)
		live.YAML, err = leaseYAML(l)
		if err != nil {
			return live, false, err
		}
	case !notFound(err):
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
			Message: shownMessage(e.Message),
			Count:   e.Count,
			Last:    clockTime(last(e)),
			Age:     ageText(last(e), now),
			Source:  judge.Shown(src),
		})
	}
	return rows
}

// shownMessage is an Event's message as the lease page shows it: kube-apiserver keeps up to
// 1 KiB of it, and so do the screens.
func shownMessage(m string) string {
	if len(m) <= 1024 {
		return m
	}
	cut := 1024
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return m[:cut] + "…"
}
