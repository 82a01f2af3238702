package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/candidate/candidatetest"
)

// candidateSim drives browser candidates (the wasm/candidate logic, natively) against the real
// server with a manual clock: no test sleeps through a lease duration, and every run takes the
// same decisions.
type candidateSim struct {
	t     *testing.T
	ts    *testServer
	clock *candidatetest.ManualClock
	cands map[string]*candidate.Candidate
	order []string
	ctx   context.Context
}

func newCandidateSim(t *testing.T) *candidateSim {
	ts := mustStartServer(t, "")
	return &candidateSim{
		t:     t,
		ts:    ts,
		clock: candidatetest.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)),
		cands: map[string]*candidate.Candidate{},
		ctx:   ctxT(t, time.Minute),
	}
}

// timings of every simulated candidate: lease 10 s, renew deadline 7 s, retry 2 s (the
// playground's defaults).
const (
	simLease = 10 * time.Second
	simRetry = 2 * time.Second
)

func (s *candidateSim) add(id string) *candidate.Candidate {
	s.t.Helper()
	c, err := candidate.New(candidate.Config{
		BaseURL: s.ts.URL, Namespace: "sim", LeaseName: "demo", Identity: id,
		LeaseDuration: simLease, RenewDeadline: 7 * time.Second, RetryPeriod: simRetry,
	}, candidate.Options{Clock: s.clock, Rand: func() float64 { return 0.5 }})
	if err != nil {
		s.t.Fatal(err)
	}
	s.cands[id] = c
	s.order = append(s.order, id)
	return c
}

// run steps every due candidate and advances the clock until d has passed, calling check after
// every step. Paused candidates are not stepped: a paused process does nothing.
func (s *candidateSim) run(d time.Duration, check func()) {
	s.t.Helper()
	end := s.clock.Now().Add(d)
	for s.clock.Now().Before(end) {
		var next time.Time
		for _, id := range s.order {
			c := s.cands[id]
			snap := c.Snapshot()
			if snap.Faults.Paused {
				continue
			}
			n := c.Next()
			if n.IsZero() {
				continue
			}
			if !n.After(s.clock.Now()) {
				n = c.Step(s.ctx)
				if check != nil {
					check()
				}
			}
			if !n.IsZero() && (next.IsZero() || n.Before(next)) {
				next = n
			}
		}
		if next.IsZero() || next.After(end) {
			next = end
		}
		if next.After(s.clock.Now()) {
			s.clock.Set(next)
		}
	}
}

// leaders returns the running (not paused) candidates that believe they lead.
func (s *candidateSim) leaders() []string {
	var out []string
	for _, id := range s.order {
		if snap := s.cands[id].Snapshot(); snap.Role == candidate.RoleLeader && !snap.Faults.Paused {
			out = append(out, id)
		}
	}
	return out
}

