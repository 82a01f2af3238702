package tabproto

import "sync"

// What a candidate tells the stage beyond its role: its timers and its requests in flight.
// Both are on the candidate's own clock (Report.Clock is that clock when it reported), so the
// server places them on its own by the report's arrival: a candidate whose clock runs ahead
// still drains its rings at the pace it acts on.

// Timers are a candidate's running timers, as milliseconds from Report.Clock on its own clock;
// 0 for a timer that is not running. Negative values are due already (a paused candidate's
// timers do not move until it resumes).
type Timers struct {
	// ExpiresInMs is when the lease runs out as this candidate observed it: the last time it saw
	// the record change, plus leaseDuration. It is what a follower acts on.
	ExpiresInMs int64 `json:"expiresInMs"`
	// RenewByMs, while leading, is when leadership ends unless a renewal succeeds first.
	RenewByMs int64 `json:"renewByMs,omitempty"`
	// RetryInMs is when it next tries.
	RetryInMs int64 `json:"retryInMs"`
	// LeaseMs and RenewDeadlineMs and RetryPeriodMs are the full lengths of the three, so that a
	// ring shows how much of each is left.
	LeaseMs         int64 `json:"leaseMs"`
	RenewDeadlineMs int64 `json:"renewDeadlineMs"`
	RetryPeriodMs   int64 `json:"retryPeriodMs"`
}

// Flight is one request of a candidate's on its lease, on the candidate's own clock (Unix ms).
type Flight struct {
	// ID numbers the candidate's requests, so that a request reported twice (in flight, then
	// ended) is drawn once.
	ID   uint64 `json:"id"`
	Verb string `json:"verb"` // GET, PUT, POST, PATCH, DELETE
	// StartMs is when it left; EndMs when its answer came back or it was given up, 0 while in
	// flight.
	StartMs int64 `json:"startMs"`
	EndMs   int64 `json:"endMs,omitempty"`
	// Outcome is the status code ("200", "409"), or FlightTimeout or FlightRefused; "" while in
	// flight.
	Outcome string `json:"outcome,omitempty"`
}

// Outcomes of a request that got no status code.
const (
	// FlightTimeout is a request given up at its timeout or its renew deadline: it hung (a
	// partition that drops packets, a lost packet) or crawled too long.
	FlightTimeout = "timeout"
	// FlightRefused is a request that failed at once: a partition that refuses, a server that
	// is down.
	FlightRefused = "refused"
)

// MaxFlights bounds the flights a report carries: the newest.
const MaxFlights = 8

// cleanStage keeps what the hub may take of a report's timers and flights.
func (r *Report) cleanStage() {
	if len(r.Flights) > MaxFlights {
		r.Flights = r.Flights[len(r.Flights)-MaxFlights:]
	}
	for i := range r.Flights {
		f := &r.Flights[i]
		switch f.Verb {
		case "GET", "PUT", "POST", "PATCH", "DELETE":
		default:
			f.Verb = "GET"
		}
		f.Outcome = Cut(f.Outcome, MaxWordLen)
	}
}

// Flights keeps a candidate's newest requests (at most MaxFlights), for its reports: the
// browser candidate's and leaselab candidate's alike. Its zero value is empty and ready; it is
// safe for concurrent use.
type Flights struct {
	mu   sync.Mutex
	seq  uint64
	list []Flight // oldest first
}

// Start records a request with verb leaving at nowMs (the candidate's clock, Unix ms) and
// returns its number.
func (f *Flights) Start(verb string, nowMs int64) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	// A new slice each time: reports already taken (List) keep theirs.
	list := append(make([]Flight, 0, MaxFlights), f.list[max(0, len(f.list)-MaxFlights+1):]...)
	f.list = append(list, Flight{ID: f.seq, Verb: verb, StartMs: nowMs})
	return f.seq
}

// End records how request id ended at nowMs: its status code, FlightTimeout or FlightRefused.
func (f *Flights) End(id uint64, outcome string, nowMs int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	list := append([]Flight(nil), f.list...)
	for i := range list {
		if list[i].ID == id {
			list[i].EndMs, list[i].Outcome = max(nowMs, list[i].StartMs), outcome
		}
	}
	f.list = list
}

// List is the newest requests, oldest first; nil when there are none. The caller may keep it:
// the log never changes a list it handed out.
func (f *Flights) List() []Flight {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.list
}
