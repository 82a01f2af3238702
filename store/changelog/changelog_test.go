package changelog

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
)

func readAll(tb testing.TB, file string) ([]store.Event, Header, error) {
	tb.Helper()
	r := NewReader(strings.NewReader(file))
	var evs []store.Event
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return evs, r.Summary(), nil
		}
		if err != nil {
			return evs, r.Summary(), err
		}
		evs = append(evs, ev)
	}
}

func events() []store.Event {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	k := store.Key{Resource: "leases.coordination.k8s.io", Namespace: "demo", Name: "x"}
	ns := store.Key{Resource: "namespaces", Name: "demo"}
	a := store.Object{Key: k, Revision: 3, CreateRevision: 3, Value: []byte(`{"spec":{"holderIdentity":"<alice>"}}`)}
	b := store.Object{Key: k, Revision: 5, CreateRevision: 3, Value: []byte(`{"spec":{"holderIdentity":"bob"}}`)}
	d := b
	d.Revision = 9
	return []store.Event{
		{Type: store.Added, Object: store.Object{Key: ns, Revision: 2, CreateRevision: 2, Value: []byte("\x00raw")}, Time: t0},
		{Type: store.Added, Object: a, Time: t0.Add(time.Second)},
		{Type: store.Modified, Object: b, Prev: &a, Time: t0.Add(2 * time.Second)},
		{Type: store.Deleted, Object: d, Prev: &b, Time: t0.Add(3 * time.Second)},
	}
}

func write(tb testing.TB, h *Header, evs []store.Event) string {
	tb.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if h != nil {
		if err := w.Header(*h); err != nil {
			tb.Fatal(err)
		}
	}
	for _, ev := range evs {
		if err := w.Change(ev); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}

// TestRoundTrip: what the Writer writes, the Reader reads back as the same events, each with
// the state before it; objects go out byte for byte (no HTML escaping added, raw values base64).
func TestRoundTrip(t *testing.T) {
	want := events()
	h := &Header{Recording: Format, Namespace: "demo", Resources: []string{"namespaces", "leases.coordination.k8s.io"}, FirstRevision: 2, LastRevision: 9, Changes: 4}
	file := write(t, h, want)
	if !strings.Contains(file, `"holderIdentity":"<alice>"`) || !strings.Contains(file, `"object":"AHJhdw=="`) {
		t.Errorf("file:\n%s", file)
	}
	got, sum, err := readAll(t, file)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].Time = got[i].Time.UTC()
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back:\n%+v\nwant\n%+v", got, want)
	}
	if sum.Recording != Format || sum.Namespace != "demo" || sum.Changes != 4 || sum.From != "2026-01-02T03:04:05.0000006Z" || sum.To != "2026-01-02T03:04:08.0000006Z" {
		t.Errorf("summary %+v", sum)
	}
	// Without the header, with blank lines: the same events.
	if got, sum, err := readAll(t, "\n"+write(t, nil, want)+"\n\n"); err != nil || len(got) != 4 || sum.Recording != "" || sum.FirstRevision != 2 || sum.LastRevision != 9 {
		t.Errorf("plain export: %v, %d events, %+v", err, len(got), sum)
	}
}

// TestReaderRefuses: each way a file can fail to be a change log is named, on its line.
func TestReaderRefuses(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(write(t, nil, events())), "\n")
	leasesOnly := `{"recording":"leaselab/v1","resources":["leases.coordination.k8s.io"],"firstRevision":2,"lastRevision":3,"changes":2}`
	for _, tc := range []struct {
		name string
		file []string
		line int
		msg  string
	}{
		{"changed after its delete", []string{lines[1], lines[3], strings.Replace(lines[2], `"revision":5`, `"revision":12`, 1)}, 3, "which line 2 deleted"},
		{"created again while it exists", []string{lines[1], strings.Replace(lines[2], `"MODIFIED"`, `"ADDED"`, 1)}, 2, "createRevision 3 does not fit"},
		{"another createRevision", []string{lines[1], strings.Replace(lines[2], `"createRevision":3`, `"createRevision":1`, 1)}, 2, "while line 1 says 3"},
		{"no name", []string{strings.Replace(lines[0], `"name":"demo"`, `"name":""`, 1)}, 1, "name are required"},
		{"a number as object", []string{strings.Replace(lines[0], `"AHJhdw=="`, `7`, 1)}, 1, "want a JSON object"},
		{"bad base64", []string{strings.Replace(lines[0], `"AHJhdw=="`, `"!!"`, 1)}, 1, "base64"},
		{"zero revision", []string{strings.Replace(lines[0], `"revision":2`, `"revision":0`, 1)}, 1, "positive revision"},
		{"too long", []string{lines[0], `{"name":"` + strings.Repeat("x", MaxLine) + `"}`}, 2, "longer than"},
		{"a resource the header does not list", []string{leasesOnly, lines[0], lines[1]}, 2, `resource "namespaces" is not one the header lists`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readAll(t, strings.Join(tc.file, "\n"))
			var le *LineError
			if !errors.As(err, &le) || le.Line != tc.line || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %v, want line %d saying %q", err, tc.line, tc.msg)
			}
		})
	}
}

// FuzzReader: no input makes the reader panic, and what it accepts, written again, reads back
// the same.
func FuzzReader(f *testing.F) {
	f.Add(write(f, &Header{Recording: Format, Resources: []string{"namespaces", "leases.coordination.k8s.io"}, FirstRevision: 2, LastRevision: 9, Changes: 4}, events()))
	f.Add(write(f, nil, events()))
	f.Add(`{"recording":"leaselab/v1"}` + "\n" + `{"revision":1}`)
	f.Add("{\"revision\":1,\"type\":\"ADDED\",\"time\":\"2026-01-02T03:04:05Z\",\"resource\":\"r\",\"name\":\"n\",\"createRevision\":1,\"object\":\"AA==\"}\n")
	f.Add("{\"revision\":1,\"type\":\"ADDED\",\"time\":\"2026-01-02T03:04:05Z\",\"resource\":\"r\",\"name\":\"n\",\"createRevision\":1,\"object\":{ \"a\" : [ 1 ] }}\n")
	f.Fuzz(func(t *testing.T, file string) {
		evs, _, err := readAll(t, file)
		if err != nil {
			return
		}
		again, _, err := readAll(t, write(t, nil, evs))
		if err != nil {
			t.Fatalf("read back what was accepted: %v", err)
		}
		for i := range again {
			if !reflect.DeepEqual(again[i].Object, evs[i].Object) || !again[i].Time.Equal(evs[i].Time) || again[i].Type != evs[i].Type {
				t.Fatalf("change %d read back as %+v, was %+v", i, again[i], evs[i])
			}
		}
	})
}
