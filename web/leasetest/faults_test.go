package leasetest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/web/leasetest"
)

// TestHangingLeaderLosesLeadership: the leader's requests hang, as behind a network partition;
// it stops leading when its renew deadline passes, and another takes over once the lease has
// run out, with no overlap between what they believed.
func TestHangingLeaderLosesLeadership(t *testing.T) {
	defer measure(t)()
	synctest.Test(t, func(t *testing.T) {
		const ns, name = "default", "hang"
		srv := leasetest.Start(t)
		client := kubernetes.NewForConfigOrDie(srv.Config())
		var views leasetest.Views
		leaders := make(chan started, 3)
		for _, id := range []string{"a", "b", "c"} {
			startElector(t, srv, ns, name, id, kcm, &views, leaders)
		}
		first := <-leaders
		time.Sleep(kcm.retry) // the first renewal
		synctest.Wait()
		lastRenew := getLease(t, client, ns, name).Spec.RenewTime.Time
		srv.Hang(first.id)

		second := <-leaders
		if second.id == first.id {
			t.Fatalf("the hanging leader %s led again", first.id)
		}
		var stopped time.Time
		for _, v := range views.List() {
			if v.Identity == first.id && !v.Leads {
				stopped = v.At
			}
		}
		t.Logf("%s hung after renewing at +%s; it stopped leading %s later, and %s took over %s after that renewal (fake time)",
			first.id, lastRenew.Sub(first.at), stopped.Sub(lastRenew), second.id, second.at.Sub(lastRenew))
		if stopped.IsZero() {
			t.Fatalf("%s never stopped leading: %s", first.id, views.String())
		}
		if stopped.Sub(lastRenew) > kcm.renew+kcm.retry {
			t.Errorf("%s stopped leading %s after its last renewal, later than its renew deadline", first.id, stopped.Sub(lastRenew))
		}
		if second.at.Sub(lastRenew) < kcm.lease {
			t.Errorf("%s took over %s after the last renewal, before the lease ran out", second.id, second.at.Sub(lastRenew))
		}
		srv.RequireNoOverlap(t, ns, name, views.List()...)
	})
}

// TestFailWrites: the next n writes fail with the status given, reads pass, and then writes
// pass again.
func TestFailWrites(t *testing.T) {
	defer measure(t)()
	srv := leasetest.Start(t)
	leases := kubernetes.NewForConfigOrDie(srv.ConfigFor("writer")).CoordinationV1().Leases("default")
	l, err := leases.Create(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv.FailWrites(2, http.StatusServiceUnavailable)
	for i := range 2 {
		l.Spec.HolderIdentity = ptr.To("writer")
		_, err := leases.Update(t.Context(), l, metav1.UpdateOptions{})
		if !apierrors.IsServiceUnavailable(err) {
			t.Fatalf("write %d: %v, want 503 ServiceUnavailable", i+1, err)
		}
		if _, err := leases.Get(t.Context(), "l", metav1.GetOptions{}); err != nil {
			t.Fatalf("a read failed while writes fail: %v", err)
		}
	}
	if l, err = leases.Update(t.Context(), l, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the third write: %v", err)
	}
	if got := ptr.Deref(l.Spec.HolderIdentity, ""); got != "writer" {
		t.Errorf("holderIdentity %q after the third write", got)
	}

	srv.FailWrites(1, http.StatusConflict)
	err = leases.Delete(t.Context(), "l", metav1.DeleteOptions{})
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Code != http.StatusConflict || st.Status().Reason != metav1.StatusReasonConflict {
		t.Fatalf("delete: %v, want a 409 Conflict Status", err)
	}
	if err := leases.Delete(t.Context(), "l", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete after the failure: %v", err)
	}
}

// TestFailAndHeal: one client's requests fail with the status given while the others' pass;
// its open watch ends; after Heal it is served again.
func TestFailAndHeal(t *testing.T) {
	defer measure(t)()
	srv := leasetest.Start(t)
	sick := kubernetes.NewForConfigOrDie(srv.ConfigFor("sick")).CoordinationV1().Leases("default")
	well := kubernetes.NewForConfigOrDie(srv.ConfigFor("well")).CoordinationV1().Leases("default")
	w, err := sick.Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	srv.Fail("sick", http.StatusInternalServerError)
	if _, err := sick.List(t.Context(), metav1.ListOptions{}); !apierrors.IsInternalError(err) {
		t.Errorf("the failing client's list: %v, want 500 InternalError", err)
	}
	if _, err := well.List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Errorf("another client's list: %v", err)
	}
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Errorf("the failing client's watch delivered %v, want it closed", ev.Type)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the failing client's watch is still open after 30 s")
	}

	srv.Heal("sick")
	if _, err := sick.List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Errorf("list after Heal: %v", err)
	}
}

