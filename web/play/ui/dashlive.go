package ui

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
)

// The dashboard has one renderer: the components of templates/dashboard.templ. The page
// renders its live part with them, and the board keeps the same view models (liveDash) for the
// dashboards that follow it over /ui/dashboard/watch: when a card or a row changes, it is
// rendered again by the same component, once per language (and, for what the user may do, per
// permission), and sent to every dashboard that shows it, keyed by its element's id.
// dashboard.js puts each fragment in place, changing only what differs, and decides nothing.

// The lists of the live part, in the order their fragments are sent.
const (
	liveCards = iota
	liveTabs
	liveCandidates
	liveElections
	liveLists
)

// liveListIDs are the ids of the lists' elements on the page.
var liveListIDs = [liveLists]string{templates.CardsID, templates.TabsID, templates.CandidatesID, templates.ElectionsID}

// liveDash is the dashboard's live part as the board keeps it: every card, tab row,
// LeaseCandidate row and elections row as the view model the page renders it from, their
// fragments as rendered so far, and the dashboards that follow them. It is the board's, and
// guarded by the board's mutex.
type liveDash struct {
	election bool // the election controller runs
	slow     []templates.SlowChoice
	lists    [liveLists]liveList
	// tabs are what the board knows of each connected tab (by the hub's id) beyond its row;
	// byLease the tabs of each lease; candCount how many LeaseCandidates name each lease.
	tabs      map[string]liveTab
	byLease   map[leaseKey]map[string]bool
	candCount map[leaseKey]int
	// room is the instructor's view of the room (every namespace's tabs).
	room []templates.RoomRow
	// namespaces are the namespaces the store has; namespacesChanged says that one came or
	// went since the last flush.
	namespaces        map[string]bool
	namespacesChanged bool
	// tabsVer is the version of the hub's list and decided the cursor of the decision feed
	// that the live part shows.
	tabsVer, decided uint64
	// html holds each element's fragments rendered so far, by element id; an element that
	// changes is rendered again when a dashboard needs it.
	html map[string]map[liveVariant]string
	subs map[*dashSub]struct{}
}

// liveTab is a connected tab as the live part knows it.
type liveTab struct {
	view        templates.Tab
	key         leaseKey
	connectedAt int64
	logAt       int64 // when its newest decision was taken (tabproto.LogLine.At)
}

// liveList is one list of the live part, by element id.
type liveList struct {
	entries map[string]*liveEntry
	// sorted are the entries in the page's order (namespace first), and index their
	// positions; nil when an entry came, went or moved.
	sorted []*liveEntry
	index  map[string]int
}

// liveEntry is one card or row: its element id, its namespace, its place in the list's order
// and its view model (templates.LeaseCard, templates.Tab, templates.CandidateRow or
// templates.ElectionRow).
type liveEntry struct {
	id, ns, order string
	model         any
}

// liveVariant is one rendering of an element: in a language, and with what the user may do
// (a card's data-writable, a tab row's data-commandable).
type liveVariant struct {
	lang i18n.Lang
	may  bool
}

// liveChange is what changed in one flush of the board.
type liveChange struct {
	put  map[string]int // the elements rendered again: their lists
	gone []liveGone
	// logs are the tab rows (by element id) of which only the newest decision changed: it is
	// rendered again alone.
	logs []string
	// moved marks the lists whose members came, went or moved; room, a change of the room;
	// namespaces, of the namespaces known.
	moved            [liveLists]bool
	room, namespaces bool
	// history holds the namespaces where something happened that the time control marks.
	history map[string]bool
	feed    []templates.FeedItem
	// renewals counts the renewals, renewalsIn by namespace.
	renewals   int
	renewalsIn map[string]int
}

// liveGone is an element that left a namespace's dashboards.
type liveGone struct{ id, ns string }

func newLiveDash() *liveDash {
	d := &liveDash{subs: map[*dashSub]struct{}{}}
	d.clear()
	return d
}

// clear forgets every element.
func (d *liveDash) clear() {
	for l := range d.lists {
		d.lists[l] = liveList{entries: map[string]*liveEntry{}}
	}
	d.tabs, d.byLease, d.candCount = map[string]liveTab{}, map[leaseKey]map[string]bool{}, map[leaseKey]int{}
	d.html, d.room, d.tabsVer, d.decided = map[string]map[liveVariant]string{}, nil, 0, 0
	d.namespaces = map[string]bool{}
}

