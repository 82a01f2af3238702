package views

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// Reader reads the views of each lease's candidates from the store's change log, keeping per
// lease what it read so far, so that each read only reads what is new.
type Reader struct {
	st       store.Interface
	lookback int64

	mu     sync.Mutex
	leases map[leaseKey]*leaseViews
}

type leaseKey struct{ namespace, lease string }

type leaseViews struct {
	mu  sync.Mutex
	rev int64
	// read is set once the log was read; covered is a revision up to which views holds every
	// view of the lease (a read began after it was committed, or Observe was given every
	// view up to it).
	read    bool
	covered int64
	views   []judge.View
}

// Bounds of what a Reader keeps.
const (
	maxViews  = 5000 // per lease
	maxLeases = 5000
)

// NewReader returns a reader whose first read of a lease looks back at most lookback
// revisions (of every object) in the change log: the screens show minutes, not a day.
func NewReader(st store.Interface, lookback int64) *Reader {
	return &Reader{st: st, lookback: lookback, leases: map[leaseKey]*leaseViews{}}
}

// Views returns the views recorded for the candidates of a lease, ordered by when each began.
func (r *Reader) Views(ctx context.Context, namespace, lease string) ([]judge.View, error) {
	return r.ViewsThrough(ctx, namespace, lease, 0)
}

// ViewsThrough is Views, reading the change log only when the reader may miss a view
// committed up to the revision through (committed before the call): when Observe was given
// every view of the lease up to it, the log is not read at all. through <= 0 reads whatever
// is new.
func (r *Reader) ViewsThrough(ctx context.Context, namespace, lease string, through int64) ([]judge.View, error) {
	k := leaseKey{namespace, lease}
	r.mu.Lock()
	lv := r.leases[k]
	if lv == nil {
		if len(r.leases) >= maxLeases {
			clear(r.leases)
		}
		lv = &leaseViews{}
		r.leases[k] = lv
	}
	r.mu.Unlock()

	lv.mu.Lock()
	defer lv.mu.Unlock()
	if through > 0 && lv.read && lv.covered >= through {
		return slices.Clone(lv.views), nil
	}
	if lv.rev == 0 {
		cur, _, err := r.st.Revision(ctx)
		if err != nil {
			return nil, fmt.Errorf("candidate views: %w", err)
		}
		lv.rev = max(0, cur-r.lookback)
	}
	evs, err := r.st.HistoryPrefix(ctx, Resource, namespace, lease+"/", lv.rev, 0)
	if err != nil {
		return nil, fmt.Errorf("candidate views: %w", err)
	}
	if len(evs) > 0 {
		for _, ev := range evs {
			if v, ok := viewOf(ev); ok {
				lv.views = append(lv.views, v)
			}
			lv.rev = ev.Object.Revision
		}
		slices.SortStableFunc(lv.views, compareViews)
		lv.views = trim(lv.views, maxViews)
	}
	lv.read = true
	lv.covered = max(lv.covered, lv.rev, through)
	return slices.Clone(lv.views), nil
}

// LeaseOf is the namespace and lease of a change of a view (of the resource Resource).
func LeaseOf(o store.Object) (namespace, lease string) {
	lease, _, _ = strings.Cut(o.Name, "/")
	return o.Namespace, lease
}

// Observe adds a change of a view that a watch of Resource delivered to what the reader
// holds for its lease, so that the next read need not fetch it from the change log. prev is
// the revision of the change of a view of the same lease the watch delivered before it, or
// the revision the watch started after: the watch saw none in between. A lease the reader
// does not reach prev for (or never read) is left to read the log.
func (r *Reader) Observe(ev store.Event, prev int64) {
	ns, lease := LeaseOf(ev.Object)
	r.mu.Lock()
	lv := r.leases[leaseKey{ns, lease}]
	r.mu.Unlock()
	if lv == nil {
		return
	}
	lv.mu.Lock()
	defer lv.mu.Unlock()
	rev := ev.Object.Revision
	if !lv.read || lv.covered < prev || rev <= lv.covered {
		return
	}
	if v, ok := viewOf(ev); ok {
		lv.views = append(lv.views, v)
		slices.SortStableFunc(lv.views, compareViews)
		lv.views = trim(lv.views, maxViews)
	}
	lv.rev, lv.covered = rev, rev
}

// Between reads, without the cache, the views recorded for a lease's candidates with a
// revision above after and at most through, ordered by when each began: for a past moment
// the cache may not reach.
func (r *Reader) Between(ctx context.Context, namespace, lease string, after, through int64) ([]judge.View, error) {
	evs, err := r.st.HistoryPrefix(ctx, Resource, namespace, lease+"/", after, through)
	if err != nil {
		return nil, fmt.Errorf("candidate views: %w", err)
	}
	var out []judge.View
	for _, ev := range evs {
		if v, ok := viewOf(ev); ok {
			out = append(out, v)
		}
	}
	slices.SortStableFunc(out, compareViews)
	return out, nil
}

// viewOf is the view a change records; a deletion is the candidate going away.
func viewOf(ev store.Event) (judge.View, bool) {
	rec, err := decode(ev.Object.Value)
	if err != nil {
		return judge.View{}, false
	}
	if ev.Type == store.Deleted {
		rec = Gone(rec.Identity, rec.Namespace, rec.Lease, rec.Source, ev.Time)
	}
	return rec.Dated(ev.Time).View(), true
}

// trim drops the oldest views beyond n, keeping every candidate's latest: what a candidate
// believes now must not be forgotten because others reported often.
func trim(views []judge.View, n int) []judge.View {
	if len(views) <= n {
		return views
	}
	latest := map[string]int{}
	for i, v := range views {
		latest[v.Identity] = i
	}
	drop := len(views) - n/2
	out := make([]judge.View, 0, n)
	for i, v := range views {
		if i >= drop || latest[v.Identity] == i {
			out = append(out, v)
		}
	}
	return out
}

// compareViews orders views by when they began, then by identity.
func compareViews(a, b judge.View) int {
	if c := a.At.Compare(b.At); c != 0 {
		return c
	}
	return cmp.Compare(a.Identity, b.Identity)
}
