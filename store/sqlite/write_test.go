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

// TestGroupCommitConcurrent runs 64 writers that renew a few shared keys: each reads a key
// and updates it at the revision it read, so many updates conflict. Every acknowledged update
// must be in the log and the object, every rejected one not, and revisions unique.
func TestGroupCommitConcurrent(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	ctx := context.Background()
	const writers, rounds, keys = 64, 40, 8
	for i := range keys {
		MustCreate(t, db, leaseKey("ns", name(i)), "init")
	}

	type ack struct {
		key store.Key
		rev int64
		val string
	}
	var (
		mu        sync.Mutex
		acks      []ack
		conflicts int
	)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			var last int64
			for r := range rounds {
				k := leaseKey("ns", name((g+r)%keys))
				cur, err := db.Get(ctx, k)
				if err != nil {
					t.Error(err)
					return
				}
				val := fmt.Sprintf("%d/%d", g, r)
				obj, err := db.Update(ctx, k, cur.Revision, []byte(val))
				var ce *store.ConflictError
				switch {
				case errors.As(err, &ce):
					if ce.Expected != cur.Revision || ce.Actual <= cur.Revision {
						t.Errorf("conflict %+v after reading %d", ce, cur.Revision)
					}
					mu.Lock()
					conflicts++
					mu.Unlock()
					continue
				case err != nil:
					t.Error(err)
					return
				}
				if obj.Revision <= last || obj.Revision <= cur.Revision || obj.CreateRevision != cur.CreateRevision {
					t.Errorf("update at %d returned %+v after %d", cur.Revision, obj, last)
				}
				last = obj.Revision
				// Acknowledged means visible.
				if got, err := db.Get(ctx, k); err != nil || got.Revision < obj.Revision {
					t.Errorf("acknowledged %d, get returns %d %v", obj.Revision, got.Revision, err)
				}
				mu.Lock()
				acks = append(acks, ack{k, obj.Revision, val})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if conflicts == 0 {
		t.Error("no conflicts: the test does not exercise concurrent updates")
	}
	t.Logf("%d acknowledged, %d conflicts", len(acks), conflicts)

	sort.Slice(acks, func(i, j int) bool { return acks[i].rev < acks[j].rev })
	for i := 1; i < len(acks); i++ {
		if acks[i].rev == acks[i-1].rev {
			t.Fatalf("revision %d acknowledged twice", acks[i].rev)
		}
	}
	cur, _ := MustRevision(t, db)
	if cur != int64(keys+len(acks)) {
		t.Fatalf("current revision %d, want %d creates + %d updates", cur, keys, len(acks))
	}
	// The log holds exactly the acknowledged updates, and each object its last one.
	byKey := map[store.Key][]ack{}
	for _, a := range acks {
		byKey[a.key] = append(byKey[a.key], a)
	}
	for i := range keys {
		k := leaseKey("ns", name(i))
		hist, err := db.History(ctx, k, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := byKey[k]
		if len(hist) != len(want)+1 {
			t.Fatalf("%v: %d changes, want %d", k, len(hist), len(want)+1)
		}
		for j, a := range want {
			e := hist[j+1]
			if e.Object.Revision != a.rev || string(e.Object.Value) != a.val || e.Prev.Revision != hist[j].Object.Revision {
				t.Fatalf("%v change %d: %+v, want %+v", k, j, e, a)
			}
		}
		if len(want) > 0 {
			if got := MustGet(t, db, k); got.Revision != want[len(want)-1].rev || string(got.Value) != want[len(want)-1].val {
				t.Fatalf("%v: %+v, want %+v", k, got, want[len(want)-1])
			}
		}
	}
}

// holdWriter takes the writer's only connection so that the next batch blocks in BEGIN; the
// returned function gives it back.
func holdWriter(t *testing.T, db *DB) (release func()) {
	t.Helper()
	conn, err := db.wdb.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = conn.Close() }) }
	t.Cleanup(release)
	return release
}

// blockWriter holds the writer's connection and starts a create of ns/first, which the writer
// takes and then waits with for the connection; writes queued until the release join its
// batch. It returns the function that releases the connection and the create's result.
func blockWriter(t *testing.T, db *DB) (release func(), first <-chan result) {
	t.Helper()
	waits := db.wdb.Stats().WaitCount
	release = holdWriter(t, db)
	first = goWrite(func() (store.Object, error) {
		return db.Create(context.Background(), leaseKey("ns", "first"), nil)
	})
	waitFor(t, 10*time.Second, "the writer waits for its connection", func() (bool, string) {
		return db.wdb.Stats().WaitCount != waits, "no wait for a connection"
	})
	return release, first
}

// waitQueued waits until n ops wait in the writer's queue.
func waitQueued(t *testing.T, db *DB, n int) {
	t.Helper()
	waitFor(t, 10*time.Second, fmt.Sprintf("%d ops queued", n), func() (bool, string) {
		q := len(db.writes)
		return q == n, fmt.Sprintf("%d queued", q)
	})
}

type result struct {
	obj store.Object
	err error
}

