package leasetest_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/web/leasetest"
)

// TestReleaseAfterPartitionEmptiesTheNewHold confirms what the kit found in client-go v0.36.3's
// tools/leaderelection: with ReleaseOnCancel, a leader cut off from the API server gives up at
// its renew deadline and release() reads the lease again (a GET that hangs). If the network
// comes back while that GET waits, after another replica took the lease, the GET is retried and
// reads the new holder's record, but release() asks IsLeader() of its own older copy, which
// still names itself, and writes holderIdentity "" over the new leader's hold. The new leader
// believes it leads while the lease is free, and another replica may take it: a split brain.
// If this test fails, client-go has changed: update docs/testkit.md, which tells users about it.
func TestReleaseAfterPartitionEmptiesTheNewHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := leasetest.Start(t, leasetest.WithTimeLimit(10*time.Minute))
		views := &leasetest.Views{}
		var mu sync.Mutex
		order := []string{}
		leaders := make(chan string, 8)
		for _, id := range []string{"a", "b", "c"} {
			client := kubernetes.NewForConfigOrDie(srv.ConfigFor(id))
			go func() {
				for t.Context().Err() == nil {
					leaderelection.RunOrDie(t.Context(), leaderelection.LeaderElectionConfig{
						Lock: &resourcelock.LeaseLock{
							LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: "my-controller"},
							Client:     client.CoordinationV1(),
							LockConfig: resourcelock.ResourceLockConfig{Identity: id},
						},
						LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
						ReleaseOnCancel: true,
						Callbacks: views.Callbacks(id, leaderelection.LeaderCallbacks{
							OnStartedLeading: func(context.Context) {
								mu.Lock()
								order = append(order, id)
								mu.Unlock()
								leaders <- id
							},
							OnStoppedLeading: func() {},
						}),
					})
				}
			}()
		}
		first := <-leaders
		time.Sleep(5 * time.Second)
		synctest.Wait()
		srv.Hang(first) // cut off: it gives up at its renew deadline, and release()'s GET hangs
		next := <-leaders
		srv.Heal(first) // back while that GET waits: it is retried, and reads next's record
		time.Sleep(40 * time.Second)
		synctest.Wait()

		var released bool
		for _, term := range srv.History("default", "my-controller") {
			t.Logf("%s from %s to %s: %s", term.Holder, term.Start.Format("15:04:05.000"), term.End.Format("15:04:05.000"), leasetest.EndedText(term))
			if term.Holder == next && term.Ended == leasetest.EndReleased {
				released = true
			}
		}
		if !released {
			t.Errorf("%s's hold did not end released: client-go's release() no longer writes over a new holder", next)
		}
		overlaps := srv.Overlaps("default", "my-controller", views.List()...)
		for _, o := range overlaps {
			t.Logf("split brain: %v for %v (%s)", o.Believers, o.End.Sub(o.Start), o.Cause)
		}
		if len(overlaps) == 0 {
			t.Errorf("no split brain after %s emptied %s's hold (leaders in order: %v)", first, next, order)
		}
	})
}
