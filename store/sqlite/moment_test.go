package sqlite

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
)

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// TestRevisionAt: the revision of a moment is the last one committed at or before it; a
// moment before any change is revision 0, and listing at a moment's revision shows the objects
// as they were then.
func TestRevisionAt(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1700000000, 0)
	clock := &testClock{now: t0}
	db := MustOpen(t, Options{CompactInterval: -1, Now: clock.Now})
	ctx := context.Background()
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

	a, b := leaseKey("ns", "a"), leaseKey("ns", "b")
	clock.set(sec(1))
	oa := MustCreate(t, db, a, "a1") // 1
	clock.set(sec(2))
	oa = MustUpdate(t, db, a, oa.Revision, "a2") // 2
	MustCreate(t, db, b, "b1")                   // 3, in the same instant
	clock.set(sec(5))
	MustDelete(t, db, a, oa.Revision) // 4

	for _, tc := range []struct {
		at   float64
		want int64
	}{
		{0, 0}, {0.999, 0}, {1, 1}, {1.5, 1}, {2, 3}, {4.999, 3}, {5, 4}, {3600, 4},
	} {
		got, err := db.RevisionAt(ctx, sec(tc.at))
		if err != nil || got != tc.want {
			t.Errorf("RevisionAt(%vs) = %d, %v; want %d", tc.at, got, err, tc.want)
		}
	}
	rev, _ := db.RevisionAt(ctx, sec(1.5))
	if res := MustList(t, db, store.ListOptions{Resource: leases, Revision: rev}); len(res.Objects) != 1 || string(res.Objects[0].Value) != "a1" {
		t.Errorf("list at 1.5 s: %+v", res.Objects)
	}
}

// TestRevisionAtManyChanges finds each moment's revision among many changes (the search
// halves the log), gaps in the revisions included.
func TestRevisionAtManyChanges(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1700000000, 0)
	clock := &testClock{now: t0}
	db := MustOpen(t, Options{CompactInterval: -1, Now: clock.Now})
	ctx := context.Background()
	k := leaseKey("ns", "a")
	var revs []int64
	o := MustCreate(t, db, k, "v")
	revs = append(revs, o.Revision)
	for i := 1; i < 300; i++ {
		clock.set(t0.Add(time.Duration(i) * time.Second))
		o = MustUpdate(t, db, k, o.Revision, "v")
		revs = append(revs, o.Revision)
	}
	for i, want := range revs {
		for _, d := range []time.Duration{0, 999 * time.Millisecond} {
			at := t0.Add(time.Duration(i)*time.Second + d)
			if got, err := db.RevisionAt(ctx, at); err != nil || got != want {
				t.Fatalf("RevisionAt(%v) = %d, %v; want %d", at.Sub(t0), got, err, want)
			}
		}
	}
}

// TestRevisionAtCompacted: a moment whose revision was compacted away is a *CompactedError;
// the compacted revision's own moment and later ones are still known.
func TestRevisionAtCompacted(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1700000000, 0)
	clock := &testClock{now: t0}
	db := MustOpen(t, Options{CompactInterval: -1, CompactKeep: 2, Now: clock.Now})
	ctx := context.Background()
	k := leaseKey("ns", "a")
	o := MustCreate(t, db, k, "v")
	for i := 1; i < 5; i++ {
		clock.set(t0.Add(time.Duration(i) * time.Second))
		o = MustUpdate(t, db, k, o.Revision, "v")
	}
	if _, err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	_, compacted := MustRevision(t, db)
	if compacted != 3 {
		t.Fatalf("compacted to %d, want 3", compacted)
	}
	var ce *store.CompactedError
	if _, err := db.RevisionAt(ctx, t0.Add(1500*time.Millisecond)); !errors.As(err, &ce) || ce.Compacted != 3 || !errors.Is(err, store.ErrCompacted) {
		t.Errorf("RevisionAt(1.5 s) after compaction: %v", err)
	}
	for _, tc := range []struct {
		at   time.Duration
		want int64
	}{{2 * time.Second, 3}, {3 * time.Second, 4}, {time.Hour, 5}} {
		if got, err := db.RevisionAt(ctx, t0.Add(tc.at)); err != nil || got != tc.want {
			t.Errorf("RevisionAt(%v) = %d, %v; want %d", tc.at, got, err, tc.want)
		}
	}
}
