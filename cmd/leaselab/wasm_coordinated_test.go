package main

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// coordSim runs browser candidates in coordinated mode (the wasm/candidate logic, natively, on
// the real clock) against the real server with its Coordinated Leader Election controller. The
// controller runs on the real clock, so the durations are short: lease 2 s, renew deadline
// 1.5 s, retry 0.2 s.
type coordSim struct {
	t     *testing.T
	ts    *testServer
	ctx   context.Context
	mu    sync.Mutex
	cands map[string]*candidate.Candidate
	// overlap records the first moment two candidates believed they led at once.
	overlap string
}

func newCoordSim(t *testing.T) *coordSim {
	s := &coordSim{t: t, ts: mustStartCLEServer(t), ctx: ctxT(t, time.Minute), cands: map[string]*candidate.Candidate{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if l := s.leaders(); len(l) > 1 {
				s.mu.Lock()
				if s.overlap == "" {
					s.overlap = time.Now().Format("15:04:05.000") + ": " + l[0] + " and " + l[1]
				}
				s.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return s
}

func (s *coordSim) add(id, binary, emulation string) *candidate.Candidate {
	s.t.Helper()
	c, err := candidate.New(candidate.Config{
		BaseURL: s.ts.URL, Namespace: cleNamespace, LeaseName: cleLease, Identity: id,
		LeaseDuration: cleLeaseDuration, RenewDeadline: cleRenewDeadline, RetryPeriod: cleRetryPeriod,
		Coordinated: true, BinaryVersion: binary, EmulationVersion: emulation,
	}, candidate.Options{})
	if err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.cands[id] = c
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	s.t.Cleanup(func() { cancel(); <-done })
	return c
}

// leaders returns the candidates that believe they lead, sorted.
func (s *coordSim) leaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, c := range s.cands {
		if c.Snapshot().Role == candidate.RoleLeader {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// waitLeader waits until id alone believes it leads and holds the Lease on the server.
func (s *coordSim) waitLeader(id string) {
	s.t.Helper()
	cleWait(s.t, 15*time.Second, id+" leading", func() bool {
		return slices.Equal(s.leaders(), []string{id}) && leaseHolder(s.t, s.ts) == id
	})
}

func (s *coordSim) dump() {
	s.t.Helper()
	s.t.Logf("controller decisions:\n%s", decisionsText(cleDecisions(s.ts)))
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, c := range s.cands {
		snap := c.Snapshot()
		s.t.Logf("%s", snap)
		for i := len(snap.Log) - 1; i >= 0; i-- {
			e := snap.Log[i]
			s.t.Logf("  %s %s %-9s x%d %s", id, e.At.Format("15:04:05.000"), e.Kind, e.Count, e.Text)
		}
	}
}

func (s *coordSim) checkNoOverlap() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.overlap != "" {
		s.t.Errorf("two candidates led at once at %s", s.overlap)
	}
}

// TestWasmCandidateCoordinatedOldestEmulationLeads starts two coordinated browser candidates with
// different emulation versions: the server picks the older one, which leads and keeps leading.
func TestWasmCandidateCoordinatedOldestEmulationLeads(t *testing.T) {
	t.Parallel()
	s := newCoordSim(t)
	holders := watchCLEHolders(t, s.ts)
	s.add("tab-new", "1.36.0", "1.36.0")
	s.add("tab-old", "1.36.0", "1.35.0")
	defer func() {
		if t.Failed() {
			s.dump()
		}
	}()
	s.waitLeader("tab-old")
	// It keeps leading across several renewals, and the newer one keeps following.
	keepsLeading(t, s.ts, "tab-old", time.Now().Add(3*cleLeaseDuration/2), s.leaders)
	if got := holders.leaders(); !slices.Equal(got, []string{"tab-old"}) && !slices.Equal(got, []string{"tab-new", "tab-old"}) {
		t.Errorf("holders = %v", got)
	}
	// The lease page shows the controller's decision.
	resp, err := http.Get(s.ts.URL + "/leases/" + cleNamespace + "/" + cleLease)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `data-kind="elect" data-candidate="tab-old"`) {
		t.Errorf("the lease page does not show the election of tab-old")
	}
	snap := s.cands["tab-old"].Snapshot()
	if !snap.Coordinated || snap.EmulationVersion != "1.35.0" || snap.BinaryVersion != "1.36.0" {
		t.Errorf("snapshot = %+v", snap)
	}
	s.checkNoOverlap()
}

// TestWasmCandidateCoordinatedBetterJoins starts one coordinated browser candidate, lets it lead,
// then adds one with an older emulation version: the server sets preferredHolder, the holder
// steps down at its renew deadline, and the better candidate leads. Never two leaders.
func TestWasmCandidateCoordinatedBetterJoins(t *testing.T) {
	t.Parallel()
	s := newCoordSim(t)
	holders := watchCLEHolders(t, s.ts)
	defer func() {
		if t.Failed() {
			s.dump()
		}
	}()
	joined := time.Now()
	first := s.add("tab-1", "1.36.0", "1.36.0")
	s.waitLeader("tab-1")
	// Let tab-1's LeaseCandidate age past the election duration, so that the controller must
	// ping it before it can prefer tab-2.
	cleWait(t, 5*time.Second, "tab-1's candidate no longer fresh", func() bool {
		return time.Since(joined) > 1500*time.Millisecond
	})
	s.add("tab-2", "1.36.0", "1.35.0")
	s.waitLeader("tab-2")
	if got := holders.leaders(); !slices.Equal(got, []string{"tab-1", "tab-2"}) {
		t.Errorf("holders = %v, want [tab-1 tab-2]", got)
	}
	if got := holders.preferredRequests(); !slices.Contains(got, "tab-2 by tab-1") {
		t.Errorf("preferredHolder requests = %v, want tab-2 by tab-1", got)
	}
	stepped := false
	for _, e := range first.Snapshot().Log {
		if strings.HasPrefix(e.Text, "the server prefers tab-2: stepping down at my renew deadline") {
			stepped = true
		}
	}
	if !stepped {
		t.Errorf("tab-1 did not log that it steps down for tab-2")
	}
	// tab-1's LeaseCandidate was no longer fresh when tab-2 joined: the controller pinged it,
	// and it answered.
	if !slices.ContainsFunc(first.Snapshot().Log, func(e candidate.LogEntry) bool { return e.Kind == candidate.LogPinged }) {
		t.Errorf("tab-1 never answered a ping")
	}
	s.checkNoOverlap()
}
