package sqlite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
)

const (
	leases     = "leases.coordination.k8s.io"
	candidates = "leasecandidates.coordination.k8s.io"
)

// testLogger logs to the test output when LEASELAB_TEST_LOG is set.
func testLogger(tb testing.TB) *slog.Logger {
	if os.Getenv("LEASELAB_TEST_LOG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(tbWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Log(string(p))
	return len(p), nil
}

// testOptions disables background compaction: tests call Compact.
func testOptions() Options {
	return Options{CompactInterval: -1}
}

// MustOpenPath opens the store at path and closes it when the test ends.
func MustOpenPath(tb testing.TB, path string, opts Options) *DB {
	tb.Helper()
	db, err := Open(context.Background(), path, opts, testLogger(tb))
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return db
}

// MustOpen opens a store in a new file under tb.TempDir().
func MustOpen(tb testing.TB, opts Options) *DB {
	tb.Helper()
	return MustOpenPath(tb, filepath.Join(tb.TempDir(), "leaselab.db"), opts)
}

func leaseKey(ns, name string) store.Key {
	return store.Key{Resource: leases, Namespace: ns, Name: name}
}

func MustCreate(tb testing.TB, db *DB, key store.Key, value string) store.Object {
	tb.Helper()
	obj, err := db.Create(context.Background(), key, []byte(value))
	if err != nil {
		tb.Fatalf("create %v: %v", key, err)
	}
	return obj
}

// MustCreateMany creates the objects from 32 goroutines, so that the writes share commits.
func MustCreateMany(tb testing.TB, db *DB, keys []store.Key, value string) {
	tb.Helper()
	var wg sync.WaitGroup
	next := make(chan store.Key)
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			for k := range next {
				if _, err := db.Create(context.Background(), k, []byte(value)); err != nil {
					errs <- fmt.Errorf("create %v: %w", k, err)
					return
				}
			}
		})
	}
	go func() {
		defer close(next)
		for _, k := range keys {
			select {
			case next <- k:
			case <-time.After(10 * time.Second):
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

func MustUpdate(tb testing.TB, db *DB, key store.Key, rev int64, value string) store.Object {
	tb.Helper()
	obj, err := db.Update(context.Background(), key, rev, []byte(value))
	if err != nil {
		tb.Fatalf("update %v at %d: %v", key, rev, err)
	}
	return obj
}

func MustDelete(tb testing.TB, db *DB, key store.Key, rev int64) store.Object {
	tb.Helper()
	obj, err := db.Delete(context.Background(), key, rev)
	if err != nil {
		tb.Fatalf("delete %v at %d: %v", key, rev, err)
	}
	return obj
}

func MustGet(tb testing.TB, db *DB, key store.Key) store.Object {
	tb.Helper()
	obj, err := db.Get(context.Background(), key)
	if err != nil {
		tb.Fatalf("get %v: %v", key, err)
	}
	return obj
}

func MustList(tb testing.TB, db *DB, opts store.ListOptions) store.ListResult {
	tb.Helper()
	res, err := db.List(context.Background(), opts)
	if err != nil {
		tb.Fatalf("list %+v: %v", opts, err)
	}
	return res
}

func MustRevision(tb testing.TB, db *DB) (current, compacted int64) {
	tb.Helper()
	current, compacted, err := db.Revision(context.Background())
	if err != nil {
		tb.Fatalf("revision: %v", err)
	}
	return current, compacted
}

func MustWatch(tb testing.TB, db *DB, opts store.WatchOptions) store.Watch {
	tb.Helper()
	w, err := db.Watch(context.Background(), opts)
	if err != nil {
		tb.Fatalf("watch %+v: %v", opts, err)
	}
	tb.Cleanup(w.Close)
	return w
}

// receive reads n events from w, failing after a timeout.
func receive(tb testing.TB, w store.Watch, n int) []store.Event {
	tb.Helper()
	var got []store.Event
	timeout := time.After(10 * time.Second)
	for len(got) < n {
		select {
		case e, ok := <-w.Events():
			if !ok {
				tb.Fatalf("watch ended after %d of %d events: %v", len(got), n, w.Err())
			}
			got = append(got, e)
		case <-timeout:
			tb.Fatalf("timed out after %d of %d events", len(got), n)
		}
	}
	return got
}

// expectNoEvent fails if w delivers an event within a short time.
func expectNoEvent(tb testing.TB, w store.Watch) {
	tb.Helper()
	select {
	case e, ok := <-w.Events():
		if ok {
			tb.Fatalf("unexpected event %v at %d", e.Type, e.Object.Revision)
		}
		tb.Fatalf("watch ended: %v", w.Err())
	case <-time.After(50 * time.Millisecond):
	}
}

// waitFor polls cond every millisecond until it holds, and fails the test with cond's last
// account of what it saw when d passes. d is an upper bound for a slow machine, not a guess at
// how long things take; the store works in-process, so the poll is short. The store's tests
// keep their own copy of web/webtest/poll.Until: the store does not reach into web.
func waitFor(tb testing.TB, d time.Duration, what string, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not within %s; last: %s", what, d, state)
		}
		time.Sleep(time.Millisecond) // the poll interval
	}
}

// waitClosed waits until Events is closed, discarding events, and returns Err.
func waitClosed(tb testing.TB, w store.Watch) error {
	tb.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-w.Events():
			if !ok {
				return w.Err()
			}
		case <-timeout:
			tb.Fatal("watch did not end")
		}
	}
}

