package candidate

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// flightLog is a Transport that keeps the candidate's newest requests on its lease, for the
// stage: when each left and came back on the candidate's own clock, and how it ended. It sits
// outside the request timeout and the network's faults, so a request that hangs in a
// partition is in flight until its timeout, as the candidate lives it.
type flightLog struct {
	next Transport
	now  func() time.Time // the candidate's own clock
	// changed tells the candidate that its snapshot changed; called without the log's lock.
	changed func()

	mu   sync.Mutex
	seq  uint64
	list []tabproto.Flight // oldest first, at most tabproto.MaxFlights
}

var _ Transport = (*flightLog)(nil)

func (f *flightLog) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	if !onLease(req.URL) {
		return f.next.RoundTrip(ctx, req)
	}
	id := f.start(req.Method)
	resp, err := f.next.RoundTrip(ctx, req)
	f.end(id, flightOutcome(resp, err))
	return resp, err
}

// onLease reports whether a request addresses a Lease (not a LeaseCandidate).
func onLease(url string) bool {
	if i := strings.IndexByte(url, '?'); i >= 0 {
		url = url[:i]
	}
	return strings.HasSuffix(url, "/leases") || strings.Contains(url, "/leases/")
}

func (f *flightLog) start(verb string) uint64 {
	f.mu.Lock()
	f.seq++
	id := f.seq
	f.list = append(f.list, tabproto.Flight{ID: id, Verb: verb, StartMs: f.now().UnixMilli()})
	if n := len(f.list); n > tabproto.MaxFlights {
		f.list = append(f.list[:0], f.list[n-tabproto.MaxFlights:]...)
	}
	f.mu.Unlock()
	f.changed()
	return id
}

func (f *flightLog) end(id uint64, outcome string) {
	f.mu.Lock()
	for i := range f.list {
		if f.list[i].ID == id {
			f.list[i].EndMs = max(f.now().UnixMilli(), f.list[i].StartMs)
			f.list[i].Outcome = outcome
		}
	}
	f.mu.Unlock()
	f.changed()
}

// flights is a copy of the newest requests.
func (f *flightLog) flights() []tabproto.Flight {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.list) == 0 {
		return nil
	}
	return append([]tabproto.Flight(nil), f.list...)
}

// flightOutcome is how a request ended, in the stage's words: its status code, or a timeout
// (it hung or crawled until it was given up), or refused (it failed at once).
func flightOutcome(resp *Response, err error) string {
	var te *TimeoutError
	switch {
	case err == nil:
		return strconv.Itoa(resp.StatusCode)
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return tabproto.FlightTimeout
	default:
		return tabproto.FlightRefused
	}
}
