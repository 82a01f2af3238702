package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
)

// committed records the acknowledged changes of concurrent writers.
type committed struct {
	mu     sync.Mutex
	events map[int64]store.Event
}

func (c *committed) add(typ store.EventType, obj store.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.events == nil {
		c.events = map[int64]store.Event{}
	}
	c.events[obj.Revision] = store.Event{Type: typ, Object: obj}
}

// revs returns the committed revisions above after that a watch of opts receives.
func (c *committed) revs(opts store.WatchOptions) []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var revs []int64
	for rev, e := range c.events {
		if rev > opts.After && e.Object.Resource == opts.Resource && (opts.Namespace == "" || e.Object.Namespace == opts.Namespace) {
			revs = append(revs, rev)
		}
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i] < revs[j] })
	return revs
}

// churn runs writers that create, update and delete objects of two resources in two
// namespaces until n changes were acknowledged in total.
func churn(t *testing.T, db *DB, c *committed, writers, n int) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	left := n
	for g := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				mu.Lock()
				if left == 0 {
					mu.Unlock()
					return
				}
				left--
				mu.Unlock()
				k := store.Key{Resource: []string{leases, candidates}[i%2], Namespace: []string{"a", "b"}[(i/2)%2], Name: fmt.Sprintf("w%d-%d", g, i%7)}
				cur, err := db.Get(ctx, k)
				var obj store.Object
				typ := store.Added
				switch {
				case errors.Is(err, store.ErrNotFound):
					obj, err = db.Create(ctx, k, []byte(fmt.Sprint(i)))
				case i%5 == 0:
					typ = store.Deleted
					obj, err = db.Delete(ctx, k, cur.Revision)
				default:
					typ = store.Modified
					obj, err = db.Update(ctx, k, cur.Revision, []byte(fmt.Sprint(i)))
				}
				if err != nil {
					t.Error(err)
					return
				}
				c.add(typ, obj)
			}
		})
	}
	wg.Wait()
}

// collect reads a watch until its Progress reaches rev with nothing left to read.
func collect(t *testing.T, w store.Watch, rev int64) []store.Event {
	t.Helper()
	var got []store.Event
	take := func(wait time.Duration) bool {
		select {
		case e, ok := <-w.Events():
			if !ok {
				t.Fatalf("watch ended: %v", w.Err())
			}
			got = append(got, e)
			return true
		case <-time.After(wait):
			return false
		}
	}
	waitFor(t, 20*time.Second, fmt.Sprintf("progress %d", rev), func() (bool, string) {
		for take(0) {
		}
		if p := w.Progress(); p < rev {
			return false, fmt.Sprintf("progress %d", p)
		}
		// Progress is only a bookmark once Events is drained: drain what is in flight.
		return !take(20 * time.Millisecond), "events still in flight"
	})
	return got
}

func checkRevs(t *testing.T, what string, got []store.Event, want []int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i, e := range got {
		if e.Object.Revision != want[i] {
			t.Fatalf("%s: event %d at revision %d, want %d", what, i, e.Object.Revision, want[i])
		}
	}
}