// TestHangAndSlow: in a bubble, a hanging client's request waits until its context ends, or
// until Heal breaks its connection (and client-go retries it); a slow client's request takes
// exactly the latency added, in fake time.
func TestHangAndSlow(t *testing.T) {
	defer measure(t)()
	synctest.Test(t, func(t *testing.T) {
		srv := leasetest.Start(t)
		leases := kubernetes.NewForConfigOrDie(srv.ConfigFor("x")).CoordinationV1().Leases("default")
		list := func(ctx context.Context) error {
			_, err := leases.List(ctx, metav1.ListOptions{})
			return err
		}

		srv.Hang("x")
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 7*time.Second)
		err := list(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 7*time.Second {
			t.Errorf("hanging list: %v after %s, want the context's deadline after 7s", err, time.Since(start))
		}

		done := make(chan error, 1)
		go func() { done <- list(t.Context()) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("a hanging list returned: %v", err)
		default:
		}
		// Heal breaks the hanging request's connection; client-go retries a read after a
		// broken connection, a second later.
		srv.Heal("x")
		if err := <-done; err != nil {
			t.Errorf("the list hanging at Heal: %v, want it retried", err)
		}
		if err := list(t.Context()); err != nil {
			t.Errorf("list after Heal: %v", err)
		}

		srv.Slow("x", 3*time.Second)
		start = time.Now()
		if err := list(t.Context()); err != nil {
			t.Errorf("slow list: %v", err)
		}
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("slow list took %s, want 3s", took)
		}
	})
}

// TestPause: in a bubble, a paused server answers nothing, the election controller included,
// until Resume; then the held requests are served.
func TestPause(t *testing.T) {
	defer measure(t)()
	synctest.Test(t, func(t *testing.T) {
		srv := leasetest.Start(t)
		leases := kubernetes.NewForConfigOrDie(srv.Config()).CoordinationV1().Leases("default")
		srv.Pause()
		done := make(chan error, 1)
		go func() {
			_, err := leases.Create(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"}}, metav1.CreateOptions{})
			done <- err
		}()
		time.Sleep(time.Minute)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("a request to the paused server returned: %v", err)
		default:
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_, err := leases.Get(ctx, "l", metav1.GetOptions{})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("get with a deadline from the paused server: %v, want the deadline", err)
		}
		srv.Resume()
		if err := <-done; err != nil {
			t.Fatalf("the held create: %v", err)
		}
		if _, err := leases.Get(t.Context(), "l", metav1.GetOptions{}); err != nil {
			t.Errorf("get after Resume: %v", err)
		}
	})
}

