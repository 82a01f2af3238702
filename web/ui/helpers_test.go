package ui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/apiserver"
	"github.com/leaselab/leaselab/web/kinds"
)

// memStore is a small in-memory store.Interface for the UI's tests: objects, a change log with
// times the test chooses, and no watches.
type memStore struct {
	mu      sync.Mutex
	rev     int64
	objects map[store.Key]store.Object
	log     []store.Event
	now     func() time.Time
}

var _ store.Interface = (*memStore)(nil)

func newMemStore(now func() time.Time) *memStore {
	return &memStore{objects: map[store.Key]store.Object{}, now: now}
}

func (m *memStore) Get(_ context.Context, key store.Key) (store.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[key]
	if !ok {
		return store.Object{}, store.ErrNotFound
	}
	return o, nil
}

func (m *memStore) List(_ context.Context, opts store.ListOptions) (store.ListResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.Object
	for k, o := range m.objects {
		if k.Resource != opts.Resource || (opts.Namespace != "" && k.Namespace != opts.Namespace) {
			continue
		}
		if opts.Match != nil && !opts.Match(o) {
			continue
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b store.Object) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return store.ListResult{Objects: out, Revision: m.rev}, nil
}

// put writes an object at time at, as a create or an update.
func (m *memStore) put(key store.Key, value []byte, at time.Time) store.Object {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rev++
	prev, exists := m.objects[key]
	o := store.Object{Key: key, Revision: m.rev, CreateRevision: m.rev, Value: value}
	ev := store.Event{Type: store.Added, Object: o, Time: at}
	if exists {
		o.CreateRevision = prev.CreateRevision
		ev = store.Event{Type: store.Modified, Object: o, Prev: &prev, Time: at}
	}
	m.objects[key] = o
	m.log = append(m.log, ev)
	return o
}

func (m *memStore) Create(_ context.Context, key store.Key, value []byte) (store.Object, error) {
	m.mu.Lock()
	_, exists := m.objects[key]
	m.mu.Unlock()
	if exists {
		return store.Object{}, store.ErrExists
	}
	return m.put(key, value, m.now()), nil
}

func (m *memStore) Update(_ context.Context, key store.Key, expect int64, value []byte) (store.Object, error) {
	m.mu.Lock()
	cur, exists := m.objects[key]
	m.mu.Unlock()
	if !exists {
		return store.Object{}, store.ErrNotFound
	}
	if cur.Revision != expect {
		return store.Object{}, &store.ConflictError{Expected: expect, Actual: cur.Revision}
	}
	return m.put(key, value, m.now()), nil
}

func (m *memStore) Delete(_ context.Context, key store.Key, expect int64) (store.Object, error) {
	return m.deleteAt(key, expect, m.now())
}

func (m *memStore) deleteAt(key store.Key, expect int64, at time.Time) (store.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, exists := m.objects[key]
	if !exists {
		return store.Object{}, store.ErrNotFound
	}
	if expect != 0 && cur.Revision != expect {
		return store.Object{}, &store.ConflictError{Expected: expect, Actual: cur.Revision}
	}
	m.rev++
	delete(m.objects, key)
	o := cur
	o.Revision = m.rev
	m.log = append(m.log, store.Event{Type: store.Deleted, Object: o, Prev: &cur, Time: at})
	return o, nil
}

func (m *memStore) Watch(context.Context, store.WatchOptions) (store.Watch, error) {
	return nil, errors.New("memStore does not watch")
}

func (m *memStore) History(_ context.Context, key store.Key, after int64) ([]store.Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []store.Event
	for _, ev := range m.log {
		if ev.Object.Key == key && ev.Object.Revision > after {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (m *memStore) Revision(context.Context) (int64, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rev, 0, nil
}

// testUI is a UI on a memStore with the real API handler behind its lease actions.
type testUI struct {
	*UI
	st   *memStore
	echo *echo.Echo
	now  time.Time
}

// mustNewUI builds a UI whose clock stands at now.
func mustNewUI(tb testing.TB, now time.Time) *testUI {
	tb.Helper()
	clock := func() time.Time { return now }
	st := newMemStore(clock)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	api, err := apiserver.New(logger, reg, st, apiserver.Options{Now: clock})
	if err != nil {
		tb.Fatalf("api server: %v", err)
	}
	u, err := New(logger, reg, st, Options{Now: clock, API: api})
	if err != nil {
		tb.Fatalf("ui: %v", err)
	}
	e := echo.New()
	u.Register(e)
	return &testUI{UI: u, st: st, echo: e, now: now}
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