// TestWatchBackfillAndLive starts watches before, during and after concurrent writes, from
// several revisions, and checks that each receives exactly the committed changes it selects.
func TestWatchBackfillAndLive(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	var c committed
	churn(t, db, &c, 4, 300)
	mid, _ := MustRevision(t, db)

	type started struct {
		opts store.WatchOptions
		w    store.Watch
	}
	var watches []started
	start := func(opts store.WatchOptions) {
		watches = append(watches, started{opts, MustWatch(t, db, opts)})
	}
	start(store.WatchOptions{Resource: leases})
	start(store.WatchOptions{Resource: leases, After: mid - 100})
	start(store.WatchOptions{Resource: candidates, Namespace: "b", After: 17})

	var wg sync.WaitGroup
	wg.Go(func() { churn(t, db, &c, 8, 1500) })
	// Watches that start while writers run, from a revision just read (list-then-watch) and
	// from older ones (the backfill crosses the live stream).
	last, _ := MustRevision(t, db)
	for i := range 6 {
		var cur int64
		waitFor(t, 20*time.Second, "the writers move on", func() (bool, string) {
			cur, _ = MustRevision(t, db)
			return cur >= last+20, fmt.Sprintf("revision %d, last watch started at %d", cur, last)
		})
		last = cur
		start(store.WatchOptions{Resource: []string{leases, candidates}[i%2], After: cur - int64(i*50)})
		start(store.WatchOptions{Resource: leases, Namespace: "a", After: cur})
	}
	// A reader that drains all watches concurrently, so that none falls behind.
	results := make([][]store.Event, len(watches))
	done := make(chan struct{})
	var rwg sync.WaitGroup
	for i, s := range watches {
		rwg.Go(func() {
			for {
				select {
				case e, ok := <-s.w.Events():
					if !ok {
						return
					}
					results[i] = append(results[i], e)
				case <-done:
					return
				}
			}
		})
	}
	wg.Wait()
	cur, _ := MustRevision(t, db)
	for _, s := range watches {
		waitFor(t, 20*time.Second, fmt.Sprintf("watch %+v at %d", s.opts, cur), func() (bool, string) {
			p := s.w.Progress()
			return p >= cur, fmt.Sprintf("progress %d", p)
		})
	}
	close(done)
	rwg.Wait()
	for i, s := range watches {
		results[i] = append(results[i], collect(t, s.w, cur)...)
		checkRevs(t, fmt.Sprintf("watch %+v", s.opts), results[i], c.revs(s.opts))
		for _, e := range results[i] {
			want := c.events[e.Object.Revision]
			if e.Type != want.Type || e.Object.Key != want.Object.Key || string(e.Object.Value) != string(want.Object.Value) ||
				e.Object.CreateRevision != want.Object.CreateRevision {
				t.Fatalf("event %+v, committed %+v", e, want)
			}
		}
	}
}

func TestWatchEventsAndPrev(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	clock := time.Unix(1700000000, 0)
	db.opts.Now = func() time.Time { return clock }
	live := MustWatch(t, db, store.WatchOptions{Resource: leases, Namespace: "ns"})
	k := leaseKey("ns", "a")
	a1 := MustCreate(t, db, k, "v1")
	MustCreate(t, db, leaseKey("other", "a"), "x") // other namespace
	a2 := MustUpdate(t, db, k, a1.Revision, "v2")
	d := MustDelete(t, db, k, 0)

	check := func(what string, got []store.Event) {
		t.Helper()
		if len(got) != 3 {
			t.Fatalf("%s: %d events", what, len(got))
		}
		if e := got[0]; e.Type != store.Added || e.Prev != nil || e.Object.Revision != a1.Revision || string(e.Object.Value) != "v1" ||
			!e.Time.Equal(clock) || e.Object.CreateRevision != a1.Revision {
			t.Fatalf("%s: added %+v", what, e)
		}
		if e := got[1]; e.Type != store.Modified || e.Prev == nil || e.Prev.Revision != a1.Revision || string(e.Prev.Value) != "v1" ||
			e.Prev.Key != k || e.Object.Revision != a2.Revision || string(e.Object.Value) != "v2" {
			t.Fatalf("%s: modified %+v prev %+v", what, e, e.Prev)
		}
		if e := got[2]; e.Type != store.Deleted || e.Prev == nil || e.Prev.Revision != a2.Revision || string(e.Prev.Value) != "v2" ||
			e.Object.Revision != d.Revision || string(e.Object.Value) != "v2" || e.Object.CreateRevision != a1.Revision {
			t.Fatalf("%s: deleted %+v prev %+v", what, e, e.Prev)
		}
	}
	check("live", receive(t, live, 3))
	expectNoEvent(t, live)
	check("backfill", receive(t, MustWatch(t, db, store.WatchOptions{Resource: leases, Namespace: "ns"}), 3))
	all := receive(t, MustWatch(t, db, store.WatchOptions{Resource: leases}), 4)
	if all[1].Object.Namespace != "other" {
		t.Fatalf("all namespaces: %+v", all[1])
	}
}

