package judge

import "github.com/leaselab/leaselab/web/lease/said"

// Said is a sentence of the judge (web/lease/said): Text fields and the test kit carry its English;
// the screens put it in their reader's language.
type Said = said.Said

var (
	say    = said.Say
	same   = said.Same
	concat = said.Concat
)

// KeyList is the key of a list of identities ("a, b and c"; the arguments are the identities).
var KeyList = said.RegisterList("judge.list", names)

// english holds the judge's sentences, but for those of an overlap's cause (causeSentences, beside
// the causes in overlap.go).
var english = said.Register(map[string]string{
	"judge.acquired":            "%s acquired %s (transitions %d)",
	"judge.wroteAgain":          "%s wrote %s again after its hold had expired (transitions %d)",
	"judge.acquiredAfter":       "%s acquired %s after %s's hold expired (transitions %d)",
	"judge.aCandidate":          "a candidate",
	"judge.splitNobody":         "split brain: %s believes it leads %s while the record names nobody",
	"judge.pastLease":           "%s went on leading %s for %s after its lease ran out at %s by the others' count: anyone could have taken it meanwhile",
	"judge.pastLeaseAdvice":     "client-go's leader stops only at its renew deadline, counted on its own clock from the start of a renew round: keep leaseDuration above renewDeadline plus a retry period, and guard side effects with a fencing token",
	"judge.splitDeleted":        "split brain: %s believes it leads %s, which was deleted",
	"judge.splitHolder":         "split brain: %s believes it leads %s while %s holds it",
	"judge.released":            "%s released %s",
	"judge.tookOver":            "%s took %s over from %s",
	"judge.tookOverTransitions": "%s took %s over from %s (transitions %d)",
	"judge.expired":             "%s's hold on %s expired: not renewed in time",
	"judge.steppedDown":         "%s stepped down from %s: the election controller prefers %s",
	"judge.deleted":             "%s was deleted while %s held it",
	"judge.endHeld":             "still held",
	"judge.endReleased":         "released",
	"judge.endTakeover":         "taken over by %s",
	"judge.endSteppedDown":      "stepped down for %s",
	"judge.endExpiredLate":      "expired, then %s wrote it again late",
	"judge.endExpiredTook":      "expired, then %s took it",
	"judge.endExpired":          "expired",
	"judge.endDeleted":          "lease deleted",
	"judge.roleLeader":          "%s leads %s, as it sees it",
	"judge.roleFollower":        "%s follows on %s",
	"judge.rolePaused":          "%s was paused (a candidate of %s)",
	"judge.rolePartitioned":     "%s was cut off from the API server (a candidate of %s)",
	"judge.roleStopped":         "%s stopped (a candidate of %s)",
	"judge.roleOther":           "%s is %s (a candidate of %s)",
	"judge.believed1":           "%s believed it led %s",
	"judge.believed2":           "%s and %s both believed they led %s",
	"judge.believedAll":         "%s all believed they led %s",
	"judge.forSoFar":            " for %s so far (since %s)",
	"judge.forSpan":             " for %s (%s to %s)",
	"judge.joinedAt":            ", %s only from %s",
	"judge.afterReleasing":      " after releasing it",
	"judge.afterReleased":       " after %s released it",
	"judge.afterDeleted":        " after the lease was deleted",
	"judge.whileRecordNamed":    " while the record named %s",
	"judge.secs":                "%s s",
	"judge.minSecs":             "%d min %d s",
	"judge.nobody":              "nobody",
	"judge.missedRecord":        "the record change",
	"judge.missedTakeover":      "%s take over",
	"judge.because":             ": %s.",
	"judge.scaledLength":        "%s of its candidates' clock (%s of the server's)",
	"judge.alsoWhy":             "; and %s",
})
