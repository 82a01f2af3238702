// Package candidate is the browser's leader-election candidate: a small,
// standard-library-only reimplementation of client-go's tools/leaderelection
// with a Lease lock, built to run inside a Web Worker (GOOS=js GOARCH=wasm)
// and tested natively.
//
// It makes the same decisions as client-go's LeaderElector:
//
//   - expiry is judged from the candidate's own observation time (the moment
//     it last saw the record change) plus leaseDurationSeconds, never from the
//     server's renewTime;
//   - writes are optimistic PUTs carrying the resourceVersion of the last read,
//     so a 409 means someone else wrote first;
//   - the acquire loop retries every RetryPeriod plus a jitter of up to
//     1.2 × RetryPeriod; the renew loop retries every RetryPeriod and gives up
//     leading when no renewal succeeded within RenewDeadline;
//   - a takeover increments leaseTransitions and sets acquireTime;
//   - an optional release writes holderIdentity "" and leaseDurationSeconds 1.
//
// In coordinated mode (Config.Coordinated) it joins Coordinated Leader
// Election instead, as client-go's coordinated elector with its LeaseCandidate
// helper: it keeps a coordination.k8s.io/v1beta1 LeaseCandidate with its
// binary and emulation versions (created at start, renewed when the server
// pings it and every 5 minutes), never creates or takes the Lease (the
// server's controller assigns the holder), renews only a lease that names it
// without a preferredHolder, and so ends its term at its renew deadline when
// the server prefers another candidate.
//
// On top of the algorithm it models the faults a workshop wants to show
// (pause, network partition, slow network, clock offset, release, crash) and
// keeps a plain-language decision log. The wire types are its own: the
// package imports neither k8s.io/api nor client-go, and it keeps every JSON
// field it does not know when it writes an object back.
//
// The algorithm is apart from its narration. The elector (elector.go) is
// client-go's LeaderElector without its loops: its tryAcquireOrRenew,
// tryCoordinatedRenew and release read side by side with client-go's and
// return outcomes (outcome.go): acquired, renewed, held by another with the
// expiry by this candidate's own observation, conflict, failed with its
// cause, released, end of term, and so on. The narrator (narrate.go) turns
// outcomes into the decision log's sentences; it is the only place that
// words them. The Candidate runs client-go's acquire and renew loops around
// the elector as a step function (Candidate.Step), driven either by a test
// with a manual clock (candidatetest) or by Candidate.Run with the system clock, and applies
// the faults. Worker wraps a Candidate in the message protocol spoken with
// the page.
package candidate
