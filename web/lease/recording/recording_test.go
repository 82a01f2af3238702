package recording_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/changelog"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/lease/recording"
)

// fixture is a store with two namespaces, each with two leases, their LeaseCandidates, the
// candidates' views, the requests on them, events about them, and a workshop identity.
type fixture struct {
	db  *sqlite.DB
	rec *recording.Recorder
	reg *kinds.Registry
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"), sqlite.Options{CompactInterval: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	rec, err := recording.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, rec: rec, reg: reg}
	f.put(t, "namespaces", "", "demo", `{"metadata":{"name":"demo"}}`)
	f.put(t, "namespaces", "", "other", `{"metadata":{"name":"other"}}`)
	f.put(t, auth.IdentityResource, "", "participant-01", `{"token":"secret"}`)
	for _, ns := range []string{"demo", "other"} {
		for _, l := range []string{"x", "y"} {
			f.put(t, "leases.coordination.k8s.io", ns, l, `{"metadata":{"name":"`+l+`"},"spec":{"holderIdentity":"alice"}}`)
			f.put(t, "leasecandidates.coordination.k8s.io", ns, "cand-"+l, `{"metadata":{"name":"cand-`+l+`"},"spec":{"leaseName":"`+l+`"}}`)
			f.put(t, recording.CandidateViewResource, ns, l+"/alice", `{"holder":"alice"}`)
			f.put(t, recording.RequestsResource, ns, l, `{"requests":[{"id":"alice/1","identity":"alice","verb":"PUT","startMs":1}]}`)
			f.put(t, "events", ns, "ev-"+l, `{"metadata":{"name":"ev-`+l+`"},"involvedObject":{"kind":"Lease","name":"`+l+`"}}`)
		}
	}
	return f
}

// put creates the object, then changes it once.
func (f *fixture) put(t *testing.T, resource, ns, name, value string) {
	t.Helper()
	ctx := context.Background()
	o, err := f.db.Create(ctx, store.Key{Resource: resource, Namespace: ns, Name: name}, []byte(value))
	if err == nil {
		_, err = f.db.Update(ctx, o.Key, o.Revision, []byte(value))
	}
	if err != nil {
		t.Fatal(err)
	}
}

// record writes the recording of scope and reads it back: its header and the objects in it.
func (f *fixture) record(t *testing.T, scope recording.Scope) (changelog.Header, []string) {
	t.Helper()
	var buf bytes.Buffer
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := f.rec.Write(context.Background(), &buf, f.db, scope, now); err != nil {
		t.Fatal(err)
	}
	var h changelog.Header
	first, _, _ := strings.Cut(buf.String(), "\n")
	if err := json.Unmarshal([]byte(first), &h); err != nil {
		t.Fatal(err)
	}
	if h.Exported != "2026-01-02T03:04:05Z" {
		t.Errorf("exported %q", h.Exported)
	}
	r := changelog.NewReader(&buf)
	var objs []string
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the recording does not read back: %v", err)
		}
		k := ev.Object.Key
		if s := k.Resource + " " + k.Namespace + "/" + k.Name; !slices.Contains(objs, s) {
			objs = append(objs, s)
		}
	}
	return r.Summary(), objs
}

// TestScope: a namespace's recording holds its objects of the recorded resources and its
// Namespace; a lease's narrows them to the lease; no recording holds a workshop identity.
func TestScope(t *testing.T) {
	f := newFixture(t)
	_, all := f.record(t, recording.Scope{})
	if len(all) != 2+4*5 || slices.ContainsFunc(all, func(s string) bool { return strings.HasPrefix(s, auth.IdentityResource) }) {
		t.Errorf("everything: %v", all)
	}
	h, demo := f.record(t, recording.Scope{Namespace: "demo"})
	if len(demo) != 1+2*5 || slices.ContainsFunc(demo, func(s string) bool { return strings.Contains(s, "other") }) {
		t.Errorf("namespace demo: %v", demo)
	}
	if h.Recording != changelog.Format || h.Namespace != "demo" || h.Changes != 2*int64(len(demo)) || h.From == "" || h.FirstRevision >= h.LastRevision {
		t.Errorf("namespace demo's header: %+v", h)
	}
	h, x := f.record(t, recording.Scope{Namespace: "demo", Lease: "x"})
	want := []string{
		"namespaces /demo",
		"leases.coordination.k8s.io demo/x",
		"leasecandidates.coordination.k8s.io demo/cand-x",
		recording.CandidateViewResource + " demo/x/alice",
		recording.RequestsResource + " demo/x",
		"events demo/ev-x",
	}
	if !slices.Equal(x, want) {
		t.Errorf("lease demo/x:\n%v\nwant\n%v", x, want)
	}
	if h.Lease != "x" || h.Changes != 12 {
		t.Errorf("lease demo/x's header: %+v", h)
	}
}

// TestNothingToRecord: a lease or namespace with no change in the log is an error, and nothing
// is written.
func TestNothingToRecord(t *testing.T) {
	f := newFixture(t)
	for _, scope := range []recording.Scope{{Namespace: "demo", Lease: "never"}, {Namespace: "absent"}, {Namespace: "absent", Lease: "x"}} {
		var buf bytes.Buffer
		err := f.rec.Write(context.Background(), &buf, f.db, scope, time.Now())
		if !errors.Is(err, recording.ErrNothingToRecord) || buf.Len() != 0 {
			t.Errorf("%+v: %v, %d bytes written", scope, err, buf.Len())
		}
	}
}

