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
