package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/leaselab/leaselab/store"
)

func keysOf(objs []store.Object) []string {
	var s []string
	for _, o := range objs {
		s = append(s, o.Namespace+"/"+o.Name)
	}
	return s
}

func TestListNamespacesAndOrder(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	for _, k := range []store.Key{
		leaseKey("b", "z"), leaseKey("a", "y"), leaseKey("b", "a"), leaseKey("a", "b"), leaseKey("c", "c"),
		{Resource: candidates, Namespace: "a", Name: "other"},
	} {
		MustCreate(t, db, k, k.Name)
	}
	res := MustList(t, db, store.ListOptions{Resource: leases})
	if got := strings.Join(keysOf(res.Objects), " "); got != "a/b a/y b/a b/z c/c" {
		t.Fatalf("all namespaces: %s", got)
	}
	if res.Revision != 6 || res.More || res.Remaining != 0 {
		t.Fatalf("result %+v", res)
	}
	res = MustList(t, db, store.ListOptions{Resource: leases, Namespace: "b"})
	if got := strings.Join(keysOf(res.Objects), " "); got != "b/a b/z" {
		t.Fatalf("namespace b: %s", got)
	}
	res = MustList(t, db, store.ListOptions{Resource: candidates})
	if got := strings.Join(keysOf(res.Objects), " "); got != "a/other" {
		t.Fatalf("candidates: %s", got)
	}
	if o := res.Objects[0]; o.Resource != candidates || o.Revision != 6 || o.CreateRevision != 6 || string(o.Value) != "other" {
		t.Fatalf("object %+v", o)
	}
	res = MustList(t, db, store.ListOptions{Resource: "nothing"})
	if len(res.Objects) != 0 || res.More || res.Revision != 6 {
		t.Fatalf("empty list %+v", res)
	}
}

func TestListPaging(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	for i := range 10 {
		MustCreate(t, db, leaseKey("ns"+string(rune('0'+i%2)), name(i)), "v")
	}
	// ns0: 0 2 4 6 8, ns1: 1 3 5 7 9.
	res := MustList(t, db, store.ListOptions{Resource: leases, Limit: 3})
	if got := strings.Join(keysOf(res.Objects), " "); got != "ns0/lease-0000 ns0/lease-0002 ns0/lease-0004" || !res.More || res.Remaining != 7 {
		t.Fatalf("page 1: %s %+v", got, res)
	}
	res = MustList(t, db, store.ListOptions{Resource: leases, Limit: 3, After: res.Objects[2].Key})
	if got := strings.Join(keysOf(res.Objects), " "); got != "ns0/lease-0006 ns0/lease-0008 ns1/lease-0001" || !res.More || res.Remaining != 4 {
		t.Fatalf("page 2: %s %+v", got, res)
	}
	res = MustList(t, db, store.ListOptions{Resource: leases, Limit: 4, After: res.Objects[2].Key})
	if got := strings.Join(keysOf(res.Objects), " "); got != "ns1/lease-0003 ns1/lease-0005 ns1/lease-0007 ns1/lease-0009" || res.More || res.Remaining != 0 {
		t.Fatalf("last page: %s %+v", got, res)
	}
	// After a key that does not exist, within one namespace.
	res = MustList(t, db, store.ListOptions{Resource: leases, Namespace: "ns1", Limit: 2, After: leaseKey("ns1", "lease-0004")})
	if got := strings.Join(keysOf(res.Objects), " "); got != "ns1/lease-0005 ns1/lease-0007" || !res.More || res.Remaining != 1 {
		t.Fatalf("after missing key: %s %+v", got, res)
	}
	// After the last key.
	res = MustList(t, db, store.ListOptions{Resource: leases, After: leaseKey("ns1", "lease-0009")})
	if len(res.Objects) != 0 || res.More {
		t.Fatalf("after last: %+v", res)
	}
	// A limit equal to the count.
	res = MustList(t, db, store.ListOptions{Resource: leases, Limit: 10})
	if len(res.Objects) != 10 || res.More || res.Remaining != 0 {
		t.Fatalf("limit = count: %d %+v", len(res.Objects), res)
	}
}

