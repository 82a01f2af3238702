package sqlite

import (
	"context"
	"slices"
	"testing"

	"github.com/leaselab/leaselab/store"
)

// TestHistoryPrefix reads the changes of the objects whose names share a prefix, and no
// others: not a name that merely sorts near it, not another namespace or resource.
func TestHistoryPrefix(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t, testOptions())
	const views = "candidateviews.leaselab.dev"
	put := func(resource, ns, name, value string) int64 {
		t.Helper()
		key := store.Key{Resource: resource, Namespace: ns, Name: name}
		cur, err := db.Get(ctx, key)
		var o store.Object
		if err == nil {
			o, err = db.Update(ctx, key, cur.Revision, []byte(value))
		} else {
			o, err = db.Create(ctx, key, []byte(value))
		}
		if err != nil {
			t.Fatal(err)
		}
		return o.Revision
	}
	r1 := put(views, "ns", "x/alice", `{"v":1}`)
	put(views, "ns", "x0", `{}`)         // sorts right after "x/"
	put(views, "ns", "xa/alice", `{}`)   // another lease whose name starts with x
	put(views, "other", "x/alice", `{}`) // another namespace
	put(leases, "ns", "x/alice", `{}`)   // another resource
	r2 := put(views, "ns", "x/bob", `{"v":2}`)
	r3 := put(views, "ns", "x/alice", `{"v":3}`)
	if _, err := db.Delete(ctx, store.Key{Resource: views, Namespace: "ns", Name: "x/bob"}, 0); err != nil {
		t.Fatal(err)
	}

	revs := func(evs []store.Event) []int64 {
		var out []int64
		for _, e := range evs {
			out = append(out, e.Object.Revision)
		}
		return out
	}
	evs, err := db.HistoryPrefix(ctx, views, "ns", "x/", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := revs(evs), []int64{r1, r2, r3, r3 + 1}; !slices.Equal(got, want) {
		t.Fatalf("revisions %v, want %v", got, want)
	}
	if evs[3].Type != store.Deleted || evs[3].Object.Name != "x/bob" || string(evs[2].Object.Value) != `{"v":3}` {
		t.Fatalf("events %+v", evs)
	}
	evs, err = db.HistoryPrefix(ctx, views, "ns", "x/", r2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := revs(evs), []int64{r3, r3 + 1}; !slices.Equal(got, want) {
		t.Fatalf("after %d: revisions %v, want %v", r2, got, want)
	}
	all, err := db.HistoryPrefix(ctx, views, "ns", "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 {
		t.Fatalf("every name: %d changes, want 6", len(all))
	}
	evs, err = db.HistoryPrefix(ctx, views, "ns", "x/", r1, r3-1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := revs(evs), []int64{r2}; !slices.Equal(got, want) {
		t.Fatalf("between %d and %d: revisions %v, want %v", r1, r3-1, got, want)
	}
}
