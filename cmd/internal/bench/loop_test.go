package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestMissingFrom(t *testing.T) {
	for _, c := range []struct {
		want, got []int64
		missing   int
	}{
		{nil, nil, 0},
		{[]int64{1, 2, 3}, []int64{1, 2, 3}, 0},
		{[]int64{1, 2, 3}, nil, 3},
		{[]int64{2, 4, 6}, []int64{1, 2, 3, 5, 6, 7}, 1},
		{[]int64{5}, []int64{1, 2}, 1},
		{[]int64{1, 9}, []int64{9}, 1},
	} {
		if got := missingFrom(c.want, c.got); got != c.missing {
			t.Errorf("missingFrom(%v, %v) = %d, want %d", c.want, c.got, got, c.missing)
		}
	}
}

func TestFailureKind(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{apierrors.NewConflict(coordinationv1.Resource("leases"), "l", errors.New("stale")), "Conflict"},
		{apierrors.NewForbidden(coordinationv1.Resource("leases"), "l", errors.New("no")), "Forbidden"},
		{&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, "network"},
		{fmt.Errorf("get: %w", io.ErrUnexpectedEOF), "network"},
		{errors.New("odd"), "other"},
	} {
		if got := failureKind(c.err); got != c.want {
			t.Errorf("failureKind(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// TestPercentiles: a percentile is the smallest latency that share of the samples does not
// exceed.
func TestPercentiles(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if p50, p99, maxMs := percentiles(ds); p50 != 50 || p99 != 99 || maxMs != 100 {
		t.Errorf("percentiles of 1..100 ms = %v, %v, %v", p50, p99, maxMs)
	}
	if p50, p99, maxMs := percentiles([]time.Duration{3 * time.Millisecond}); p50 != 3 || p99 != 3 || maxMs != 3 {
		t.Errorf("percentiles of one sample = %v, %v, %v", p50, p99, maxMs)
	}
	if p50, p99, maxMs := percentiles(nil); p50 != 0 || p99 != 0 || maxMs != 0 {
		t.Errorf("percentiles of none = %v, %v, %v", p50, p99, maxMs)
	}
}

// TestBeatSchedule: a sender's leases beat spread over the interval, round after round, and a
// sender without leases ends at once instead of spinning.
func TestBeatSchedule(t *testing.T) {
	ctx := context.Background()
	start := time.Now().Add(-time.Hour) // every beat is overdue: next does not wait
	s := &beatSchedule{start: start, interval: time.Second, leases: 5, sender: 1, senders: 3, nextLease: 1}
	for _, want := range []struct {
		lease int
		at    time.Duration
	}{{1, 200 * time.Millisecond}, {4, 800 * time.Millisecond}, {1, 1200 * time.Millisecond}, {4, 1800 * time.Millisecond}} {
		due, ok := s.next(ctx)
		if !ok || s.lease != want.lease || due.Sub(start) != want.at {
			t.Fatalf("next = lease %d at %v (%v), want lease %d at %v", s.lease, due.Sub(start), ok, want.lease, want.at)
		}
	}
	idle := &beatSchedule{start: start, interval: time.Second, leases: 2, sender: 3, senders: 4, nextLease: 3}
	if _, ok := idle.next(ctx); ok {
		t.Error("a sender without leases got a beat")
	}
}
