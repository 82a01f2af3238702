//go:build !js

package candidate_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

// These tests drive candidates with Run on the system clock inside a
// testing/synctest bubble: time is virtual, so no test waits for real.

type runner struct {
	t      *testing.T
	srv    *leaseServer
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newRunner(t *testing.T) *runner {
	ctx, cancel := context.WithCancel(t.Context())
	r := &runner{t: t, srv: newLeaseServer(time.Now), ctx: ctx, cancel: cancel}
	t.Cleanup(r.stop)
	return r
}

func (r *runner) start(cfg candidate.Config) *candidate.Candidate {
	c := newCandidate(r.t, cfg, candidate.SystemClock{}, r.srv.transport(), uint64(len(cfg.Identity)))
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := c.Run(r.ctx); err != context.Canceled {
			r.t.Errorf("Run returned %v", err)
		}
	}()
	return c
}

func (r *runner) stop() {
	r.cancel()
	r.wg.Wait()
}

func (r *runner) writesAfter(t0 time.Time, by string) []write {
	var out []write
	for _, w := range r.srv.allWrites() {
		if w.At.After(t0) && w.Holder == by {
			out = append(out, w)
		}
	}
	return out
}

func TestRunPausedLeaderDoesNotOverwriteNewLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t)
		cfgA := testConfig("tab-a")
		cfgA.ReleaseOnCancel = true
		a := r.start(cfgA)
		time.Sleep(3 * time.Second)
		b := r.start(testConfig("tab-b"))
		time.Sleep(10 * time.Second)
		if a.Snapshot().State != candidate.StateLeader {
			t.Fatalf("a: %v", a.Snapshot())
		}

		a.Pause()
		paused := time.Now()
		time.Sleep(30 * time.Second)
		if b.Snapshot().State != candidate.StateLeader {
			t.Fatalf("b did not take over from the paused leader: %v", b.Snapshot())
		}
		if snap := a.Snapshot(); snap.State != candidate.StatePaused || snap.Role != candidate.RoleLeader {
			t.Fatalf("paused a: %v", snap)
		}

		a.Resume()
		time.Sleep(30 * time.Second)
		r.stop()
		if ws := r.writesAfter(paused, "tab-a"); len(ws) > 0 {
			t.Errorf("the resumed leader wrote: %+v", ws)
		}
		if ws := r.writesAfter(paused, ""); len(ws) > 0 {
			t.Errorf("the resumed leader released the new leader's lease: %+v", ws)
		}
		if snap := a.Snapshot(); snap.Role != candidate.RoleFollower || snap.Holder != "tab-b" {
			t.Errorf("a in the end: %v", snap)
		}
	})
}

func TestRunHangingPartitionCutByRenewDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t)
		a := r.start(testConfig("tab-a"))
		time.Sleep(3 * time.Second)
		b := r.start(testConfig("tab-b"))
		time.Sleep(10 * time.Second)

		a.Partition(candidate.PartitionHang)
		cut := time.Now()
		time.Sleep(candidate.DefaultRetryPeriod + candidate.DefaultRenewDeadline + 100*time.Millisecond)
		if snap := a.Snapshot(); snap.Role == candidate.RoleLeader || snap.State != candidate.StatePartitioned {
			t.Fatalf("a should have stopped leading at its renew deadline: %v", snap)
		}
		if !logHas(a, candidate.LogError, "cut off by the renew deadline") {
			dumpLog(t, a)
			t.Error("the log does not say the deadline cut the request")
		}
		time.Sleep(10 * time.Second)
		if b.Snapshot().State != candidate.StateLeader {
			t.Fatalf("b: %v", b.Snapshot())
		}
		if ws := r.writesAfter(cut, "tab-a"); len(ws) > 0 {
			t.Errorf("writes by the partitioned leader: %+v", ws)
		}

		// The hung request of the restarted candidate goes through on heal.
		a.Heal()
		time.Sleep(5 * time.Second)
		if snap := a.Snapshot(); snap.State != candidate.StateFollower || snap.Holder != "tab-b" {
			t.Errorf("after heal: %v", snap)
		}
	})
}

