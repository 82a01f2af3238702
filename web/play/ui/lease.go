package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// maxEvents is how many events the lease page lists.
const maxEvents = 50

// leasePage serves /leases/:namespace/:name[?at=].
func (u *leaseScreen) leasePage(c echo.Context) error {
	ns, name := c.Param("namespace"), c.Param("name")
	m, ok, err := u.momentOfRequest(c)
	if !ok {
		return err
	}
	live, known, err := u.leaseLiveView(c.Request().Context(), ns, name, m)
	if err != nil {
		return u.failMoment(c, m.at, err)
	}
	if !known {
		return u.failSays(c, http.StatusNotFound, i18n.Say("error.noLease", ns+"/"+name))
	}
	liveURL := leaseURL(ns, name) + "/live"
	v := templates.LeasePage{
		Page:         u.page(ns+"/"+name, "lease"),
		Namespace:    ns,
		Name:         name,
		Live:         live,
		RV:           live.Revision,
		DeleteURL:    deleteURL(ns, name),
		PlayURL:      playURL(ns, name),
		StageURL:     stageURL(ns, name),
		LiveURL:      liveURL,
		Time:         timeControl(m, ns, name, liveURL, "lease-live"),
		RecordingURL: recordingURL(ns, name),
	}
	v.Page.At = live.Moment.At
	return u.render(c, http.StatusOK, templates.LeasePageView(v))
}

// momentLayout is how a moment is written in links: RFC 3339 with milliseconds.
const momentLayout = "2006-01-02T15:04:05.000Z07:00"

// leaseLive serves the live part of the lease page[?at=], which lease.js and scrub.js swap in.
func (u *leaseScreen) leaseLive(c echo.Context) error {
	m, ok, err := u.momentOfRequest(c)
	if !ok {
		return err
	}
	live, _, err := u.leaseLiveView(c.Request().Context(), c.Param("namespace"), c.Param("name"), m)
	if err != nil {
		return u.failMoment(c, m.at, err)
	}
	return u.render(c, http.StatusOK, templates.LeaseLiveView(live))
}

// leaseLiveView builds the lease page's live part as of m (at a past moment: the changes up to
// then, drawn by the same judge). known is false when the lease neither exists nor has any
// change left in the log.
func (u *leaseScreen) leaseLiveView(ctx context.Context, ns, name string, m moment) (templates.LeaseLive, bool, error) {
	now := u.judgeTime(m)
	live := templates.LeaseLive{Moment: u.momentView(m, leaseURL(ns, name)), ObjectURL: u.objectURL(ns, name)}
	rev, _, err := u.store.Revision(ctx)
	if err != nil {
		return live, false, err
	}
	live.Revision = strconv.FormatInt(rev, 10)
	var changes []judge.Change
	if m.past() {
		changes, err = u.hist.changesAt(ctx, ns, name, m.at)
	} else {
		changes, err = u.hist.changes(ctx, ns, name)
	}
	if err != nil {
		return live, false, err
	}
	known := len(changes) > 0 // at any moment, not only until m
	if !known && m.past() {
		later, err := u.hist.changes(ctx, ns, name)
		if err != nil {
			return live, false, err
		}
		known = len(later) > 0
	}
	if m.past() {
		err = u.leaseAsOf(ctx, &live, ns, name, changes, m.at)
	} else {
		err = u.leaseNow(ctx, &live, ns, name, changes, now)
	}
	if err != nil {
		return live, false, err
	}
	overlaps, vs, err := u.overlaps(ctx, ns, name, changes, now, m.past())
	if err != nil {
		return live, false, err
	}
	live.Overlaps = overlapViews(overlaps, ns, name, now)
	past := judge.PastLease(ns+"/"+name, changes, vs, now)
	live.PastLease = overlapViews(past, ns, name, now)
	live.ViewsRecorded = len(vs) > 0
	terms := judge.TermsSeen(changes, vs, now)
	live.Timeline = layoutTimeline(terms, append(slices.Clone(overlaps), past...), now, u.timelineMax())
	live.Lanes = stageLanes(terms, vs, overlaps, past, now)
	events, err := u.leaseEvents(ctx, ns, name, m)
	if err != nil {
		return live, false, err
	}
	live.Events = eventRows(events, now)
	if err := u.leaseCandidates(ctx, &live, ns, name, m); err != nil {
		return live, false, err
	}
	// A lease that does not exist still has a page while candidates name it: the controller
	// may not have written it yet, or leave it alone, and its decisions say why.
	return live, known || live.Exists || len(live.Candidates) > 0, nil
}

// leaseCandidates fills the lease's candidates as of m: its LeaseCandidates, its candidate
// tabs and the election controller's decisions.
func (u *leaseScreen) leaseCandidates(ctx context.Context, live *templates.LeaseLive, ns, name string, m moment) error {
	now := u.judgeTime(m)
	cands, _, err := u.listCandidates(ctx, ns, m)
	if err != nil {
		return err
	}
	for _, lc := range cands {
		if lc.Spec.LeaseName == name {
			live.Candidates = append(live.Candidates, candidateRow(lc, now))
		}
	}
	if live.Tabs, err = u.tabRows(ctx, m, ns, name); err != nil {
		return err
	}
	if f := u.decisionsAt(m); f != nil {
		live.Election = true
		live.Decisions = decisionViews(f(ns, name), now)
		live.DecisionsLater = len(live.Decisions) == 0 && m.past() && len(u.decisionsFunc()(ns, name)) > 0
		if len(live.Decisions) > 0 && live.Decisions[0].Kind == templates.DecisionConflict && len(live.Candidates) > 0 {
			live.Conflict, live.ConflictSays = live.Decisions[0].Message, live.Decisions[0].Says
		}
	}
	return nil
}