func TestListMatch(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	keys := make([]store.Key, 1000)
	for i := range keys {
		keys[i] = leaseKey("ns", name(i))
	}
	MustCreateMany(t, db, keys, "v")
	// Every 100th object matches: pages need many chunks to fill.
	calls := 0
	match := func(o store.Object) bool {
		calls++
		return strings.HasSuffix(o.Name, "00")
	}
	opts := store.ListOptions{Resource: leases, Limit: 3, Match: match}
	var got []string
	for page := 0; ; page++ {
		res := MustList(t, db, opts)
		if res.Remaining != 0 {
			t.Fatalf("remaining %d with Match", res.Remaining)
		}
		if len(res.Objects) > 3 {
			t.Fatalf("page of %d", len(res.Objects))
		}
		got = append(got, keysOf(res.Objects)...)
		if !res.More {
			if page != 3 {
				t.Fatalf("%d pages, want 4", page+1)
			}
			break
		}
		opts.After = res.Objects[len(res.Objects)-1].Key
	}
	if len(got) != 10 || got[0] != "ns/lease-0000" || got[9] != "ns/lease-0900" {
		t.Fatalf("matched %v", got)
	}
	// The last matching object ends the page: More is false only when nothing after matches.
	res := MustList(t, db, store.ListOptions{Resource: leases, Limit: 10, Match: match})
	if len(res.Objects) != 10 || res.More {
		t.Fatalf("exact page: %d more=%v", len(res.Objects), res.More)
	}
	res = MustList(t, db, store.ListOptions{Resource: leases, Limit: 9, Match: match})
	if len(res.Objects) != 9 || !res.More {
		t.Fatalf("page of 9: %d more=%v", len(res.Objects), res.More)
	}
	// Without a limit.
	res = MustList(t, db, store.ListOptions{Resource: leases, Match: match})
	if len(res.Objects) != 10 || res.More {
		t.Fatalf("no limit: %d more=%v", len(res.Objects), res.More)
	}
}

func TestListAtRevision(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	ctx := context.Background()
	a := MustCreate(t, db, leaseKey("ns", "a"), "a1")
	b := MustCreate(t, db, leaseKey("ns", "b"), "b1")
	c := MustCreate(t, db, leaseKey("other", "c"), "c1")
	r1, _ := MustRevision(t, db)

	MustUpdate(t, db, a.Key, a.Revision, "a2")
	MustDelete(t, db, b.Key, 0)
	MustCreate(t, db, leaseKey("ns", "0-new"), "new")
	MustDelete(t, db, c.Key, 0)
	MustCreate(t, db, c.Key, "c2") // recreated

	res := MustList(t, db, store.ListOptions{Resource: leases, Revision: r1})
	if got := strings.Join(keysOf(res.Objects), " "); got != "ns/a ns/b other/c" || res.Revision != r1 {
		t.Fatalf("at %d: %s (revision %d)", r1, got, res.Revision)
	}
	for i, want := range []store.Object{a, b, c} {
		if o := res.Objects[i]; o.Revision != want.Revision || o.CreateRevision != want.CreateRevision || string(o.Value) != string(want.Value) {
			t.Fatalf("at %d: %+v, want %+v", r1, o, want)
		}
	}
	// Continue pages at the same revision, with a namespace, a limit and Remaining.
	res = MustList(t, db, store.ListOptions{Resource: leases, Revision: r1, Limit: 1, After: a.Key})
	if got := strings.Join(keysOf(res.Objects), " "); got != "ns/b" || !res.More || res.Remaining != 1 {
		t.Fatalf("page at %d: %s %+v", r1, got, res)
	}
	res = MustList(t, db, store.ListOptions{Resource: leases, Revision: r1, Namespace: "other"})
	if got := strings.Join(keysOf(res.Objects), " "); got != "other/c" || res.Objects[0].Value == nil || string(res.Objects[0].Value) != "c1" {
		t.Fatalf("namespace at %d: %s", r1, got)
	}

	cur, _ := MustRevision(t, db)
	res = MustList(t, db, store.ListOptions{Resource: leases, Revision: cur})
	if got := strings.Join(keysOf(res.Objects), " "); got != "ns/0-new ns/a other/c" || res.Revision != cur {
		t.Fatalf("at current: %s", got)
	}
	res = MustList(t, db, store.ListOptions{Resource: leases, Revision: cur - 1})
	if got := strings.Join(keysOf(res.Objects), " "); got != "ns/0-new ns/a" {
		t.Fatalf("at %d: %s", cur-1, got)
	}

	if _, err := db.List(ctx, store.ListOptions{Resource: leases, Revision: cur + 1}); !errors.Is(err, store.ErrFutureRevision) {
		t.Fatalf("future: %v", err)
	}
	db.opts.CompactKeep = 2
	if _, err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := db.List(ctx, store.ListOptions{Resource: leases, Revision: r1})
	var ce *store.CompactedError
	if !errors.As(err, &ce) || !errors.Is(err, store.ErrCompacted) || ce.Requested != r1 || ce.Compacted != cur-2 {
		t.Fatalf("compacted: %v %+v", err, ce)
	}
	checkListAt(t, db, modelOf(t, db, leases), leases, cur-2, 0)
}

