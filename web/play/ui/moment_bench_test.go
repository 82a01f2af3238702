package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/changelog"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/views"
)

// longHistory writes a recording of one lease renewed every 2 s for n changes, its holder
// changing every 500 changes (with the candidates' views of each change), and imports it.
func longHistory(b *testing.B, n int) (path string, end time.Time) {
	b.Helper()
	var buf bytes.Buffer
	w := changelog.NewWriter(&buf)
	rev := int64(0)
	put := func(resource, name string, value []byte, at time.Time, created int64) int64 {
		rev++
		typ := store.Modified
		if created == 0 {
			typ, created = store.Added, rev
		}
		ev := store.Event{Type: typ, Time: at, Object: store.Object{
			Key: store.Key{Resource: resource, Namespace: "default", Name: name}, Revision: rev, CreateRevision: created, Value: value}}
		if err := w.Change(ev); err != nil {
			b.Fatal(err)
		}
		return created
	}
	var leaseCreated int64
	viewsCreated := map[string]int64{}
	view := func(identity string, role tabproto.Role, holder string, at time.Time) {
		r := views.FromReport(tabproto.Report{Identity: identity, Namespace: "default", Lease: "x", State: tabproto.State(role),
			Role: role, Holder: holder}, views.SourceTab, at, "")
		v, _ := json.Marshal(r)
		viewsCreated[identity] = put(views.Resource, views.Name("x", identity), v, at, viewsCreated[identity])
	}
	for i := range n {
		at := t0.Add(time.Duration(i) * 2 * time.Second)
		holder := fmt.Sprintf("tab-%d", (i/500)%3)
		l := lease("default", "x", holder, at, 10, int32(i/500))
		l.APIVersion, l.Kind = "coordination.k8s.io/v1", "Lease"
		v, _ := json.Marshal(l)
		leaseCreated = put("leases.coordination.k8s.io", "x", v, at, leaseCreated)
		end = at
		if i%500 == 0 {
			prev := fmt.Sprintf("tab-%d", (i/500+2)%3)
			view(prev, tabproto.RoleFollower, holder, at.Add(10*time.Millisecond))
			view(holder, tabproto.RoleLeader, holder, at.Add(20*time.Millisecond))
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	path = filepath.Join(b.TempDir(), "long.db")
	if _, err := sqlite.Import(context.Background(), path, &buf, nil); err != nil {
		b.Fatal(err)
	}
	return path, end
}

// BenchmarkMomentOfLongHistory renders the lease page of a past moment of a lease with
// 100,000 changes: in the middle of its history (deeper than the live page's cache reaches)
// and near its end, each from a server that has just started (cold) or has rendered it
// before (warm).
func BenchmarkMomentOfLongHistory(b *testing.B) {
	const n = 100_000
	path, end := longHistory(b, n)
	for _, c := range []struct {
		name string
		at   time.Time
	}{
		{"middle", t0.Add(n * time.Second)},
		{"end", end.Add(-time.Minute)},
	} {
		p := "/leases/default/x?at=" + url.QueryEscape(c.at.UTC().Format(momentLayout))
		b.Run(c.name, func(b *testing.B) {
			tu := mustNewUIOn(b, openTestStore(b, path, end), end)
			for b.Loop() {
				w := httptest.NewRecorder()
				tu.echo.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
				if w.Code != http.StatusOK {
					b.Fatalf("GET %s: %d", p, w.Code)
				}
			}
		})
	}
}
