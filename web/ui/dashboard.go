package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/web/kinds/coordinationv1alpha1"
)

// maxFeed is how many lines the dashboard's feed starts with.
const maxFeed = 30

// dashboard serves /.
func (u *UI) dashboard(c echo.Context) error {
	v, err := u.dashboardView(c.Request().Context(), c.QueryParam("namespace"), templates.LeaseForm{})
	if err != nil {
		return err
	}
	return u.render(c, http.StatusOK, templates.DashboardView(v))
}

// leaseKey names a lease in maps.
type leaseKey struct{ ns, name string }

// dashboardView builds the dashboard's view model. ns filters what is shown (the rest is
// rendered hidden, so that the filter works without a reload).
func (u *UI) dashboardView(ctx context.Context, ns string, form templates.LeaseForm) (templates.Dashboard, error) {
	now := u.opts.Now()
	leases, leasesRV, err := u.listLeases(ctx, "")
	if err != nil {
		return templates.Dashboard{}, err
	}
	cands, candsRV, err := u.listCandidates(ctx, "")
	if err != nil {
		return templates.Dashboard{}, err
	}
	namespaces, nsRV, err := u.listNamespaces(ctx)
	if err != nil {
		return templates.Dashboard{}, err
	}
	tabs := u.hub.Tabs()

	candCount := map[leaseKey]int{}
	for _, lc := range cands {
		candCount[leaseKey{lc.Namespace, lc.Spec.LeaseName}]++
	}
	tabCount := map[leaseKey]int{}
	for _, t := range tabs {
		tabCount[leaseKey{t.Namespace, t.Lease}]++
	}
	v := templates.Dashboard{
		Page:         u.page("Dashboard", "dashboard"),
		LeasesRV:     strconv.FormatInt(leasesRV, 10),
		NamespacesRV: strconv.FormatInt(nsRV, 10),
		CandidatesRV: strconv.FormatInt(candsRV, 10),
		Namespace:    ns,
		Form:         form,
	}
	seen := map[string]bool{}
	for _, n := range namespaces {
		seen[n] = true
	}
	// Every lease that has candidates gets the election controller's latest decision; a
	// conflict also shows on its card.
	decisions := u.decisionsFunc()
	v.Election = decisions != nil
	latest := map[leaseKey]templates.DecisionView{}
	for k, n := range candCount {
		row := templates.ElectionRow{Namespace: k.ns, Lease: k.name, LeaseURL: leaseURL(k.ns, k.name), Candidates: n}
		row.Decision, row.HasDecision = latestDecision(decisions, k, now)
		if row.HasDecision {
			latest[k] = row.Decision
		}
		v.Elections = append(v.Elections, row)
	}
	slices.SortFunc(v.Elections, func(a, b templates.ElectionRow) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Lease, b.Lease)
	})
	var feed []templates.FeedItem
	for _, l := range leases {
		k := leaseKey{l.Namespace, l.Name}
		changes, err := u.hist.changes(ctx, l.Namespace, l.Name)
		if err != nil {
			return templates.Dashboard{}, err
		}
		feed = append(feed, feedItems(l.Namespace, l.Name, computeTerms(changes, now))...)
		card := leaseCard(l, lastWrite(l, changes), now)
		card.Candidates, card.Tabs = candCount[k], tabCount[k]
		if d, ok := latest[k]; ok && d.Kind == templates.DecisionConflict {
			card.Conflict = d.Message
		}
		v.Leases = append(v.Leases, card)
		if !seen[l.Namespace] {
			seen[l.Namespace] = true
			namespaces = append(namespaces, l.Namespace)
		}
	}
	slices.Sort(namespaces)
	v.Namespaces = namespaces
	for _, lc := range cands {
		v.Candidates = append(v.Candidates, candidateRow(lc, now))
	}
	for _, t := range tabs {
		v.Tabs = append(v.Tabs, tabView(t))
	}
	v.Feed = newestFeed(feed)
	return v, nil
}

