package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/changelog"
)

// TestImportRoundTrip: a database built from the export of another holds the same objects,
// at the same revisions, with the same history and commit times; a watch from before the first
// revision gets 410, and the next write continues after the last revision.
func TestImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "src.db")
	src := MustOpenPath(t, path, testOptions())
	a := MustCreate(t, src, leaseKey("demo", "a"), `{"holder":"alice <&>"}`)
	b := MustCreate(t, src, leaseKey("demo", "b"), `{"n":1}`)
	a = MustUpdate(t, src, a.Key, a.Revision, `{"holder":"bob"}`)
	MustDelete(t, src, b.Key, b.Revision)
	b = MustCreate(t, src, b.Key, `{"n":2}`)
	raw := MustCreate(t, src, store.Key{Resource: "blobs.example", Name: "r"}, "not json")
	gone := MustCreate(t, src, leaseKey("other", "gone"), `{}`)
	MustDelete(t, src, gone.Key, gone.Revision)
	cur, _ := MustRevision(t, src)

	var file bytes.Buffer
	if err := Export(ctx, path, &file, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "copy.db")
	sum, err := Import(ctx, dst, bytes.NewReader(file.Bytes()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.FirstRevision != 1 || sum.LastRevision != cur || sum.Changes != cur || sum.Recording != "" {
		t.Errorf("summary %+v, want revisions 1 to %d", sum, cur)
	}
	cp := MustOpenPath(t, dst, testOptions())
	if c, compacted := MustRevision(t, cp); c != cur || compacted != 0 {
		t.Errorf("copy at revision %d compacted %d, want %d and 0", c, compacted, cur)
	}
	for _, want := range []store.Object{a, b, raw} {
		if got := MustGet(t, cp, want.Key); !reflect.DeepEqual(got, want) {
			t.Errorf("copy's %v: %+v, want %+v", want.Key, got, want)
		}
	}
	if _, err := cp.Get(ctx, gone.Key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an object deleted in the log exists in the copy: %v", err)
	}
	for _, k := range []store.Key{a.Key, b.Key, gone.Key} {
		want, _ := src.History(ctx, k, 0)
		got, _ := cp.History(ctx, k, 0)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("history of %v:\n%+v\nwant\n%+v", k, got, want)
		}
	}
	next := MustUpdate(t, cp, a.Key, a.Revision, `{}`)
	if next.Revision != cur+1 {
		t.Errorf("first write to the copy got revision %d, want %d", next.Revision, cur+1)
	}
}

// TestImportPart: a part of a log (a later start, as a recording of one namespace has) counts
// as compacted just below its first revision.
func TestImportPart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "src.db")
	src := MustOpenPath(t, path, testOptions())
	first := MustCreate(t, src, leaseKey("demo", "a"), `{"n":1}`)
	a := MustUpdate(t, src, first.Key, first.Revision, `{"n":2}`)
	a = MustUpdate(t, src, a.Key, a.Revision, `{"n":3}`)
	var file bytes.Buffer
	if err := Export(ctx, path, &file, ExportOptions{After: first.Revision}); err != nil {
		t.Fatal(err)
	}
	cp := MustOpenPath(t, mustImport(t, filepath.Join(dir, "copy.db"), file.String()), testOptions())
	if c, compacted := MustRevision(t, cp); c != a.Revision || compacted != first.Revision {
		t.Errorf("copy at revision %d compacted %d, want %d and %d", c, compacted, a.Revision, first.Revision)
	}
	if got := MustGet(t, cp, a.Key); got.CreateRevision != first.Revision || string(got.Value) != `{"n":3}` {
		t.Errorf("copy's object %+v", got)
	}
	if _, err := cp.Watch(ctx, store.WatchOptions{Resource: leases, After: first.Revision - 1}); !errors.Is(err, store.ErrCompacted) {
		t.Errorf("watch from before the part: %v, want compacted", err)
	}
	w := MustWatch(t, cp, store.WatchOptions{Resource: leases, After: first.Revision})
	if evs := receive(t, w, 2); evs[0].Prev != nil || evs[1].Prev == nil || evs[1].Prev.Revision != evs[0].Object.Revision {
		t.Errorf("watch of the part: %+v", evs)
	}
}

func mustImport(tb testing.TB, path, file string) string {
	tb.Helper()
	if _, err := Import(context.Background(), path, strings.NewReader(file), nil); err != nil {
		tb.Fatalf("import: %v", err)
	}
	return path
}

// TestImportRefuses: a file that is not a change log is refused with the line that is wrong,
// and leaves no file behind; so is a path that exists.
func TestImportRefuses(t *testing.T) {
	const add = `{"revision":%d,"type":"ADDED","time":"2026-01-02T03:04:05Z","resource":"leases.coordination.k8s.io","namespace":"d","name":"%s","createRevision":%d,"object":{}}`
	line := func(rev int, name string) string { return fmt.Sprintf(add, rev, name, rev) }
	for _, tc := range []struct {
		name, file string
		line       int
		msg        string
	}{
		{"not JSON", line(1, "a") + "\n{nope\n", 2, "not a JSON change"},
		{"revisions go back", line(5, "a") + "\n" + line(3, "b") + "\n", 2, "revisions must increase"},
		{"same revision", line(5, "a") + "\n" + line(5, "b") + "\n", 2, "revisions must increase"},
		{"created twice", line(1, "a") + "\n" + line(2, "a") + "\n", 2, "exists since line 1"},
		{"bad type", strings.Replace(line(1, "a"), "ADDED", "TOUCHED", 1), 1, "want ADDED, MODIFIED or DELETED"},
		{"bad time", strings.Replace(line(1, "a"), "2026-01-02T03:04:05Z", "yesterday", 1), 1, "RFC 3339"},
		{"late header", line(1, "a") + "\n" + `{"recording":"leaselab/v1"}`, 2, "only be the first line"},
		{"other format", `{"recording":"leaselab/v9"}` + "\n" + line(1, "a"), 1, "leaselab/v9"},
		{"cut short", `{"recording":"leaselab/v1","resources":["leases.coordination.k8s.io"],"firstRevision":1,"lastRevision":2,"changes":2}` + "\n" + line(1, "a") + "\n", 0, "incomplete"},
		{"a resource the header does not list", `{"recording":"leaselab/v1","resources":["events"],"firstRevision":1,"lastRevision":1,"changes":1}` + "\n" + line(1, "a") + "\n", 2, "not one the header lists"},
		{"empty", "\n", 0, "no change"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Import(context.Background(), filepath.Join(dir, "x.db"), strings.NewReader(tc.file), nil)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("import: %v, want an error saying %q", err, tc.msg)
			}
			var le *changelog.LineError
			if got := 0; errors.As(err, &le) {
				got = le.Line
				if got != tc.line {
					t.Errorf("error on line %d, want %d: %v", got, tc.line, err)
				}
			} else if tc.line != 0 {
				t.Errorf("error names no line, want %d: %v", tc.line, err)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("a failed import left %v", left)
			}
		})
	}
	dir := t.TempDir()
	path := mustImport(t, filepath.Join(dir, "x.db"), line(1, "a"))
	if _, err := Import(context.Background(), path, strings.NewReader(line(1, "a")), nil); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("import over an existing database: %v", err)
	}
}
