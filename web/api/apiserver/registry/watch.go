package registry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/leaselab/leaselab/store"
)

// Event is one event of a watch of one kind's objects.
type Event struct {
	Type watch.EventType
	// Revision is the revision of the change, or for a BOOKMARK the revision up to which the
	// watch has delivered every change.
	Revision int64
	// InitialEnd marks the BOOKMARK that ends the initial events of a watch-list.
	InitialEnd bool
	// Err is the API error an ERROR event reports; the watch ends after it.
	Err error
	// change is the stored change of an event that passes it on as it is (no selector turned
	// it into another type), when shared is set: its frames depend only on the change, so
	// watchers share them. It is held by value: a copy on the watch's channel costs less than
	// an allocation per watcher and event.
	change store.Object
	shared bool
	// obj is the storage-version object of any other ADDED, MODIFIED or DELETED event.
	obj runtime.Object
}

// Watcher is a running watch, as the registry hands it to the watch handler.
type Watcher interface {
	// Serve hands every event to emit, in the calling goroutine, until the watch ends or emit
	// fails. more says that another event is ready to follow at once: a writer can leave
	// making its writes visible (a flush) to the last of them. Serving in the caller's
	// goroutine saves a goroutine hand-off per event and watcher; a watcher too slow to keep
	// up is still ended by the store when its queue there overflows.
	Serve(emit func(ev Event, more bool) error)
	// Stop ends the watch and lets go of the store. It may be called without Serve.
	Stop()
}

// EventObject returns the storage-version object of an ADDED, MODIFIED or DELETED event; the
// caller owns it.
func (ks *Store) EventObject(ev Event) (runtime.Object, error) {
	if ev.shared {
		return ks.decode(ev.change)
	}
	return ev.obj, nil
}

// Watch starts a watch of the kind's objects in namespace (all when empty) that match opts,
// with the real server's rules for where it starts: initial events (a list) for a
// resourceVersion of "" or "0" unless sendInitialEvents says otherwise, else the changes after
// resourceVersion. Bookmarks follow allowWatchBookmarks: one every BookmarkInterval while idle,
// and a last one shortly before ctx's deadline. A start below the compacted revision is a watch
// that reports 410 Expired as its one event. Watch returns a 500 for an unparsable
// resourceVersion, a 504 when the store does not reach it in time, and the store's errors.
func (ks *Store) Watch(ctx context.Context, namespace string, opts *metainternalversion.ListOptions) (Watcher, error) {
	rv, err := strconv.ParseUint(orZero(opts.ResourceVersion), 10, 63)
	if err != nil {
		// The real server answers an unparsable watch resourceVersion with a 500.
		return nil, InternalError(fmt.Sprintf("resourceVersion: Invalid value: %q: %v", opts.ResourceVersion, err))
	}
	sendInitial := opts.ResourceVersion == "" || opts.ResourceVersion == "0"
	if opts.SendInitialEvents != nil {
		sendInitial = *opts.SendInitialEvents
	}
	w := &storeWatch{
		ks:              ks,
		m:               ks.newMatcher(opts),
		initialBookmark: opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.AllowWatchBookmarks,
		bookmarks:       opts.AllowWatchBookmarks,
	}
	gr := ks.kind.GroupResource()
	switch {
	case sendInitial:
		if err := ks.r.waitForRevision(ctx, gr, int64(rv)); err != nil {
			return nil, err
		}
		res, err := ks.r.store.List(ctx, store.ListOptions{Resource: ks.kind.StorageResource(), Namespace: namespace, Match: w.m.matches})
		if w.m.err != nil {
			return nil, w.m.err
		}
		if err != nil {
			return nil, storeError(err, gr, "")
		}
		for _, o := range res.Objects {
			obj, err := w.m.object(o)
			if err != nil {
				return nil, err
			}
			w.initial = append(w.initial, obj)
		}
		w.after = res.Revision
	case rv == 0:
		cur, _, err := ks.r.store.Revision(ctx)
		if err != nil {
			return nil, storeError(err, gr, "")
		}
		w.after = cur
	default:
		w.after = int64(rv)
	}

	w.ctx, w.cancel = context.WithCancel(ctx)
	sw, err := ks.r.store.Watch(w.ctx, store.WatchOptions{Resource: ks.kind.StorageResource(), Namespace: namespace, After: w.after})
	if err != nil && !errors.Is(err, store.ErrCompacted) {
		w.cancel()
		return nil, storeError(err, gr, "")
	}
	w.sw, w.startErr = sw, err
	return w, nil
}

// storeWatch turns a store watch into the events of one watch request.
type storeWatch struct {
	ks       *Store
	m        *matcher
	ctx      context.Context
	cancel   context.CancelFunc
	sw       store.Watch // nil when the store refused to start (startErr)
	startErr error
	emit     func(Event, bool) error

	initial         []runtime.Object // the initial events' objects
	after           int64            // the revision the changes start after
	initialBookmark bool
	bookmarks       bool
}

func (w *storeWatch) Serve(emit func(Event, bool) error) {
	w.emit = emit
	w.run(w.ctx, w.sw, w.startErr)
}

func (w *storeWatch) Stop() {
	w.cancel()
	if w.sw != nil {
		w.sw.Close()
	}
}