// lastWrite is when the lease was last written: the commit time of its newest change in the
// history, else (the history no longer reaching back that far) the newest managedFields time,
// else its creation.
func lastWrite(l *coordinationv1.Lease, changes []leaseChange) time.Time {
	if n := len(changes); n > 0 && !changes[n-1].Deleted && strconv.FormatInt(changes[n-1].Revision, 10) == l.ResourceVersion {
		return changes[n-1].At
	}
	var t time.Time
	for _, m := range l.ManagedFields {
		if m.Time != nil && m.Time.After(t) {
			t = m.Time.Time
		}
	}
	if t.IsZero() {
		t = l.CreationTimestamp.Time
	}
	return t
}

// leaseURL, playURL and deleteURL are the UI's links for a lease.
func leaseURL(ns, name string) string {
	return "/leases/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
}

func playURL(ns, name string) string {
	return "/play?" + url.Values{"namespace": {ns}, "lease": {name}}.Encode()
}

func deleteURL(ns, name string) string {
	return "/ui/leases/" + url.PathEscape(ns) + "/" + url.PathEscape(name) + "/delete"
}

// leaseCard is the card of one lease, its countdown taken at now. changedAt is when the lease
// was last written: the hold counts from it when the lease has neither renewTime nor
// acquireTime (holdSince).
func leaseCard(l *coordinationv1.Lease, changedAt, now time.Time) templates.LeaseCard {
	c := templates.LeaseCard{
		Namespace: l.Namespace,
		Name:      l.Name,
		URL:       leaseURL(l.Namespace, l.Name),
		PlayURL:   playURL(l.Namespace, l.Name),
		DeleteURL: deleteURL(l.Namespace, l.Name),
		Remaining: "—",
	}
	s := l.Spec
	if s.HolderIdentity != nil {
		c.Holder = *s.HolderIdentity
	}
	if s.LeaseTransitions != nil {
		c.Transitions = *s.LeaseTransitions
	}
	if s.LeaseDurationSeconds != nil {
		c.DurationSeconds = *s.LeaseDurationSeconds
	}
	if s.Strategy != nil {
		c.Strategy = string(*s.Strategy)
	}
	if s.PreferredHolder != nil {
		c.PreferredHolder = *s.PreferredHolder
	}
	if s.RenewTime != nil {
		c.RenewTimeMs = s.RenewTime.UnixMilli()
	}
	var expires time.Time
	if since := holdSince(s, changedAt); !since.IsZero() {
		c.SinceMs = since.UnixMilli()
		if c.DurationSeconds > 0 {
			expires = since.Add(time.Duration(c.DurationSeconds) * time.Second)
			c.ExpiresAtMs = expires.UnixMilli()
		}
	}
	switch {
	case c.Holder == "":
		c.Status = "free"
	case expires.IsZero():
		c.Status = "held"
		c.RemainingFraction = 1
	case !now.Before(expires):
		c.Status = "expired"
		c.Remaining = "0 s"
	default:
		c.Status = "held"
		left := expires.Sub(now)
		c.RemainingFraction = min(1, left.Seconds()/float64(c.DurationSeconds))
		c.Remaining = secsText(left)
	}
	return c
}

// candidateRow is one LeaseCandidate as a table row.
func candidateRow(lc *coordinationv1beta1.LeaseCandidate, now time.Time) templates.CandidateRow {
	r := templates.CandidateRow{
		Namespace:        lc.Namespace,
		Name:             lc.Name,
		LeaseName:        lc.Spec.LeaseName,
		BinaryVersion:    lc.Spec.BinaryVersion,
		EmulationVersion: lc.Spec.EmulationVersion,
		Strategy:         string(lc.Spec.Strategy),
		LeaseURL:         leaseURL(lc.Namespace, lc.Spec.LeaseName),
	}
	list, alpha := coordinationv1alpha1.PreferredStrategies(lc)
	r.Strategies, r.V1alpha1 = strategiesText(list, alpha), alpha
	if lc.Spec.RenewTime != nil {
		r.RenewTime = clockTime(lc.Spec.RenewTime.Time)
		r.RenewAge = ageText(lc.Spec.RenewTime.Time, now)
	}
	if lc.Spec.PingTime != nil {
		r.PingTime = clockTime(lc.Spec.PingTime.Time)
	}
	return r
}

