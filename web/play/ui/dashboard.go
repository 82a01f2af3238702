package ui

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/api/kinds/coordinationv1alpha1"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// maxFeed is how many lines the dashboard's feed starts with.
const maxFeed = 30

// dashboard serves /[?at=].
func (u *dashboardScreen) dashboard(c echo.Context) error {
	return u.serveDashboard(c, templates.DashboardView)
}

// dashboardLive serves the part of the dashboard that shows a moment (/ui/dashboard/live?at=),
// which the time control swaps in.
func (u *dashboardScreen) dashboardLive(c echo.Context) error {
	return u.serveDashboard(c, templates.DashboardLiveView)
}

// serveDashboard renders the dashboard of the request's moment with view.
func (u *dashboardScreen) serveDashboard(c echo.Context, view func(templates.Dashboard) templ.Component) error {
	m, ok, err := u.momentOfRequest(c)
	if !ok {
		return err
	}
	v, err := u.dashboardView(c.Request(), c.QueryParam("namespace"), templates.LeaseForm{}, m)
	if err != nil {
		return u.failMoment(c, m.at, err)
	}
	return u.render(c, http.StatusOK, view(v))
}

// leaseKey names a lease in maps.
type leaseKey struct{ ns, name string }

// dashboardView builds the dashboard's view model as of m, for the user who made r. ns filters
// what is shown (the rest is rendered hidden, so that the filter works without a reload).
func (u *dashboardScreen) dashboardView(r *http.Request, ns string, form templates.LeaseForm, m moment) (templates.Dashboard, error) {
	ctx := r.Context()
	now := u.judgeTime(m)
	leases, leasesRV, err := u.listLeases(ctx, "", m)
	if err != nil {
		return templates.Dashboard{}, err
	}
	cands, candsRV, err := u.listCandidates(ctx, "", m)
	if err != nil {
		return templates.Dashboard{}, err
	}
	namespaces, nsRV, err := u.listNamespaces(ctx, m)
	if err != nil {
		return templates.Dashboard{}, err
	}
	tabs, err := u.tabRows(ctx, m, "", "")
	if err != nil {
		return templates.Dashboard{}, err
	}
	live := dashboardURL(ns)
	v := templates.Dashboard{
		SlowChoices:  slowChoices(ctx, nil),
		Page:         u.pageSays(i18n.Say("nav.dashboard"), "dashboard"),
		LeasesRV:     strconv.FormatInt(leasesRV, 10),
		NamespacesRV: strconv.FormatInt(nsRV, 10),
		CandidatesRV: strconv.FormatInt(candsRV, 10),
		Namespace:    ns,
		Form:         form,
		Tabs:         tabs,
		Moment:       u.momentView(m, live),
		Time:         timeControl(m, ns, "", withNamespace("/ui/dashboard/live", ns), "dashboard-live"),
		RecordingURL: recordingURL(ns, ""),
	}
	v.Page.At, v.Time.ReloadLive = v.Moment.At, true
	for _, lc := range cands {
		v.Candidates = append(v.Candidates, candidateRow(lc, now))
	}
	latest := u.electionRows(&v, cands, m)
	if err := u.dashboardCards(ctx, &v, leases, latest, m); err != nil {
		return templates.Dashboard{}, err
	}
	if ns != "" && !slices.Contains(namespaces, ns) && len(validation.IsDNS1123Label(ns)) == 0 {
		// A namespace with nothing in it yet (a join link's, say): the filter shows it, as the
		// forms that write in it do, rather than every namespace.
		namespaces = append(namespaces, ns)
	}
	ofLeases := make([]string, len(leases))
	for i, l := range leases {
		ofLeases[i] = l.Namespace
	}
	v.Namespaces = knownNamespaces(namespaces, ofLeases)
	who, _ := u.signedIn(r)
	offer(&v, who)
	if o := u.opts.Outage; o != nil && u.mayRunScenarios(r) && m.at.IsZero() {
		s := o.State()
		v.Outage = &templates.Outage{Mode: string(s.Mode), Namespace: s.Namespace}
	}
	v.Clear = u.clearOffer(r, ns, m)
	return v, nil
}

