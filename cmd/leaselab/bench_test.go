package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkLeaseRenewal measures the lease renewal path as client-go's LeaseLock drives it:
// a GET of the lease, then a PUT with the resourceVersion it returned, through the typed
// client (protobuf bodies), against a whole server on loopback with its SQLite database.
// Each parallel client renews its own lease, as separate electors do.
func BenchmarkLeaseRenewal(b *testing.B) {
	ts := mustStartServer(b, "")
	ts.Config.QPS = -1
	ctx := context.Background()
	leases := ts.Client.CoordinationV1().Leases("bench")
	var next atomic.Int64
	b.SetParallelism(8) // with GOMAXPROCS 2: 16 concurrent electors
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		name := fmt.Sprintf("elector-%d", next.Add(1))
		if _, err := leases.Create(ctx, newLease(name, name, nil), metav1.CreateOptions{}); err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			l, err := leases.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				b.Error(err)
				return
			}
			now := metav1.NewMicroTime(time.Now())
			l.Spec.RenewTime = &now
			if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "renewals/s")
}

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
