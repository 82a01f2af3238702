package leasetest_test

// A partition, as a user tests one: the leader's network hangs (its requests get no answer),
// it gives up leading at its renew deadline, another elector takes over once the lease has run
// out by its own count, and after the heal the old leader follows. client-go's timings keep
// the two apart: the renew deadline (10 s) ends the old term before the lease duration (15 s)
// lets the new one begin.

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leaselab/leaselab/web/leasetest"
)

func TestExamplePartition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := leasetest.Start(t, leasetest.WithTimeLimit(10*time.Minute))

		var mu sync.Mutex
		started := map[string]time.Time{}
		stopped := map[string]time.Time{}
		leaders := make(chan string, 4)
		for _, id := range []string{"a", "b"} {
			client := kubernetes.NewForConfigOrDie(srv.ConfigFor(id))
			go func() {
				// A real controller loops: after it stops leading it runs for the lease again.
				for t.Context().Err() == nil {
					leaderelection.RunOrDie(t.Context(), leaderelection.LeaderElectionConfig{
						Lock: &resourcelock.LeaseLock{
							LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: "my-controller"},
							Client:     client.CoordinationV1(),
							LockConfig: resourcelock.ResourceLockConfig{Identity: id},
						},
						LeaseDuration: 15 * time.Second,
						RenewDeadline: 10 * time.Second,
						RetryPeriod:   2 * time.Second,
						Callbacks: leaderelection.LeaderCallbacks{
							OnStartedLeading: func(context.Context) {
								mu.Lock()
								started[id] = time.Now()
								mu.Unlock()
								leaders <- id
							},
							OnStoppedLeading: func() {
								mu.Lock()
								stopped[id] = time.Now()
								mu.Unlock()
							},
						},
					})
				}
			}()
		}

		first := <-leaders
		time.Sleep(5 * time.Second)
		synctest.Wait()
		cutAt := time.Now()
		srv.Hang(first) // the leader's network: requests go out, nothing comes back

		next := <-leaders
		mu.Lock()
		gaveUp, tookOver := stopped[first], started[next]
		mu.Unlock()
		if next == first || gaveUp.IsZero() {
			t.Fatalf("after the partition %s leads; %s gave up leading at %v", next, first, gaveUp)
		}
		if !gaveUp.Before(tookOver) {
			t.Errorf("%s still led when %s took over: a split brain", first, next)
		}
		t.Logf("cut at 0 s; %s gave up at %v; %s took over at %v",
			first, gaveUp.Sub(cutAt).Round(time.Second), next, tookOver.Sub(cutAt).Round(time.Second))

		srv.Heal(first) // back on the network: it finds the lease held, and follows
		time.Sleep(30 * time.Second)
		synctest.Wait()
		lease, err := kubernetes.NewForConfigOrDie(srv.Config()).CoordinationV1().Leases("default").
			Get(t.Context(), "my-controller", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *lease.Spec.HolderIdentity != next {
			t.Errorf("after the heal %s holds the lease, want %s still", *lease.Spec.HolderIdentity, next)
		}
		srv.RequireNoOverlap(t, "default", "my-controller")
	})
}