// goWrite runs a write in a goroutine.
func goWrite(f func() (store.Object, error)) <-chan result {
	ch := make(chan result, 1)
	go func() {
		obj, err := f()
		ch <- result{obj, err}
	}()
	return ch
}

// TestBatchFailuresAreIndependent puts writes that fail (a conflict, a duplicate create, a
// missing object, a statement failing in SQLite) in one batch with writes that succeed.
func TestBatchFailuresAreIndependent(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	ctx := context.Background()
	a := MustCreate(t, db, leaseKey("ns", "a"), "a")
	b := MustCreate(t, db, leaseKey("ns", "b"), "b")
	// A statement that fails inside SQLite with a constraint error, for one key only.
	if _, err := db.wdb.Exec(`CREATE TEMP TRIGGER poison BEFORE INSERT ON changes WHEN NEW.name = 'poison'
		BEGIN SELECT RAISE(ABORT, 'poisoned'); END`); err != nil {
		t.Fatal(err)
	}

	release, first := blockWriter(t, db)

	var chs []<-chan result
	add := func(f func() (store.Object, error)) {
		chs = append(chs, goWrite(f))
		waitQueued(t, db, len(chs)) // one at a time, to know the order within the batch
	}
	add(func() (store.Object, error) { return db.Update(ctx, a.Key, a.Revision, []byte("a2")) })       // ok
	add(func() (store.Object, error) { return db.Update(ctx, b.Key, b.Revision+100, []byte("b2")) })   // conflict
	add(func() (store.Object, error) { return db.Create(ctx, leaseKey("ns", "poison"), []byte("p")) }) // statement fails
	add(func() (store.Object, error) { return db.Create(ctx, leaseKey("ns", "c"), []byte("c")) })      // ok
	add(func() (store.Object, error) { return db.Create(ctx, leaseKey("ns", "c"), []byte("c")) })      // exists: same batch
	add(func() (store.Object, error) { return db.Update(ctx, a.Key, a.Revision, []byte("a3")) })       // conflict: same batch
	add(func() (store.Object, error) { return db.Delete(ctx, leaseKey("ns", "none"), 0) })             // not found
	add(func() (store.Object, error) { return db.Delete(ctx, b.Key, b.Revision) })                     // ok
	release()

	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	var res []result
	for _, ch := range chs {
		res = append(res, <-ch)
	}
	for i, ok := range []bool{true, false, false, true, false, false, false, true} {
		if (res[i].err == nil) != ok {
			t.Errorf("write %d: %+v", i, res[i])
		}
	}
	if !isConflict(res[1].err, b.Revision+100, b.Revision) || !isConflict(res[5].err, a.Revision, res[0].obj.Revision) {
		t.Errorf("conflicts: %v, %v", res[1].err, res[5].err)
	}
	if !errors.Is(res[4].err, store.ErrExists) || !errors.Is(res[6].err, store.ErrNotFound) {
		t.Errorf("exists %v, not found %v", res[4].err, res[6].err)
	}
	t.Logf("poisoned: %v", res[2].err)
	if res[2].err == nil || errors.Is(res[2].err, store.ErrExists) {
		t.Errorf("poisoned create: %v", res[2].err)
	}
	// The successful writes of the batch got consecutive revisions and one commit time.
	revs := []int64{res[0].obj.Revision, res[3].obj.Revision, res[7].obj.Revision}
	if revs[1] != revs[0]+1 || revs[2] != revs[1]+1 {
		t.Fatalf("batch revisions %v", revs)
	}
	cur, _ := MustRevision(t, db)
	if cur != revs[2] {
		t.Fatalf("current %d, want %d", cur, revs[2])
	}
	ha, _ := db.History(ctx, a.Key, a.Revision)
	hc, _ := db.History(ctx, leaseKey("ns", "c"), 0)
	if len(ha) != 1 || len(hc) != 1 || !ha[0].Time.Equal(hc[0].Time) {
		t.Fatalf("not one batch: %+v %+v", ha, hc)
	}
	if _, err := db.Get(ctx, leaseKey("ns", "poison")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("poisoned object: %v", err)
	}
}

// TestCancelledBeforeTakenIsDropped cancels a write while it waits in the queue.
func TestCancelledBeforeTakenIsDropped(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	release, first := blockWriter(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	second := goWrite(func() (store.Object, error) { return db.Create(ctx, leaseKey("ns", "second"), nil) })
	waitQueued(t, db, 1)
	cancel()
	if r := <-second; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled write: %+v", r)
	}
	release()
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	third := MustCreate(t, db, leaseKey("ns", "third"), "")
	if _, err := db.Get(context.Background(), leaseKey("ns", "second")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("cancelled write committed: %v", err)
	}
	if third.Revision != 2 {
		t.Fatalf("revision after a dropped write: %d", third.Revision)
	}
}

