package bench

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web"
	"github.com/leaselab/leaselab/web/api/front"
	"github.com/leaselab/leaselab/web/webtest"
)

// testServer is a real leaselab web server and its SQLite store on 127.0.0.1:0 with a database
// in a temporary directory, from the constructors `leaselab serve` uses (package main, which
// starts them, cannot be imported), without the election controller and access control, which
// the load generator does not need.
type testServer struct {
	URL    string
	DB     string
	Config *rest.Config
	Client kubernetes.Interface
	// Close stops the server; the test's cleanup calls it too.
	Close func()
}

// mustStartServer starts a leaselab for a test and stops it at cleanup.
func mustStartServer(tb testing.TB) *testServer {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "leaselab.db")
	logger := slog.New(slog.DiscardHandler)
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{}, logger)
	if err != nil {
		tb.Fatalf("open database: %v", err)
	}
	tb.Cleanup(func() { // after the server's own cleanup
		if err := db.Close(); err != nil {
			tb.Errorf("close database: %v", err)
		}
	})
	srv := webtest.Start(tb, web.Config{Config: front.Config{Logger: logger, Store: db, CoordinatedLeaderElection: true}})
	ts := &testServer{URL: srv.URL, DB: path, Close: srv.Close}
	ts.Config = &rest.Config{Host: ts.URL, QPS: -1, UserAgent: "leaselab-bench-test"}
	ts.Client = kubernetes.NewForConfigOrDie(ts.Config)
	mustBeReady(tb, ts.URL)
	return ts
}

// mustBeReady fails the test unless the server at url answers /readyz.
func mustBeReady(tb testing.TB, url string) {
	tb.Helper()
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("readyz: %s", resp.Status)
	}
}

// newLease returns a lease named name held by holder, as an elector first writes it.
func newLease(name, holder string) *coordinationv1.Lease {
	now := metav1.NewMicroTime(time.Now())
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0)},
	}
}

// testConfig is a short run of workload against ts: a second, a few clients, no progress line.
func testConfig(ts *testServer, workload string) Config {
	return Config{
		Workload:       workload,
		Rest:           ts.Config,
		Namespace:      "leaselab-bench",
		Clients:        4,
		Duration:       time.Second,
		Leases:         20,
		Interval:       200 * time.Millisecond,
		Watchers:       6,
		WebSocketShare: 0.5,
		DB:             ts.DB,
	}
}
