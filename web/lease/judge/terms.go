package judge

import "time"

// How a term ended.
const (
	EndHeld        = ""             // still held
	EndReleased    = "released"     // the holder wrote holderIdentity ""
	EndTakeover    = "takeover"     // another candidate wrote itself before the lease ran out
	EndExpired     = "expired"      // the lease ran out before anyone else took it
	EndSteppedDown = "stepped-down" // the holder gave way to the election controller's preferredHolder
	EndDeleted     = "deleted"      // the lease was deleted
)

// Term is one holder's uninterrupted hold of a lease.
type Term struct {
	Holder string
	Start  time.Time
	// End is when the term ended; zero while held.
	End   time.Time
	Ended string
	// Next is the holder after this term, when one took the lease; for a step-down, the
	// preferred holder the election controller named.
	Next string
	// NextAt is when Next wrote itself as the holder (after End, when the lease ran out
	// first); zero when no one did.
	NextAt      time.Time
	Transitions int32 // leaseTransitions when the term began
	Renewals    int

	// asked is when the record first named another preferredHolder during the term.
	asked time.Time
}

// Terms turns a lease's changes (oldest first) into terms. A term begins when a holder first
// appears and ends
//   - by step-down when the last write of the term named another preferredHolder (the election
//     controller asked the holder to give way) and the holder released the lease or let it run
//     out, or the controller handed it to another;
//   - by release when holderIdentity becomes "";
//   - by takeover when another holder writes while the lease had not run out;
//   - by expiry when leaseDurationSeconds passed since the record last changed before the next
//     holder took it (or before now, for the last term), and then ends at that instant;
//   - by deletion of the lease.
//
// A holder that writes again after its lease ran out starts a new term.
func Terms(changes []Change, now time.Time) []Term {
	var terms []Term
	cur := -1 // index of the open term in terms
	var last Change
	for _, ch := range changes {
		switch {
		case ch.Deleted:
			if cur >= 0 {
				endTerm(&terms[cur], last, ch.At, "", true)
				cur = -1
			}
			continue
		case cur >= 0 && ch.Holder == terms[cur].Holder:
			if ch.Folded == 0 && !continuous(last, ch) {
				// The lease ran out, then its holder wrote again (a paused leader resuming,
				// say): the old term ended and a new one begins.
				endTerm(&terms[cur], last, ch.At, ch.Holder, false)
				terms = append(terms, Term{Holder: ch.Holder, Start: ch.At, Transitions: ch.Transitions, Renewals: ch.Folded})
				cur = len(terms) - 1
			} else {
				terms[cur].Renewals += 1 + ch.Folded
			}
			if t := &terms[cur]; t.asked.IsZero() && ch.PreferredHolder != "" && ch.PreferredHolder != t.Holder {
				t.asked = ch.At
			}
			last = ch
			continue
		case cur >= 0:
			endTerm(&terms[cur], last, ch.At, ch.Holder, false)
			cur = -1
		}
		if ch.Holder != "" {
			terms = append(terms, Term{Holder: ch.Holder, Start: ch.At, Transitions: ch.Transitions, Renewals: ch.Folded})
			cur = len(terms) - 1
			last = ch
		}
	}
	if cur >= 0 {
		if exp := last.Expiry(); !exp.IsZero() && !now.Before(exp) {
			t := &terms[cur]
			t.End, t.Ended = exp, EndExpired
			if p := last.PreferredHolder; p != "" && p != t.Holder {
				t.Ended, t.Next = EndSteppedDown, p
			}
		}
	}
	return terms
}

// TermsSeen is Terms read with the candidates' views: a term the record alone
// reads as stepped down ended by expiry when its holder had already stopped (crashed) or was
// paused when the election controller named another. Such a holder gave nothing up: its
// renewals stopped, and the controller's preference came after. On the record the two look
// alike, as a stepping-down holder too lets its lease run out.
func TermsSeen(changes []Change, views []View, now time.Time) []Term {
	terms := Terms(changes, now)
	for i := range terms {
		t := &terms[i]
		if t.Ended != EndSteppedDown || t.asked.IsZero() {
			continue
		}
		if v := viewAt(views, t.Holder, t.asked); v != nil && (v.State == "stopped" || v.Faults.Paused) {
			t.Ended = EndExpired
			if t.NextAt.IsZero() {
				t.Next = ""
			}
		}
	}
	return terms
}

// viewAt is id's latest view at or before t (of two at one instant, the later in views); nil
// when it had none.
func viewAt(views []View, id string, t time.Time) *View {
	var found *View
	for i := range views {
		v := &views[i]
		if v.Identity == id && !v.At.After(t) && (found == nil || !v.At.Before(found.At)) {
			found = v
		}
	}
	return found
}

// endTerm ends t, whose last write was last, because of the change at at naming next as the
// holder ("" for a release or a deletion).
func endTerm(t *Term, last Change, at time.Time, next string, deleted bool) {
	exp := last.Expiry()
	ranOut := !exp.IsZero() && exp.Before(at)
	preferred := last.PreferredHolder
	switch {
	case deleted && ranOut:
		t.End, t.Ended = exp, EndExpired
	case deleted:
		t.End, t.Ended = at, EndDeleted
	case preferred != "" && preferred != t.Holder && next != t.Holder:
		// Asked to give way: released, let run out, or handed over by the controller.
		t.End, t.Ended, t.Next = at, EndSteppedDown, preferred
		if next != "" {
			t.Next, t.NextAt = next, at
			if ranOut {
				t.End = exp
			}
		}
	case next == "":
		// The holder itself cleared holderIdentity: a release, even if late.
		t.End, t.Ended = at, EndReleased
	case ranOut:
		t.End, t.Ended, t.Next, t.NextAt = exp, EndExpired, next, at
	default:
		t.End, t.Ended, t.Next, t.NextAt = at, EndTakeover, next, at
	}
}
