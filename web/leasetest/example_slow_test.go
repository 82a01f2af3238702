package leasetest_test

// A slow leader, as a user tests one: how slow may the leader's network get before it fails
// over, and how long is the service without a leader then? client-go renews with one update of
// the record it holds, which must come back within the renew deadline. With 6 s added to each
// of the leader's requests it does, and the leader leads on. With 12 s it does not: the leader
// gives up at its renew deadline, the follower takes over once the lease has run out by its
// own count, nobody leads in between, and after the heal the old leader follows.

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

// leadership is what one elector's callbacks said, with their times.
type leadership struct {
	mu      sync.Mutex
	started map[string][]time.Time
	stopped map[string][]time.Time
}

// led is how long id led within [from, to], from its callbacks.
func (l *leadership) led(id string, from, to time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var total time.Duration
	for i, s := range l.started[id] {
		e := to
		if i < len(l.stopped[id]) {
			e = l.stopped[id][i]
		}
		if s.Before(from) {
			s = from
		}
		if e.After(to) {
			e = to
		}
		if e.After(s) {
			total += e.Sub(s)
		}
	}
	return total
}

// count is how many times id started leading after from.
func (l *leadership) count(id string, from time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.started[id] {
		if !s.Before(from) {
			n++
		}
	}
	return n
}

func TestExampleSlowLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := leasetest.Start(t, leasetest.WithTimeLimit(10*time.Minute))
		l := &leadership{started: map[string][]time.Time{}, stopped: map[string][]time.Time{}}
		leading := make(chan string, 16)
		elect := func(id string) {
			client := kubernetes.NewForConfigOrDie(srv.ConfigFor(id))
			for t.Context().Err() == nil { // a controller runs for the lease again after it stops leading
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
							l.mu.Lock()
							l.started[id] = append(l.started[id], time.Now())
							l.mu.Unlock()
							leading <- id
						},
						OnStoppedLeading: func() {
							l.mu.Lock()
							l.stopped[id] = append(l.stopped[id], time.Now())
							l.mu.Unlock()
						},
					},
				})
			}
		}
		go elect("a")
		if first := <-leading; first != "a" {
			t.Fatalf("%s leads first, want a", first)
		}
		go elect("b")
		time.Sleep(10 * time.Second)
		synctest.Wait()

		// Slow, but a renewal (one update, from the record a holds) fits in the renew deadline.
		slowAt := time.Now()
		srv.Slow("a", 6*time.Second)
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := l.led("a", slowAt, time.Now()); got != time.Minute || l.count("b", slowAt) != 0 {
			t.Fatalf("with 6 s added a led %v of a minute and b took over %d times, want a throughout",
				got, l.count("b", slowAt))
		}

		// Slower than the renew deadline: a gives up at it, b takes over once the lease has run out.
		slowerAt := time.Now()
		srv.Slow("a", 12*time.Second)
		if next := <-leading; next != "b" {
			t.Fatalf("%s leads after a's network slowed past the renew deadline, want b", next)
		}
		l.mu.Lock()
		var gaveUp time.Time // zero: a never gave up
		if s := l.stopped["a"]; len(s) > 0 {
			gaveUp = s[len(s)-1]
		}
		tookOver := l.started["b"][0]
		l.mu.Unlock()
		t.Logf("slowed past the renew deadline at 0 s: a gave up at %v, b took over at %v",
			gaveUp.Sub(slowerAt).Round(time.Second), tookOver.Sub(slowerAt).Round(time.Second))
		if gaveUp.IsZero() || !gaveUp.Before(tookOver) {
			t.Errorf("a still led when b took over: a split brain")
		}

		srv.Heal("a") // the network recovers: a finds b's hold and follows
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := l.count("a", slowerAt); n != 0 {
			t.Errorf("a took the lease back %d times after the heal, want b to keep it", n)
		}
		srv.RequireNoOverlap(t, "default", "my-controller")
	})
}