// loadLocked reads the whole live part from the board just started: its cards and
// LeaseCandidates, the namespaces, the hub's tabs and the election controller's decisions.
func (d *liveDash) loadLocked(b *board, namespaces []string, now time.Time) {
	d.clear()
	for _, ns := range namespaces {
		d.namespaces[ns] = true
	}
	d.election = b.read.decisions != nil
	d.slow = slowChoices(context.Background(), nil)
	_, d.decided = b.dfeed.since(0)
	ch := newLiveChange()
	dirty, elections := map[leaseKey]bool{}, map[leaseKey]bool{}
	for k, r := range b.cands {
		d.setCandidate(ch, k, r, dirty, elections)
	}
	d.takeTabs(ch, b, dirty, now)
	for k := range b.leases {
		dirty[k] = true
	}
	d.settle(ch, b, dirty, elections, now)
}

// newLiveChange is an empty change.
func newLiveChange() *liveChange {
	return &liveChange{put: map[string]int{}, history: map[string]bool{}}
}

// flushLocked takes what the board's flush changed (msg, with its new feed lines, feed), the
// tabs that changed in the hub and the leases with new election decisions, renders what changed
// and sends it to the dashboards that show it.
func (d *liveDash) flushLocked(b *board, msg boardMessage, feed []templates.FeedItem, now time.Time) {
	ch := newLiveChange()
	ch.feed, ch.renewals, ch.renewalsIn = slices.Clone(feed), msg.Renewals, msg.renewalsIn
	ch.namespaces, d.namespacesChanged = d.namespacesChanged, false
	dirty, elections := map[leaseKey]bool{}, map[leaseKey]bool{}
	for _, c := range msg.Cards {
		dirty[leaseKey{c.Namespace, c.Name}] = true
	}
	for _, c := range msg.Gone {
		d.remove(ch, liveCards, templates.CardID(c.Namespace, c.Name))
		ch.history[c.Namespace] = true
	}
	for _, c := range msg.Candidates {
		k := leaseKey{c.Namespace, c.Name}
		d.setCandidate(ch, k, b.cands[k], dirty, elections)
	}
	for _, c := range msg.CandidatesGone {
		d.removeCandidate(ch, leaseKey{c.Namespace, c.Name}, dirty, elections)
	}
	d.takeTabs(ch, b, dirty, now)
	keys, cursor := b.dfeed.since(d.decided)
	d.decided = cursor
	for _, k := range keys {
		dirty[k], elections[k] = true, true
	}
	for _, f := range ch.feed {
		ch.history[f.Namespace] = true
	}
	d.settle(ch, b, dirty, elections, now)
	d.sendLocked(ch)
}

// settle renders again the elections rows and the cards of the leases marked, and the room.
func (d *liveDash) settle(ch *liveChange, b *board, dirty, elections map[leaseKey]bool, now time.Time) {
	for k := range elections {
		if n := d.candCount[k]; n > 0 {
			d.set(ch, liveElections, templates.ElectionID(k.ns, k.name), k.ns, k.ns+"\x00"+k.name, electionRow(k, n, b.read.decisions, now))
		} else {
			d.remove(ch, liveElections, templates.ElectionID(k.ns, k.name))
		}
	}
	for k := range dirty {
		d.setCard(ch, b, k, now)
	}
	if ch.room {
		var tabs []templates.Tab
		for _, e := range d.sortedLocked(liveTabs) {
			tabs = append(tabs, e.model.(templates.Tab))
		}
		room := roomRows(tabs, d.overlaps())
		ch.room = !reflect.DeepEqual(room, d.room)
		d.room = room
	}
}

// namespaceLocked takes a namespace's change from the board's watch.
func (d *liveDash) namespaceLocked(ev store.Event) {
	if ev.Type == store.Deleted {
		delete(d.namespaces, ev.Object.Name)
	} else {
		d.namespaces[ev.Object.Name] = true
	}
	d.namespacesChanged = true
}

// namespacesFor are the namespaces the filter of a dashboard of namespace shown lists: the
// store's, those of the leases, and the one shown, sorted (as the page lists them).
func (d *liveDash) namespacesFor(shown string) []string {
	var out []string
	for ns := range d.namespaces {
		out = append(out, ns)
	}
	if shown != "" && !d.namespaces[shown] && len(validation.IsDNS1123Label(shown)) == 0 {
		out = append(out, shown)
	}
	var ofLeases []string
	for _, e := range d.lists[liveCards].entries {
		ofLeases = append(ofLeases, e.ns)
	}
	return knownNamespaces(out, ofLeases)
}

