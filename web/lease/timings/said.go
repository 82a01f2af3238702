package timings

import "github.com/leaselab/leaselab/web/lease/said"

// Said is a sentence of the calculator (web/lease/said): the command and the Message, Reason, Label,
// Value and Detail fields carry its English; a screen puts it in its reader's language.
type Said = said.Said

var say = said.Say

// same is s, which reads the same in every language (a figure).
func same(s string) Said { return Said{Key: KeySame, Args: []any{s}} }

// KeySame is the key of a sentence that reads the same in every language: its one argument.
const KeySame = "timings.same"

// english holds the calculator's sentences.
var english = said.Register(map[string]string{
	KeySame:                      "%s",
	"timings.leads":              "A leader that cannot reach the API server keeps leading until its renew deadline passes: up to retryPeriod + renewDeadline = %s after its last renewal.",
	"timings.twoLeaders":         "A leader cut off from the API server may still be leading when another candidate takes the lease.",
	"timings.twoLeadersWhy":      "%s A follower that saw that renewal at once may take the lease %s after it (leaseDurationSeconds %d), so both may lead for up to %s. client-go only checks that leaseDuration exceeds renewDeadline; keep leaseDuration above renewDeadline + retryPeriod, with room to spare.",
	"timings.thinMargin":         "A leader cut off from the API server stops only %s before another candidate may take the lease.",
	"timings.thinMarginWhy":      "%s A follower may take the lease %s after that renewal. A garbage-collection pause, a slow last response or a follower's clock running %s fast eats a margin that thin; the Kubernetes components keep %s.",
	"timings.notWhole":           "leaseDuration %s is written to the Lease as leaseDurationSeconds %d: the lease lasts %s, not %s.",
	"timings.notWholeWhy":        "client-go writes int32(leaseDuration / time.Second), dropping the fraction, and every candidate, the leader included, counts the lease from that field.",
	"timings.fewAttempts":        "Only %d renew attempts fit in the renew deadline.",
	"timings.fewAttemptsWhy":     "A leader whose renewal fails tries again every retryPeriod (%s) until renewDeadline (%s) has passed, so %d failed requests in a row, as a restarting API server or a slow etcd gives, end its leadership. Make renewDeadline more than %d × retryPeriod.",
	"timings.shortDeadline":      "A leader stops leading after only %s of failed renewals.",
	"timings.shortDeadlineWhy":   "API-server and etcd hiccups (a restart, an etcd leader election, a long compaction) often last a few seconds; each one then costs the lease and restarts the work the leader was doing. The Kubernetes components allow %s.",
	"timings.busy":               "Every candidate calls the API server more than once a second.",
	"timings.busyWhy":            "The leader writes the Lease every retryPeriod (%s: %s writes a second, each one an etcd write and an event to every watcher) and each follower reads it every %s to %s. Across every component that elects a leader this loads the API server and etcd for little gain; the Kubernetes components retry every %s.",
	"timings.slowFailover":       "After a crash, nobody may lead for up to %s.",
	"timings.slowFailoverWhy":    "Followers wait leaseDurationSeconds (%d) after they last saw the lease change before they take it: a long lease rides out a slow API server, but a crashed leader's work waits as long. Release the lease on a clean shutdown (ReleaseOnCancel) so that a planned restart fails over within %s.",
	"timings.toSpare":            "%s to spare",
	"timings.clocks":             "A follower's clock may run %s fast against the leader's before the two overlap.",
	"timings.noMargin":           "none: up to %s of two leaders",
	"timings.clocksOverlap":      "They overlap even when every clock keeps perfect time.",
	"timings.crashFailover":      "failover after a crash",
	"timings.crashFailoverHow":   "A follower takes the lease %s after it last saw it change, at its next try (tries come %s to %s apart). It saw the leader's last renewal up to %s late, and the leader crashed up to %s after that renewal.",
	"timings.releaseFailover":    "failover after a release",
	"timings.releaseFailoverHow": "With ReleaseOnCancel the leader empties holderIdentity as it stops; a follower takes the lease at its next try, without waiting for it to expire.",
	"timings.renewAttempts":      "renew attempts in the renew deadline",
	"timings.renewAttemptsHow":   "When a renewal fails the leader tries again every %s until the round's deadline, %s after it began: at %s s, when each request fails fast. A request that hangs takes the rest of the deadline with it.",
	"timings.outage":             "API-server outage the leader rides out",
	"timings.upTo":               "up to %s",
	"timings.outageHow":          "Its last try comes %s after its last renewal (an outage of %s is ridden out whenever it begins). If that try fails too, it stops leading %s after the last renewal (retryPeriod + renewDeadline); a follower takes over only once the lease has expired by its own clock, %s after it last saw it change.",
	"timings.margin":             "cut-off leader stops before a takeover",
	"timings.marginHow":          "A leader that cannot renew leads up to %s after its last renewal; a follower may take the lease %s after it. %s",
	"timings.writtenToLease":     "written to the Lease",
	"timings.writtenToLeaseHow":  "client-go writes whole seconds (int32(leaseDuration / time.Second)); every candidate counts the lease from this field.",
	"timings.load":               "API requests per candidate",
	"timings.loadValue":          "leader %s/s, follower %s/s",
	"timings.loadHow":            "The leader writes the Lease once per retryPeriod; a follower reads it once per try, on average every 1.6 × retryPeriod.",
	"timings.span":               "%s to %s",
})
