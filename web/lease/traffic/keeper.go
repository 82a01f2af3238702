package traffic

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/leaselab/leaselab/store"
)

// Bounds of what a Keeper writes and holds.
const (
	// FlushEvery is how often the Keeper writes: each lease with new requests gets one change
	// in the log at most this often, whatever its traffic.
	FlushEvery = 2 * time.Second
	// MaxBatch bounds the requests of one batch. Beyond it the batch keeps the ends of the
	// requests already written in flight, then what did not end well or wrote, then the
	// newest: the stage draws a few seconds of a lease's requests, not hundreds a second.
	MaxBatch = 64
	// maxPending bounds the requests of one lease waiting for the next batch.
	maxPending = 4 * MaxBatch
	// maxLeases bounds the leases the Keeper follows; beyond it, a new lease's requests are
	// not kept until a lease goes quiet.
	maxLeases = 4096
	// maxWrites bounds the batches a flush has waiting for the store at once.
	maxWrites = 64
)

// Keeper writes the requests on leases to the store in batches. Add costs a request's path a
// short lock and a map write; the writes happen in the Keeper's own goroutine, every
// FlushEvery, the batches of all leases at once (the store commits writes that arrive together
// in one transaction).
type Keeper struct {
	ctx context.Context
	st  store.Interface
	log *slog.Logger
	now func() time.Time

	mu     sync.Mutex
	leases map[store.Key]*leaseRequests

	flushMu sync.Mutex // one flush at a time
	done    chan struct{}
}

// leaseRequests is what the Keeper holds of one lease.
type leaseRequests struct {
	// pending are the requests that began or changed since the last batch, by ID.
	pending map[string]Request
	// written is what the batches hold of each recent request, so that a request a candidate
	// reports again unchanged (each report carries its newest few) is not written twice.
	written map[string]Request
	// rev is the object's revision as last written here; 0 when unknown.
	rev int64
}

// NewKeeper returns a Keeper writing to st every FlushEvery until ctx ends; now is the
// server's clock. Flush writes at once.
func NewKeeper(ctx context.Context, st store.Interface, logger *slog.Logger, now func() time.Time) *Keeper {
	k := &Keeper{ctx: ctx, st: st, log: logger, now: now, leases: map[store.Key]*leaseRequests{}, done: make(chan struct{})}
	go k.run()
	return k
}

func (k *Keeper) run() {
	defer close(k.done)
	t := time.NewTicker(FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-k.ctx.Done():
			return
		case <-t.C:
			k.Flush(k.ctx)
		}
	}
}

// Done is closed when the Keeper has stopped writing, after its context ended.
func (k *Keeper) Done() <-chan struct{} { return k.done }

// Add keeps requests on the lease namespace/lease for the next batch: new ones, and new states
// of those already kept (a candidate's request that ended). It never waits for the store.
func (k *Keeper) Add(namespace, lease string, rs ...Request) {
	if len(rs) == 0 {
		return
	}
	key := Key(namespace, lease)
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.leases[key]
	if l == nil {
		if len(k.leases) >= maxLeases && !k.forgetQuietLocked() {
			return
		}
		l = &leaseRequests{pending: map[string]Request{}, written: map[string]Request{}}
		k.leases[key] = l
	}
	for _, r := range rs {
		if w, ok := l.written[r.ID]; ok && sameState(w, r) {
			continue
		}
		if p, ok := l.pending[r.ID]; (ok && sameState(p, r)) || (!ok && len(l.pending) >= maxPending) {
			continue
		}
		l.pending[r.ID] = r
	}
}

// sameState says whether two accounts of a request tell the same: each of a candidate's reports
// places its requests on the server's clock anew, a few milliseconds apart with the network's
// delay, and only a request that ended (or whose link changed) is news.
func sameState(a, b Request) bool {
	return a.Outcome == b.Outcome && (a.EndMs == 0) == (b.EndMs == 0) && a.Link == b.Link
}

// forgetQuietLocked forgets a lease with nothing waiting, and says whether it found one.
func (k *Keeper) forgetQuietLocked() bool {
	for key, l := range k.leases {
		if len(l.pending) == 0 {
			delete(k.leases, key)
			return true
		}
	}
	return false
}

