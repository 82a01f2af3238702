package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/sqlite"
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

// BenchmarkStartup measures start-up to ready on a database holding 100,000 changes (1,000
// leases renewed 100 times each): the whole server starts on it and answers /readyz, as
// `leaselab serve` does. Closing it is not counted. Later iterations find the process warm
// (the binary's pages, the Go heap), so the first start of a new process takes longer.
func BenchmarkStartup(b *testing.B) {
	const leases, renewals = 1000, 100
	path := filepath.Join(b.TempDir(), "leaselab.db")
	fillChanges(b, path, leases, renewals)
	cfg := serveConfig{
		addr:            "127.0.0.1:0",
		db:              path,
		compactKeep:     leases * (renewals + 1),
		compactMaxAge:   24 * time.Hour,
		coordinated:     true,
		cleController:   true,
		shutdownTimeout: 5 * time.Second,
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for b.Loop() {
		rs, err := startServer(context.Background(), cfg, logger)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := http.Get(rs.URL + "/readyz")
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("readyz: %s", resp.Status)
		}
		b.StopTimer()
		if err := rs.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// fillChanges creates the given number of Leases in the database at path and updates each
// of them renewals times, 64 writers at a time, so that its change log holds
// leases*(renewals+1) changes.
func fillChanges(tb testing.TB, path string, leases, renewals int) {
	tb.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, sqlite.Options{CompactInterval: -1}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 64 {
		wg.Go(func() {
			for i := range next {
				name := fmt.Sprintf("lease-%d", i)
				l := newLease(name, name, nil)
				l.TypeMeta = metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}
				l.Namespace = "bench"
				l.UID = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
				l.CreationTimestamp = metav1.Now()
				key := store.Key{Resource: coordinationv1.Resource("leases").String(), Namespace: l.Namespace, Name: name}
				value, err := json.Marshal(l)
				if err != nil {
					tb.Error(err)
					return
				}
				obj, err := db.Create(ctx, key, value)
				for range renewals {
					if err != nil {
						break
					}
					obj, err = db.Update(ctx, key, obj.Revision, value)
				}
				if err != nil {
					tb.Error(err)
					return
				}
			}
		})
	}
	for i := range leases {
		next <- i
	}
	close(next)
	wg.Wait()
}
