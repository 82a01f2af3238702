//go:build !js

// Package candidatetest holds what tests of the candidate need and the candidate itself does
// not: a clock that moves only when told to, and a transport that serves requests in process.
// It lives apart from package candidate so that neither reaches the WebAssembly build or the
// server binary (net/http/httptest among them).
package candidatetest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// ManualClock is a candidate.Clock that only moves when told to, so that no test sleeps
// through a lease duration. Timers fire, in order of their due time, from Advance and Set,
// each seeing Now equal to its due time.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers []*manualTimer
}

var _ candidate.Clock = (*ManualClock)(nil)

type manualTimer struct {
	c   *ManualClock
	at  time.Time
	seq uint64
	f   func()
}

// NewManualClock returns a ManualClock reading start.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start}
}

// Now returns the clock's current reading.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f at Now()+d. A non-positive d calls f at once, in the
// calling goroutine.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) candidate.Timer {
	c.mu.Lock()
	c.seq++
	t := &manualTimer{c: c, at: c.now.Add(d), seq: c.seq, f: f}
	if d <= 0 {
		c.mu.Unlock()
		f()
		return t
	}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return t
}

// Stop removes the timer if it has not fired yet.
func (t *manualTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.timers, t)
	if i < 0 {
		return false
	}
	c.timers = slices.Delete(c.timers, i, i+1)
	return true
}

// Advance moves the clock forward by d, firing every timer that falls due.
func (c *ManualClock) Advance(d time.Duration) {
	c.Set(c.Now().Add(d))
}

// Set moves the clock to t, firing every timer due at or before t. Setting a
// time before Now only changes the reading.
func (c *ManualClock) Set(t time.Time) {
	for {
		c.mu.Lock()
		var due *manualTimer
		for _, tm := range c.timers {
			if !tm.at.After(t) && (due == nil || tm.at.Before(due.at) || (tm.at.Equal(due.at) && tm.seq < due.seq)) {
				due = tm
			}
		}
		if due == nil {
			c.now = t
			c.mu.Unlock()
			return
		}
		c.timers = slices.DeleteFunc(c.timers, func(x *manualTimer) bool { return x == due })
		if due.at.After(c.now) {
			c.now = due.at
		}
		c.mu.Unlock()
		due.f()
	}
}

// Pending returns the number of timers not yet fired.
func (c *ManualClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// HandlerTransport serves requests in process with an http.Handler: a server under test,
// without sockets, so that tests can run inside a testing/synctest bubble. It is
// candidate.HTTPTransport over a client that calls the handler, so that requests and responses
// go through the same code as natively.
type HandlerTransport struct {
	Handler http.Handler
}

var _ candidate.Transport = HandlerTransport{}

// RoundTrip runs the handler on req and returns what it wrote.
func (t HandlerTransport) RoundTrip(ctx context.Context, req *candidate.Request) (*candidate.Response, error) {
	hc := &http.Client{
		Transport: handlerRoundTripper{t.Handler},
		// A redirect is the handler's answer, not a request to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return candidate.HTTPTransport{Client: hc}.RoundTrip(ctx, req)
}

// handlerRoundTripper records what its handler writes.
type handlerRoundTripper struct{ h http.Handler }

func (rt handlerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	rt.h.ServeHTTP(rec, r)
	// Like a real transport, one whose context ended has no answer.
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}