// TestCloseWithQueuedWrites closes the store while writes wait: the one in flight commits,
// queued ones fail with ErrClosed.
func TestCloseWithQueuedWrites(t *testing.T) {
	t.Parallel()
	db, err := Open(context.Background(), t.TempDir()+"/x.db", testOptions(), testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	release, first := blockWriter(t, db)
	second := goWrite(func() (store.Object, error) { return db.Create(context.Background(), leaseKey("ns", "second"), nil) })
	waitQueued(t, db, 1)
	closed := make(chan error)
	go func() { closed <- db.Close() }()
	// Once Close has begun the writer takes nothing more.
	waitFor(t, 10*time.Second, "Close begins", func() (bool, string) { return db.ctx.Err() != nil, "the store's context is live" })
	release()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if r := <-first; r.err != nil {
		t.Fatalf("write in flight at close: %v", r.err)
	}
	if r := <-second; !errors.Is(r.err, store.ErrClosed) {
		t.Fatalf("queued write at close: %v", r.err)
	}
	// The write in flight is durable.
	db2 := MustOpenPath(t, db.path, testOptions())
	MustGet(t, db2, leaseKey("ns", "first"))
}

// failCommitsWithOrphan makes the COMMIT of any batch that writes a key named "orphan" fail:
// a deferred foreign key, checked at COMMIT only, that such a write breaks.
func failCommitsWithOrphan(t *testing.T, db *DB) {
	t.Helper()
	if _, err := db.wdb.Exec(`PRAGMA foreign_keys = ON`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.wdb.Exec(`CREATE TEMP TABLE parent (id INTEGER PRIMARY KEY);
		CREATE TEMP TABLE child (p INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
		CREATE TEMP TRIGGER orphan AFTER INSERT ON changes WHEN NEW.name = 'orphan'
		BEGIN INSERT INTO child (p) VALUES (42); END`); err != nil {
		t.Fatal(err)
	}
}

// TestCommitFailureFailsBatch makes the commit itself fail: every op of the batch gets the
// error and nothing is published.
func TestCommitFailureFailsBatch(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	ctx := context.Background()
	w := MustWatch(t, db, store.WatchOptions{Resource: leases})
	failCommitsWithOrphan(t, db)
	release, first := blockWriter(t, db)
	ok := goWrite(func() (store.Object, error) { return db.Create(ctx, leaseKey("ns", "ok"), nil) })
	waitQueued(t, db, 1)
	orphan := goWrite(func() (store.Object, error) { return db.Create(ctx, leaseKey("ns", "orphan"), nil) })
	waitQueued(t, db, 2)
	release()
	// The three writes, queued while the writer waited, went in one batch.
	r0, r1, r2 := <-first, <-ok, <-orphan
	t.Logf("errors: %v; %v; %v", r0.err, r1.err, r2.err)
	if r0.err == nil || r1.err == nil || r2.err == nil {
		t.Fatalf("batch with a failed commit: %+v %+v %+v", r0, r1, r2)
	}
	expectNoEvent(t, w)
	for _, name := range []string{"first", "ok"} {
		if _, err := db.Get(ctx, leaseKey("ns", name)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("write of a failed commit visible: %s: %v", name, err)
		}
	}
	// The store goes on.
	if o := MustCreate(t, db, leaseKey("ns", "after"), ""); o.Revision != 1 {
		t.Fatalf("revision after a failed commit: %d", o.Revision)
	}
}

// TestFailedCommitLeavesCommittedState checks that after a batch whose commit failed the
// writer goes on from the committed state of a key that batch updated, not from the state it
// wrote and lost: the writer takes the states it committed from memory instead of reading them.
func TestFailedCommitLeavesCommittedState(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	ctx := context.Background()
	a := MustCreate(t, db, leaseKey("ns", "a"), "a1")
	failCommitsWithOrphan(t, db)
	release, first := blockWriter(t, db)
	upd := goWrite(func() (store.Object, error) { return db.Update(ctx, a.Key, a.Revision, []byte("lost")) })
	waitQueued(t, db, 1)
	orphan := goWrite(func() (store.Object, error) { return db.Create(ctx, leaseKey("ns", "orphan"), nil) })
	waitQueued(t, db, 2)
	release()
	<-first
	lost, r2 := <-upd, <-orphan
	if lost.err == nil || r2.err == nil {
		t.Fatalf("batch with a failed commit: %+v %+v", lost, r2)
	}
	if _, err := db.wdb.Exec(`DROP TRIGGER orphan`); err != nil {
		t.Fatal(err)
	}
	// The update that was lost had the revision a2 would have had: it must conflict.
	if _, err := db.Update(ctx, a.Key, a.Revision+1, []byte("x")); !isConflict(err, a.Revision+1, a.Revision) {
		t.Fatalf("update at the lost revision: %v", err)
	}
	o, err := db.Update(ctx, a.Key, a.Revision, []byte("a2"))
	if err != nil {
		t.Fatal(err)
	}
	// Deleted in one batch, absent in the next.
	if _, err := db.Delete(ctx, a.Key, o.Revision); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Update(ctx, a.Key, o.Revision, []byte("a3")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update after delete: %v", err)
	}
	if got, err := db.Get(ctx, a.Key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after delete: %+v %v", got, err)
	}
}
