package sqlite

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/leaselab/leaselab/store"
)

// TestGetFollowsWrites checks Get through every kind of write, with the object read from the
// database first and then kept from the writes.
func TestGetFollowsWrites(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	ctx := context.Background()
	k := leaseKey("ns", "a")
	if _, err := db.Get(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get before create: %v", err)
	}
	o := MustCreate(t, db, k, "v1")
	check := func(want store.Object) {
		t.Helper()
		for range 2 { // the first read may fill what the second finds
			got, err := db.Get(ctx, k)
			if err != nil || got.Revision != want.Revision || got.CreateRevision != want.CreateRevision || string(got.Value) != string(want.Value) {
				t.Fatalf("get = %+v, %v; want %+v", got, err, want)
			}
		}
	}
	check(o)
	o = MustUpdate(t, db, k, o.Revision, "v2")
	check(o)
	// A failed write leaves the stored state.
	if _, err := db.Update(ctx, k, o.Revision-1, []byte("stale")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale update: %v", err)
	}
	check(o)
	if _, err := db.Delete(ctx, k, o.Revision); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	check(MustCreate(t, db, k, "v3"))
}

// TestGetNeverGoesBack races readers with a writer: a Get never returns an older revision than
// a List read before it, nor than the reader's previous Get.
func TestGetNeverGoesBack(t *testing.T) {
	t.Parallel()
	db := MustOpen(t, testOptions())
	ctx := context.Background()
	k := leaseKey("ns", "a")
	o := MustCreate(t, db, k, "v")
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for range 300 {
			var err error
			if o, err = db.Update(ctx, k, o.Revision, []byte("v")); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 4 {
		wg.Go(func() {
			var last int64
			for {
				select {
				case <-done:
					return
				default:
				}
				res, err := db.List(ctx, store.ListOptions{Resource: leases, Namespace: "ns"})
				if err != nil || len(res.Objects) != 1 {
					t.Errorf("list: %+v, %v", res, err)
					return
				}
				listed := res.Objects[0].Revision
				got, err := db.Get(ctx, k)
				if err != nil {
					t.Error(err)
					return
				}
				if got.Revision < listed || got.Revision < last {
					t.Errorf("get returned revision %d after a list saw %d and a get %d", got.Revision, listed, last)
					return
				}
				last = got.Revision
			}
		})
	}
	wg.Wait()
}