// TestResourcesAreTheServedOnes: the resources a recording holds are the store resources the
// kinds are kept under (web/api/kinds), and never the workshop's identities (web/api/auth).
func TestResourcesAreTheServedOnes(t *testing.T) {
	f := newFixture(t)
	got := f.rec.Resources()
	for _, k := range f.reg.Kinds() {
		if !slices.Contains(got, k.StorageResource()) {
			t.Errorf("recordings leave out %s", k.StorageResource())
		}
	}
	if slices.Contains(got, auth.IdentityResource) {
		t.Errorf("recordings hold %s", auth.IdentityResource)
	}
}

func TestScopeValidateAndFileName(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		scope recording.Scope
		name  string
		err   string
	}{
		{recording.Scope{}, "leaselab-all-20260102T030405Z.jsonl", ""},
		{recording.Scope{Namespace: "demo"}, "leaselab-demo-20260102T030405Z.jsonl", ""},
		{recording.Scope{Namespace: "demo", Lease: "kube.sched"}, "leaselab-demo-kube.sched-20260102T030405Z.jsonl", ""},
		{recording.Scope{Lease: "x"}, "", "needs its namespace"},
		{recording.Scope{Namespace: "Demo"}, "", "namespace \"Demo\" is not valid"},
		{recording.Scope{Namespace: "d", Lease: `x"y`}, "", "lease name"},
	} {
		err := tc.scope.Validate()
		if tc.err == "" {
			if err != nil {
				t.Errorf("%+v: %v", tc.scope, err)
			}
			if got := recording.FileName(tc.scope, at); got != tc.name {
				t.Errorf("%+v: file %q, want %q", tc.scope, got, tc.name)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%+v: %v, want %q", tc.scope, err, tc.err)
		}
	}
}

// TestRecordingsPassTheirCheck: what the Recorder writes, the Checker (what leaselab replay
// imports with) accepts whole.
func TestRecordingsPassTheirCheck(t *testing.T) {
	f := newFixture(t)
	f.put(t, recording.CandidateViewResource, "demo", "x/bob", `{"identity":"bob","receivedMs":1767323045000,"atMs":1767323045000}`)
	var buf bytes.Buffer
	if err := f.rec.Write(context.Background(), &buf, f.db, recording.Scope{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	sum, err := sqlite.Import(context.Background(), filepath.Join(t.TempDir(), "replay.db"), &buf, f.rec.Checker())
	if err != nil || sum.Changes == 0 {
		t.Fatalf("import of a recording: %v (%d changes)", err, sum.Changes)
	}
}

// TestCheckRefuses: a recording whose header lists what recordings never hold, a plain export
// with a workshop identity, and an object the server could not read back are each refused on
// their line, saying why.
func TestCheckRefuses(t *testing.T) {
	const (
		header = `{"recording":"leaselab/v1","resources":[%s],"firstRevision":1,"lastRevision":2,"changes":2}`
		ns     = `{"revision":1,"type":"ADDED","time":"2026-01-02T03:00:00Z","resource":"namespaces","name":"default","createRevision":1,"object":{"metadata":{"name":"default"}}}`
		change = `{"revision":2,"type":"ADDED","time":"2026-01-02T03:00:01Z","resource":"%s","namespace":"default","name":"x","createRevision":2,"object":%s}`
		lease  = `{"metadata":{"name":"x"},"spec":{"holderIdentity":"alice","leaseDurationSeconds":15,"renewTime":"%s"}}`
	)
	recorded := `"leases.coordination.k8s.io","leasecandidates.coordination.k8s.io","candidateviews.leaselab.dev","namespaces","events"`
	leaseLine := func(object string) string { return fmt.Sprintf(change, "leases.coordination.k8s.io", object) }
	good := fmt.Sprintf(lease, "2026-01-02T03:00:01.000000Z")
	for _, tc := range []struct {
		name string
		file []string
		line int
		msg  string
	}{
		{"a header listing identities", []string{fmt.Sprintf(header, `"namespaces","`+auth.IdentityResource+`"`), ns, leaseLine(good)}, 1,
			`the header lists resource "participants.leaselab.dev", which a recording never holds`},
		{"a plain export with an identity", []string{ns, fmt.Sprintf(change, auth.IdentityResource, `{"token":"t","role":"instructor"}`)}, 2,
			`resource "participants.leaselab.dev" is not one a recording holds`},
		{"nine fractional digits", []string{fmt.Sprintf(header, recorded), ns, leaseLine(fmt.Sprintf(lease, "2026-01-02T03:00:01.123456789Z"))}, 3, `cannot parse "789Z"`},
		{"garbage", []string{fmt.Sprintf(header, recorded), ns, leaseLine(`"AAEC"`)}, 3, "invalid character"},
		{"a wrong type", []string{fmt.Sprintf(header, recorded), ns, leaseLine(`{"spec":{"holderIdentity":7}}`)}, 3, "cannot unmarshal number"},
		{"a null object", []string{fmt.Sprintf(header, recorded), ns, leaseLine(`null`)}, 3, "has no object"},
		{"a view of the wrong shape", []string{fmt.Sprintf(header, recorded), ns, fmt.Sprintf(change, recording.CandidateViewResource, `{"atMs":"soon"}`)}, 3, "cannot unmarshal string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			_, err := sqlite.Import(context.Background(), filepath.Join(t.TempDir(), "replay.db"), strings.NewReader(strings.Join(tc.file, "\n")), f.rec.Checker())
			var le *changelog.LineError
			if !errors.As(err, &le) || le.Line != tc.line || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("import: %v, want line %d saying %q", err, tc.line, tc.msg)
			}
		})
	}
}
