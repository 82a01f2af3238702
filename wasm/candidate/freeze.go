package candidate

import (
	"context"
	"sync"
	"time"
)

// freezer is the pause fault: while frozen, the candidate sends no request,
// looks at no answer and notices no deadline, as a process stopped by
// SIGSTOP or a long GC pause. The clocks keep going.
type freezer struct {
	mu      sync.Mutex
	frozen  bool
	since   time.Time     // real clock; zero unless frozen
	thawed  chan struct{} // closed while not frozen
	pending []func()      // deadlines that fell during the freeze
}

// newFreezer returns a freezer that is not frozen.
func newFreezer() *freezer {
	f := &freezer{thawed: make(chan struct{})}
	close(f.thawed)
	return f
}

// freeze starts a freeze at now; it reports false when already frozen.
func (f *freezer) freeze(now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen {
		return false
	}
	f.frozen, f.since = true, now
	f.thawed = make(chan struct{})
	return true
}

// thaw ends a freeze and runs the deadlines that fell during it. It returns
// when the freeze began, and false when not frozen.
func (f *freezer) thaw() (time.Time, bool) {
	f.mu.Lock()
	if !f.frozen {
		f.mu.Unlock()
		return time.Time{}, false
	}
	since, pending := f.since, f.pending
	f.frozen, f.since, f.pending = false, time.Time{}, nil
	close(f.thawed)
	f.mu.Unlock()
	for _, fn := range pending {
		fn()
	}
	return since, true
}

// state returns whether the candidate is frozen, and since when.
func (f *freezer) state() (bool, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen, f.since
}

// whenRunning runs fn now or, during a freeze, when it ends: a frozen
// process notices its timers only when it runs again.
func (f *freezer) whenRunning(fn func()) {
	f.mu.Lock()
	if f.frozen {
		f.pending = append(f.pending, fn)
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	fn()
}

// await blocks while frozen; it returns ctx's error, if any.
func (f *freezer) await(ctx context.Context) error {
	f.mu.Lock()
	thawed := f.thawed
	f.mu.Unlock()
	select {
	case <-thawed:
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// frozenCall runs one request as a frozen process would: not sent while
// frozen, and its answer not looked at until thawed.
func frozenCall[T any](f *freezer, ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := f.await(ctx); err != nil {
		return zero, err
	}
	v, err := call(ctx)
	if werr := f.await(ctx); werr != nil {
		return zero, werr
	}
	return v, err
}
