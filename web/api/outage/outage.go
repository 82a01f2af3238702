// Package outage is an API-server outage an instructor injects (from the dashboard): the API
// stops answering resource requests, for the whole server or one namespace, by leaving them
// hanging (as a server that is gone) or by failing them at once (as one that refuses them),
// until the outage ends. The screens and discovery keep answering: they are not the API.
package outage

import (
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/status"
)

// Mode says how requests meet the outage.
type Mode string

// The modes.
const (
	Hang Mode = "hang" // requests wait until the outage ends or their context does
	Fail Mode = "fail" // requests fail at once with 503
)

// State is the outage in effect: none when Mode is "".
type State struct {
	Mode Mode
	// Namespace limits it to one namespace; "" is the whole server.
	Namespace string
}

// Fault is the server's outage, changed by Set and read by the middleware on every request:
// a read takes no lock, as every API request makes one.
type Fault struct {
	mu  sync.Mutex // serializes Set
	cur atomic.Pointer[current]
}

// current is an outage in effect, and the channel closed when it ends or changes.
type current struct {
	State
	ended chan struct{}
}

// Set starts an outage (or changes it); a State with no Mode ends it. Hanging requests go on
// when it ends, or when it becomes one that no longer covers them.
func (f *Fault) Set(s State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var next *current
	if s.Mode != "" {
		next = &current{State: s, ended: make(chan struct{})}
	}
	if old := f.cur.Swap(next); old != nil {
		close(old.ended)
	}
}

// State is the outage in effect.
func (f *Fault) State() State {
	if c := f.cur.Load(); c != nil {
		return c.State
	}
	return State{}
}

// covers returns the outage that covers a resource request in namespace ns, and the channel
// that closes when it changes.
func (f *Fault) covers(ns string) (State, <-chan struct{}) {
	c := f.cur.Load()
	if c == nil || c.Namespace != "" && c.Namespace != ns {
		return State{}, nil
	}
	return c.State, c.ended
}

// Middleware holds or fails the resource requests the outage covers.
func (f *Fault) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		info, _ := request.InfoFrom(r.Context())
		for info.IsResourceRequest {
			s, changed := f.covers(info.Namespace)
			switch s.Mode {
			case Fail:
				status.Write(c.Response(), r, status.ForCode(http.StatusServiceUnavailable, "the API server is unavailable: an outage injected from the dashboard"), status.Filter) //said:english the API's Status, as kube-apiserver words its own
				return nil
			case Hang:
				select {
				case <-changed:
					continue // the outage ended or changed: look again
				case <-r.Context().Done():
					return nil
				}
			}
			break
		}
		return next(c)
	}
}
