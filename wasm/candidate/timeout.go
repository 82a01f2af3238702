package candidate

import (
	"context"
	"errors"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// errTimedOut is the cause of a request's context once its timeout has passed.
var errTimedOut = errors.New("request timeout")

// TimeoutError is a request that got no answer within the request timeout.
type TimeoutError struct {
	After time.Duration
}

func (e *TimeoutError) Error() string { return e.Says().In("en") }

// Says is the error as a message, for the decision log in the reader's language.
func (e *TimeoutError) Says() tabproto.Msg { return tabproto.Say("log.timedOut", secs(e.After)) }

// timeoutTransport gives every request a timeout, as Kubernetes components give their
// leader-election client one (kube-controller-manager and kube-scheduler set its rest.Config
// Timeout to the renew deadline): a request into a network that drops packets is given up
// after it, rather than waiting for ever. A leader's renew round usually cuts its requests
// first; the timeout is what ends a follower's. The timeout counts on the candidate's own
// clock, and like any timer of a frozen process it fires only once the process runs again.
type timeoutTransport struct {
	next    Transport
	clock   Clock
	timeout time.Duration
	freezer *freezer
}

var _ Transport = (*timeoutTransport)(nil)

// RoundTrip sends req through the next transport, giving up after the timeout with a
// *TimeoutError. It returns ctx's error once ctx is done.
func (t *timeoutTransport) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	if t.timeout <= 0 {
		return t.next.RoundTrip(ctx, req)
	}
	rctx, cancel := context.WithCancelCause(ctx)
	timer := t.clock.AfterFunc(t.timeout, func() {
		t.freezer.whenRunning(func() { cancel(errTimedOut) })
	})
	defer func() {
		timer.Stop()
		cancel(context.Canceled)
	}()
	resp, err := t.next.RoundTrip(rctx, req)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(rctx), errTimedOut) {
		return nil, &TimeoutError{After: t.timeout}
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// Bounds and steps of the slow-network fault's delay, as the pages offer it.
const (
	MinSlowLatency = 100 * time.Millisecond
	MaxSlowLatency = 10 * time.Second
)

// SlowSteps are the delays the pages step through, from MinSlowLatency to MaxSlowLatency.
var SlowSteps = []time.Duration{
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second,
	1500 * time.Millisecond, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second,
	6 * time.Second, 7 * time.Second, 8 * time.Second, 9 * time.Second, 10 * time.Second,
}

// SlowLatency is the delay the slow-network fault adds when none is named: the first step
// that a leader's renewal cannot outlast. client-go's leader renews with a single request
// (an update over its cached copy), so a delay below the renew deadline only makes renewals
// late; from the renew deadline on, every renewal is cut off and the leader gives up leading.
// When even MaxSlowLatency is within the deadline, it is MaxSlowLatency.
func (t Timings) SlowLatency() time.Duration {
	for _, d := range SlowSteps {
		if d > t.RenewDeadline {
			return d
		}
	}
	return MaxSlowLatency
}

// LatencyEffect says in a sentence what a delay of d on every request does at these timings
// ("" for none), in English; LatencyEffectSays is the sentence as a message.
func (t Timings) LatencyEffect(d time.Duration) string { return t.LatencyEffectSays(d).In("en") }

// LatencyEffectSays is LatencyEffect as a message, which each page puts in its reader's
// language (the empty message for no delay).
func (t Timings) LatencyEffectSays(d time.Duration) tabproto.Msg {
	if d <= 0 {
		return tabproto.Msg{}
	}
	take := tabproto.Say("delay.take", secs(2*d))
	if d >= t.RenewDeadline {
		return tabproto.Say("delay.cutOff", secs(d), secs(t.RenewDeadline), take)
	}
	return tabproto.Say("delay.late", secs(d), secs(t.RenewDeadline), take)
}
