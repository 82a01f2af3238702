//go:build !js

package candidate_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// deadFor is how long the tests' dead connections go unnoticed.
const deadFor = 30 * time.Second

// startDeadLeader starts a leader with cfg, kills its connection once it leads, and returns it
// and when the connection died.
func startDeadLeader(t *testing.T, r *runner, cfg candidate.Config) (*candidate.Candidate, time.Time) {
	t.Helper()
	a := r.start(cfg)
	time.Sleep(3 * time.Second)
	if a.Snapshot().Role != candidate.RoleLeader {
		t.Fatalf("%s does not lead: %v", cfg.Identity, a.Snapshot())
	}
	a.KillConnection(deadFor)
	if f := a.Snapshot().Faults; !f.DeadConnection {
		t.Errorf("faults after the kill: %+v", f)
	}
	return a, time.Now()
}

// A connection killed without a word holds every request until the client finds it dead. A
// leader of today's client-go cuts its renewal at its renew deadline and stops leading before
// its lease runs out; its next requests hang on the same connection, each until its timeout,
// until the connection is found dead; then a new one carries them, and it leads again.
func TestDeadConnectionCutAtTheRenewDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t)
		a, killed := startDeadLeader(t, r, testConfig("tab-a"))
		for a.Snapshot().Role == candidate.RoleLeader && time.Since(killed) < deadFor {
			time.Sleep(100 * time.Millisecond)
		}
		if took := time.Since(killed); took > candidate.DefaultRetryPeriod+candidate.DefaultRenewDeadline {
			dumpLog(t, a)
			t.Errorf("a stopped leading %v after its connection died, want within a retry period and its renew deadline", took)
		}
		time.Sleep(killed.Add(deadFor + time.Second).Sub(time.Now()))
		if _, ok := firstLog(a, candidate.LogError, "connection was found dead"); !ok {
			dumpLog(t, a)
			t.Error("no request failed as the dead connection was found dead")
		}
		time.Sleep(10 * time.Second)
		if s := a.Snapshot(); s.Faults.DeadConnection || s.Role != candidate.RoleLeader {
			dumpLog(t, a)
			t.Errorf("on a new connection, alone, a leads again: %v", s)
		}
	})
}

// An elector that waits out its renewals, with a client that has no timeout, believes it leads
// until its dead connection is found dead, 30 s after the kill, whatever its renew deadline:
// nothing it writes reaches the server meanwhile.
func TestDeadConnectionWaitedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t)
		cfg := testConfig("tab-a")
		cfg.WaitsOutRenewals, cfg.RequestTimeout = true, candidate.NoTimeout
		a, killed := startDeadLeader(t, r, cfg)
		time.Sleep(deadFor - time.Second)
		if s := a.Snapshot(); s.Role != candidate.RoleLeader || !s.Faults.DeadConnection {
			dumpLog(t, a)
			t.Errorf("%v after the kill, a no longer waits on its renewal: %v", time.Since(killed), s)
		}
		if ws := r.writesAfter(killed.Add(time.Second), "tab-a"); len(ws) > 0 {
			t.Errorf("writes reached the server over a dead connection: %+v", ws)
		}
		time.Sleep(5 * time.Second)
		if ws := r.writesAfter(killed.Add(deadFor), "tab-a"); len(ws) == 0 || a.Snapshot().Faults.DeadConnection {
			dumpLog(t, a)
			t.Errorf("on a new connection, alone, a renews again: writes %+v, %v", ws, a.Snapshot())
		}
	})
}
