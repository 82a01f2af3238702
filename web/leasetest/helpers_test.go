package leasetest_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leaselab/leaselab/web/leasetest"
)

// timings are a client-go elector's leaseDuration, renewDeadline and retryPeriod.
type timings struct{ lease, renew, retry time.Duration }

// maxTry is the longest wait between two tries of a candidate: retryPeriod, plus up to
// leaderelection.JitterFactor of it.
func (tm timings) maxTry() time.Duration {
	return tm.retry + time.Duration(leaderelection.JitterFactor*float64(tm.retry))
}

// kcm's timings: kube-controller-manager's defaults.
var kcm = timings{15 * time.Second, 10 * time.Second, 2 * time.Second}

// started is one elector's OnStartedLeading: who, when.
type started struct {
	id string
	at time.Time
}

// elector is a client-go candidate run by leaderelection.RunOrDie with a client of its own
// (ConfigFor its identity), until crash.
type elector struct {
	id     string
	cancel context.CancelFunc
	done   chan struct{}
}

// startElector runs an elector for lease ns/name. Its OnStartedLeading goes to leaders; views
// records what it believes. It does not release the lease when it stops.
func startElector(t *testing.T, srv *leasetest.Server, ns, name, id string, tm timings, views *leasetest.Views, leaders chan<- started) *elector {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(srv.ConfigFor(id))
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	ctx, cancel := context.WithCancel(t.Context())
	e := &elector{id: id, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(e.done)
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock:          lock,
			LeaseDuration: tm.lease,
			RenewDeadline: tm.renew,
			RetryPeriod:   tm.retry,
			Callbacks: views.Callbacks(id, leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) { leaders <- started{id, time.Now()} },
				OnStoppedLeading: func() {},
			}),
		})
	}()
	return e
}

// crash stops the elector as a killed process stops: no release, the lease stays as it last
// wrote it. It returns once RunOrDie has returned.
func (e *elector) crash() {
	e.cancel()
	<-e.done
}

// getLease reads a lease with client, failing the test on error.
func getLease(t *testing.T, client kubernetes.Interface, ns, name string) *coordinationv1.Lease {
	t.Helper()
	l, err := client.CoordinationV1().Leases(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get lease %s/%s: %v", ns, name, err)
	}
	return l
}

// recordingTB is a testing.TB whose failures are recorded, for checking that a helper fails a
// test. FailNow ends the goroutine, as testing's does: run the helper with run.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	failed bool
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
	r.failed = true
}

func (r *recordingTB) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}

// run calls f with r in a goroutine of its own, so that FailNow can end it.
func (r *recordingTB) run(f func(tb testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
}

// measure returns a function that logs the wall time and the CPU time (of the whole process,
// where measured) since measure was called: defer measure(t)().
func measure(t *testing.T) func() {
	wall, cpu := time.Now(), cpuTime()
	return func() {
		t.Helper()
		t.Logf("wall time %s, CPU time %s", time.Since(wall).Round(time.Millisecond), (cpuTime() - cpu).Round(time.Millisecond))
	}
}
