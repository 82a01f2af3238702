package judge

import (
	"slices"
	"time"
)

// CausePastLease is the cause of an interval in which a leader acted after its lease had run
// out by the others' count, while nobody else held it: no split brain yet, but nothing stops
// one (PastLease).
const CausePastLease = "past-lease"

// PastLease finds every interval of one lease, up to now, in which a candidate believed it led
// after the lease the record gave it had run out (Change.Expiry: when the others may take it),
// while the record still named it: it acts on a lease anyone may take. Each ends when the
// candidate stops believing, writes the lease again, or another writes it (from there on it is
// a split brain, which Overlaps finds). Intervals shorter than OverlapGrace are left out, as a
// renewal that lands at the expiry is not one. lease names the lease ("namespace/name");
// changes and views are as Overlaps takes them; between two changes of one holder that Compact
// folded renewals into, nothing is found, as the renewals' times are gone.
func PastLease(lease string, changes []Change, views []View, now time.Time) []Overlap {
	changes = sortedBy(changes, func(c *Change) time.Time { return c.At })
	views = sortedBy(views, func(v *View) time.Time { return v.At })
	var out []Overlap
	for i, c := range changes {
		exp := c.Expiry()
		if c.Deleted || exp.IsZero() || exp.After(now) {
			continue
		}
		end := now // the record stays as c left it until the next change
		if i+1 < len(changes) {
			next := changes[i+1]
			if next.Holder == c.Holder && next.Folded > 0 {
				continue // renewals were folded in between (Compact): their times are gone
			}
			end = next.At
		}
		if !exp.Before(end) {
			continue
		}
		for _, b := range beliefsOf(c.Holder, views, exp, end) {
			if b.End.Sub(b.Start) < OverlapGrace {
				continue
			}
			o := Overlap{Identities: []string{c.Holder}, Believers: []string{c.Holder}, Holder: c.Holder,
				Start: b.Start, Cause: CausePastLease}
			if b.End.Before(now) {
				o.End = b.End
			}
			o.Says = say("judge.pastLease", Shown(c.Holder), lease, seconds(b.End.Sub(b.Start)), clock(exp))
			o.AdviceSays = say("judge.pastLeaseAdvice")
			o.Text, o.Advice = o.Says.English(), o.AdviceSays.English()
			out = append(out, o)
		}
	}
	slices.SortStableFunc(out, func(a, b Overlap) int { return a.Start.Compare(b.Start) })
	return out
}

// beliefsOf are the stretches within [from, to) in which id believed it led, by its views.
func beliefsOf(id string, views []View, from, to time.Time) []Overlap {
	var out []Overlap
	leading := false
	var since time.Time
	closeAt := func(t time.Time) {
		if leading && t.After(since) {
			out = append(out, Overlap{Start: since, End: t})
		}
	}
	for _, v := range views {
		if v.Identity != id {
			continue
		}
		t := v.At
		if t.Before(from) {
			t = from
		}
		if !t.Before(to) {
			break
		}
		b := believes(&v)
		switch {
		case b && !leading:
			leading, since = true, t
		case !b && leading:
			closeAt(t)
			leading = false
		}
	}
	closeAt(to)
	return out
}
