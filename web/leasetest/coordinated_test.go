package leasetest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/leasetest"
)

// coordinated is a client-go candidate in Coordinated Leader Election: a LeaseCandidate kept by
// leaderelection.NewCandidate and an elector with Coordinated set, which leads only once the
// server's election controller names it the holder.
type coordinated struct {
	id     string
	cancel context.CancelFunc
	done   chan struct{}
}

func startCoordinated(t *testing.T, srv *leasetest.Server, ns, lease, id, version string, views *leasetest.Views, leaders chan<- started) *coordinated {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(srv.ConfigFor(id))
	cand, _, err := leaderelection.NewCandidate(client, ns, id, lease, version, version, coordinationv1.OldestEmulationVersion)
	if err != nil {
		t.Fatalf("candidate %s: %v", id, err)
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: ns, Name: lease},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		},
		LeaseDuration: kcm.lease,
		RenewDeadline: kcm.renew,
		RetryPeriod:   kcm.retry,
		Coordinated:   true,
		Callbacks: views.Callbacks(id, leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { leaders <- started{id, time.Now()} },
			OnStoppedLeading: func() {},
		}),
	})
	if err != nil {
		t.Fatalf("elector %s: %v", id, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	c := &coordinated{id: id, cancel: cancel, done: make(chan struct{})}
	runs := make(chan struct{}, 2)
	go func() { cand.Run(ctx); runs <- struct{}{} }()
	go func() { le.Run(ctx); runs <- struct{}{} }()
	go func() {
		<-runs
		<-runs
		close(c.done)
	}()
	return c
}

// crash stops the candidate and its elector without a release; the LeaseCandidate stays.
func (c *coordinated) crash() {
	c.cancel()
	<-c.done
}

// TestCoordinatedCandidate: two client-go candidates in Coordinated Leader Election, of
// emulation versions 1.35 and 1.36 with the strategy OldestEmulationVersion; the server's
// controller elects the older, which leads. When it crashes, the controller elects the other
// once the lease has run out and the crashed one does not answer its ping.
func TestCoordinatedCandidate(t *testing.T) {
	defer measure(t)()
	synctest.Test(t, func(t *testing.T) {
		const ns, lease = "kube-system", "kube-controller-manager"
		srv := leasetest.Start(t, leasetest.WithElection(leasetest.ElectionOptions{
			ElectionDuration: 2 * time.Second,
			RequeueInterval:  2 * time.Second,
		}))
		client := kubernetes.NewForConfigOrDie(srv.Config())
		var views leasetest.Views
		leaders := make(chan started, 2)
		start := time.Now()
		cands := map[string]*coordinated{}
		for _, c := range []struct{ id, version string }{{"newer", "1.36.0"}, {"older", "1.35.0"}} {
			cands[c.id] = startCoordinated(t, srv, ns, lease, c.id, c.version, &views, leaders)
		}

		first := <-leaders
		t.Logf("%s leads after %s (fake time)", first.id, first.at.Sub(start))
		if first.id != "older" {
			t.Fatalf("%s leads, want older (the oldest emulation version); the controller's decisions:\n%s", first.id, decisions(srv, ns, lease))
		}
		l := getLease(t, client, ns, lease)
		if l.Spec.Strategy == nil || *l.Spec.Strategy != coordinationv1.OldestEmulationVersion {
			t.Errorf("lease strategy %v, want %s", l.Spec.Strategy, coordinationv1.OldestEmulationVersion)
		}
		if got := *l.Spec.HolderIdentity; got != "older" {
			t.Errorf("holderIdentity %q, want older", got)
		}
		if !elected(srv.Decisions(ns, lease), "older") {
			t.Errorf("the controller recorded no election of older:\n%s", decisions(srv, ns, lease))
		}

		cands["older"].crash()
		crashed := time.Now()
		second := <-leaders
		t.Logf("%s leads %s after the crash (fake time)", second.id, second.at.Sub(crashed))
		if second.id != "newer" {
			t.Fatalf("%s leads after older crashed, want newer; the controller's decisions:\n%s", second.id, decisions(srv, ns, lease))
		}
		if took := second.at.Sub(crashed); took < kcm.lease {
			t.Errorf("newer led %s after the crash, before the lease ran out (%s)", took, kcm.lease)
		}
		if !elected(srv.Decisions(ns, lease), "newer") {
			t.Errorf("the controller recorded no election of newer:\n%s", decisions(srv, ns, lease))
		}
		srv.RequireNoOverlap(t, ns, lease, views.List()...)
	})
}

// elected reports whether the controller's decisions include electing candidate.
func elected(ds []leasetest.Decision, candidate string) bool {
	for _, d := range ds {
		if (d.Kind == election.KindElect || d.Kind == election.KindPrefer) && d.Candidate == candidate {
			return true
		}
	}
	return false
}

// decisions lists the controller's decisions about a lease, one a line.
func decisions(srv *leasetest.Server, ns, lease string) string {
	var b strings.Builder
	for _, d := range srv.Decisions(ns, lease) {
		fmt.Fprintf(&b, "%s %s %s: %s\n", d.Time.Format(time.TimeOnly), d.Kind, d.Candidate, d.Message)
	}
	return b.String()
}