// TestWatchLongBackfill reads more than one chunk of the log.
func TestWatchLongBackfill(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	var c committed
	churn(t, db, &c, 16, 3*backfillChunk)
	opts := store.WatchOptions{Resource: leases, After: 3}
	w := MustWatch(t, db, opts)
	cur, _ := MustRevision(t, db)
	checkRevs(t, "backfill", collect(t, w, cur), c.revs(opts))
}

// TestWatchTooSlow leaves one watch unread: it is closed with ErrWatcherTooSlow while the
// writers and the other watch go on.
func TestWatchTooSlow(t *testing.T) {
	t.Parallel()
	const queue, writes = 64, 400
	db := MustOpen(t, Options{CompactInterval: -1, WatchQueue: queue})
	slow := MustWatch(t, db, store.WatchOptions{Resource: leases})
	fast := MustWatch(t, db, store.WatchOptions{Resource: leases})
	var got []store.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range fast.Events() {
			got = append(got, e)
			if len(got) == writes {
				return
			}
		}
	}()
	// Four writers: batches stay far below the queue, so the fast reader keeps up.
	keys := make([]store.Key, writes)
	for i := range keys {
		keys[i] = leaseKey("ns", name(i))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < writes; i += 4 {
				if _, err := db.Create(context.Background(), keys[i], nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("fast watch got %d events", len(got))
	}
	if len(got) != writes {
		t.Fatalf("fast watch got %d events: %v", len(got), fast.Err())
	}
	if err := waitClosed(t, slow); !errors.Is(err, store.ErrWatcherTooSlow) {
		t.Fatalf("slow watch: %v", err)
	}
	if fast.Err() != nil {
		t.Fatalf("fast watch: %v", fast.Err())
	}
}

func TestWatchEnds(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())

	w := MustWatch(t, db, store.WatchOptions{Resource: leases})
	w.Close()
	if err := waitClosed(t, w); err != nil {
		t.Fatalf("after Close: %v", err)
	}
	w.Close() // twice is fine

	ctx, cancel := context.WithCancel(context.Background())
	w2, err := db.Watch(ctx, store.WatchOptions{Resource: leases})
	if err != nil {
		t.Fatal(err)
	}
	MustCreate(t, db, leaseKey("ns", "a"), "") // one event in flight
	cancel()
	if err := waitClosed(t, w2); err != nil {
		t.Fatalf("after cancel: %v", err)
	}

	// Ended watches are gone from the hub.
	waitFor(t, 5*time.Second, "ended watches leave the hub", func() (bool, string) {
		db.hub.mu.RLock()
		defer db.hub.mu.RUnlock()
		return len(db.hub.watches) == 0, fmt.Sprintf("%d watches left", len(db.hub.watches))
	})

	// A cancelled context before Watch.
	if _, err := db.Watch(ctx, store.WatchOptions{Resource: leases}); !errors.Is(err, context.Canceled) {
		t.Fatalf("watch with a cancelled context: %v", err)
	}
}

func TestWatchCompacted(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, Options{CompactInterval: -1, CompactKeep: 3})
	k := leaseKey("ns", "a")
	o := MustCreate(t, db, k, "")
	for range 9 {
		o = MustUpdate(t, db, k, o.Revision, "")
	}
	if _, err := db.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := db.Watch(context.Background(), store.WatchOptions{Resource: leases, After: 6})
	var ce *store.CompactedError
	if !errors.As(err, &ce) || !errors.Is(err, store.ErrCompacted) || ce.Requested != 6 || ce.Compacted != 7 {
		t.Fatalf("watch below compacted: %v", err)
	}
	// At the compacted revision: the changes after it, each with its previous state.
	got := receive(t, MustWatch(t, db, store.WatchOptions{Resource: leases, After: 7}), 3)
	for i, e := range got {
		if e.Object.Revision != int64(8+i) || e.Prev == nil || e.Prev.Revision != int64(7+i) {
			t.Fatalf("event %d: %+v prev %+v", i, e, e.Prev)
		}
	}
}

