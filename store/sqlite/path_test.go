package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenSaysWhatIsWrongWithThePath: a path that cannot hold a database gets a plain reason,
// not SQLite's "unable to open database file (14)", and leaves no file behind.
func TestOpenSaysWhatIsWrongWithThePath(t *testing.T) {
	dir := t.TempDir()
	check := func(path, want string) {
		t.Helper()
		db, err := Open(context.Background(), path, testOptions(), testLogger(t))
		if err == nil {
			db.Close()
			t.Fatalf("%s opened", path)
		}
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "(14)") {
			t.Errorf("open %s: %q, want it to say %q", path, err, want)
		}
	}
	check(dir, "is a directory")
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	check(filepath.Join(file, "x.db"), "is not a directory")

	if os.Geteuid() == 0 {
		// Permission bits do not stop root: the read-only cases below cannot happen to it.
		t.Log("running as root: the read-only file and directory cases are not checked")
		return
	}
	ro := filepath.Join(dir, "ro.db")
	MustOpenPath(t, ro, testOptions()).Close()
	if err := os.Chmod(ro, 0o400); err != nil {
		t.Fatal(err)
	}
	check(ro, "cannot be written")
	roDir := filepath.Join(dir, "ro")
	if err := os.Mkdir(roDir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(roDir, 0o700) })
	check(filepath.Join(roDir, "x.db"), "SQLite keeps x.db-wal")
	if entries, _ := os.ReadDir(roDir); len(entries) != 0 {
		t.Errorf("files left behind: %v", entries)
	}
}