func TestRunSlowNetwork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t)
		a := r.start(testConfig("tab-a"))
		time.Sleep(time.Second)
		b := r.start(testConfig("tab-b"))
		time.Sleep(5 * time.Second)

		// Slower than the retry period but well within the renew deadline: a
		// leader keeps its lease.
		a.SetLatency(3 * time.Second)
		time.Sleep(time.Minute)
		if a.Snapshot().State != candidate.StateLeader || b.Snapshot().State != candidate.StateFollower {
			t.Fatalf("with 3 s latency: a %v, b %v", a.Snapshot(), b.Snapshot())
		}
		if got := a.Snapshot().Faults.Latency(); got != 3*time.Second {
			t.Errorf("latency %s", got)
		}

		// Slower than the renew deadline: every renewal is cut off.
		a.SetLatency(20 * time.Second)
		time.Sleep(30 * time.Second)
		if a.Snapshot().Role == candidate.RoleLeader {
			t.Fatalf("a still leads with 20 s latency: %v", a.Snapshot())
		}
		if b.Snapshot().State != candidate.StateLeader {
			t.Errorf("b: %v", b.Snapshot())
		}
		a.SetLatency(0)
		time.Sleep(30 * time.Second)
		if snap := a.Snapshot(); snap.State != candidate.StateFollower || snap.Holder != "tab-b" {
			t.Errorf("back to normal: %v", snap)
		}
	})
}

func TestRunCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t)
		a := r.start(testConfig("tab-a"))
		changes, unsubscribe := a.Subscribe()
		defer unsubscribe()
		time.Sleep(3 * time.Second) // at least one renewal after subscribing
		select {
		case <-changes:
		default:
			t.Error("no change notification")
		}
		if a.Snapshot().State != candidate.StateLeader {
			t.Fatalf("%v", a.Snapshot())
		}

		a.Crash()
		synctest.Wait()
		if snap := a.Snapshot(); snap.State != candidate.StateStopped || snap.StopReason != "crashed" || !snap.NextRetry.IsZero() {
			t.Fatalf("after crash: %v", snap)
		}
		a.Pause() // no effect on a stopped candidate
		if a.Snapshot().State != candidate.StateStopped {
			t.Error("a stopped candidate cannot be paused")
		}
		a.Rejoin()
		synctest.Wait()
		if snap := a.Snapshot(); snap.State != candidate.StateLeader || snap.Transitions != 0 {
			t.Fatalf("after rejoin (its own lease, still valid): %v", snap)
		}

		// Release from a paused leader: it resumes to release.
		a.Pause()
		time.Sleep(time.Second)
		a.Release()
		synctest.Wait()
		if snap := a.Snapshot(); snap.State != candidate.StateStopped || snap.StopReason != "released" || snap.Faults.Paused {
			t.Fatalf("after release: %v", snap)
		}
		if h, _ := r.srv.holder(testNS, testLease); h != "" {
			t.Errorf("holder after release = %q", h)
		}

		// Crash during a hanging request returns at once.
		a.Rejoin()
		synctest.Wait()
		a.Partition(candidate.PartitionHang)
		time.Sleep(5 * time.Second)
		a.Crash()
		synctest.Wait()
		if snap := a.Snapshot(); snap.State != candidate.StateStopped {
			t.Fatalf("crash during a hung request: %v", snap)
		}

		a.SetClockOffset(-90 * time.Second)
		if snap := a.Snapshot(); snap.Faults.ClockOffset() != -90*time.Second || snap.Now.Sub(time.Now()) != -90*time.Second {
			t.Errorf("offset: %+v", snap.Faults)
		}
		if got := tabproto.Words(a.Snapshot().Faults.Describe(), "en"); len(got) != 2 || got[0] != "partitioned: requests hang" || got[1] != "clock 90 s behind" {
			t.Errorf("faults in words: %q", got)
		}
	})
}

func TestRunPauseDuringRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t)
		a := r.start(testConfig("tab-a"))
		time.Sleep(time.Second)
		b := r.start(testConfig("tab-b"))
		time.Sleep(10 * time.Second)
		a.SetLatency(4 * time.Second)
		time.Sleep(3 * time.Second) // a renewal is now in flight
		a.Pause()
		paused := time.Now()
		entries := len(a.Snapshot().Log)
		time.Sleep(30 * time.Second)
		if n := len(a.Snapshot().Log); n != entries {
			t.Errorf("a paused candidate logged %d decisions", n-entries)
		}
		if b.Snapshot().State != candidate.StateLeader {
			t.Fatalf("b: %v", b.Snapshot())
		}
		a.Resume()
		time.Sleep(30 * time.Second)
		// Whatever the in-flight renewal did on the server happened before
		// the takeover; after it, tab-a never wrote.
		for _, w := range r.writesAfter(paused.Add(4*time.Second), "tab-a") {
			t.Errorf("write by tab-a after the pause: %+v", w)
		}
		if snap := a.Snapshot(); snap.Role != candidate.RoleFollower || snap.Holder != "tab-b" {
			dumpLog(t, a)
			t.Errorf("a: %v", snap)
		}
	})
}
