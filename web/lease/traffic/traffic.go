// Package traffic keeps the requests on each lease, so that the stage of a past moment and a
// replay draw the requests in flight then as the live stage drew them: those the server saw at
// its door from clients that are no candidates (who, verb, status, when and for how long), and
// those the candidates reported of their own, with what never reached the server (a request
// that hung in a partition until its timeout, one refused at once, one given up at the renew
// deadline).
//
// They are kept beside the candidates' views (web/lease/views) in the store's change log:
// each lease's requests are one object of the internal resource Resource, in the lease's
// namespace and under the lease's name, and each change of it is one batch, the requests that
// began or ended since the batch before. A Keeper writes the batches off the path of any
// request, at most one per lease every FlushEvery; compaction bounds them as it bounds the
// views, and recordings carry them. The API never serves them.
package traffic

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

// Resource is the store resource that holds the requests.
const Resource = "leaserequests.leaselab.dev"

// Request is one request on a lease, on the server's clock.
type Request struct {
	// ID names the request among the lease's: "door/N" for one the server saw at its door,
	// "<identity>/N" for a candidate's (its own numbering, tabproto.Flight.ID).
	ID string `json:"id"`
	// Identity is who sent it: the candidate, or the client's name at the door (kubectl).
	Identity string `json:"identity"`
	Verb     string `json:"verb"` // GET, PUT, POST, PATCH, DELETE
	// Outcome is the status code, tabproto.FlightTimeout or tabproto.FlightRefused; "" while
	// in flight.
	Outcome string `json:"outcome,omitempty"`
	// StartMs is when it left, EndMs when it ended (0 while in flight), Unix ms.
	StartMs int64 `json:"startMs"`
	EndMs   int64 `json:"endMs,omitempty"`
	// Link is how the candidate's link to the server was when it reported the request: "",
	// "cut", "frozen", "lossy" or "slow" (the stage draws a request on a cut link hanging).
	Link string `json:"link,omitempty"`
	// Door says the server saw it at its door: a client's, not a candidate's report.
	Door bool `json:"door,omitempty"`
}

// Ended says whether the request had ended by ms (Unix ms).
func (r Request) Ended(ms int64) bool { return r.EndMs != 0 && r.EndMs <= ms }

// Batch is one change of a lease's requests object: the JSON of its value and of a recording's
// lines.
type Batch struct {
	Requests []Request `json:"requests"`
}

// BatchOf decodes a stored batch (an object of Resource).
func BatchOf(o store.Object) (Batch, error) {
	var b Batch
	if err := json.Unmarshal(o.Value, &b); err != nil {
		return Batch{}, fmt.Errorf("requests of lease %s/%s: %w", o.Namespace, o.Name, err)
	}
	return b, nil
}

// Key is the store key of the requests of a lease.
func Key(namespace, lease string) store.Key {
	return store.Key{Resource: Resource, Namespace: namespace, Name: lease}
}

// FromReport is the requests a candidate's (cleaned) report carries, received at receivedMs
// on the server's clock, placed on the server's clock: its own clock's instants are counted
// from the report's Clock at its ClockRate. link is its link to the server as the report
// says (see Request.Link).
func FromReport(r tabproto.Report, receivedMs int64, link string) []Request {
	out := make([]Request, 0, len(r.Flights))
	for _, f := range r.Flights {
		q := Request{ID: r.Identity + "/" + strconv.FormatUint(f.ID, 10), Identity: r.Identity, Verb: f.Verb,
			Outcome: f.Outcome, StartMs: OnServer(r, receivedMs, f.StartMs), Link: link}
		if f.EndMs != 0 {
			q.EndMs = max(OnServer(r, receivedMs, f.EndMs), q.StartMs)
		}
		out = append(out, q)
	}
	return out
}

// OnServer places own, an instant of the reporting candidate's clock (Unix ms), on the
// server's clock, by the report's arrival at receivedMs: a clock that runs at another rate
// counts that many of its milliseconds for each of the server's.
func OnServer(r tabproto.Report, receivedMs, own int64) int64 {
	rate := r.Faults.ClockRate
	if rate <= 0 {
		rate = 1
	}
	return receivedMs + int64(float64(own-r.Clock)/rate)
}
