package leasetest_test

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

// TestReleaseDoesNotWaitForTheCallback is what the release-on-cancel lesson says of client-go:
// with ReleaseOnCancel, cancelling the elector's context clears holderIdentity at once, while
// OnStartedLeading, on a goroutine of its own, is still running. Nothing waits for it to return;
// the work must be stopped before the context is cancelled.
func TestReleaseDoesNotWaitForTheCallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := leasetest.Start(t)
		client := kubernetes.NewForConfigOrDie(srv.ConfigFor("alice"))
		ctx, cancel := context.WithCancel(t.Context())
		leading := make(chan struct{})
		working := make(chan struct{}) // closed when the callback returns
		done := make(chan struct{})
		go func() {
			defer close(done)
			leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
				Lock: &resourcelock.LeaseLock{
					LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: "work"},
					Client:     client.CoordinationV1(),
					LockConfig: resourcelock.ResourceLockConfig{Identity: "alice"},
				},
				LeaseDuration:   15 * time.Second,
				RenewDeadline:   10 * time.Second,
				RetryPeriod:     2 * time.Second,
				ReleaseOnCancel: true,
				Callbacks: leaderelection.LeaderCallbacks{
					OnStartedLeading: func(context.Context) {
						close(leading)
						time.Sleep(time.Minute) // work that ignores its context
						close(working)
					},
					OnStoppedLeading: func() {},
				},
			})
		}()
		<-leading
		cancel()
		<-done // Run has returned, the lease released...
		synctest.Wait()
		select {
		case <-working:
			t.Fatal("the callback returned before the release: client-go waited for it")
		default: // ...while the work still runs
		}
		l, err := kubernetes.NewForConfigOrDie(srv.Config()).CoordinationV1().Leases("default").Get(t.Context(), "work", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h := l.Spec.HolderIdentity; h != nil && *h != "" {
			t.Errorf("holderIdentity %q after the release, with the callback still running", *h)
		}
		<-working
	})
}
