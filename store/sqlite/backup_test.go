package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/store"
)

// TestBackupAndExport: a backup of a live database is a database with the same objects and
// revision; the export is its change log, one JSON line per change, with skipped resources
// left out.
func TestBackupAndExport(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.db")
	db := MustOpenPath(t, path, testOptions())
	ctx := context.Background()
	a := MustCreate(t, db, leaseKey("default", "a"), `{"n":1}`)
	MustUpdate(t, db, a.Key, a.Revision, `{"n":2}`)
	b := MustCreate(t, db, leaseKey("default", "b"), "not json")
	MustDelete(t, db, b.Key, b.Revision)
	MustCreate(t, db, store.Key{Resource: "secrets.example", Name: "s"}, `{"token":"t"}`)
	cur, _ := MustRevision(t, db)

	dst := filepath.Join(dir, "copy.db")
	if err := Backup(ctx, path, dst); err != nil {
		t.Fatal(err)
	}
	if err := Backup(ctx, path, dst); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("backup over an existing file: %v", err)
	}
	if err := Backup(ctx, filepath.Join(dir, "missing.db"), filepath.Join(dir, "x.db")); err == nil {
		t.Error("backup of a missing database succeeded")
	}
	cp := MustOpenPath(t, dst, testOptions())
	if got := MustGet(t, cp, a.Key); string(got.Value) != `{"n":2}` {
		t.Errorf("backup holds %s", got.Value)
	}
	if c, _ := MustRevision(t, cp); c != cur {
		t.Errorf("backup revision %d, live %d", c, cur)
	}
	objs, err := ReadObjects(ctx, path, "leases.coordination.k8s.io")
	if err != nil || len(objs) != 1 || objs[0].Name != "a" {
		t.Errorf("ReadObjects: %v %+v", err, objs)
	}

	var out bytes.Buffer
	if err := Export(ctx, path, &out, ExportOptions{Skip: func(r string) bool { return r == "secrets.example" }}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var got []string
	for _, l := range lines {
		var c ExportedChange
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		got = append(got, c.Type+" "+c.Name+" "+string(c.Object))
	}
	want := []string{`ADDED a {"n":1}`, `MODIFIED a {"n":2}`, `ADDED b "bm90IGpzb24="`, `DELETED b "bm90IGpzb24="`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("export:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	out.Reset()
	if err := Export(ctx, path, &out, ExportOptions{After: cur - 1}); err != nil || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("export after %d: %v %q", cur-1, err, out.String())
	}
}
