package election

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

func TestDecisionLog(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newDecisionLog(3, 2)
	d := func(lease string, kind Kind, msg string) Decision {
		at = at.Add(time.Second)
		return Decision{Time: at, Namespace: "ns", Lease: lease, Kind: kind, Message: msg}
	}

	// Actions repeat; a state that repeats the last decision is dropped.
	if !l.record(d("a", KindPing, "pinged x")) || !l.record(d("a", KindPing, "pinged x")) {
		t.Error("a repeated action was dropped")
	}
	if !l.record(d("a", KindWait, "waiting for x")) || l.record(d("a", KindWait, "waiting for x")) {
		t.Error("a repeated state was kept")
	}
	if !l.record(d("a", KindWait, "waiting for y")) {
		t.Error("a changed state was dropped")
	}
	got := l.list("ns", "a")
	if len(got) != 3 || got[0].Kind != KindPing || got[1].Message != "waiting for x" || got[2].Message != "waiting for y" {
		t.Errorf("ring of 3 = %+v", got)
	}
	if l.list("ns", "nothing") != nil || l.list("other", "a") != nil {
		t.Error("decisions of another lease")
	}

	// Two leases at most: the one idle the longest is forgotten.
	l.record(d("b", KindElect, "picked x"))
	l.record(d("a", KindElect, "picked y"))
	l.record(d("c", KindElect, "picked z"))
	if l.list("ns", "b") != nil || len(l.list("ns", "a")) != 3 || len(l.list("ns", "c")) != 1 {
		t.Errorf("eviction: a=%v b=%v c=%v", l.list("ns", "a"), l.list("ns", "b"), l.list("ns", "c"))
	}
}

func TestDecisionSubscribers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newDecisionLog(10, 10)
		fast, cancelFast := l.subscribe()
		slow, cancelSlow := l.subscribe()
		defer cancelSlow()
		n := subscriberBuffer + 50
		got := 0
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range fast {
				got++
			}
		}()
		for i := range n {
			// Recording never blocks, whoever reads.
			l.record(Decision{Namespace: "ns", Lease: "a", Kind: KindPing, Message: fmt.Sprint(i)})
			if i%64 == 0 {
				synctest.Wait() // the fast reader has taken all there is: it keeps up
			}
		}
		cancelFast()
		cancelFast() // idempotent
		<-done
		if got != n {
			t.Errorf("fast subscriber got %d of %d", got, n)
		}
		if len(slow) != subscriberBuffer {
			t.Errorf("slow subscriber holds %d, want the buffer full (%d) and the rest dropped", len(slow), subscriberBuffer)
		}
		first := <-slow
		if first.Message != "0" {
			t.Errorf("slow subscriber's first decision = %q, want the oldest", first.Message)
		}
	})
}