// setCard dresses lease k's card as the page does (dressCard) and keeps it.
func (d *liveDash) setCard(ch *liveChange, b *board, k leaseKey, now time.Time) {
	bl := b.leases[k]
	if bl == nil {
		return
	}
	var latest templates.DecisionView
	decided := false
	if d.candCount[k] > 0 {
		latest, decided = latestDecision(b.read.decisions, k, now)
	}
	id := templates.CardID(k.ns, k.name)
	c := dressCard(bl.view, d.candCount[k], d.tabViews(d.tabsOf(k)), latest, decided)
	if old, ok := d.lists[liveCards].entries[id]; !ok || old.model.(templates.LeaseCard).Overlaps != c.Overlaps {
		ch.room = true // the room counts the split brains of its participants' leases
	}
	d.set(ch, liveCards, id, k.ns, k.ns+"\x00"+k.name, c)
}

// setCandidate keeps LeaseCandidate k's row r and counts it for its lease.
func (d *liveDash) setCandidate(ch *liveChange, k leaseKey, r templates.CandidateRow, dirty, elections map[leaseKey]bool) {
	id := templates.CandidateID(k.ns, k.name)
	if old, ok := d.lists[liveCandidates].entries[id]; ok {
		if old.model.(templates.CandidateRow).LeaseName == r.LeaseName {
			d.set(ch, liveCandidates, id, k.ns, k.ns+"\x00"+k.name, r)
			return
		}
		d.removeCandidate(ch, k, dirty, elections)
	}
	lease := leaseKey{k.ns, r.LeaseName}
	d.candCount[lease]++
	dirty[lease], elections[lease] = true, true
	d.set(ch, liveCandidates, id, k.ns, k.ns+"\x00"+k.name, r)
}

// removeCandidate forgets LeaseCandidate k's row.
func (d *liveDash) removeCandidate(ch *liveChange, k leaseKey, dirty, elections map[leaseKey]bool) {
	id := templates.CandidateID(k.ns, k.name)
	old, ok := d.lists[liveCandidates].entries[id]
	if !ok {
		return
	}
	lease := leaseKey{k.ns, old.model.(templates.CandidateRow).LeaseName}
	if d.candCount[lease]--; d.candCount[lease] <= 0 {
		delete(d.candCount, lease)
	}
	dirty[lease], elections[lease] = true, true
	d.remove(ch, liveCandidates, id)
}

// takeTabs takes the changes of the hub's list since the live part's version.
func (d *liveDash) takeTabs(ch *liveChange, b *board, dirty map[leaseKey]bool, now time.Time) {
	tabs, gone, whole, version := b.read.hub.tabChanges(d.tabsVer)
	d.tabsVer = version
	if whole {
		listed := make(map[string]bool, len(tabs))
		for _, t := range tabs {
			listed[t.ID] = true
		}
		for id := range d.tabs {
			if !listed[id] {
				gone = append(gone, id)
			}
		}
	}
	for _, info := range tabs {
		d.setTab(ch, info, dirty, now)
	}
	for _, id := range gone {
		d.removeTab(ch, id, dirty)
	}
}

// setTab keeps a tab's row as the tab last reported. A tab that has just told of a conflict
// (another candidate was faster) has it told in the feed of the dashboards open now.
func (d *liveDash) setTab(ch *liveChange, info TabInfo, dirty map[leaseKey]bool, now time.Time) {
	t := tabView(info)
	k := leaseKey{t.Namespace, t.Lease}
	old, had := d.tabs[info.ID]
	if had && old.key != k {
		delete(d.byLease[old.key], info.ID)
		dirty[old.key] = true
	}
	if d.byLease[k] == nil {
		d.byLease[k] = map[string]bool{}
	}
	d.byLease[k][info.ID] = true
	if !had || old.view.State != t.State || old.view.Stale != t.Stale || old.key != k {
		ch.history[t.Namespace] = true // a candidate's role changed: an event
	}
	if log := info.LastLog; had && log.Kind == "conflict" && log.At != old.logAt {
		ch.feed = append(ch.feed, conflictLine(info, now))
	}
	d.tabs[info.ID] = liveTab{view: t, key: k, connectedAt: info.ConnectedAt, logAt: info.LastLog.At}
	id := templates.TabRowID(info.ID)
	switch {
	case had && reflect.DeepEqual(old.view, t):
	case had && sameButLog(old.view, t):
		// The row's newest decision alone: a few words, not the row with its fault bar.
		d.lists[liveTabs].entries[id].model = t
		delete(d.html, id)
		delete(d.html, templates.TabLogID(info.ID))
		ch.logs = append(ch.logs, id)
	default:
		dirty[k], ch.room = true, true
		order := fmt.Sprintf("%s\x00%s\x00%020d\x00%s", t.Namespace, t.Lease, info.ConnectedAt, info.ID)
		d.set(ch, liveTabs, id, t.Namespace, order, t)
	}
}

// sameButLog says whether two rows of a tab differ at most in its newest decision.
func sameButLog(a, b templates.Tab) bool {
	a.LastLog, a.LastLogMsg = b.LastLog, b.LastLogMsg
	return reflect.DeepEqual(a, b)
}