// modelOf builds a model from the change log of a store that was never compacted below the
// revisions it is asked about.
func modelOf(t *testing.T, db *DB, resource string) *model {
	t.Helper()
	m := newModel()
	rows, err := db.rdb.Query(`SELECT rev, namespace, name, type, create_rev, value FROM changes WHERE resource = ? ORDER BY rev`, resource)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		o := store.Object{Key: store.Key{Resource: resource}}
		var typ int
		if err := rows.Scan(&o.Revision, &o.Namespace, &o.Name, &typ, &o.CreateRevision, &o.Value); err != nil {
			t.Fatal(err)
		}
		m.apply(store.EventType(typ), o)
	}
	return m
}

// TestListAtRevisionRandom compares lists at every revision, whole and in pages, with a model,
// before and after compaction.
func TestListAtRevisionRandom(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	ctx := context.Background()
	// Eight writers on disjoint keys, so that writes share commits and never conflict.
	type change struct {
		typ store.EventType
		obj store.Object
	}
	var (
		mu      sync.Mutex
		changes []change
		wg      sync.WaitGroup
	)
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(1, uint64(g)))
			for i := range 40 {
				k := leaseKey([]string{"a", "b", "c"}[rng.IntN(3)], fmt.Sprintf("g%d-%02d", g, rng.IntN(6)))
				if rng.IntN(8) == 0 { // changes of another resource interleave
					k.Resource = candidates
				}
				value := []byte(name(i))
				cur, err := db.Get(ctx, k)
				var obj store.Object
				typ := store.Added
				switch {
				case errors.Is(err, store.ErrNotFound):
					obj, err = db.Create(ctx, k, value)
				case rng.IntN(4) == 0:
					typ = store.Deleted
					obj, err = db.Delete(ctx, k, cur.Revision)
				default:
					typ = store.Modified
					obj, err = db.Update(ctx, k, cur.Revision, value)
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				changes = append(changes, change{typ, obj})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].obj.Revision < changes[j].obj.Revision })
	m := newModel()
	for _, c := range changes {
		if c.obj.Resource == leases {
			m.apply(c.typ, c.obj)
		}
	}
	cur, _ := MustRevision(t, db)
	// Every fourth revision (SQLite is slow under the race detector), whole and in pages.
	for rev := int64(1); rev <= cur; rev += 4 {
		checkListAt(t, db, m, leases, rev, 0)
		if rev%20 == 1 {
			checkListAt(t, db, m, leases, rev, 4)
		}
	}
	checkListAt(t, db, m, leases, cur, 1)

	db.opts.CompactKeep = 120
	n, err := db.Compact(ctx)
	if err != nil || n == 0 {
		t.Fatalf("compact: %d %v", n, err)
	}
	_, compacted := MustRevision(t, db)
	if compacted != cur-120 {
		t.Fatalf("compacted %d, want %d", compacted, cur-120)
	}
	for rev := compacted; rev <= cur; rev += 3 {
		checkListAt(t, db, m, leases, rev, 0)
		if rev%15 == 0 {
			checkListAt(t, db, m, leases, rev, 3)
		}
	}
}
