package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestInformersFollowUpdates runs client-go informers (which start with a watch-list request
// by default) on both kinds and checks they sync and end at the final state of 100 rapid
// updates.
func TestInformersFollowUpdates(t *testing.T) {
	t.Parallel()
	ts := mustStartServer(t, "")
	ctx := ctxT(t, 2*time.Minute)
	leases := ts.Client.CoordinationV1().Leases("default")
	cands := ts.Client.CoordinationV1beta1().LeaseCandidates("default")
	if _, err := leases.Create(ctx, newLease("before", "h", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	factory := informers.NewSharedInformerFactory(ts.Client, 0)
	leaseInf := factory.Coordination().V1().Leases().Informer()
	candInf := factory.Coordination().V1beta1().LeaseCandidates().Informer()
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	syncCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), leaseInf.HasSynced, candInf.HasSynced) {
		t.Fatal("informers did not sync")
	}
	if _, ok, _ := leaseInf.GetStore().GetByKey("default/before"); !ok {
		t.Fatal("lease created before the informer started is missing")
	}

	l, err := leases.Create(ctx, newLease("rapid", "h-0", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewMicroTime(time.Now())
	c, err := cands.Create(ctx, &coordinationv1beta1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Name: "cand"},
		Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: "rapid", RenewTime: &now, BinaryVersion: "1.36.0",
			EmulationVersion: "1.36.0", Strategy: coordinationv1.OldestEmulationVersion},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 100; i++ {
		l.Spec.HolderIdentity = ptr.To(fmt.Sprintf("h-%d", i))
		if l, err = leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		c.Spec.BinaryVersion = fmt.Sprintf("1.36.%d", i)
		if c, err = cands.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("candidate update %d: %v", i, err)
		}
	}
	var final *coordinationv1.Lease
	poll.Until(t, 10*time.Second, "the informers reach the final state", func() (bool, string) {
		li, ok1, _ := leaseInf.GetStore().GetByKey("default/rapid")
		ci, ok2, _ := candInf.GetStore().GetByKey("default/cand")
		if !ok1 || !ok2 {
			return false, fmt.Sprintf("lease cached %v, candidate cached %v", ok1, ok2)
		}
		final = li.(*coordinationv1.Lease)
		crv := ci.(*coordinationv1beta1.LeaseCandidate).ResourceVersion
		return final.ResourceVersion == l.ResourceVersion && crv == c.ResourceVersion,
			fmt.Sprintf("lease rv %s of %s, candidate rv %s of %s", final.ResourceVersion, l.ResourceVersion, crv, c.ResourceVersion)
	})
	if h := *final.Spec.HolderIdentity; h != "h-100" {
		t.Fatalf("informer holder = %s, want h-100", h)
	}
}

// TestLeaderElection runs three client-go leader electors with a Lease lock: one leader at a
// time, and a new leader once the old one stops, with and without ReleaseOnCancel.
func TestLeaderElection(t *testing.T) {
	t.Parallel()
	for _, release := range []bool{true, false} {
		t.Run(fmt.Sprintf("ReleaseOnCancel=%v", release), func(t *testing.T) {
			ts := mustStartServer(t, "")
			ctx := ctxT(t, 2*time.Minute)

			var mu sync.Mutex
			leaders := map[string]bool{}
			var overlap atomic.Bool
			var terms []string
			cancels := map[string]context.CancelFunc{}
			locks := map[string]*countingLock{}
			stoppedIDs := map[string]bool{}
			var wg sync.WaitGroup
			for i := 0; i < 3; i++ {
				id := fmt.Sprintf("elector-%d", i)
				lock := &countingLock{Interface: &resourcelock.LeaseLock{
					LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: "election"},
					Client:     ts.Client.CoordinationV1(),
					LockConfig: resourcelock.ResourceLockConfig{Identity: id},
				}}
				locks[id] = lock
				ectx, cancel := context.WithCancel(ctx)
				cancels[id] = cancel
				le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
					Lock:            lock,
					LeaseDuration:   2 * time.Second,
					RenewDeadline:   1500 * time.Millisecond,
					RetryPeriod:     200 * time.Millisecond,
					ReleaseOnCancel: release,
					Name:            "test",
					Callbacks: leaderelection.LeaderCallbacks{
						OnStartedLeading: func(context.Context) {
							mu.Lock()
							defer mu.Unlock()
							// Another elector may still be running its stop callbacks after it was
							// cancelled; one that was not cancelled must not lead now.
							for other := range leaders {
								if !stoppedIDs[other] {
									overlap.Store(true)
								}
							}
							leaders[id] = true
							terms = append(terms, id)
						},
						OnStoppedLeading: func() {
							mu.Lock()
							defer mu.Unlock()
							delete(leaders, id)
						},
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() { defer wg.Done(); le.Run(ectx) }()
			}
			defer func() {
				for _, c := range cancels {
					c()
				}
				wg.Wait()
			}()

			first := waitLeader(t, &mu, &terms, 0, 10*time.Second)
			lease, err := ts.Client.CoordinationV1().Leases("default").Get(ctx, "election", metav1.GetOptions{})
			if err != nil || *lease.Spec.HolderIdentity != first {
				t.Fatalf("lease holder = %v (err %v), want %s", lease.Spec.HolderIdentity, err, first)
			}
			// Stop the leader between two renewals: right after one has returned to it, the next
			// is a retry period (200 ms) away. Cancelled in the middle of one, the renewal may
			// still commit on the server after the client gave up on it; the release then carries
			// a stale resourceVersion, fails with a conflict, and the others wait for the lease
			// to expire, as they would against kube-apiserver.
			renewals := locks[first].updates.Load()
			poll.Until(t, 5*time.Second, first+" renews", func() (bool, string) {
				return locks[first].updates.Load() > renewals, "no renewal returned"
			})
			stopped := time.Now()
			mu.Lock()
			stoppedIDs[first] = true
			mu.Unlock()
			cancels[first]()
			second := waitLeader(t, &mu, &terms, 1, 10*time.Second)
			took := time.Since(stopped)
			if second == first {
				t.Fatalf("the stopped elector %s leads again", first)
			}
			if overlap.Load() {
				t.Error("two electors led at the same time")
			}
			t.Logf("leader %s stopped; %s took over after %v", first, second, took.Round(10*time.Millisecond))
			if release && took > 2*time.Second {
				t.Errorf("with ReleaseOnCancel the takeover took %v, want well under the lease duration", took)
			}
		})
	}
}

// waitLeader waits until the n-th term has started and returns its leader.
func waitLeader(t *testing.T, mu *sync.Mutex, terms *[]string, n int, d time.Duration) string {
	t.Helper()
	var id string
	poll.Until(t, d, fmt.Sprintf("a leader for term %d", n), func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		if len(*terms) > n {
			id = (*terms)[n]
			return true, ""
		}
		return false, fmt.Sprintf("terms %v", *terms)
	})
	return id
}

// countingLock is a client-go lock that counts the updates (acquisitions and renewals) that
// returned to its elector without an error.
type countingLock struct {
	resourcelock.Interface
	updates atomic.Int64
}

func (l *countingLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Update(ctx, ler)
	if err == nil {
		l.updates.Add(1)
	}
	return err
}