// send hands ev to the watch server; false when the watch is over.
func (w *storeWatch) send(ctx context.Context, ev Event, more bool) bool {
	if ctx.Err() != nil {
		return false
	}
	return w.emit(ev, more) == nil
}

// run delivers the initial events, then the store's changes and the bookmarks, until ctx is
// done, the store watch ends or the watch server fails. startErr is the store's refusal to
// start (compacted).
func (w *storeWatch) run(ctx context.Context, sw store.Watch, startErr error) {
	if sw != nil {
		defer sw.Close()
	}
	if startErr != nil {
		w.send(ctx, Event{Type: watch.Error, Err: storeError(startErr, w.ks.kind.GroupResource(), "")}, false)
		return
	}
	for i, obj := range w.initial {
		if !w.send(ctx, Event{Type: watch.Added, obj: obj}, i < len(w.initial)-1 || w.initialBookmark) {
			return
		}
	}
	w.initial = nil
	if w.initialBookmark && !w.send(ctx, Event{Type: watch.Bookmark, Revision: w.after, InitialEnd: true}, false) {
		return
	}
	w.changes(ctx, sw)
}

// changes passes on the store's changes through the selectors, with bookmarks while idle.
func (w *storeWatch) changes(ctx context.Context, sw store.Watch) {
	var ticks <-chan time.Time
	if w.bookmarks {
		t := time.NewTicker(w.ks.r.opts.BookmarkInterval)
		defer t.Stop()
		ticks = t.C
	}
	// The real server sends a last bookmark shortly before a watch times out, so that the
	// client can resume from it without a relist.
	var lastCall <-chan time.Time
	if deadline, ok := ctx.Deadline(); ok && w.bookmarks && time.Until(deadline) > 4*time.Second {
		t := time.NewTimer(time.Until(deadline) - 2*time.Second)
		defer t.Stop()
		lastCall = t.C
	}
	lastSent := w.after
	events := sw.Events()
	for {
		var (
			ev store.Event
			ok bool
		)
		if ticks == nil {
			// Only events to wait for: the store closes Events when ctx is done, and a plain
			// receive costs less than a select for each event of a busy watch.
			ev, ok = <-events
		} else {
			select {
			case <-ctx.Done():
				return
			case ev, ok = <-events:
			case <-ticks:
				if p := sw.Progress(); p > lastSent && len(events) == 0 {
					if !w.send(ctx, Event{Type: watch.Bookmark, Revision: p}, false) {
						return
					}
					lastSent = p
				}
				continue
			case <-lastCall:
				if p := sw.Progress(); p >= lastSent && len(events) == 0 {
					if !w.send(ctx, Event{Type: watch.Bookmark, Revision: p}, false) {
						return
					}
					lastSent = p
				}
				continue
			}
		}
		if !ok {
			if err := sw.Err(); err != nil && (errors.Is(err, store.ErrCompacted) || errors.Is(err, store.ErrDamaged)) {
				w.send(ctx, Event{Type: watch.Error, Err: storeError(err, w.ks.kind.GroupResource(), "")}, false)
			}
			return
		}
		out, pass, err := w.filter(ev)
		if err != nil {
			return
		}
		if pass && !w.send(ctx, out, len(events) > 0) {
			return
		}
		lastSent = ev.Object.Revision
	}
}

var eventTypes = map[store.EventType]watch.EventType{
	store.Added:    watch.Added,
	store.Modified: watch.Modified,
	store.Deleted:  watch.Deleted,
}

// filter passes one store event through the selectors, turning moves into and out of the
// selection into ADDED and DELETED as the real server does; pass is false for an event the
// watch does not see.
func (w *storeWatch) filter(ev store.Event) (out Event, pass bool, err error) {
	out.Revision = ev.Object.Revision
	if w.m.everything() {
		out.Type, out.change, out.shared = eventTypes[ev.Type], ev.Object, true
		return out, true, nil
	}
	obj, err := w.ks.decode(ev.Object)
	if err != nil {
		return out, false, err
	}
	cur := w.m.matchesObject(obj)
	prev := false
	if ev.Prev != nil && ev.Type == store.Modified {
		if p, err := w.ks.decode(*ev.Prev); err == nil {
			prev = w.m.matchesObject(p)
		}
	}
	out.obj = obj
	switch ev.Type {
	case store.Added:
		out.Type = watch.Added
		return out, cur, nil
	case store.Deleted:
		out.Type = watch.Deleted
		return out, cur, nil
	}
	switch {
	case cur && prev:
		out.Type = watch.Modified
	case cur:
		out.Type = watch.Added
	case prev:
		// Moved out of the selection: the previous content with the new revision.
		p, _ := w.ks.decode(*ev.Prev)
		acc, _ := meta.Accessor(p)
		acc.SetResourceVersion(strconv.FormatInt(ev.Object.Revision, 10))
		out.obj, out.Type = p, watch.Deleted
	default:
		return out, false, nil
	}
	return out, true, nil
}

// Shared reports whether the event is a stored change passed on as it is: its encoding in a
// format and version is the same for every watcher of the kind that asked for no conversion.
func (e Event) Shared() bool { return e.shared }

func orZero(rv string) string {
	if rv == "" {
		return "0"
	}
	return rv
}
