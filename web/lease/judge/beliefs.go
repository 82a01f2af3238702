package judge

import "time"

// What each candidate believed, as lanes: one per candidate, its belief from one report to the
// next. The record lane says whom the Lease named; these say what each candidate acted on.

// Beliefs a lane segment may hold.
const (
	BeliefLeading     = "leading"
	BeliefFollowing   = "following"
	BeliefPaused      = "paused"      // frozen: it acts on nothing until it resumes
	BeliefPartitioned = "partitioned" // its requests do not get through
	BeliefStale       = "stale"       // it believes it leads while the record it read names another
)

// Belief is one segment of a candidate's lane: what it believed from From until To.
type Belief struct {
	Identity string
	Belief   string
	From, To time.Time
}

// BeliefOf is the one word for what a view shows the candidate believing: a frozen or cut off
// candidate is that first (it cannot act on its belief, nor learn it is wrong), then a leader
// whose record names another is stale. "" for a stopped candidate, which believes nothing.
func BeliefOf(v View) string {
	switch {
	case v.State == "stopped":
		return ""
	case v.Faults.Paused:
		return BeliefPaused
	case v.Faults.Partition != "":
		return BeliefPartitioned
	case v.Leads && v.Holder != "" && v.Holder != v.Identity:
		return BeliefStale
	case v.Leads:
		return BeliefLeading
	}
	return BeliefFollowing
}

// Beliefs are the lanes of the candidates' views (in any order), by identity in the order each
// first reported, each lane's segments in time order, merged where a belief did not change and
// ending at the next view or at now. Segments that end before from are left out.
func Beliefs(views []View, from, now time.Time) (order []string, lanes map[string][]Belief) {
	lanes = map[string][]Belief{}
	open := map[string]*Belief{}
	for _, v := range sortedBy(views, func(v *View) time.Time { return v.At }) {
		if v.At.After(now) {
			break
		}
		if _, seen := lanes[v.Identity]; !seen {
			order = append(order, v.Identity)
			lanes[v.Identity] = nil
		}
		b := BeliefOf(v)
		if cur := open[v.Identity]; cur != nil {
			if cur.Belief == b {
				continue
			}
			cur.To = v.At
			if cur.To.After(from) {
				lanes[v.Identity] = append(lanes[v.Identity], *cur)
			}
			delete(open, v.Identity)
		}
		if b != "" {
			open[v.Identity] = &Belief{Identity: v.Identity, Belief: b, From: v.At}
		}
	}
	for _, id := range order {
		if cur := open[id]; cur != nil {
			cur.To = now
			lanes[id] = append(lanes[id], *cur)
		}
	}
	return order, lanes
}
