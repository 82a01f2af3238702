package leasetest

import (
	"context"
	"errors"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"sync"
	"time"

	"github.com/leaselab/leaselab/web/api/request"
)

// Fail makes every request of the client called name (ConfigFor) fail with the status code
// (500, 503, 429, 409, ...), answered as a metav1.Status, until Heal. Its open watches end, as
// its informers would see them end when the server starts refusing it.
func (s *Server) Fail(name string, code int) {
	s.faults.set(name, clientFaults{fail: code}, true)
}

// Hang makes every request of the client called name wait without an answer, as behind a
// network partition, until its context ends or Heal; then its connection breaks: the client
// gets a reset connection, not a response (client-go retries a read after one). Its open
// watches end.
func (s *Server) Hang(name string) {
	s.faults.set(name, clientFaults{hang: true}, true)
}

// Slow makes the server wait d before it handles each request of the client called name, on
// the test's clock (the bubble's fake clock inside testing/synctest): its writes land late and
// it learns late what the others did. Slow keeps the client's other faults.
func (s *Server) Slow(name string, d time.Duration) {
	s.faults.update(name, func(f *clientFaults) { f.latency = d })
}

// Heal ends the faults of the client called name: its hanging requests fail at once and its
// next requests are served.
func (s *Server) Heal(name string) {
	s.faults.set(name, clientFaults{}, false)
}

// FailWrites makes the next n writes (create, update, patch, delete, deletecollection) of every
// client but the election controller fail with the status code, answered as a metav1.Status.
// A later call replaces the count.
func (s *Server) FailWrites(n, code int) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.failWrites, s.faults.failCode = n, code
}

// Pause holds every request from now on, the election controller's included, as a stopped
// server process would, until Resume: then they are served. A held request whose context ends
// fails. Watches already open stay open; no writes reach them while paused.
func (s *Server) Pause() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if s.faults.resumed == nil {
		s.faults.resumed = make(chan struct{})
	}
}

// Resume serves the requests Pause held, and every request after.
func (s *Server) Resume() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if s.faults.resumed != nil {
		close(s.faults.resumed)
		s.faults.resumed = nil
	}
}

// faults are the faults the test injects into the server's requests.
type faults struct {
	mu      sync.Mutex
	clients map[string]*clientFaults
	// resumed is open while the server is paused; Resume closes it.
	resumed              chan struct{}
	failWrites, failCode int
	// watches are the cancel functions of the open watches, by client name.
	watches map[string]map[*int]context.CancelFunc
	// history is every client's faults as they changed, oldest first, by client name: what
	// the judge reads as a believer's faults (Overlaps).
	history map[string][]faultChange
}

// faultChange is a client's faults from a moment on.
type faultChange struct {
	at time.Time
	f  tabproto.Faults
}

// noteLocked keeps the faults of client name as they are from now on.
func (f *faults) noteLocked(name string) {
	c := f.clients[name]
	var tf tabproto.Faults
	if c != nil {
		tf.LatencyMs = c.latency.Milliseconds()
		switch {
		case c.hang:
			tf.Partition = tabproto.PartitionHang
		case c.fail != 0:
			tf.Partition = tabproto.PartitionFail
		}
	}
	if f.history == nil {
		f.history = map[string][]faultChange{}
	}
	f.history[name] = append(f.history[name], faultChange{at: time.Now(), f: tf})
}

// at returns the faults of client name at t.
func (f *faults) at(name string, t time.Time) tabproto.Faults {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out tabproto.Faults
	for _, c := range f.history[name] {
		if c.at.After(t) {
			break
		}
		out = c.f
	}
	return out
}

// clientFaults are the faults of one client.
type clientFaults struct {
	fail    int  // status code of every answer; 0 for none
	hang    bool // no answer
	latency time.Duration
	// healed closes when the client's hang ends (Heal, or another fault in its place).
	healed chan struct{}
}

func (f *faults) init() {
	f.clients = map[string]*clientFaults{}
	f.watches = map[string]map[*int]context.CancelFunc{}
}

// set replaces the faults of client name by c, keeping its latency if keepLatency; the requests
// hanging on its earlier fault break, and with a failure or hang its open watches end.
func (f *faults) set(name string, c clientFaults, keepLatency bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.clients[name]
	if old != nil {
		if keepLatency {
			c.latency = old.latency
		}
		if old.healed != nil {
			close(old.healed)
		}
	}
	if c.hang {
		c.healed = make(chan struct{})
	}
	f.clients[name] = &c
	f.noteLocked(name)
	if c.fail != 0 || c.hang {
		for _, cancel := range f.watches[name] {
			cancel()
		}
	}
}

// update changes the faults of client name in place.
func (f *faults) update(name string, change func(*clientFaults)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.clients[name]
	if c == nil {
		c = &clientFaults{}
		f.clients[name] = c
	}
	change(c)
	f.noteLocked(name)
}

// errBreak is the answer of a request whose connection breaks: the handler aborts.
var errBreak = errors.New("leasetest: the connection broke")

// apply waits and decides as the faults in effect say for one request of client name: nil to
// serve it, errBreak to break its connection, or the error to answer. stopping ends every wait
// with errStopping.
func (f *faults) apply(ctx context.Context, name string, info request.Info, stopping <-chan struct{}) error {
	f.mu.Lock()
	resumed := f.resumed
	f.mu.Unlock()
	if resumed != nil {
		select {
		case <-resumed:
		case <-ctx.Done():
			return errBreak
		case <-stopping:
			return errStopping
		}
	}

	f.mu.Lock()
	var c clientFaults
	if p := f.clients[name]; name != "" && p != nil {
		c = *p
	}
	f.mu.Unlock()
	if c.latency > 0 {
		t := time.NewTimer(c.latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errBreak
		case <-stopping:
			t.Stop()
			return errStopping
		}
	}
	if c.hang {
		select {
		case <-c.healed:
		case <-ctx.Done():
		case <-stopping:
		}
		return errBreak
	}
	if c.fail != 0 {
		return failure(c.fail)
	}

	if isWrite(info.Verb) && name != ControllerName {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.failWrites > 0 {
			f.failWrites--
			return failure(f.failCode)
		}
	}
	return nil
}

// failure is an injected failure with a status code, worded by serve for the request.
type failure int

func (failure) Error() string { return "leasetest: injected failure" }

// watching registers an open watch of client name; the returned context ends when the
// client's requests start failing or hanging, done unregisters it.
func (f *faults) watching(ctx context.Context, name string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	key := new(int)
	f.mu.Lock()
	if f.watches[name] == nil {
		f.watches[name] = map[*int]context.CancelFunc{}
	}
	f.watches[name][key] = cancel
	f.mu.Unlock()
	return ctx, func() {
		f.mu.Lock()
		delete(f.watches[name], key)
		if len(f.watches[name]) == 0 {
			delete(f.watches, name)
		}
		f.mu.Unlock()
		cancel()
	}
}

// isWrite reports whether a request's verb writes.
func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}