// TestRequireNoOverlap: a takeover before the lease ran out, and views in which two candidates
// believed they led at once, fail the test; a clean history does not.
func TestRequireNoOverlap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ns = "default"
		srv := leasetest.Start(t)
		leases := kubernetes.NewForConfigOrDie(srv.Config()).CoordinationV1().Leases(ns)
		write := func(name, holder string) {
			t.Helper()
			l, err := leases.Get(t.Context(), name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				l, err = leases.Create(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = ptr.To(holder), ptr.To[int32](10)
			l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			if _, err := leases.Update(t.Context(), l, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}

		// Clean: a holds, stops, lets the lease run out, and b takes it.
		var views leasetest.Views
		write("clean", "a")
		views.Leading("a", true)
		time.Sleep(9 * time.Second)
		views.Leading("a", false)
		time.Sleep(2 * time.Second)
		write("clean", "b")
		views.Leading("b", true)
		rec := &recordingTB{TB: t}
		rec.run(func(tb testing.TB) { srv.RequireNoOverlap(tb, ns, "clean", views.List()...) })
		if rec.failed {
			t.Errorf("a clean history failed: %v", rec.errors)
		}

		// The record alone: b writes itself while a's lease still runs.
		write("forced", "a")
		time.Sleep(2 * time.Second)
		write("forced", "b")
		if terms := srv.History(ns, "forced"); len(terms) != 2 || terms[0].Ended != leasetest.EndTakeover {
			t.Fatalf("history %+v, want a taken over by b", terms)
		}
		rec = &recordingTB{TB: t}
		rec.run(func(tb testing.TB) { srv.RequireNoOverlap(tb, ns, "forced") })
		if !rec.failed || len(rec.errors) != 1 {
			t.Errorf("a takeover before the lease ran out: failed %t, errors %q", rec.failed, rec.errors)
		}

		// Views: a goes on believing it leads after b took over.
		write("believed", "a")
		views = leasetest.Views{}
		views.Leading("a", true)
		time.Sleep(15 * time.Second)
		write("believed", "b")
		views.Leading("b", true)
		time.Sleep(3 * time.Second)
		views.Leading("a", false)
		if got := srv.Overlaps(ns, "believed", views.List()...); len(got) != 1 || len(got[0].Believers) != 2 {
			t.Fatalf("overlaps %+v, want a and b believing at once", got)
		}
		if got := srv.Overlaps(ns, "believed"); len(got) != 0 {
			t.Errorf("overlaps without views %+v, want none", got)
		}
		rec = &recordingTB{TB: t}
		rec.run(func(tb testing.TB) { srv.RequireNoOverlap(tb, ns, "believed", views.List()...) })
		if !rec.failed || len(rec.errors) != 1 {
			t.Errorf("two believers at once: failed %t, errors %q", rec.failed, rec.errors)
		}
	})
}

// TestOverlapNamesTheKitsFault: a candidate's faults that the kit put on its client (here Slow)
// are the judge's cause of its split brain, though its views (from client-go's callbacks)
// record no fault: the sentence says its network was slow, not that nothing explains it.
func TestOverlapNamesTheKitsFault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := leasetest.Start(t)
		write := func(id string) {
			t.Helper()
			leases := kubernetes.NewForConfigOrDie(srv.ConfigFor(id)).CoordinationV1().Leases("default")
			l, err := leases.Get(t.Context(), "slow", metav1.GetOptions{})
			now := metav1.NewMicroTime(time.Now())
			if err != nil {
				_, err = leases.Create(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "slow"},
					Spec: coordinationv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: ptr.To[int32](10), RenewTime: &now, AcquireTime: &now}}, metav1.CreateOptions{})
			} else {
				l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.AcquireTime = &id, &now, &now
				_, err = leases.Update(t.Context(), l, metav1.UpdateOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		var views leasetest.Views
		write("a")
		views.Leading("a", true)
		srv.Slow("a", 4*time.Second)
		time.Sleep(11 * time.Second) // a's hold runs out; a, slowed, has not seen it yet
		write("b")
		views.Leading("b", true)
		time.Sleep(3 * time.Second)
		views.Leading("a", false)
		os := srv.Overlaps("default", "slow", views.List()...)
		if len(os) != 1 || os[0].Cause != "slow-network" || !strings.Contains(os[0].Text, "network added 4.0 s") {
			t.Fatalf("overlaps %+v, want one caused by a's slow network", os)
		}
	})
}
