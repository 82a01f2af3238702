package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
)

func TestCRUD(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	ctx := context.Background()
	k := leaseKey("default", "a")

	if _, err := db.Get(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	created := MustCreate(t, db, k, "v1")
	if created.Revision != 1 || created.CreateRevision != 1 || string(created.Value) != "v1" || created.Key != k {
		t.Fatalf("created %+v", created)
	}
	if got := MustGet(t, db, k); got.Revision != 1 || got.CreateRevision != 1 || string(got.Value) != "v1" || got.Key != k {
		t.Fatalf("get %+v", got)
	}
	if _, err := db.Create(ctx, k, []byte("again")); !errors.Is(err, store.ErrExists) {
		t.Fatalf("create existing: %v", err)
	}

	if _, err := db.Update(ctx, k, 7, []byte("v2")); !isConflict(err, 7, 1) {
		t.Fatalf("update stale: %v", err)
	}
	updated := MustUpdate(t, db, k, 1, "v2")
	if updated.Revision != 2 || updated.CreateRevision != 1 || string(updated.Value) != "v2" {
		t.Fatalf("updated %+v", updated)
	}
	if _, err := db.Update(ctx, leaseKey("default", "missing"), 1, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update missing: %v", err)
	}

	if _, err := db.Delete(ctx, k, 1); !isConflict(err, 1, 2) {
		t.Fatalf("delete stale: %v", err)
	}
	deleted := MustDelete(t, db, k, 2)
	if deleted.Revision != 3 || deleted.CreateRevision != 1 || string(deleted.Value) != "v2" {
		t.Fatalf("deleted %+v", deleted)
	}
	if _, err := db.Get(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
	if _, err := db.Delete(ctx, k, 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete missing: %v", err)
	}

	// Recreated: a new create revision; unconditional delete.
	again := MustCreate(t, db, k, "v3")
	if again.Revision != 4 || again.CreateRevision != 4 {
		t.Fatalf("recreated %+v", again)
	}
	if d := MustDelete(t, db, k, 0); d.Revision != 5 || string(d.Value) != "v3" {
		t.Fatalf("unconditional delete %+v", d)
	}

	// Failed writes do not use revisions.
	if cur, _ := MustRevision(t, db); cur != 5 {
		t.Fatalf("current revision %d, want 5", cur)
	}

	hist, err := db.History(ctx, k, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantTypes := []store.EventType{store.Added, store.Modified, store.Deleted, store.Added, store.Deleted}
	if len(hist) != len(wantTypes) {
		t.Fatalf("history has %d events, want %d", len(hist), len(wantTypes))
	}
	for i, e := range hist {
		if e.Type != wantTypes[i] || e.Object.Revision != int64(i+1) || e.Object.Key != k {
			t.Fatalf("history[%d] = %v at %d", i, e.Type, e.Object.Revision)
		}
		if (e.Type == store.Added) != (e.Prev == nil) {
			t.Fatalf("history[%d] %v: prev %+v", i, e.Type, e.Prev)
		}
	}
	if p := hist[1].Prev; p.Revision != 1 || string(p.Value) != "v1" || p.CreateRevision != 1 {
		t.Fatalf("prev of update %+v", p)
	}
	if p := hist[2].Prev; p.Revision != 2 || string(p.Value) != "v2" || string(hist[2].Object.Value) != "v2" {
		t.Fatalf("prev of delete %+v, object %+v", p, hist[2].Object)
	}
	tail, err := db.History(ctx, k, 3)
	if err != nil || len(tail) != 2 || tail[0].Object.Revision != 4 {
		t.Fatalf("history after 3: %v %+v", err, tail)
	}
}

func TestInvalidKey(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	if _, err := db.Create(context.Background(), store.Key{Resource: leases}, nil); err == nil {
		t.Fatal("create without a name succeeded")
	}
	if _, err := db.List(context.Background(), store.ListOptions{}); err == nil {
		t.Fatal("list without a resource succeeded")
	}
	if _, err := db.Watch(context.Background(), store.WatchOptions{}); err == nil {
		t.Fatal("watch without a resource succeeded")
	}
}

func TestValueIsCopied(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	buf := []byte("original")
	k := leaseKey("ns", "a")
	obj, err := db.Create(context.Background(), k, buf)
	if err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXXXXX")
	if string(obj.Value) != "original" || string(MustGet(t, db, k).Value) != "original" {
		t.Fatal("the store kept the caller's buffer")
	}
}

func TestRevisionsIncreaseAcrossResources(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	var last int64
	for i := range 20 {
		res := leases
		if i%2 == 1 {
			res = candidates
		}
		obj := MustCreate(t, db, store.Key{Resource: res, Namespace: "ns", Name: name(i)}, "v")
		if obj.Revision != last+1 {
			t.Fatalf("revision %d after %d", obj.Revision, last)
		}
		last = obj.Revision
	}
	// Same name in another resource or namespace is another object.
	MustCreate(t, db, store.Key{Resource: candidates, Namespace: "ns", Name: name(0)}, "v")
	MustCreate(t, db, store.Key{Resource: leases, Namespace: "other", Name: name(0)}, "v")
	MustCreate(t, db, store.Key{Resource: "namespaces", Name: "ns"}, "v")
}

func TestReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	ctx := context.Background()
	db, err := Open(ctx, path, Options{CompactInterval: -1, CompactKeep: 2}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	a := MustCreate(t, db, leaseKey("ns", "a"), "a1")
	a = MustUpdate(t, db, a.Key, a.Revision, "a2")
	b := MustCreate(t, db, leaseKey("ns", "b"), "b1")
	c := MustCreate(t, db, leaseKey("ns", "c"), "c1")
	MustDelete(t, db, c.Key, 0) // revision 5, the newest change, will be compacted away
	if _, err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	cur, compacted := MustRevision(t, db)
	if cur != 5 || compacted != 3 {
		t.Fatalf("revision %d compacted %d", cur, compacted)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = MustOpenPath(t, path, testOptions())
	if cur2, compacted2 := MustRevision(t, db); cur2 != cur || compacted2 != compacted {
		t.Fatalf("after reopen: revision %d compacted %d, want %d %d", cur2, compacted2, cur, compacted)
	}
	if got := MustGet(t, db, a.Key); got.Revision != a.Revision || string(got.Value) != "a2" || got.CreateRevision != 1 {
		t.Fatalf("a after reopen: %+v", got)
	}
	if got := MustGet(t, db, b.Key); got.Revision != b.Revision {
		t.Fatalf("b after reopen: %+v", got)
	}
	if _, err := db.Get(ctx, c.Key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("c after reopen: %v", err)
	}
	// Compaction with every change old deletes the newest row too; its revision is still used.
	db.opts.Now = func() time.Time { return time.Now().Add(48 * time.Hour) }
	if _, err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if _, compacted := MustRevision(t, db); compacted != 5 {
		t.Fatalf("compacted %d, want 5", compacted)
	}
	if d := MustCreate(t, db, leaseKey("ns", "d"), "d1"); d.Revision != 6 {
		t.Fatalf("revision after compaction of the newest row: %d, want 6", d.Revision)
	}

	var migrations int
	if err := db.rdb.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&migrations); err != nil || migrations != 1 {
		t.Fatalf("schema_migrations: %d rows, %v", migrations, err)
	}
}

func TestOpenPathNeedingEscapes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a dir?with#odd%chars.db")
	db := MustOpenPath(t, path, testOptions())
	MustCreate(t, db, leaseKey("ns", "a"), "v")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at its path: %v", err)
	}
}

func TestPragmas(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	var mode string
	var sync int
	conn, err := db.wdb.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.QueryRowContext(context.Background(), `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q %v", mode, err)
	}
	if err := conn.QueryRowContext(context.Background(), `PRAGMA synchronous`).Scan(&sync); err != nil || sync != 2 {
		t.Fatalf("synchronous %d %v", sync, err)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), testOptions(), testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	MustCreate(t, db, leaseKey("ns", "a"), "v")
	w, err := db.Watch(ctx, store.WatchOptions{Resource: leases})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if err := waitClosed(t, w); err != nil {
		t.Fatalf("watch error after close: %v", err)
	}
	w.Close()
	if _, err := db.Get(ctx, leaseKey("ns", "a")); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("get after close: %v", err)
	}
	if _, err := db.Create(ctx, leaseKey("ns", "b"), nil); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("create after close: %v", err)
	}
	if _, err := db.List(ctx, store.ListOptions{Resource: leases}); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("list after close: %v", err)
	}
	if _, err := db.Watch(ctx, store.WatchOptions{Resource: leases}); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("watch after close: %v", err)
	}
	if _, _, err := db.Revision(ctx); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("revision after close: %v", err)
	}
	if _, err := db.Compact(ctx); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("compact after close: %v", err)
	}
}

func TestBackgroundCompaction(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, Options{CompactInterval: 10 * time.Millisecond, CompactKeep: 1})
	k := leaseKey("ns", "a")
	o := MustCreate(t, db, k, "v")
	for range 5 {
		o = MustUpdate(t, db, k, o.Revision, "v")
	}
	waitFor(t, 10*time.Second, "background compaction", func() (bool, string) {
		_, compacted := MustRevision(t, db)
		return compacted == o.Revision-1, fmt.Sprintf("compacted to %d, want %d", compacted, o.Revision-1)
	})
}
