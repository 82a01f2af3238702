package bench

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// repeat is the loop of every workload's workers: it runs op each time next says one is due,
// until next reports the end of the run, and settles each outcome the same way. An operation
// the end of the run cut short is dropped: it measured the deadline, not the server. A 429 is
// counted as throttled and followed by the wait its Retry-After asks for; any other failure is
// counted by kind. A success is counted and handed to done with the time it was due, so that
// latency can count from then: an operation that starts late because the previous one was
// slow counts its wait (no coordinated omission).
func (r *runner) repeat(ctx context.Context, next func(context.Context) (time.Time, bool), op func(context.Context) error, done func(due time.Time)) {
	for {
		due, ok := next(ctx)
		if !ok {
			return
		}
		err := op(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			done(due)
			r.ops.Add(1)
		case r.throttle(ctx, err):
		default:
			r.failures.add(err)
		}
	}
}

// recordSince records the latency of an operation that was due at due and has just
// succeeded; it is the done of repeat for the workloads that time whole operations.
func (r *runner) recordSince(due time.Time) {
	r.latencies.add(time.Since(due))
}

// throttle reports whether err is a 429 and, if so, counts it and waits as long as its
// Retry-After asks (a second when it names no delay), as client-go does, instead of hammering
// a server that is shedding load.
func (r *runner) throttle(ctx context.Context, err error) bool {
	if !apierrors.IsTooManyRequests(err) {
		return false
	}
	r.throttled.Add(1)
	secs, ok := apierrors.SuggestsClientDelay(err)
	if !ok || secs < 1 {
		secs = 1
	}
	sleepUntil(ctx, time.Now().Add(time.Duration(secs)*time.Second))
	return true
}

// sleepUntil waits until t and reports whether ctx is still going then.
func sleepUntil(ctx context.Context, t time.Time) bool {
	if d := time.Until(t); d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
	}
	return ctx.Err() == nil
}

// pacer returns the schedule (the next of repeat) of client i of clients that together aim
// for rate operations per second, the clients staggered over one period. Without a rate,
// operations are due as soon as the previous one ends.
func pacer(rate float64, clients, i int) func(ctx context.Context) (time.Time, bool) {
	if rate <= 0 {
		return func(ctx context.Context) (time.Time, bool) { return time.Now(), ctx.Err() == nil }
	}
	every := time.Duration(float64(time.Second) * float64(clients) / rate)
	next := time.Now().Add(every * time.Duration(i) / time.Duration(max(clients, 1)))
	return func(ctx context.Context) (time.Time, bool) {
		due := next
		next = next.Add(every)
		return due, sleepUntil(ctx, due)
	}
}

// failures counts failed operations by kind and keeps the first one's error for the report.
type failures struct {
	n     atomic.Int64
	mu    sync.Mutex
	first error
	kinds map[string]int64 // by reason: a Status reason, network or other
}

// add counts a failure.
func (f *failures) add(err error) { f.addN(failureKind(err), 1, err) }

// addN counts n failures of kind; err is the first one's.
func (f *failures) addN(kind string, n int64, err error) {
	f.n.Add(n)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.first == nil {
		f.first = err
	}
	if f.kinds == nil {
		f.kinds = map[string]int64{}
	}
	f.kinds[kind] += n
}

// failureKind is the reason of a failure: the reason of its Status (Conflict, Forbidden,
// Timeout...), else network for the transport's errors, else other.
func failureKind(err error) string {
	if reason := apierrors.ReasonForError(err); reason != "" {
		return string(reason)
	}
	var ne net.Error
	// A connection the server closed mid-exchange ends in an (unexpected) EOF.
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "network"
	}
	return "other"
}
