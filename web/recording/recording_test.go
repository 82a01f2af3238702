package recording_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/changelog"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/auth"
	"github.com/leaselab/leaselab/web/kinds"
	"github.com/leaselab/leaselab/web/recording"
)

// fixture is a store with two namespaces, each with two leases, their LeaseCandidates, the
// candidates' views, events about them, and a workshop identity.
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
	if len(all) != 2+4*4 || slices.ContainsFunc(all, func(s string) bool { return strings.HasPrefix(s, auth.IdentityResource) }) {
		t.Errorf("everything: %v", all)
	}
	h, demo := f.record(t, recording.Scope{Namespace: "demo"})
	if len(demo) != 1+2*4 || slices.ContainsFunc(demo, func(s string) bool { return strings.Contains(s, "other") }) {
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
		"events demo/ev-x",
	}
	if !slices.Equal(x, want) {
		t.Errorf("lease demo/x:\n%v\nwant\n%v", x, want)
	}
	if h.Lease != "x" || h.Changes != 10 {
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
// kinds are kept under (web/kinds), and never the workshop's identities (web/auth).
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
