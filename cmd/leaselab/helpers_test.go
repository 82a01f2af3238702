package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// testServer is a whole leaselab running in-process on 127.0.0.1:0 with a database in a
// temporary directory.
type testServer struct {
	*runningServer
	DB     string
	Config *rest.Config
	Client kubernetes.Interface
}

// mustStartServer starts leaselab for a test and stops it at cleanup. db may name an existing
// database file to reopen; empty means a new one.
func mustStartServer(tb testing.TB, db string) *testServer {
	tb.Helper()
	return mustStartServerWith(tb, db, nil)
}

// mustStartServerWith is mustStartServer with a chance to change the configuration.
func mustStartServerWith(tb testing.TB, db string, configure func(*serveConfig)) *testServer {
	tb.Helper()
	return mustStartServerLogging(tb, db, configure, nil)
}

// mustStartServerLogging is mustStartServerWith that also writes the server's log to logs.
func mustStartServerLogging(tb testing.TB, db string, configure func(*serveConfig), logs io.Writer) *testServer {
	tb.Helper()
	if db == "" {
		db = filepath.Join(tb.TempDir(), "leaselab.db")
	}
	cfg := serveConfig{
		addr:            "127.0.0.1:0",
		db:              db,
		compactKeep:     100000,
		compactMaxAge:   24 * time.Hour,
		coordinated:     true,
		shutdownTimeout: 5 * time.Second,
	}
	if configure != nil {
		configure(&cfg)
	}
	var w io.Writer = io.Discard
	if os.Getenv("LEASELAB_TEST_LOG") != "" {
		w = os.Stderr
	}
	if logs != nil {
		w = io.MultiWriter(w, logs)
	}
	var handler slog.Handler = slog.DiscardHandler // nothing formatted for nobody to read
	if w != io.Discard {
		handler = slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	logger := slog.New(handler)
	rs, err := startServer(context.Background(), cfg, logger)
	if err != nil {
		tb.Fatalf("start server: %v", err)
	}
	ts := &testServer{runningServer: rs, DB: db}
	tb.Cleanup(func() { rs.Close() })
	ts.Config = &rest.Config{Host: rs.URL, QPS: -1, UserAgent: "leaselab-test/v0"}
	ts.Client = kubernetes.NewForConfigOrDie(ts.Config)
	return ts
}

// ctxT returns a context that ends with the test or after d.
func ctxT(tb testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// leaseEvent returns an event about a lease, as an event recorder writes one.
func leaseEvent(namespace, name string) *corev1.Event {
	now := metav1.NewTime(time.Now())
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: name + "."},
		InvolvedObject: corev1.ObjectReference{Kind: "Lease", Namespace: namespace, Name: name, APIVersion: "coordination.k8s.io/v1"},
		Reason:         "LeaderElection",
		Message:        "tab-1 became leader",
		Source:         corev1.EventSource{Component: "test"},
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
		Type:           corev1.EventTypeNormal,
	}
}

// waitFor polls cond every 20 ms until it holds, and fails the test with cond's last account
// of what it saw when d passes. d is an upper bound for a slow machine, not a guess at how