// model is what the store should hold: every state of one resource by revision.
type model struct {
	mu     sync.Mutex
	states map[int64]map[store.Key]store.Object // revision -> state after it
	cur    map[store.Key]store.Object
	revs   []int64
}

func newModel() *model {
	return &model{states: map[int64]map[store.Key]store.Object{}, cur: map[store.Key]store.Object{}}
}

// apply records a committed change at obj.Revision.
func (m *model) apply(typ store.EventType, obj store.Object) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if typ == store.Deleted {
		delete(m.cur, obj.Key)
	} else {
		m.cur[obj.Key] = obj
	}
	snap := make(map[store.Key]store.Object, len(m.cur))
	for k, v := range m.cur {
		snap[k] = v
	}
	m.states[obj.Revision] = snap
	m.revs = append(m.revs, obj.Revision)
}

// at returns the state at rev.
func (m *model) at(rev int64) map[store.Key]store.Object {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best int64
	for _, r := range m.revs {
		if r <= rev && r > best {
			best = r
		}
	}
	return m.states[best]
}

// checkListAt lists the whole resource at rev, in pages of limit, and compares with the model.
func checkListAt(tb testing.TB, db *DB, m *model, resource string, rev int64, limit int) {
	tb.Helper()
	want := m.at(rev)
	var got []store.Object
	opts := store.ListOptions{Resource: resource, Revision: rev, Limit: limit}
	for {
		res := MustList(tb, db, opts)
		if res.Revision != rev {
			tb.Fatalf("list at %d: result revision %d", rev, res.Revision)
		}
		got = append(got, res.Objects...)
		if !res.More {
			break
		}
		opts.After = res.Objects[len(res.Objects)-1].Key
	}
	if len(got) != len(want) {
		tb.Fatalf("list at %d: %d objects, want %d", rev, len(got), len(want))
	}
	for i, o := range got {
		if i > 0 && !keyLess(got[i-1].Key, o.Key) {
			tb.Fatalf("list at %d: %v before %v", rev, got[i-1].Key, o.Key)
		}
		w, ok := want[o.Key]
		if !ok || w.Revision != o.Revision || w.CreateRevision != o.CreateRevision || string(w.Value) != string(o.Value) {
			tb.Fatalf("list at %d: got %+v, want %+v", rev, o, w)
		}
	}
}

func keyLess(a, b store.Key) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

func isConflict(err error, expected, actual int64) bool {
	var ce *store.ConflictError
	return errors.As(err, &ce) && errors.Is(err, store.ErrConflict) && ce.Expected == expected && ce.Actual == actual
}

func name(i int) string { return fmt.Sprintf("lease-%04d", i) }