// removeTab forgets a tab that left.
func (d *liveDash) removeTab(ch *liveChange, id string, dirty map[leaseKey]bool) {
	old, ok := d.tabs[id]
	if !ok {
		return
	}
	delete(d.tabs, id)
	delete(d.byLease[old.key], id)
	if len(d.byLease[old.key]) == 0 {
		delete(d.byLease, old.key)
	}
	dirty[old.key], ch.room, ch.history[old.key.ns] = true, true, true
	d.remove(ch, liveTabs, templates.TabRowID(id))
}

// conflictLine is the feed line of a tab that lost a race for its lease: the tab's own words.
func conflictLine(info TabInfo, now time.Time) templates.FeedItem {
	f := templates.FeedItem{AtMs: now.UnixMilli(), At: clockTime(now), Kind: "conflict", Text: info.Identity + ": " + info.LastLog.Text,
		Namespace: info.Namespace, Lease: info.Lease}
	if m := info.LastLog.Msg; m != nil {
		says := candidateSays(*m)
		f.Says = i18n.Text{En: info.Identity + ": " + says.En, Zh: info.Identity + ": " + says.Zh}
	}
	return f
}

// tabsOf are the ids of lease k's tabs, in the order the dashboard lists them.
func (d *liveDash) tabsOf(k leaseKey) []string {
	ids := make([]string, 0, len(d.byLease[k]))
	for id := range d.byLease[k] {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		return cmp.Or(cmp.Compare(d.tabs[a].connectedAt, d.tabs[b].connectedAt), strings.Compare(a, b))
	})
	return ids
}

// tabViews are the rows of the tabs ids.
func (d *liveDash) tabViews(ids []string) []templates.Tab {
	var out []templates.Tab
	for _, id := range ids {
		out = append(out, d.tabs[id].view)
	}
	return out
}

// overlaps counts the split brains of each card's lease.
func (d *liveDash) overlaps() map[leaseKey]int {
	out := map[leaseKey]int{}
	for _, e := range d.lists[liveCards].entries {
		c := e.model.(templates.LeaseCard)
		out[leaseKey{c.Namespace, c.Name}] = c.Overlaps
	}
	return out
}

// set keeps an element of list l, unless it is unchanged; one that changed is rendered again
// when a dashboard needs it.
func (d *liveDash) set(ch *liveChange, l int, id, ns, order string, model any) {
	list := &d.lists[l]
	old := list.entries[id]
	if old != nil && old.ns == ns && old.order == order && sameModel(old.model, model) {
		return
	}
	if old == nil || old.order != order {
		list.sorted, ch.moved[l] = nil, true
	}
	if old == nil {
		old = &liveEntry{id: id}
		list.entries[id] = old
	} else if old.ns != ns {
		ch.gone = append(ch.gone, liveGone{id, old.ns}) // its namespace's dashboards no longer show it
	}
	// In place: the sorted list holds the entry.
	old.ns, old.order, old.model = ns, order, model
	ch.put[id] = l
	delete(d.html, id)
}

// remove forgets an element of list l.
func (d *liveDash) remove(ch *liveChange, l int, id string) {
	list := &d.lists[l]
	old, ok := list.entries[id]
	if !ok {
		return
	}
	delete(list.entries, id)
	list.sorted, ch.moved[l] = nil, true
	ch.gone = append(ch.gone, liveGone{id, old.ns})
	delete(ch.put, id)
	delete(d.html, id)
}

// sameModel says whether two view models render alike, but for how long ago a decision was
// taken, which the page's script keeps current.
func sameModel(a, b any) bool {
	if ra, ok := a.(templates.ElectionRow); ok {
		if rb, ok := b.(templates.ElectionRow); ok {
			ra.Decision.Age, ra.Decision.AgeSays = "", i18n.Text{}
			rb.Decision.Age, rb.Decision.AgeSays = "", i18n.Text{}
			return reflect.DeepEqual(ra, rb)
		}
	}
	return reflect.DeepEqual(a, b)
}

// sortedLocked are list l's entries in the page's order.
func (d *liveDash) sortedLocked(l int) []*liveEntry {
	list := &d.lists[l]
	if list.sorted == nil {
		list.sorted = make([]*liveEntry, 0, len(list.entries))
		for _, e := range list.entries {
			list.sorted = append(list.sorted, e)
		}
		slices.SortFunc(list.sorted, func(a, b *liveEntry) int { return strings.Compare(a.order, b.order) })
		list.index = make(map[string]int, len(list.sorted))
		for i, e := range list.sorted {
			list.index[e.id] = i
		}
	}
	return list.sorted
}
