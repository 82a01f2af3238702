package views

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

// Recorder writes candidates' views to the store: a change of note (role, belief, observed
// holder, faults, kind of decision) is one change in the log; reports that change nothing of
// note (a renewal's new time) write nothing.
type Recorder struct {
	ctx context.Context
	st  store.Interface
	log *slog.Logger

	mu   sync.Mutex
	last map[store.Key]written
}

// written is what the recorder last wrote for a candidate.
type written struct {
	rev  int64
	note notable
	role string
	at   int64 // the view's AtMs
}

// NewRecorder returns a recorder writing to st until ctx ends.
func NewRecorder(ctx context.Context, st store.Interface, logger *slog.Logger) *Recorder {
	return &Recorder{ctx: ctx, st: st, log: logger, last: map[store.Key]written{}}
}

func key(namespace, lease, identity string) store.Key {
	return store.Key{Resource: Resource, Namespace: namespace, Name: Name(lease, identity)}
}

// Report records what a candidate reported (a cleaned tabproto.Report) at received, on the
// server's clock, if it changed anything of note.
func (r *Recorder) Report(rep tabproto.Report, source string, received time.Time) {
	r.ReportBy("", rep, source, received)
}

// ReportBy is Report for a candidate that owner runs (the signed-in user who opened the tab):
// the view keeps who, for the screens of a past moment.
func (r *Recorder) ReportBy(owner string, rep tabproto.Report, source string, received time.Time) {
	if rep.Identity == "" || rep.Namespace == "" || rep.Lease == "" {
		return
	}
	k := key(rep.Namespace, rep.Lease, rep.Identity)
	r.mu.Lock()
	prev, seen := r.last[k]
	r.mu.Unlock()
	rec := FromReport(rep, source, received, prev.role)
	rec.Owner = owner
	if seen && prev.note == rec.notable() {
		return
	}
	// A role change dated back never goes before the candidate's previous view: the judge reads
	// a candidate's views in the order of their dates, and the last one is what it believes now.
	rec.AtMs = max(rec.AtMs, prev.at)
	r.write(k, prev.rev, rec)
}

// write stores rec under k, last written here at revision rev.
func (r *Recorder) write(k store.Key, rev int64, rec Record) {
	value, err := json.Marshal(rec)
	if err != nil {
		r.log.Error("candidate view: encode", slog.Any("error", err))
		return
	}
	o, err := r.put(k, rev, value)
	if err != nil {
		if !errors.Is(err, store.ErrClosed) && r.ctx.Err() == nil {
			r.log.Warn("candidate view not recorded", slog.String("identity", rec.Identity), slog.Any("error", err))
		}
		return
	}
	r.mu.Lock()
	r.last[k] = written{rev: o.Revision, note: rec.notable(), role: rec.Role, at: rec.AtMs}
	r.mu.Unlock()
}

// put writes value under k, whose revision was rev when last written here (0: unknown). Two
// tabs of one identity share k: on a conflict the write goes over the newer state.
func (r *Recorder) put(k store.Key, rev int64, value []byte) (store.Object, error) {
	for range 3 {
		if rev == 0 {
			o, err := r.st.Create(r.ctx, k, value)
			if !errors.Is(err, store.ErrExists) {
				return o, err
			}
			cur, err := r.st.Get(r.ctx, k)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return store.Object{}, err
			}
			rev = cur.Revision
			continue
		}
		o, err := r.st.Update(r.ctx, k, rev, value)
		switch {
		case errors.Is(err, store.ErrNotFound):
			rev = 0
		case errors.Is(err, store.ErrConflict):
			cur, err := r.st.Get(r.ctx, k)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return store.Object{}, err
			}
			rev = cur.Revision
		default:
			return o, err
		}
	}
	return store.Object{}, store.ErrConflict
}

// Gone records that a candidate went away at at (its tab closed): a stopped view. The
// object stays, holding the candidate's last view, until compaction has nothing else to keep.
func (r *Recorder) Gone(identity, namespace, lease, source string, at time.Time) {
	if identity == "" || namespace == "" || lease == "" {
		return
	}
	k := key(namespace, lease, identity)
	r.mu.Lock()
	prev, seen := r.last[k]
	r.mu.Unlock()
	rec := Gone(identity, namespace, lease, source, at)
	if seen && prev.note == rec.notable() {
		return
	}
	r.write(k, prev.rev, rec)
}

// Clear deletes every view recorded in namespace, and forgets what it wrote there: a lesson's
// run that has been stopped leaves nothing behind on the screens (the change log keeps them for
// its recording until compaction).
func (r *Recorder) Clear(ctx context.Context, namespace string) error {
	r.mu.Lock()
	for k := range r.last {
		if k.Namespace == namespace {
			delete(r.last, k)
		}
	}
	r.mu.Unlock()
	res, err := r.st.List(ctx, store.ListOptions{Resource: Resource, Namespace: namespace})
	if err != nil {
		return err
	}
	for _, o := range res.Objects {
		if _, err := r.st.Delete(ctx, o.Key, o.Revision); err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return nil
}
