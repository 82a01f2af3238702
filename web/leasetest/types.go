package leasetest

import (
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// The kit's own names for what its methods return and take, so that a test reads one
// package's documentation: they are the lease domain's types (web/lease/judge, whose rules the
// server's screens apply too, and web/lease/election), under names of the kit's.
type (
	// Term is one holder's uninterrupted hold of a Lease, as History reads the record: its
	// holder, start and end, its leaseTransitions and how it Ended (one of the End constants).
	Term = judge.Term
	// View is what one candidate said about itself at one moment (Views records them): the
	// candidates' side of the story, beside the server's record.
	View = judge.View
	// Overlap is an interval in which two candidates believed they led, or one believed it led
	// while the record named another (Overlaps), with its cause.
	Overlap = judge.Overlap
	// Decision is one decision of the Coordinated Leader Election controller (Decisions).
	Decision = election.Decision
	// ElectionOptions configures the election controller (WithElection).
	ElectionOptions = election.Options
)

// How a Term ended (Term.Ended).
const (
	EndHeld        = judge.EndHeld        // still held
	EndReleased    = judge.EndReleased    // the holder wrote holderIdentity ""
	EndTakeover    = judge.EndTakeover    // another candidate wrote itself before the hold ran out
	EndExpired     = judge.EndExpired     // the hold ran out before anyone else took it
	EndSteppedDown = judge.EndSteppedDown // the holder gave way to the controller's preferredHolder
	EndDeleted     = judge.EndDeleted     // the Lease was deleted
)

// EndedText says in English how t ended ("expired, then bob took it").
func EndedText(t Term) string { return judge.EndedText(t) }
