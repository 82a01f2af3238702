package ui

import (
	"context"
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
	"github.com/leaselab/leaselab/web/judge"
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
		RecordingURL: recordingURL(ns, ""),
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
		feed = append(feed, feedItems(l.Namespace, l.Name, judge.Terms(changes, now))...)
		card := leaseCard(l, currentChange(l, changes), now)
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

// currentChange is the lease as the rules see it: its newest change in the history, else
// (the history no longer reaching back that far) the lease as if written at its newest
// managedFields time, else at its creation.
func currentChange(l *coordinationv1.Lease, changes []judge.Change) judge.Change {
	rv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
	if n := len(changes); n > 0 && !changes[n-1].Deleted && changes[n-1].Revision == rv {
		return changes[n-1]
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
	return judge.ChangeOf(l, rv, t, nil)
}

// leaseURL, playURL and deleteURL are the UI's links for a lease.
func leaseURL(ns, name string) string {
	return "/leases/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
}

func playURL(ns, name string) string {
	return "/play?" + url.Values{"namespace": {ns}, "lease": {name}}.Encode()
}

// recordingURL downloads the recording of a namespace's lease (lease set), of a namespace
// (ns set) or of everything.
func recordingURL(ns, lease string) string {
	q := url.Values{}
	if ns != "" {
		q.Set("namespace", ns)
	}
	if lease != "" {
		q.Set("lease", lease)
	}
	if len(q) == 0 {
		return "/ui/history"
	}
	return "/ui/history?" + q.Encode()
}

func deleteURL(ns, name string) string {
	return "/ui/leases/" + url.PathEscape(ns) + "/" + url.PathEscape(name) + "/delete"
}

// leaseCard is the card of one lease as cur left it, its countdown taken at now.
func leaseCard(l *coordinationv1.Lease, cur judge.Change, now time.Time) templates.LeaseCard {
	c := templates.LeaseCard{
		Namespace:       l.Namespace,
		Name:            l.Name,
		URL:             leaseURL(l.Namespace, l.Name),
		PlayURL:         playURL(l.Namespace, l.Name),
		DeleteURL:       deleteURL(l.Namespace, l.Name),
		Remaining:       "—",
		Holder:          judge.Shown(cur.Holder),
		Transitions:     cur.Transitions,
		DurationSeconds: int32(cur.Duration / time.Second),
		Strategy:        cur.Strategy,
		PreferredHolder: judge.Shown(cur.PreferredHolder),
		Status:          judge.Status(cur, now),
	}
	if !cur.RenewTime.IsZero() {
		c.RenewTimeMs = cur.RenewTime.UnixMilli()
	}
	if since := cur.Since(); !since.IsZero() {
		c.SinceMs = since.UnixMilli()
	}
	expires := cur.Expiry()
	if !expires.IsZero() {
		c.ExpiresAtMs = expires.UnixMilli()
	}
	switch {
	case c.Status == judge.StatusExpired:
		c.Remaining = "0 s"
	case c.Status == judge.StatusHeld && expires.IsZero():
		c.RemainingFraction = 1
	case c.Status == judge.StatusHeld:
		left := expires.Sub(now)
		c.RemainingFraction = min(1, left.Seconds()/cur.Duration.Seconds())
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
	r.Strategies, r.V1alpha1 = judge.StrategiesText(list, alpha), alpha
	if lc.Spec.RenewTime != nil {
		r.RenewTime = clockTime(lc.Spec.RenewTime.Time)
		r.RenewAge = ageText(lc.Spec.RenewTime.Time, now)
	}
	if lc.Spec.PingTime != nil {
		r.PingTime = clockTime(lc.Spec.PingTime.Time)
	}
	return r
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

// feedItems are the feed lines of a lease's terms (judge.Tell).
func feedItems(ns, name string, terms []judge.Term) []templates.FeedItem {
	var out []templates.FeedItem
	for _, t := range judge.Tell(ns+"/"+name, terms) {
		out = append(out, feedItem(ns, name, t))
	}
	return out
}

// feedItem is one feed line for the templates.
func feedItem(ns, name string, t judge.Told) templates.FeedItem {
	return templates.FeedItem{AtMs: t.At.UnixMilli(), At: clockTime(t.At), Kind: t.Kind, Text: t.Text, Namespace: ns, Lease: name}
}
