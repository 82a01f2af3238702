package elector

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// flightTransport names the candidate on each of its requests (so that the server's stage
// draws them as the candidate reports them, rather than as a stranger's) and records those on
// its lease in the view it reports: their verbs, when they left and came back, how they ended.
type flightTransport struct {
	next     http.RoundTripper
	identity string
	view     *viewReporter
}

func (t *flightTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("X-Leaselab-Candidate", url.QueryEscape(t.identity))
	if !strings.Contains(req.URL.Path, "/leases") || strings.Contains(req.URL.RawQuery, "watch=") {
		return t.next.RoundTrip(req)
	}
	id := t.view.flightStarted(req.Method)
	resp, err := t.next.RoundTrip(req)
	switch {
	case err == nil:
		t.view.flightEnded(id, strconv.Itoa(resp.StatusCode))
	case isTimeout(err):
		t.view.flightEnded(id, tabproto.FlightTimeout)
	default:
		t.view.flightEnded(id, tabproto.FlightRefused)
	}
	return resp, err
}

// isTimeout reports whether a request was given up rather than refused: its context ended
// (client-go's renew deadline) or its timeout passed.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// flightStarted records a request leaving now and returns its number.
func (v *viewReporter) flightStarted(verb string) uint64 {
	id := v.flights.Start(verb, time.Now().UnixMilli())
	v.poke()
	return id
}

// flightEnded records how request id ended, now.
func (v *viewReporter) flightEnded(id uint64, outcome string) {
	v.flights.End(id, outcome, time.Now().UnixMilli())
	v.poke()
}
