package sqlite

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
)

// leaseValue is about the size of a Lease's JSON.
var leaseValue = []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"bench","namespace":"default","uid":"6f1c1f5e-1f7a-4f33-9b7c-0d3e2b4c5a6d","creationTimestamp":"2025-01-01T00:00:00Z"},"spec":{"holderIdentity":"candidate-0123456789","leaseDurationSeconds":15,"acquireTime":"2025-01-01T00:00:00.000000Z","renewTime":"2025-01-01T00:00:00.000000Z","leaseTransitions":3}}`)

func reportOpsPerSec(b *testing.B, start time.Time) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
}

// reportWritesPerCommit reports how well concurrent writes shared commits.
func reportWritesPerCommit(b *testing.B, db *DB, commitsBefore int64) {
	if n := db.commits.Load() - commitsBefore; n > 0 {
		b.ReportMetric(float64(b.N)/float64(n), "writes/commit")
	}
}

// clientsPerCPU sets how many parallel clients (goroutines) the write benchmarks run per
// GOMAXPROCS: lease clients are many and mostly wait, so that commits are shared.
const clientsPerCPU = 16

// BenchmarkUpdate renews leases from parallel goroutines, each its own lease at the revision
// it got: group commit at work.
func BenchmarkUpdate(b *testing.B) {
	db := MustOpen(b, testOptions())
	var n atomic.Int64
	b.SetParallelism(clientsPerCPU)
	commits := db.commits.Load()
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		k := leaseKey("bench", fmt.Sprintf("lease-%d", n.Add(1)))
		obj, err := db.Create(context.Background(), k, leaseValue)
		if err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			if obj, err = db.Update(context.Background(), k, obj.Revision, leaseValue); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportOpsPerSec(b, start)
	reportWritesPerCommit(b, db, commits)
}

// BenchmarkGetUpdate is a lease renewal as a client does it: GET, then Update at the revision
// read.
func BenchmarkGetUpdate(b *testing.B) {
	db := MustOpen(b, testOptions())
	var n atomic.Int64
	b.SetParallelism(clientsPerCPU)
	commits := db.commits.Load()
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		k := leaseKey("bench", fmt.Sprintf("lease-%d", n.Add(1)))
		if _, err := db.Create(ctx, k, leaseValue); err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			obj, err := db.Get(ctx, k)
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := db.Update(ctx, k, obj.Revision, leaseValue); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportOpsPerSec(b, start)
	reportWritesPerCommit(b, db, commits)
}

// BenchmarkList lists 1000 leases, current and at an older revision.
func BenchmarkList(b *testing.B) {
	db := MustOpen(b, testOptions())
	keys := make([]store.Key, 1000)
	for i := range keys {
		keys[i] = leaseKey(fmt.Sprintf("ns-%d", i%10), name(i))
	}
	MustCreateMany(b, db, keys, string(leaseValue))
	old, _ := MustRevision(b, db)
	MustUpdate(b, db, keys[0], MustGet(b, db, keys[0]).Revision, "newer")
	for _, bc := range []struct {
		name string
		opts store.ListOptions
	}{
		{"current", store.ListOptions{Resource: leases}},
		{"revision", store.ListOptions{Resource: leases, Revision: old}},
		{"page100", store.ListOptions{Resource: leases, Limit: 100, After: keys[500]}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				res, err := db.List(context.Background(), bc.opts)
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Objects) == 0 {
					b.Fatal("empty list")
				}
			}
			reportOpsPerSec(b, start)
		})
	}
}

// BenchmarkWatchFanout measures updates delivered to 100 watches; an op is one update
// received by every watch.
func BenchmarkWatchFanout(b *testing.B) {
	db := MustOpen(b, testOptions())
	ctx := context.Background()
	const watchers = 100
	var received atomic.Int64
	done := make(chan struct{}, watchers)
	b.ResetTimer()
	start := time.Now()
	for range watchers {
		w := MustWatch(b, db, store.WatchOptions{Resource: leases})
		go func() {
			n := 0
			for range w.Events() {
				received.Add(1)
				if n++; n == b.N {
					done <- struct{}{}
					return
				}
			}
		}()
	}
	// Parallel writers so that commits are batched, as with many clients: b.N writes in all.
	const writers = 16
	var n atomic.Int64
	errs := make(chan error, writers)
	for g := range writers {
		go func() {
			k := leaseKey("bench", fmt.Sprintf("lease-%d", g))
			var obj store.Object
			var err error
			for n.Add(1) <= int64(b.N) {
				if obj.Revision == 0 {
					obj, err = db.Create(ctx, k, leaseValue)
				} else {
					obj, err = db.Update(ctx, k, obj.Revision, leaseValue)
				}
				if err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	for range watchers {
		select {
		case <-done:
		case <-time.After(time.Minute):
			b.Fatalf("watchers received %d of %d events", received.Load(), b.N*watchers)
		}
	}
	reportOpsPerSec(b, start)
	b.ReportMetric(float64(received.Load())/time.Since(start).Seconds(), "events/s")
}