// job is one batch to write.
type job struct {
	key   store.Key
	rev   int64
	batch Batch
}

// Flush writes a batch for every lease with requests waiting, all at once, and returns when
// they are written (or failed: a batch that could not be written is logged and dropped).
func (k *Keeper) Flush(ctx context.Context) {
	k.flushMu.Lock()
	defer k.flushMu.Unlock()
	jobs := k.take()
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxWrites)
	for _, j := range jobs {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			rev, err := k.write(ctx, j)
			if err != nil {
				if !errors.Is(err, store.ErrClosed) && ctx.Err() == nil {
					k.log.Warn("lease requests not recorded", slog.String("namespace", j.key.Namespace), slog.String("lease", j.key.Name), slog.Any("error", err))
				}
				rev = 0
			}
			k.mu.Lock()
			if l := k.leases[j.key]; l != nil {
				l.rev = rev
			}
			k.mu.Unlock()
		})
	}
	wg.Wait()
}

// take takes each lease's waiting requests as its batch, at most MaxBatch of them, and
// forgets what no later report can change.
func (k *Keeper) take() []job {
	k.mu.Lock()
	defer k.mu.Unlock()
	old := k.now().Add(-Lookback).UnixMilli()
	var jobs []job
	for key, l := range k.leases {
		for id, w := range l.written {
			if w.StartMs < old {
				delete(l.written, id)
			}
		}
		if len(l.pending) == 0 {
			if len(l.written) == 0 {
				delete(k.leases, key)
			}
			continue
		}
		b := l.chooseBatch()
		for _, r := range b.Requests {
			l.written[r.ID] = r
		}
		clear(l.pending)
		jobs = append(jobs, job{key: key, rev: l.rev, batch: b})
	}
	return jobs
}

// chooseBatch is the batch of l's waiting requests, oldest first: all of them, or beyond
// MaxBatch, those that matter most (see MaxBatch).
func (l *leaseRequests) chooseBatch() Batch {
	rs := make([]Request, 0, len(l.pending))
	for _, r := range l.pending {
		rs = append(rs, r)
	}
	if len(rs) > MaxBatch {
		rank := func(r Request) int {
			if _, ok := l.written[r.ID]; ok {
				return 0 // the end of a request written in flight: without it, it never ends
			}
			if r.Verb != "GET" || (r.Outcome != "" && !wentWell(r.Outcome)) {
				return 1
			}
			return 2
		}
		slices.SortFunc(rs, func(a, b Request) int {
			return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(b.StartMs, a.StartMs))
		})
		rs = rs[:MaxBatch]
	}
	slices.SortFunc(rs, func(a, b Request) int { return cmp.Or(cmp.Compare(a.StartMs, b.StartMs), cmp.Compare(a.ID, b.ID)) })
	return Batch{Requests: rs}
}

// wentWell says whether an outcome is a status code of success (2xx).
func wentWell(outcome string) bool {
	code, err := strconv.Atoi(outcome)
	return err == nil && code >= 200 && code < 300
}

// write stores j's batch as the next change of its lease's requests and returns the object's
// new revision.
func (k *Keeper) write(ctx context.Context, j job) (int64, error) {
	value, err := json.Marshal(j.batch)
	if err != nil {
		return 0, err
	}
	rev := j.rev
	for range 3 {
		var o store.Object
		if rev == 0 {
			o, err = k.st.Create(ctx, j.key, value)
		} else {
			o, err = k.st.Update(ctx, j.key, rev, value)
		}
		switch {
		case err == nil:
			return o.Revision, nil
		case errors.Is(err, store.ErrExists), errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
			// Written meanwhile by another server on the same file, or deleted: read where it is.
			cur, gerr := k.st.Get(ctx, j.key)
			switch {
			case errors.Is(gerr, store.ErrNotFound):
				rev = 0
			case gerr != nil:
				return 0, gerr
			default:
				rev = cur.Revision
			}
		default:
			return 0, err
		}
	}
	return 0, err
}
