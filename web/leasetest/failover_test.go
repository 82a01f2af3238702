package leasetest_test

import (
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/leaselab/leaselab/web/leasetest"
)

// TestRunOrDieInBubble: three client-go electors at kube-controller-manager's timings
// (15/10/2 s) in a synctest bubble; the leader crashes right after a renewal, without
// releasing the lease, and another takes over only once the lease has run out, 15 s of fake
// time later, with leaseTransitions 1. It takes a fraction of a second of wall time.
func TestRunOrDieInBubble(t *testing.T) {
	defer measure(t)()
	synctest.Test(t, func(t *testing.T) {
		const ns, name = "default", "failover"
		srv := leasetest.Start(t)
		client := kubernetes.NewForConfigOrDie(srv.Config())
		var views leasetest.Views
		leaders := make(chan started, 3)
		electors := map[string]*elector{}
		for _, id := range []string{"a", "b", "c"} {
			electors[id] = startElector(t, srv, ns, name, id, kcm, &views, leaders)
		}
		first := <-leaders
		// The leader renews every retryPeriod from the moment it acquired the lease: wake up
		// with its second renewal and let it finish, then crash.
		time.Sleep(2 * kcm.retry)
		synctest.Wait()
		lastRenew := getLease(t, client, ns, name).Spec.RenewTime.Time
		crashed := time.Now()
		if !lastRenew.Equal(crashed) {
			t.Fatalf("the leader last renewed at %v, not right before the crash at %v", lastRenew, crashed)
		}
		electors[first.id].crash()

		second := <-leaders
		took := second.at.Sub(crashed)
		t.Logf("%s led; crashed at +%s; %s took over %s later (fake time)", first.id, crashed.Sub(first.at), second.id, took)
		if second.id == first.id {
			t.Fatalf("the crashed leader %s led again", first.id)
		}
		if took < kcm.lease {
			t.Errorf("%s took over %s after the crash, before the lease ran out (%s)", second.id, took, kcm.lease)
		}
		// A follower notices the last renewal on one of its tries and takes over on the first
		// try after the lease has run out since; tries are retryPeriod apart, plus jitter.
		if most := kcm.lease + 2*kcm.maxTry(); took > most {
			t.Errorf("%s took over %s after the crash, more than %s", second.id, took, most)
		}
		l := getLease(t, client, ns, name)
		if got := *l.Spec.HolderIdentity; got != second.id {
			t.Errorf("holderIdentity %q, want %q", got, second.id)
		}
		if got := *l.Spec.LeaseTransitions; got != 1 {
			t.Errorf("leaseTransitions %d, want 1", got)
		}

		terms := srv.History(ns, name)
		if len(terms) != 2 {
			t.Fatalf("history has %d terms, want 2: %+v", len(terms), terms)
		}
		if terms[0].Holder != first.id || terms[0].Ended != leasetest.EndExpired || !terms[0].End.Equal(lastRenew.Add(kcm.lease)) {
			t.Errorf("first term %+v, want %s's, expired at %v", terms[0], first.id, lastRenew.Add(kcm.lease))
		}
		if terms[1].Holder != second.id || terms[1].Transitions != 1 || !terms[1].End.IsZero() {
			t.Errorf("second term %+v, want %s's, held, transitions 1", terms[1], second.id)
		}
		srv.RequireNoOverlap(t, ns, name, views.List()...)
	})
}

// TestRunOrDieRealTime: the same failover outside a bubble, on the real clock with a 1 s
// lease: the new leader acquires the lease at least a lease duration after the crashed
// leader's last renewal.
func TestRunOrDieRealTime(t *testing.T) {
	defer measure(t)()
	const ns, name = "default", "failover"
	tm := timings{lease: time.Second, renew: 600 * time.Millisecond, retry: 200 * time.Millisecond}
	srv := leasetest.Start(t)
	client := kubernetes.NewForConfigOrDie(srv.Config())
	var views leasetest.Views
	leaders := make(chan started, 3)
	electors := map[string]*elector{}
	for _, id := range []string{"a", "b", "c"} {
		electors[id] = startElector(t, srv, ns, name, id, tm, &views, leaders)
	}
	first := receive(t, leaders, "a first leader")
	electors[first.id].crash()
	lastRenew := getLease(t, client, ns, name).Spec.RenewTime.Time

	second := receive(t, leaders, "a leader after the crash")
	t.Logf("%s led; %s took over %s after its last renewal", first.id, second.id, second.at.Sub(lastRenew))
	if second.id == first.id {
		t.Fatalf("the crashed leader %s led again", first.id)
	}
	if took := second.at.Sub(lastRenew); took < tm.lease {
		t.Errorf("%s took over %s after the last renewal, before the lease ran out (%s)", second.id, took, tm.lease)
	}
	if got := *getLease(t, client, ns, name).Spec.LeaseTransitions; got != 1 {
		t.Errorf("leaseTransitions %d, want 1", got)
	}
	srv.RequireNoOverlap(t, ns, name, views.List()...)
}

// receive waits for the next leader, up to a bound for a busy machine.
func receive(t *testing.T, leaders <-chan started, what string) started {
	t.Helper()
	select {
	case s := <-leaders:
		return s
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: none within 30 s", what)
	}
	return started{}
}
