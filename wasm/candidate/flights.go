package candidate

import (
	"context"
	"errors"
	"strconv"
	"strings"
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
	// changed tells the candidate that its snapshot changed.
	changed func()
	log     tabproto.Flights
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
	id := f.log.Start(verb, f.now().UnixMilli())
	f.changed()
	return id
}

func (f *flightLog) end(id uint64, outcome string) {
	f.log.End(id, outcome, f.now().UnixMilli())
	f.changed()
}

// flights is the newest requests.
func (f *flightLog) flights() []tabproto.Flight { return f.log.List() }

// flightOutcome is how a request ended, in the stage's words: its status code, or a timeout
// (it hung or crawled until it was given up), or refused (it failed at once).
func flightOutcome(resp *Response, err error) string {
	var te *TimeoutError
	switch {
	case err == nil:
		return strconv.Itoa(resp.StatusCode)
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.Is(err, ErrConnectionLost):
		return tabproto.FlightTimeout
	default:
		return tabproto.FlightRefused
	}
}