// offer makes the dashboard v the one who sees: its cards and tab rows say what who may do
// there (the page offers only what the API and the hub would accept), and the instructor sees
// the room.
func offer(v *templates.Dashboard, who templates.SignedIn) {
	for i := range v.Leases {
		v.Leases[i].Writable = who.MayWrite(v.Leases[i].Namespace)
	}
	for i := range v.Tabs {
		v.Tabs[i].Commandable = who.MayCommand(v.Tabs[i].Owner)
	}
	if who.Instructor && who.Name != "" {
		v.Room = roomRows(v.Tabs, cardOverlaps(v.Leases))
	}
}

// electionRows fills the dashboard's elections as of m: every lease that has candidates, with
// the election controller's latest decision about it, which it returns by lease.
func (u *dashboardScreen) electionRows(v *templates.Dashboard, cands []*coordinationv1beta1.LeaseCandidate, m moment) map[leaseKey]templates.DecisionView {
	candCount := map[leaseKey]int{}
	for _, lc := range cands {
		candCount[leaseKey{lc.Namespace, lc.Spec.LeaseName}]++
	}
	decisions := u.decisionsAt(m)
	v.Election = decisions != nil
	latest := map[leaseKey]templates.DecisionView{}
	for k, n := range candCount {
		row := electionRow(k, n, decisions, u.judgeTime(m))
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
	return latest
}

// dashboardCards fills the dashboard's lease cards and its feed, each lease's story told as
// of m; latest are the election controller's latest decisions by lease.
func (u *dashboardScreen) dashboardCards(ctx context.Context, v *templates.Dashboard, leases []*coordinationv1.Lease, latest map[leaseKey]templates.DecisionView, m moment) error {
	candCount := map[leaseKey]int{}
	for _, r := range v.Elections {
		candCount[leaseKey{r.Namespace, r.Lease}] = r.Candidates
	}
	tabs := map[leaseKey][]templates.Tab{}
	for _, t := range v.Tabs {
		k := leaseKey{t.Namespace, t.Lease}
		tabs[k] = append(tabs[k], t)
	}
	var feed []templates.FeedItem
	for _, l := range leases {
		k := leaseKey{l.Namespace, l.Name}
		st, err := u.story(ctx, l, u.judgeTime(m), m.past())
		if err != nil {
			return err
		}
		for _, t := range st.told {
			feed = append(feed, feedItem(l.Namespace, l.Name, t))
		}
		d, decided := latest[k]
		v.Leases = append(v.Leases, dressCard(st.card, candCount[k], tabs[k], d, decided))
	}
	v.Feed = newestFeed(feed)
	return nil
}

// dressCard is a lease's card as the judge left it with what the dashboard shows beside it:
// how many LeaseCandidates name the lease, its candidate tabs (in the order the dashboard
// lists them) with their roles, and the election controller's latest decision about it
// (decided: there is one) when that is a strategy conflict. The page and the dashboard's
// stream dress their cards with it alike.
func dressCard(c templates.LeaseCard, candidates int, tabs []templates.Tab, latest templates.DecisionView, decided bool) templates.LeaseCard {
	c.Candidates, c.Tabs, c.Cast = candidates, len(tabs), nil
	for _, t := range tabs {
		c.Cast = append(c.Cast, templates.CastMember{Identity: t.Identity, Role: templates.CastRole(t.State, t.Stale)})
	}
	c.Conflict, c.ConflictSays = "", i18n.Text{}
	if decided && latest.Kind == templates.DecisionConflict {
		c.Conflict, c.ConflictSays = latest.Message, latest.Says
	}
	return c
}

// electionRow is the elections row of lease k, which n LeaseCandidates name, with the latest of
// decisions about it as of now (decisions is nil when the controller does not run).
func electionRow(k leaseKey, n int, decisions func(namespace, lease string) []templates.DecisionView, now time.Time) templates.ElectionRow {
	row := templates.ElectionRow{Namespace: k.ns, Lease: k.name, LeaseURL: leaseURL(k.ns, k.name), Candidates: n}
	row.Decision, row.HasDecision = latestDecision(decisions, k, now)
	return row
}

// cardOverlaps counts the split brains on each card's lease.
func cardOverlaps(cards []templates.LeaseCard) map[leaseKey]int {
	out := make(map[leaseKey]int, len(cards))
	for _, c := range cards {
		out[leaseKey{c.Namespace, c.Name}] = c.Overlaps
	}
	return out
}

// roomRows are the instructor's room: one row per participant who opened tabs (tabs in the
// dashboard's order), by name, with the split brains on their tabs' leases as overlaps counts
// them. A participant's namespace is where their tabs run, the arena only when nowhere else.
func roomRows(tabs []templates.Tab, overlaps map[leaseKey]int) []templates.RoomRow {
	byOwner := map[string][]templates.Tab{}
	for _, t := range tabs {
		if t.Owner != "" {
			byOwner[t.Owner] = append(byOwner[t.Owner], t)
		}
	}
	rows := make([]templates.RoomRow, 0, len(byOwner))
	for owner, ts := range byOwner {
		r := templates.RoomRow{Owner: owner, Namespace: ts[0].Namespace, Tabs: len(ts)}
		leases := map[leaseKey]bool{}
		for _, t := range ts {
			if r.Namespace == "arena" && t.Namespace != "arena" {
				r.Namespace = t.Namespace
			}
			r.Leading += b2i(t.State == string(tabproto.StateLeader) && !t.Stale)
			r.Stale += b2i(t.Stale)
			r.Paused += b2i(t.Faults.Paused)
			r.Partitioned += b2i(t.Faults.Partition != tabproto.PartitionNone)
			r.Stopped += b2i(t.State == string(tabproto.StateStopped))
			if k := (leaseKey{t.Namespace, t.Lease}); !leases[k] {
				leases[k] = true
				r.SplitBrains += overlaps[k]
			}
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b templates.RoomRow) int { return strings.Compare(a.Owner, b.Owner) })
	return rows
}

// b2i is 1 for true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// knownNamespaces are the namespaces and those of the leases (ofLeases), sorted.
func knownNamespaces(namespaces, ofLeases []string) []string {
	seen := map[string]bool{}
	for _, n := range namespaces {
		seen[n] = true
	}
	for _, n := range ofLeases {
		if !seen[n] {
			seen[n] = true
			namespaces = append(namespaces, n)
		}
	}
	slices.Sort(namespaces)
	return namespaces
}

// dashboardURL is the dashboard filtered to the namespace ns (all when empty).
func dashboardURL(ns string) string { return withNamespace("/", ns) }

// withNamespace is path with ?namespace=ns, when ns is set.
func withNamespace(path, ns string) string {
	if ns == "" {
		return path
	}
	return path + "?" + url.Values{"namespace": {ns}}.Encode()
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
		StageURL:        stageURL(l.Namespace, l.Name),
		DeleteURL:       deleteURL(l.Namespace, l.Name),
		Remaining:       "—",
		Holder:          judge.Shown(cur.Holder),
		Transitions:     cur.Transitions,
		DurationSeconds: int32(cur.Written() / time.Second),
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
		r.RenewAgeSays = ageSays(lc.Spec.RenewTime.Time, now)
	}
	if lc.Spec.PingTime != nil {
		r.PingTime = clockTime(lc.Spec.PingTime.Time)
	}
	return r
}

// tabView is a connected tab for the templates.
func tabView(t TabInfo) templates.Tab {
	return templates.Tab{
		ID:         t.ID,
		Owner:      t.Owner,
		Identity:   t.Identity,
		Namespace:  t.Namespace,
		Lease:      t.Lease,
		State:      string(t.State),
		Holder:     t.Holder,
		Faults:     t.Faults,
		LastLog:    t.LastLog.Text,
		LastLogMsg: t.LastLog.Msg,

		Coordinated:      t.Coordinated,
		BinaryVersion:    t.BinaryVersion,
		EmulationVersion: t.EmulationVersion,
		Strategy:         t.Strategy,
		PreferredHolder:  t.PreferredHolder,
		SteppingDown:     t.SteppingDown,
		Stale:            t.Report.Stale(),
		Native:           t.Native,
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

// feedItem is one feed line for the templates.
func feedItem(ns, name string, t judge.Told) templates.FeedItem {
	return templates.FeedItem{AtMs: t.At.UnixMilli(), At: clockTime(t.At), Kind: t.Kind, Text: t.Text, Says: t.Says.Both(), Namespace: ns, Lease: name}
}