// TestWatchProgress checks that an idle watch's Progress follows changes of other resources,
// and that it never runs ahead of the events sent on Events.
func TestWatchProgress(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	MustCreate(t, db, leaseKey("ns", "a"), "")
	w := MustWatch(t, db, store.WatchOptions{Resource: leases, After: 1})
	waitProgress := func(rev int64) {
		t.Helper()
		waitFor(t, 5*time.Second, fmt.Sprintf("progress %d", rev), func() (bool, string) {
			p := w.Progress()
			return p >= rev, fmt.Sprintf("progress %d", p)
		})
	}
	waitProgress(1)
	for i := range 5 {
		o := MustCreate(t, db, store.Key{Resource: candidates, Namespace: "ns", Name: name(i)}, "")
		waitProgress(o.Revision)
	}
	// A change of the watched resource: Progress stays below it until the event is on Events
	// (buffered there, or read), so that with Events drained it is a safe bookmark.
	o := MustCreate(t, db, leaseKey("ns", "b"), "")
	MustCreate(t, db, store.Key{Resource: candidates, Namespace: "ns", Name: "later"}, "")
	waitFor(t, 5*time.Second, "the event is sent", func() (bool, string) {
		p := w.Progress() // read before the buffer: the event is sent before Progress passes it
		n := len(w.Events())
		if p >= o.Revision && n == 0 {
			t.Fatalf("progress %d before the event at %d was sent", p, o.Revision)
		}
		return n > 0, fmt.Sprintf("progress %d, nothing on Events", p)
	})
	if e := receive(t, w, 1)[0]; e.Object.Revision != o.Revision {
		t.Fatalf("event %+v", e)
	}
	waitProgress(o.Revision + 1)
}

// TestWatchHandOffAndQueue checks the two ways a live event reaches a watch: straight onto
// Events while the watch is idle, and through its queue once Events is full. A reader that
// pauses while more than Events holds is committed, then resumes, gets every change in order.
func TestWatchHandOffAndQueue(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, Options{CompactInterval: -1, WatchQueue: 1000})
	w := MustWatch(t, db, store.WatchOptions{Resource: leases})
	var want []int64
	write := func(i int) {
		want = append(want, MustCreate(t, db, leaseKey("ns", name(i)), "").Revision)
	}
	// Read as they come: each event is handed straight over.
	for i := range 10 {
		write(i)
		if e := receive(t, w, 1)[0]; e.Object.Revision != want[i] {
			t.Fatalf("event %d at %d, want %d", i, e.Object.Revision, want[i])
		}
	}
	// Paused: Events fills, the rest queues.
	for i := 10; i < 10+3*eventBuffer; i++ {
		write(i)
	}
	got := receive(t, w, 3*eventBuffer)
	checkRevs(t, "after the pause", got, want[10:])
	// Idle again: handed over again.
	write(1000)
	if e := receive(t, w, 1)[0]; e.Object.Revision != want[len(want)-1] {
		t.Fatalf("last event at %d, want %d", e.Object.Revision, want[len(want)-1])
	}
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestWatchProgressOtherNamespace: a watch of one namespace passes the changes of the others
// in its Progress, with none of them on Events.
func TestWatchProgressOtherNamespace(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	MustCreate(t, db, leaseKey("x", "a"), "")
	w := MustWatch(t, db, store.WatchOptions{Resource: leases, Namespace: "x", After: 1})
	for i := range 5 {
		o := MustCreate(t, db, leaseKey("y", name(i)), "")
		waitFor(t, 5*time.Second, fmt.Sprintf("progress %d", o.Revision), func() (bool, string) {
			p := w.Progress()
			return p >= o.Revision, fmt.Sprintf("progress %d", p)
		})
	}
	if n := len(w.Events()); n != 0 {
		t.Fatalf("%d events of another namespace on Events", n)
	}
	o := MustCreate(t, db, leaseKey("x", "b"), "")
	if e := receive(t, w, 1)[0]; e.Object.Revision != o.Revision {
		t.Fatalf("event %+v, want the change at %d", e, o.Revision)
	}
}
