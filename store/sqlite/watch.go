package sqlite

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/leaselab/leaselab/store"
)

// backfillChunk is how many changes a watch reads from the log per query while it catches up.
const backfillChunk = 512

// eventBuffer is how many events a watch's Events channel holds: a reader that finds more
// ready can send them on together (one write to its client instead of one per event). Each
// slot takes about 140 bytes of every open watch, and 16 batch as well as 64 did: at 10,000
// watchers, 64 cost the server 80 MiB more (BENCHMARKS.md, "Decisions").
const eventBuffer = 16

// Watch starts a watch of one resource (and namespace, when set) that receives every change
// with a revision above opts.After, in revision order, without gaps or duplicates. It returns a
// *store.CompactedError when opts.After is below the compacted revision, store.ErrClosed after
// Close, or an error of the database.
//
// The watch subscribes to the live events first and then reads the log from opts.After, so that
// no change falls between the two; live events the log already gave are dropped. The events'
// Value slices are shared between watches and must not be modified.
func (db *DB) Watch(ctx context.Context, opts store.WatchOptions) (store.Watch, error) {
	if opts.Resource == "" {
		return nil, errors.New("watch: resource is required")
	}
	if db.closed.Load() {
		return nil, store.ErrClosed
	}
	if err := db.Damaged(); err != nil {
		return nil, err
	}
	opts.After = max(opts.After, 0)
	w := &watch{
		hub:    db.hub,
		opts:   opts,
		events: make(chan store.Event, eventBuffer),
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	w.ctx, w.cancel = context.WithCancel(ctx)
	w.progress.Store(opts.After)
	if !db.hub.subscribe(w) {
		w.cancel()
		return nil, store.ErrClosed
	}
	// The first chunk is read here so that a compacted revision is an error of Watch itself.
	first, current, err := db.readChanges(w.ctx, opts, opts.After, backfillChunk)
	if err != nil {
		w.end(nil)
		w.finish()
		var ce *store.CompactedError
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, db.readErr("watch", err)
	}
	db.logger.LogAttrs(ctx, slog.LevelDebug, "watch started", slog.String(logKeyResource, opts.Resource),
		slog.String(logKeyNamespace, opts.Namespace), slog.Int64(logKeyAfter, opts.After))
	go w.run(db, first, current)
	return w, nil
}

// hub fans committed events out to the running watches. Publishing never blocks: each watch
// has a bounded queue and is ended with store.ErrWatcherTooSlow when it would overflow.
type hub struct {
	queue int

	mu      sync.RWMutex
	watches map[*watch]struct{}
	closed  bool
}

func newHub(queue int) *hub {
	return &hub{queue: queue, watches: make(map[*watch]struct{})}
}

// subscribe adds w; false when the hub is closed.
func (h *hub) subscribe(w *watch) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.watches[w] = struct{}{}
	return true
}

func (h *hub) unsubscribe(w *watch) {
	h.mu.Lock()
	delete(h.watches, w)
	h.mu.Unlock()
}

// publish offers one committed batch, in revision order, to every watch.
func (h *hub) publish(events []store.Event) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for w := range h.watches {
		w.offer(events, h.queue)
	}
}

// endAll ends every running watch with err, and returns them; new watches may start unless
// closing, which closes the hub first.
func (h *hub) endAll(err error, closing bool) []*watch {
	h.mu.Lock()
	h.closed = h.closed || closing
	ws := make([]*watch, 0, len(h.watches))
	for w := range h.watches {
		ws = append(ws, w)
	}
	h.mu.Unlock()
	for _, w := range ws {
		w.end(err)
	}
	return ws
}

// close ends every watch with a nil Err and waits until their Events channels are closed.
func (h *hub) close() {
	for _, w := range h.endAll(nil, true) {
		<-w.done
	}
}

// watch is one running watch. Its goroutine (run) first sends the backfill read from the log,
// then the live events the hub queued in pending.
type watch struct {
	hub    *hub
	opts   store.WatchOptions
	events chan store.Event
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{} // one token: pending has events
	done   chan struct{} // closed when events is closed

	progress atomic.Int64

	mu      sync.Mutex
	pending []store.Event
	head    int64 // revision of the last batch offered
	idle    bool  // run has sent everything and waits for pending
	// sent is, while idle, the revision of the last event on Events: the backfill may have
	// read changes whose live events are yet to come, and handOff drops those.
	sent  int64
	ended bool
	err   error
}

var _ store.Watch = (*watch)(nil)

// Events returns the channel of events, closed when the watch ends.
func (w *watch) Events() <-chan store.Event { return w.events }