// leaseNow fills the state of the lease as it is now.
func (u *leaseScreen) leaseNow(ctx context.Context, live *templates.LeaseLive, ns, name string, changes []judge.Change, now time.Time) error {
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
	live.YAML, live.YAMLCut, err = leaseYAML(l)
	return err
}

// leaseAsOf fills the state of the lease at the moment at from its changes up to then.
func (u *leaseScreen) leaseAsOf(ctx context.Context, live *templates.LeaseLive, ns, name string, changes []judge.Change, at time.Time) error {
	cur, l, ok, err := u.changeAsOf(ctx, ns, name, changes, at)
	if err != nil || !ok {
		return err
	}
	live.Exists = true
	meta := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	live.Card = leaseCard(meta, cur, at)
	if l == nil {
		return nil // compacted since: the page shows no object
	}
	live.YAML, live.YAMLCut, err = leaseYAML(l)
	return err
}

// changeAsOf is the lease's last write committed by the moment at, judged against the change
// before it, and the lease it wrote; changes are the lease's changes up to at. It reads the
// change log, as the history cache keeps only the first and last renewal of a term. ok is
// false when the lease did not exist at that moment; the lease is nil when its write was
// compacted away since.
func (u *reader) changeAsOf(ctx context.Context, ns, name string, changes []judge.Change, at time.Time) (cur judge.Change, l *coordinationv1.Lease, ok bool, err error) {
	n := len(changes)
	if n == 0 || changes[n-1].Deleted {
		return judge.Change{}, nil, false, nil
	}
	cur = changes[n-1]
	// Read from the compacted change on up to the moment, not to the end of the log.
	through, err := u.store.RevisionAt(ctx, at)
	if err != nil {
		return cur, nil, false, err
	}
	evs, err := u.store.HistoryBetween(ctx, store.Key{Resource: u.leases.StorageResource(), Namespace: ns, Name: name}, cur.Revision-1, through)
	if err != nil {
		return cur, nil, false, err
	}
	last := -1
	for i, ev := range evs {
		if ev.Time.After(at) || ev.Type == store.Deleted {
			break
		}
		last = i
	}
	if last < 0 {
		return cur, nil, true, nil
	}
	if l, err = u.decodeLease(evs[last].Object); err != nil {
		return cur, nil, false, err
	}
	if evs[last].Object.Revision != cur.Revision {
		cur = judge.ChangeOf(l, evs[last].Object.Revision, evs[last].Time, &cur)
	}
	return cur, l, true, nil
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
// resourceVersion, no managedFields, and every string value cut to maxYAMLValue bytes. cut
// reports whether any was. The YAML is made from the lease's JSON form (as sigs.k8s.io/yaml
// makes it, keys sorted), so that form is where the strings are cut.
func leaseYAML(l *coordinationv1.Lease) (text string, cut bool, err error) {
	cp := l.DeepCopy()
	cp.APIVersion = coordinationv1.SchemeGroupVersion.String()
	cp.Kind = "Lease"
	cp.ManagedFields = nil
	j, err := json.Marshal(cp)
	if err != nil {
		return "", false, err
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber() // numbers as written, not as float64
	var obj any
	if err := d.Decode(&obj); err != nil {
		return "", false, err
	}
	obj, cut = cutStrings(obj, maxYAMLValue)
	b, err := yaml.Marshal(obj)
	if err != nil {
		return "", false, err
	}
	return string(b), cut, nil
}

// cutStrings cuts every string value in a decoded JSON value (keys are names, never long) to
// max bytes, and reports whether it cut any.
func cutStrings(v any, max int) (any, bool) {
	cut := false
	switch v := v.(type) {
	case string:
		return cutString(v, max)
	case map[string]any:
		for k, e := range v {
			var c bool
			v[k], c = cutStrings(e, max)
			cut = cut || c
		}
	case []any:
		for i, e := range v {
			var c bool
			v[i], c = cutStrings(e, max)
			cut = cut || c
		}
	}
	return v, cut
}

// cutString is s cut to at most max bytes, at a character's boundary, followed by how many
// bytes are left out; false when s is short enough.
func cutString(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "… (" + strconv.Itoa(len(s)-n) + " more bytes)", true
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
			AgeSays: ageSays(last(e), now),
			Source:  judge.Shown(src),
		})
	}
	return rows
}

// maxEventMessage is how much of an Event's message the lease page shows: kube-apiserver keeps
// up to 1 KiB of it, and so do the screens.
const maxEventMessage = 1024

// maxYAMLValue is how many bytes of a string the lease page's YAML shows: a holderIdentity
// may be megabytes long, and the page would be as large.
const maxYAMLValue = 300

// objectURL is where the API serves the lease ns/name (the cluster's mirror in front of one).
func (u *leaseScreen) objectURL(ns, name string) string {
	base := ""
	if u.opts.Upstream != nil {
		base = u.opts.Upstream.APIBase
	}
	return base + "/apis/coordination.k8s.io/v1/namespaces/" + url.PathEscape(ns) + "/leases/" + url.PathEscape(name)
}
