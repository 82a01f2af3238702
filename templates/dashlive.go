package templates

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/a-h/templ"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// The dashboard's live part is rendered once, by the components of dashboard.templ: the page
// renders them all, and the dashboard's stream (web/play/ui, /ui/dashboard/watch) renders each
// card, row and feed line again when it changes and sends it, keyed by its element's id, for
// dashboard.js to put in place. These are the components as the stream renders them: shown,
// since a dashboard is only sent what its namespace filter shows.

// CardFragment is a lease card.
func CardFragment(c LeaseCard) templ.Component { return leaseCard(c, false) }

// TabRowFragment is a connected candidate tab's row, with the dashboard's delay choices.
func TabRowFragment(t Tab, slow []SlowChoice) templ.Component { return tabRow(t, false, slow) }

// TabLogFragment is the newest decision in a tab's row.
func TabLogFragment(t Tab) templ.Component { return tabLog(t) }

// CandidateFragment is a LeaseCandidate's row.
func CandidateFragment(c CandidateRow) templ.Component { return candidateRow(c, false) }

// ElectionFragment is a lease's row among the elections; election says whether the controller
// runs.
func ElectionFragment(r ElectionRow, election bool) templ.Component {
	return electionRow(r, election, false)
}

// FeedFragment is a line of the feed.
func FeedFragment(f FeedItem) templ.Component { return feedItem(f) }

// TabCountFragment is the number of candidate tabs in the tabs' heading.
func TabCountFragment(n int) templ.Component { return tabCount(n) }

// LeaseNamesFragment are the lease names the Open tab form suggests.
func LeaseNamesFragment(cards []LeaseCard) templ.Component { return leaseNames(cards) }

// NamespaceFilterFragment is the namespace filter: namespaces known, shown selected.
func NamespaceFilterFragment(namespaces []string, shown string) templ.Component {
	return nsFilter(namespaces, shown)
}

// RoomFragments are the parts of the instructor's room that change: its count, its list and
// its empty state.
func RoomFragments(rows []RoomRow) []templ.Component {
	return []templ.Component{roomCount(len(rows)), roomList(rows), roomEmpty(len(rows) == 0)}
}

// The ids of the dashboard's live elements: a card, a row, a list. A namespace and a name never
// hold a space, and a lease's key holds a slash, so that none is the id of another element.
const (
	// RoomCountID, RoomListID and RoomEmptyID are the room's parts (RoomFragments).
	RoomCountID, RoomListID, RoomEmptyID = "room-count", "room-list", "room-empty"
	// TabCountID, LeaseNamesID and NamespaceFilterID are TabCountFragment's,
	// LeaseNamesFragment's and NamespaceFilterFragment's elements.
	TabCountID, LeaseNamesID, NamespaceFilterID = "tab-count", "lease-names", "ns-filter"
	// CardsID, TabsID, CandidatesID and ElectionsID are the lists of cards and rows.
	CardsID, TabsID, CandidatesID, ElectionsID = "lease-grid", "tabs", "candidates", "elections"
)

// CardID is the id of a lease's card.
func CardID(ns, name string) string { return "card-" + ns + "/" + name }

// CandidateID is the id of a LeaseCandidate's row.
func CandidateID(ns, name string) string { return "lc-" + ns + "/" + name }

// ElectionID is the id of the elections row of a lease.
func ElectionID(ns, lease string) string { return "election-" + ns + "/" + lease }

// TabRowID is the id of the row of the tab the hub calls id.
func TabRowID(id string) string { return "tab-" + id }

// TabLogID is the id of the newest decision in the row of the tab the hub calls id.
func TabLogID(id string) string { return TabRowID(id) + "-log" }

// tabLogID is the id attribute of the newest decision in a tab row: none at a past moment.
func tabLogID(t Tab) templ.Attributes {
	if t.ID == "" {
		return nil
	}
	return templ.Attributes{"id": TabLogID(t.ID)}
}

// tabRowID is a tab row's id attribute: none for a candidate recorded at a past moment, which
// is no connected tab.
func tabRowID(t Tab) templ.Attributes {
	if t.ID == "" {
		return nil
	}
	return templ.Attributes{"id": TabRowID(t.ID)}
}

// faultsJSON are a tab's faults as the fault buttons' script reads them (live.js faultCommand):
// the command a button sends depends on them (the same button undoes what it did).
func faultsJSON(f tabproto.Faults) string {
	b, err := json.Marshal(f)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// roomFacts are a participant's tabs in words: how many, how many lead, and how many are
// paused, partitioned or stopped.
func roomFacts(ctx context.Context, r RoomRow) string {
	facts := []string{tr(ctx, "dash.roomTabs", r.Tabs), tr(ctx, "dash.roomNoLeader")}
	if r.Tabs == 1 {
		facts[0] = tr(ctx, "dash.roomTab1")
	}
	if r.Leading > 0 {
		facts[1] = tr(ctx, "dash.roomLeading", r.Leading)
	}
	for _, f := range []struct {
		n   int
		key string
	}{{r.Paused, "dash.roomPaused"}, {r.Partitioned, "dash.roomPartitioned"}, {r.Stopped, "dash.roomStopped"}} {
		if f.n > 0 {
			facts = append(facts, tr(ctx, f.key, f.n))
		}
	}
	return strings.Join(facts, " · ")
}