// Err says why Events was closed: store.ErrWatcherTooSlow, a *store.CompactedError, an error
// of the database, or nil for a cancelled context, Close or a store shutdown.
func (w *watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Progress returns a revision up to which every change of the watched resource has been sent on
// Events (some may still wait in its buffer); it advances on changes of other resources too.
func (w *watch) Progress() int64 { return w.progress.Load() }

// Close ends the watch and returns when Events is closed.
func (w *watch) Close() {
	w.end(nil)
	<-w.done
}

// end stops the watch with err, unless it already ended or its context is done (then Err stays
// nil, as for Close).
func (w *watch) end(err error) {
	w.mu.Lock()
	if !w.ended {
		w.ended = true
		if w.ctx.Err() == nil {
			w.err = err
		}
		w.pending = nil
	}
	w.mu.Unlock()
	w.cancel()
}

// finish unsubscribes and closes Events; run calls it when it returns.
func (w *watch) finish() {
	w.hub.unsubscribe(w)
	close(w.events)
	close(w.done)
}

func (w *watch) matches(e *store.Event) bool {
	return e.Object.Resource == w.opts.Resource && (w.opts.Namespace == "" || e.Object.Namespace == w.opts.Namespace)
}

// offer queues the matching events of a batch. It is called by the writer and never blocks.
func (w *watch) offer(events []store.Event, queue int) {
	w.mu.Lock()
	if w.ended || w.ctx.Err() != nil {
		w.mu.Unlock()
		return
	}
	rev := events[len(events)-1].Object.Revision
	if w.idle && w.handOff(events) {
		// run is waiting with nothing queued: the events went straight to the reader, one
		// goroutine hand-off instead of two.
		w.head = rev
		w.progress.Store(rev)
		w.mu.Unlock()
		return
	}
	n := 0
	for i := range events {
		if w.matches(&events[i]) {
			w.pending = append(w.pending, events[i])
			n++
		}
	}
	w.head = rev
	tooSlow := len(w.pending) > queue
	switch {
	case n > 0:
		w.idle = false
		select {
		case w.wake <- struct{}{}:
		default:
		}
	case w.idle:
		// Nothing queued nor in flight: the watch has seen everything up to this batch.
		w.progress.Store(rev)
	}
	w.mu.Unlock()
	if tooSlow {
		w.end(store.ErrWatcherTooSlow)
	}
}

// handOff sends the matching events of a batch on Events when they all fit without
// waiting; false, having sent nothing, when they do not. It is called with mu held while run
// is idle.
func (w *watch) handOff(events []store.Event) bool {
	n := 0
	for i := range events {
		if w.matches(&events[i]) {
			n++
		}
	}
	if cap(w.events)-len(w.events) < n {
		return false
	}
	for i := range events {
		if e := &events[i]; w.matches(e) && e.Object.Revision > w.sent {
			w.events <- *e
			w.sent = e.Object.Revision
		}
	}
	return true
}

// run sends the backfill (first, read at a snapshot whose current revision was current, then
// further chunks) and then the live events, until the watch ends.
func (w *watch) run(db *DB, first []store.Event, current int64) {
	defer w.finish()
	defer func() {
		w.end(nil) // marks the watch ended so that offer stops queueing
		db.logger.LogAttrs(context.Background(), slog.LevelDebug, "watch ended",
			slog.String(logKeyResource, w.opts.Resource), slog.String(logKeyNamespace, w.opts.Namespace),
			slog.Int64(logKeyRevision, w.progress.Load()), slog.Any(logKeyError, w.Err()))
	}()
	last := w.opts.After
	send := func(e store.Event) bool {
		select {
		case w.events <- e:
			last = e.Object.Revision
			return true
		case <-w.ctx.Done():
			return false
		}
	}

	evs := first
	for {
		for _, e := range evs {
			if !send(e) {
				return
			}
		}
		if len(evs) < backfillChunk {
			break
		}
		var err error
		evs, current, err = db.readChanges(w.ctx, w.opts, last, backfillChunk)
		if err != nil {
			if w.ctx.Err() == nil {
				w.end(err)
			}
			return
		}
	}
	// Everything at or below current has been read from the log; live events up to there are
	// duplicates.
	last = max(last, current)
	w.progress.Store(max(w.opts.After, current))

	var spare []store.Event
	for {
		w.mu.Lock()
		if w.ended {
			w.mu.Unlock()
			return
		}
		evs := w.pending
		head := w.head
		if len(evs) == 0 {
			w.idle = true
			w.sent = last
			if head > w.progress.Load() {
				w.progress.Store(head)
			}
			w.mu.Unlock()
			select {
			case <-w.wake:
				continue
			case <-w.ctx.Done():
				return
			}
		}
		w.pending = spare
		last = max(last, w.sent) // what handOff sent while run was idle
		w.mu.Unlock()
		for _, e := range evs {
			if e.Object.Revision <= last {
				continue
			}
			if !send(e) {
				return
			}
		}
		if head > w.progress.Load() {
			w.progress.Store(head)
		}
		clear(evs)
		spare = evs[:0]
	}
}
