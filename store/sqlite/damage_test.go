package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/store"
)

// fillDB writes n objects with values large enough to spread over many pages.
func fillDB(tb testing.TB, db *DB, n int) {
	tb.Helper()
	ctx := context.Background()
	value := bytes.Repeat([]byte("x"), 900)
	for i := range n {
		if _, err := db.Create(ctx, store.Key{Resource: "leases", Namespace: "default", Name: fmt.Sprintf("l%05d", i)}, value); err != nil {
			tb.Fatal(err)
		}
	}
}

// scribble overwrites size bytes in the middle of the file with random bytes.
func scribble(tb testing.TB, path string, size int) {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	junk := make([]byte, size)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range junk {
		junk[i] = byte(rng.UintN(256))
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(junk, fi.Size()/2); err != nil {
		tb.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
}

// TestOpenRefusesDamagedFile: a database with random bytes in its middle is refused at start,
// with the file and what to do, instead of being served as healthy.
func TestOpenRefusesDamagedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db := MustOpenPath(t, path, testOptions())
	fillDB(t, db, 400)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	scribble(t, path, 20<<10)
	db, err := Open(context.Background(), path, testOptions(), testLogger(t))
	if err == nil {
		db.Close()
		t.Fatal("a damaged database opened")
	}
	if !errors.Is(err, store.ErrDamaged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "leaselab backup") {
		t.Errorf("error %q: want ErrDamaged naming %s and leaselab backup", err, path)
	}

	// A file that is not a database at all says so too.
	junk := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("not a database "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if db, err := Open(context.Background(), junk, testOptions(), testLogger(t)); err == nil {
		db.Close()
		t.Fatal("a file of text opened as a database")
	} else if !errors.Is(err, store.ErrDamaged) {
		t.Errorf("error %q: want ErrDamaged", err)
	}
}

// TestDamageWhileServing: damage found by a read is reported by Damaged, and ends a watch
// that reads through it with an error wrapping ErrDamaged, not silently.
func TestDamageWhileServing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db := MustOpenPath(t, path, testOptions())
	fillDB(t, db, 400)
	ctx := context.Background()
	if _, err := db.wdb.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	if db.Damaged() != nil {
		t.Fatalf("damaged before anything happened: %v", db.Damaged())
	}
	scribble(t, path, 20<<10)
	// A write changes the WAL, so that readers read the pages from the file again.
	if _, err := db.Create(ctx, store.Key{Resource: "leases", Namespace: "default", Name: "after"}, []byte("{}")); err != nil {
		t.Logf("write after the damage: %v", err)
	}
	w, err := db.Watch(ctx, store.WatchOptions{Resource: "leases", After: 0})
	if err == nil {
		for range w.Events() {
		}
		err = w.Err()
	}
	if !errors.Is(err, store.ErrDamaged) {
		t.Errorf("watch from the start ended with %v, want ErrDamaged", err)
	}
	if _, lerr := db.List(ctx, store.ListOptions{Resource: "leases"}); !errors.Is(lerr, store.ErrDamaged) {
		t.Errorf("list: %v, want ErrDamaged", lerr)
	}
	if d := db.Damaged(); !errors.Is(d, store.ErrDamaged) || !strings.Contains(d.Error(), path) {
		t.Errorf("Damaged() = %v", d)
	}
}

// TestDamageRefusesWrites: once damage is known, every write fails with ErrDamaged and
// changes nothing, and a watch that was open ends with ErrDamaged instead of delivering
// writes that exist only in a file that has to be restored.
func TestDamageRefusesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db := MustOpenPath(t, path, testOptions())
	fillDB(t, db, 400)
	ctx := context.Background()
	current, _, err := db.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	open, err := db.Watch(ctx, store.WatchOptions{Resource: "leases", After: current})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.wdb.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	scribble(t, path, 20<<10)
	if _, err := db.List(ctx, store.ListOptions{Resource: "leases"}); !errors.Is(err, store.ErrDamaged) {
		t.Fatalf("list after the damage: %v, want ErrDamaged", err)
	}
	for i := range 5 {
		obj, err := db.Create(ctx, leaseKey("default", fmt.Sprintf("late-%d", i)), []byte("{}"))
		if !errors.Is(err, store.ErrDamaged) {
			t.Fatalf("create %d after the damage was found: revision %d, %v; want ErrDamaged", i, obj.Revision, err)
		}
	}
	for ev := range open.Events() {
		t.Errorf("the open watch delivered %s %s at %d after the damage", ev.Type, ev.Object.Name, ev.Object.Revision)
	}
	if !errors.Is(open.Err(), store.ErrDamaged) {
		t.Errorf("the open watch ended with %v, want ErrDamaged", open.Err())
	}
	if _, err := db.Watch(ctx, store.WatchOptions{Resource: "leases", After: current}); !errors.Is(err, store.ErrDamaged) {
		t.Errorf("a new watch: %v, want ErrDamaged", err)
	}
	if err := db.WriteHealth(ctx); !errors.Is(err, store.ErrDamaged) {
		t.Errorf("WriteHealth: %v, want ErrDamaged", err)
	}
}
