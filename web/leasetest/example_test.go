package leasetest_test

// This file is the package's example, a whole test as a user writes it: three client-go
// electors at kube-controller-manager's timings, the leader crashes, another takes over once
// the lease has run out. Inside synctest.Test the 15 s take fake time; the test takes a few
// tens of milliseconds. (It is a Test, not a Go Example function: synctest.Test and
// leasetest.Start need the test's *testing.T, which an Example does not get.)

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leaselab/leaselab/web/leasetest"
)

func TestExampleFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := leasetest.Start(t) // a leaselab server in this bubble, stopped when the test ends

		type leader struct {
			id string
			at time.Time
		}
		leaders := make(chan leader, 3)
		crash := map[string]context.CancelFunc{}
		for _, id := range []string{"a", "b", "c"} {
			// Each elector has a client of its own, so that faults can single it out.
			client := kubernetes.NewForConfigOrDie(srv.ConfigFor(id))
			ctx, cancel := context.WithCancel(t.Context())
			crash[id] = cancel
			go leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
				Lock: &resourcelock.LeaseLock{
					LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: "my-controller"},
					Client:     client.CoordinationV1(),
					LockConfig: resourcelock.ResourceLockConfig{Identity: id},
				},
				LeaseDuration: 15 * time.Second,
				RenewDeadline: 10 * time.Second,
				RetryPeriod:   2 * time.Second,
				// ReleaseOnCancel is off: a crashed leader leaves the lease to run out.
				Callbacks: leaderelection.LeaderCallbacks{
					OnStartedLeading: func(context.Context) { leaders <- leader{id, time.Now()} },
					OnStoppedLeading: func() {},
				},
			})
		}

		first := <-leaders
		time.Sleep(4 * time.Second) // the leader renews at +2 s and +4 s...
		synctest.Wait()             // ...and has finished its renewal when everyone else waits
		crashedAt := time.Now()
		crash[first.id]() // the leader's process dies: no release

		next := <-leaders
		if next.id == first.id {
			t.Fatalf("%s led again after crashing", first.id)
		}
		if took := next.at.Sub(crashedAt); took < 15*time.Second {
			t.Errorf("%s took over %s after the crash, before the lease ran out", next.id, took)
		}
		lease, err := kubernetes.NewForConfigOrDie(srv.Config()).CoordinationV1().Leases("default").
			Get(t.Context(), "my-controller", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *lease.Spec.HolderIdentity != next.id || *lease.Spec.LeaseTransitions != 1 {
			t.Errorf("lease held by %s with leaseTransitions %d, want %s and 1",
				*lease.Spec.HolderIdentity, *lease.Spec.LeaseTransitions, next.id)
		}
		// The server's record: two terms, the first ended when the lease ran out.
		for _, term := range srv.History("default", "my-controller") {
			t.Logf("%s from %s: %s", term.Holder, term.Start.Format(time.TimeOnly), leasetest.EndedText(term))
		}
		srv.RequireNoOverlap(t, "default", "my-controller")
	})
}
