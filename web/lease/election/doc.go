// Package election is leaselab's Coordinated Leader Election controller: it picks the holder of
// a Lease among the LeaseCandidates that declare themselves for it, as kube-apiserver's
// controller does, and records every decision so that the dashboard can show why.
//
// The policy (policy.go, preferred.go) is pure functions of (candidates, lease, now), table-tested;
// the Controller (controller.go) only reads its informers' caches, decides with the policy, and
// writes through an ordinary API client with its own field manager. Decisions are kept per Lease
// and published to subscribers (decisions.go).
package election
