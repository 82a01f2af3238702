package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/apiserver"
	"github.com/leaselab/leaselab/web/api/inprocess"
	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/lease/election"
)

// testStore is the real SQLite store in a temporary directory, with a clock the test sets so
// that changes carry the times the timeline is drawn from.
type testStore struct {
	*sqlite.DB
	mu  sync.Mutex
	now time.Time
	// historyReads counts the reads of one object's or one prefix's history.
	historyReads atomic.Int64
}

func (s *testStore) History(ctx context.Context, key store.Key, after int64) ([]store.Event, error) {
	s.historyReads.Add(1)
	return s.DB.History(ctx, key, after)
}

func (s *testStore) HistoryPrefix(ctx context.Context, resource, namespace, prefix string, after, through int64) ([]store.Event, error) {
	s.historyReads.Add(1)
	return s.DB.HistoryPrefix(ctx, resource, namespace, prefix, after, through)
}

func newTestStore(tb testing.TB, now time.Time) *testStore {
	tb.Helper()
	return openTestStore(tb, filepath.Join(tb.TempDir(), "ui.db"), now)
}

// openTestStore opens the store at path (made anew, or an imported recording).
func openTestStore(tb testing.TB, path string, now time.Time) *testStore {
	tb.Helper()
	ts := &testStore{now: now}
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{CompactInterval: -1, Now: ts.clock}, nil)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	ts.DB = db
	return ts
}

func (s *testStore) clock() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// remove deletes key as a change made at time at.
func (s *testStore) remove(key store.Key, at time.Time) {
	defer s.setNow(at)()
	if _, err := s.Delete(context.Background(), key, 0); err != nil {
		panic(fmt.Sprintf("delete %v: %v", key, err))
	}
}

// setNow stands the store's clock at at until the returned function puts it back.
func (s *testStore) setNow(at time.Time) (restore func()) {
	s.mu.Lock()
	saved := s.now
	s.now = at
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.now = saved
		s.mu.Unlock()
	}
}

// put writes value under key as a change made at time at (creating or replacing the object).
func (s *testStore) put(key store.Key, value []byte, at time.Time) store.Object {
	defer s.setNow(at)()
	ctx := context.Background()
	cur, err := s.Get(ctx, key)
	var o store.Object
	switch {
	case errors.Is(err, store.ErrNotFound):
		o, err = s.Create(ctx, key, value)
	case err == nil:
		o, err = s.Update(ctx, key, cur.Revision, value)
	}
	if err != nil {
		panic(fmt.Sprintf("put %v: %v", key, err))
	}
	return o
}

type testUI struct {
	*UI
	st   *testStore
	echo *echo.Echo
	now  time.Time
}

// mustNewUI builds a UI whose clock stands at now; with options changed by each of with.
func mustNewUI(tb testing.TB, now time.Time, with ...func(*Options)) *testUI {
	tb.Helper()
	return mustNewUIOn(tb, newTestStore(tb, now), now, with...)
}

// mustNewUIOn is mustNewUI over the store st.
func mustNewUIOn(tb testing.TB, st *testStore, now time.Time, with ...func(*Options)) *testUI {
	tb.Helper()
	clock := func() time.Time { return now }
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	api, err := apiserver.New(logger, reg, st, apiserver.Options{Now: clock})
	if err != nil {
		tb.Fatalf("api server: %v", err)
	}
	apiEcho := echo.New()
	api.Register(apiEcho)
	opts := Options{Now: clock, API: inprocess.New(apiEcho)}
	for _, f := range with {
		f(&opts)
	}
	u, err := New(logger, reg, st, opts)
	if err != nil {
		tb.Fatalf("ui: %v", err)
	}
	e := echo.New()
	u.Register(e)
	return &testUI{UI: u, st: st, echo: e, now: now}
}

// setDecisions makes the screens show the decisions f lists, as if an election controller
// took them.
func (tu *testUI) setDecisions(f func(namespace, lease string) []election.Decision) {
	tu.decisions = electionDecisions(f)
}

// putLease stores a lease as the API would (storage JSON without resourceVersion) at time at.
func (tu *testUI) putLease(tb testing.TB, l *coordinationv1.Lease, at time.Time) {
	tb.Helper()
	cp := l.DeepCopy()
	cp.APIVersion, cp.Kind = "coordination.k8s.io/v1", "Lease"
	b, err := json.Marshal(cp)
	if err != nil {
		tb.Fatal(err)
	}
	tu.st.put(store.Key{Resource: "leases.coordination.k8s.io", Namespace: l.Namespace, Name: l.Name}, b, at)
}

// get serves a GET and returns the response.
func (tu *testUI) do(tb testing.TB, r *http.Request) *httptest.ResponseRecorder {
	tb.Helper()
	w := httptest.NewRecorder()
	tu.echo.ServeHTTP(w, r)
	return w
}

// mustGetDoc GETs path, wants status, and parses the HTML.
func (tu *testUI) mustGetDoc(tb testing.TB, path string, status int) *goquery.Document {
	tb.Helper()
	w := tu.do(tb, httptest.NewRequest(http.MethodGet, path, nil))
	if w.Code != status {
		tb.Fatalf("GET %s: status %d, want %d\n%s", path, w.Code, status, w.Body.String())
	}
	doc, err := goquery.NewDocumentFromReader(w.Body)
	if err != nil {
		tb.Fatalf("parse %s: %v", path, err)
	}
	return doc
}

// lease builds a Lease.
func lease(ns, name, holder string, renew time.Time, durationSeconds, transitions int32) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if holder != "" || !renew.IsZero() {
		l.Spec.HolderIdentity = &holder
	}
	if !renew.IsZero() {
		rt := metav1.NewMicroTime(renew)
		l.Spec.RenewTime = &rt
		l.Spec.AcquireTime = &rt
	}
	if durationSeconds > 0 {
		l.Spec.LeaseDurationSeconds = &durationSeconds
	}
	l.Spec.LeaseTransitions = &transitions
	return l
}

// waitFor polls cond every 5 ms until it holds, and fails the test with cond's last account of
// what it saw when d passes. d is an upper bound for a slow machine, not a guess at how long
