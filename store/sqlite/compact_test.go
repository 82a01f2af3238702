package sqlite

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
)

// countChanges returns the rows in the change log.
func countChanges(t *testing.T, db *DB) int64 {
	t.Helper()
	var n int64
	if err := db.rdb.QueryRow(`SELECT count(*) FROM changes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// writeHistory makes a log over a few keys: creates, many updates, deletes and re-creates,
// from several goroutines, and returns the model of the leases resource.
func writeHistory(t *testing.T, db *DB, writers, rounds int) *model {
	t.Helper()
	ctx := context.Background()
	type change struct {
		typ store.EventType
		obj store.Object
	}
	var (
		mu      sync.Mutex
		changes []change
		wg      sync.WaitGroup
	)
	for g := range writers {
		wg.Go(func() {
			k := leaseKey("ns", name(g))
			var cur store.Object
			for i := range rounds {
				var err error
				typ := store.Modified
				switch {
				case cur.Revision == 0:
					typ = store.Added
					cur, err = db.Create(ctx, k, []byte(name(i)))
				case i%9 == 4:
					typ = store.Deleted
					var d store.Object
					d, err = db.Delete(ctx, k, cur.Revision)
					cur = store.Object{}
					if err == nil {
						mu.Lock()
						changes = append(changes, change{typ, d})
						mu.Unlock()
					}
					continue
				default:
					cur, err = db.Update(ctx, k, cur.Revision, []byte(name(i)))
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				changes = append(changes, change{typ, cur})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].obj.Revision < changes[j].obj.Revision })
	m := newModel()
	for _, c := range changes {
		m.apply(c.typ, c.obj)
	}
	return m
}

func TestCompactByCount(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, Options{CompactInterval: -1, CompactKeep: 50})
	ctx := context.Background()
	m := writeHistory(t, db, 6, 60)
	cur, _ := MustRevision(t, db)
	before := countChanges(t, db)
	// Events above the target, with their Prev, as a watch got them before compaction.
	target := cur - 50
	w := MustWatch(t, db, store.WatchOptions{Resource: leases, After: target})
	want := receive(t, w, int(cur-target))

	n, err := db.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after := countChanges(t, db); n == 0 || after != before-n {
		t.Fatalf("compact deleted %d, rows %d -> %d", n, before, after)
	}
	if _, compacted := MustRevision(t, db); compacted != target {
		t.Fatalf("compacted %d, want %d", compacted, target)
	}
	// At or below the target only the latest row of each key alive at the target is left.
	var below int64
	if err := db.rdb.QueryRow(`SELECT count(*) FROM changes WHERE rev <= ?`, target).Scan(&below); err != nil {
		t.Fatal(err)
	}
	alive := int64(0)
	for k := range m.at(target) {
		if h, _ := db.History(ctx, k, 0); len(h) > 0 && h[0].Object.Revision <= target {
			alive++
		}
	}
	if below != alive || below > 6 {
		t.Fatalf("%d rows at or below %d, want %d", below, target, alive)
	}

	for rev := target; rev <= cur; rev++ {
		checkListAt(t, db, m, leases, rev, 0)
	}
	checkListAt(t, db, m, leases, target, 2)
	if _, err := db.List(ctx, store.ListOptions{Resource: leases, Revision: target - 1}); !errors.Is(err, store.ErrCompacted) {
		t.Fatalf("list below compacted: %v", err)
	}
	// A watch from the target gets the same events, previous states included.
	got := receive(t, MustWatch(t, db, store.WatchOptions{Resource: leases, After: target}), len(want))
	for i := range want {
		g, w := got[i], want[i]
		if g.Object.Revision != w.Object.Revision || g.Type != w.Type || (g.Prev == nil) != (w.Prev == nil) ||
			(g.Prev != nil && (g.Prev.Revision != w.Prev.Revision || string(g.Prev.Value) != string(w.Prev.Value))) {
			t.Fatalf("event %d after compaction %+v, before %+v", i, g, w)
		}
	}
	// History is trimmed to the rows left.
	for k := range m.at(cur) {
		h, err := db.History(ctx, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) == 0 {
			t.Fatalf("%v: no history", k)
		}
		for i, e := range h {
			if e.Object.Revision <= target && i > 0 {
				t.Fatalf("%v: two changes at or below %d", k, target)
			}
		}
	}

	// Nothing new: a second pass deletes nothing; more changes move the target on.
	if n, err := db.Compact(ctx); err != nil || n != 0 {
		t.Fatalf("second pass: %d %v", n, err)
	}
	k := leaseKey("ns", name(0))
	o, err := db.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		o = MustCreate(t, db, k, "x")
	}
	// A whole window of updates: the old window, which holds superseded rows whatever the
	// random history was, falls below the target.
	for range 50 {
		o = MustUpdate(t, db, k, o.Revision, "y")
	}
	if n, err := db.Compact(ctx); err != nil || n == 0 {
		t.Fatalf("third pass: %d %v", n, err)
	}
	cur2, compacted := MustRevision(t, db)
	if compacted != cur2-50 {
		t.Fatalf("compacted %d, want %d", compacted, cur2-50)
	}
}

func TestCompactByAge(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Unix(1700000000, 0)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	advance := func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
	}
	db := MustOpen(t, Options{CompactInterval: -1, CompactMaxAge: time.Hour, Now: clock})
	ctx := context.Background()
	k := leaseKey("ns", "a")
	o := MustCreate(t, db, k, "v")
	for range 4 {
		o = MustUpdate(t, db, k, o.Revision, "v")
	}
	old := o.Revision
	advance(30 * time.Minute)
	for range 3 {
		o = MustUpdate(t, db, k, o.Revision, "v")
	}
	// Nothing is an hour old yet.
	if n, err := db.Compact(ctx); err != nil || n != 0 {
		t.Fatalf("young log: %d %v", n, err)
	}
	advance(45 * time.Minute)
	n, err := db.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, compacted := MustRevision(t, db); compacted != old || n != old-1 {
		t.Fatalf("compacted %d deleting %d, want %d deleting %d", compacted, n, old, old-1)
	}
	h, _ := db.History(ctx, k, 0)
	if len(h) != 4 || h[0].Object.Revision != old {
		t.Fatalf("history %+v", h)
	}
	// A day later everything is old; the object itself stays.
	advance(24 * time.Hour)
	if _, err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if cur, compacted := MustRevision(t, db); compacted != cur {
		t.Fatalf("compacted %d, current %d", compacted, cur)
	}
	if got := MustGet(t, db, k); got.Revision != o.Revision {
		t.Fatalf("object %+v", got)
	}
	res := MustList(t, db, store.ListOptions{Resource: leases, Revision: o.Revision})
	if len(res.Objects) != 1 {
		t.Fatalf("list at the compacted revision: %+v", res)
	}
}

// TestCompactManyBatches compacts a log longer than one batch, and resumes a pass that was
// interrupted after recording its target.
func TestCompactManyBatches(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, Options{CompactInterval: -1, CompactKeep: 100})
	ctx := context.Background()
	m := writeHistory(t, db, 16, 140)
	cur, _ := MustRevision(t, db)
	if cur < 2*compactBatch {
		t.Fatalf("only %d changes", cur)
	}
	// An interrupted pass: the target is recorded, no row deleted yet.
	interrupted := cur / 2
	if err := db.setMeta(ctx, "compacted", interrupted); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Watch(ctx, store.WatchOptions{Resource: leases, After: interrupted - 1}); !errors.Is(err, store.ErrCompacted) {
		t.Fatalf("watch below a recorded target: %v", err)
	}
	n, err := db.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	target := cur - 100
	if _, compacted := MustRevision(t, db); compacted != target {
		t.Fatalf("compacted %d, want %d", compacted, target)
	}
	var below int64
	if err := db.rdb.QueryRow(`SELECT count(*) FROM changes WHERE rev <= ?`, target).Scan(&below); err != nil {
		t.Fatal(err)
	}
	if below > 16 || n < target-16 {
		t.Fatalf("%d rows left at or below %d after deleting %d", below, target, n)
	}
	for rev := target; rev <= cur; rev += 7 {
		checkListAt(t, db, m, leases, rev, 0)
	}
	checkListAt(t, db, m, leases, cur, 5)
}