// holder returns the holderIdentity on the server.
func (s *candidateSim) holder() (string, int32) {
	s.t.Helper()
	l, err := s.ts.Client.CoordinationV1().Leases("sim").Get(s.ctx, "demo", metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	h := ""
	if l.Spec.HolderIdentity != nil {
		h = *l.Spec.HolderIdentity
	}
	var tr int32
	if l.Spec.LeaseTransitions != nil {
		tr = *l.Spec.LeaseTransitions
	}
	return h, tr
}

// onlyOneLeader fails the test when two running candidates believe they lead.
func (s *candidateSim) onlyOneLeader() {
	if ls := s.leaders(); len(ls) > 1 {
		s.t.Fatalf("at %s: %d leaders %v", s.clock.Now().Format(time.TimeOnly), len(ls), ls)
	}
}

// waitForNewHolder runs until the server's holder is neither "" nor old and returns it with
// the time it was first seen.
func (s *candidateSim) waitForNewHolder(old string, within time.Duration) (string, time.Time) {
	s.t.Helper()
	deadline := s.clock.Now().Add(within)
	for s.clock.Now().Before(deadline) {
		s.run(100*time.Millisecond, s.onlyOneLeader)
		if h, _ := s.holder(); h != "" && h != old {
			return h, s.clock.Now()
		}
	}
	s.t.Fatalf("no new holder after %s within %v", old, within)
	return "", time.Time{}
}

func TestBrowserCandidateOneLeader(t *testing.T) {
	s := newCandidateSim(t)
	for i := 1; i <= 4; i++ {
		s.add(fmt.Sprintf("tab-%d", i))
	}
	s.run(60*time.Second, s.onlyOneLeader)
	ls := s.leaders()
	if len(ls) != 1 {
		t.Fatalf("leaders = %v, want one", ls)
	}
	if h, _ := s.holder(); h != ls[0] {
		t.Fatalf("server holder %q, leader %q", h, ls[0])
	}
}

func TestBrowserCandidateTakeoverAfterCrash(t *testing.T) {
	s := newCandidateSim(t)
	for i := 1; i <= 3; i++ {
		s.add(fmt.Sprintf("tab-%d", i))
	}
	s.run(20*time.Second, s.onlyOneLeader)
	old, _ := s.holder()
	s.cands[old].Crash()
	s.run(10*time.Millisecond, nil)
	l, err := s.ts.Client.CoordinationV1().Leases("sim").Get(s.ctx, "demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lastRenew := l.Spec.RenewTime.Time
	newHolder, at := s.waitForNewHolder(old, 3*simLease)
	// A follower judges expiry from when it last saw the record change: never before the
	// crashed leader's last renewal plus the lease duration, and within about two retries after.
	earliest := lastRenew.Add(simLease)
	latest := earliest.Add(2*simRetry + 2*time.Duration(1.2*float64(simRetry)))
	if at.Before(earliest) || at.After(latest) {
		t.Fatalf("%s took over at %s; last renewal %s: want between %s and %s",
			newHolder, at.Format(time.TimeOnly), lastRenew.Format(time.TimeOnly), earliest.Format(time.TimeOnly), latest.Format(time.TimeOnly))
	}
	if _, tr := s.holder(); tr < 1 {
		t.Errorf("leaseTransitions = %d after a takeover", tr)
	}
}

func TestBrowserCandidateTakeoverAfterRelease(t *testing.T) {
	s := newCandidateSim(t)
	for i := 1; i <= 3; i++ {
		s.add(fmt.Sprintf("tab-%d", i))
	}
	s.run(20*time.Second, s.onlyOneLeader)
	old, _ := s.holder()
	released := s.clock.Now()
	s.cands[old].Release()
	_, at := s.waitForNewHolder(old, simLease)
	// An empty holder can be taken at once: within one acquire retry, far before expiry.
	if took := at.Sub(released); took > time.Duration(2.2*float64(simRetry))+200*time.Millisecond {
		t.Fatalf("takeover after release took %v", took)
	}
}

func TestBrowserCandidatePausedLeaderDoesNotOverwrite(t *testing.T) {
	s := newCandidateSim(t)
	for i := 1; i <= 3; i++ {
		s.add(fmt.Sprintf("tab-%d", i))
	}
	s.run(20*time.Second, s.onlyOneLeader)
	old, _ := s.holder()
	s.cands[old].Pause()
	// Others take over while it is frozen (its own belief stays "leader").
	newHolder, _ := s.waitForNewHolder(old, 3*simLease)
	_, transitions := s.holder()
	s.run(5*time.Second, nil)
	s.cands[old].Resume()
	s.run(30*time.Second, nil)
	if h, tr := s.holder(); h != newHolder || tr != transitions {
		t.Fatalf("after the paused leader resumed: holder %q transitions %d, want %q %d", h, tr, newHolder, transitions)
	}
	if r := s.cands[old].Snapshot().Role; r == candidate.RoleLeader {
		t.Fatalf("the resumed leader still believes it leads")
	}
}

func TestBrowserCandidateClockOffset(t *testing.T) {
	s := newCandidateSim(t)
	for i, off := range []time.Duration{-45 * time.Second, 0, 30 * time.Second, time.Hour} {
		s.add(fmt.Sprintf("tab-%d", i)).SetClockOffset(off)
	}
	holders := map[string]bool{}
	s.run(60*time.Second, func() {
		s.onlyOneLeader()
		h, _ := s.holder()
		holders[h] = true
	})
	if len(s.leaders()) != 1 || len(holders) != 1 {
		t.Fatalf("with skewed clocks: leaders %v, holders seen %v", s.leaders(), holders)
	}
}
