//go:build unix

package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// permissiveUmask sets the usual 022 umask for the test, under which SQLite alone would create
// files 0644, so that a stricter umask of the machine cannot hide a world-readable file.
func permissiveUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestNewDatabasePrivate: a new database and its -wal and -shm files are 0600 (they hold
// workshop tokens), and so is a backup; a database file the user created keeps its mode.
func TestNewDatabasePrivate(t *testing.T) {
	permissiveUmask(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "new.db")
	db := MustOpenPath(t, path, testOptions())
	MustCreate(t, db, leaseKey("default", "a"), `{"n":1}`)
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if m := mode(t, p); m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), m)
		}
	}

	// The user's own file, readable by the group: Open leaves it so, and SQLite gives its
	// -wal the same mode.
	own := filepath.Join(dir, "own.db")
	if err := os.WriteFile(own, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	odb := MustOpenPath(t, own, testOptions())
	MustCreate(t, odb, leaseKey("default", "a"), `{"n":1}`)
	for _, p := range []string{own, own + "-wal"} {
		if m := mode(t, p); m != 0o640 {
			t.Errorf("%s: mode %v, want the user's 0640", filepath.Base(p), m)
		}
	}

	// Even a copy of a readable database is private.
	dst := filepath.Join(dir, "copy.db")
	if err := Backup(context.Background(), own, dst); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, dst); m != 0o600 {
		t.Errorf("backup: mode %v, want 0600", m)
	}
	if _, err := os.Stat(filepath.Join(dir, ".copy.db.partial")); !os.IsNotExist(err) {
		t.Errorf("partial backup left behind: %v", err)
	}
}

// TestOpenLocks: a second store on a file that one already has open is refused, so that two
// servers never write beside each other; once the first is closed the file opens again.
func TestOpenLocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leaselab.db")
	first, err := Open(context.Background(), path, Options{CompactInterval: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := Open(context.Background(), path, Options{CompactInterval: -1}, nil); err == nil {
		second.Close()
		t.Fatal("a second store opened the same file")
	} else if !strings.Contains(err.Error(), "already open in another process") {
		t.Errorf("err = %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(context.Background(), path, Options{CompactInterval: -1}, nil)
	if err != nil {
		t.Fatalf("reopen after close: %v", err)
	}
	again.Close()
}