// strategiesText is how a candidate's strategies read: in order of preference, "(none)" for a
// v1alpha1 candidate with an empty list. dashboard.js writes the same.
func strategiesText(list []coordinationv1.CoordinatedLeaseStrategy, alpha bool) string {
	if alpha && len(list) == 0 {
		return "(none)"
	}
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = string(s)
	}
	return strings.Join(parts, " > ")
}

// tabView is a connected tab for the templates.
func tabView(t TabInfo) templates.Tab {
	return templates.Tab{
		ID:           t.ID,
		Owner:        t.Owner,
		Identity:     t.Identity,
		Namespace:    t.Namespace,
		Lease:        t.Lease,
		State:        string(t.State),
		Holder:       t.Holder,
		Paused:       t.Faults.Paused,
		Partitioned:  t.Faults.Partition != "",
		Slow:         t.Faults.LatencyMs > 0,
		ClockOffset:  offsetText(t.Faults.ClockOffsetMs),
		ActiveFaults: t.ActiveFaults,
		LastLog:      t.LastLog.Text,

		Coordinated:      t.Coordinated,
		BinaryVersion:    t.BinaryVersion,
		EmulationVersion: t.EmulationVersion,
		Strategy:         t.Strategy,
		PreferredHolder:  t.PreferredHolder,
		SteppingDown:     t.SteppingDown,
	}
}

// newestFeed orders feed lines newest first and keeps the newest maxFeed.
func newestFeed(items []templates.FeedItem) []templates.FeedItem {
	slices.SortStableFunc(items, func(a, b templates.FeedItem) int {
		switch {
		case a.AtMs > b.AtMs:
			return -1
		case a.AtMs < b.AtMs:
			return 1
		}
		return 0
	})
	if len(items) > maxFeed {
		items = items[:maxFeed]
	}
	return items
}

// feedItems tells a lease's terms as feed lines: who acquired it, and how each term ended.
func feedItems(ns, name string, terms []term) []templates.FeedItem {
	lease := ns + "/" + name
	item := func(at time.Time, kind, text string) templates.FeedItem {
		return templates.FeedItem{AtMs: at.UnixMilli(), At: clockTime(at), Kind: kind, Text: text, Namespace: ns, Lease: name}
	}
	var out []templates.FeedItem
	for i, t := range terms {
		if i == 0 || terms[i-1].Ended != endTakeover {
			out = append(out, item(t.Start, "acquired", fmt.Sprintf("%s acquired %s (transitions %d)", t.Holder, lease, t.Transitions)))
		}
		switch t.Ended {
		case endReleased:
			out = append(out, item(t.End, "released", fmt.Sprintf("%s released %s", t.Holder, lease)))
		case endTakeover:
			next := ""
			if i+1 < len(terms) {
				next = fmt.Sprintf(" (transitions %d)", terms[i+1].Transitions)
			}
			out = append(out, item(t.End, "takeover", fmt.Sprintf("%s took %s over from %s%s", t.Next, lease, t.Holder, next)))
		case endExpired:
			out = append(out, item(t.End, "expired", fmt.Sprintf("%s's hold on %s expired: not renewed in time", t.Holder, lease)))
		case endDeleted:
			out = append(out, item(t.End, "deleted", fmt.Sprintf("%s was deleted while %s held it", lease, t.Holder)))
		}
	}
	return out
}
