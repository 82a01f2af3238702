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

// english holds the judge's sentences.
var english = said.Register(map[string]string{
	"judge.acquired":            "%s acquired %s (transitions %d)",
	"judge.wroteAgain":          "%s wrote %s again after its hold had expired (transitions %d)",
	"judge.acquiredAfter":       "%s acquired %s after %s's hold expired (transitions %d)",
	"judge.aCandidate":          "a candidate",
	"judge.splitNobody":         "split brain: %s believes it leads %s while the record names nobody",
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
	"judge.whyPaused":           "%s was paused and did not see %s",
	"judge.whyPartitioned":      "%s was cut off from the server and did not see %s",
	"judge.whySlow":             "%s's network added %s to each round trip, so it saw %s late",
	"judge.whyClockAhead":       "%s's clock ran %s ahead of the server's",
	"judge.whyClockBehind":      "%s's clock ran %s behind the server's",
	"judge.whyClockFast":        "%s's clock ran fast (%s× the real rate), so it counted its renew deadline on a clock the others do not share",
	"judge.whyClockSlow":        "%s's clock ran slow (%s× the real rate), so it counted its renew deadline on a clock the others do not share",
	"judge.whyReleasedNobody":   "the record named nobody",
	"judge.whyReleased":         "%s had released it and kept working",
	"judge.whyDeleted":          "the lease was deleted while %s held it, and a holder finds that out only at its next renewal",
	"judge.whyUnknown":          "nothing %s recorded explains it",
	"judge.whyOtherWriter":      "another writer, not a candidate (kubectl, say, or a program of its own), wrote %[2]s into the record before %[1]s's hold ran out; %[1]s sees it at its next renewal, yet, as client-go does, goes on leading until its renew deadline passes",
	"judge.thenSaw":             "; %s ran again by %s and read that %s held the lease, yet went on believing it led for another %s",
	"advice.fencing":            "guard side effects with a fencing token (the lease's resourceVersion or leaseTransitions) checked by the resource it writes",
	"advice.exit":               "exit (os.Exit) in OnStoppedLeading as kube-controller-manager does",
	"advice.paused":             "client-go gives no fencing, and a paused process cannot check anything, not even its renew deadline, until it runs again: %[1]s, and %[2]s, so that it stops as soon as it notices.",
	"advice.partitioned":        "client-go gives no fencing: a leader acts on its belief until its renew deadline passes, however long ago another took over, so keep renewDeadline well under leaseDuration, %[2]s, and %[1]s.",
	"advice.slow-network":       "client-go gives no fencing: a leader acts on its belief until its renew deadline passes, and slow requests tell it late that it lost, so keep renewDeadline well under leaseDuration with room for the slowest request (kube-controller-manager renews within 10 s a lease of 15 s), and %[1]s.",
	"advice.clock-offset":       "Offsets do not matter to client-go, which counts leaseDuration from its own observation of the record, not from renewTime; rate drift does, and the gap between renewDeadline and leaseDuration must cover it: never compare renewTime with the local clock.",
	"advice.clock-drift":        "client-go counts leaseDuration, renewDeadline and retryPeriod on the process's own clock: an offset cancels out, a clock that runs slow or fast does not. Keep the gap between renewDeadline and leaseDuration large enough to absorb drift, keep time synchronised, and %[1]s.",
	"advice.released":           "Release only after the work has stopped: with ReleaseOnCancel, client-go clears holderIdentity as soon as the context is cancelled, without waiting for the work begun in OnStartedLeading, so cancel only once that work has returned; else leave ReleaseOnCancel off, %[2]s, and let the lease run out.",
	"advice.deleted":            "Do not delete a held lease to force an election: its holder goes on leading until its next renewal, which creates the lease again, or, when another candidate created it first, until its renew deadline passes. Have the holder release it, or let it run out, and %[1]s.",
	"advice.unknown":            "client-go gives no fencing: %[1]s, and %[2]s.",
})
