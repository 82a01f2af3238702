package ui

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/lease/traffic"
)

// CandidateHeader names the candidate that sends a request: the browser candidate and the
// lessons' members set it, so that the stage draws their requests as they report them (with
// what never reached the server) rather than twice.
const CandidateHeader = "X-Leaselab-Candidate"

// requestTap sees every request on a Lease at the API's door, after authentication: who sent
// it, its verb, its status and how long it took. It keeps the newest few of each lease in
// memory, for the stage, wakes the stages that follow the lease, and hands each request that
// ended to the store's batches (traffic.Keeper). It costs a renewal two map writes under
// short locks; nothing is written on the request's path.
type requestTap struct {
	now  func() time.Time
	keep *traffic.Keeper

	mu     sync.Mutex
	seq    uint64
	leases map[tapKey]*tapLease
}

type tapKey struct{ namespace, name string }

// tapLease is what the tap holds of one lease: its newest requests and its followers.
type tapLease struct {
	recent []seenRequest // oldest first, at most tapKeep
	subs   map[chan struct{}]struct{}
	writes uint64 // the writes that succeeded: the stage draws these first
}

// tapKeep bounds the requests kept of one lease: the stage draws only the last few seconds'.
const tapKeep = 32

// maxTapLeases bounds the leases the tap remembers; beyond it, a lease nobody follows is
// forgotten first.
const maxTapLeases = 4096

// seenRequest is one request on a lease as the server saw it.
type seenRequest struct {
	id     uint64
	who    string // the client's name (its User-Agent's product)
	verb   string // GET, PUT, POST, PATCH, DELETE
	start  time.Time
	end    time.Time // zero while it runs
	status int
}

// request is q as the stage draws it and the store keeps it.
func (q seenRequest) request() traffic.Request {
	r := traffic.Request{ID: "door/" + strconv.FormatUint(q.id, 10), Identity: q.who, Verb: q.verb, StartMs: q.start.UnixMilli(), Door: true}
	if !q.end.IsZero() {
		r.EndMs, r.Outcome = q.end.UnixMilli(), strconv.Itoa(q.status)
	}
	return r
}

// newRequestTap returns a tap on the clock now that hands every request that ended to keep
// (nil: to no one), to be stored for the stage's past.
func newRequestTap(now func() time.Time, keep *traffic.Keeper) *requestTap {
	return &requestTap{now: now, keep: keep, leases: map[tapKey]*tapLease{}}
}

// middleware is the tap, at the door of every request.
func (t *requestTap) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		ri, ok := request.InfoFrom(r.Context())
		if !ok || !ri.IsResourceRequest || ri.Resource != "leases" || ri.Group != "coordination.k8s.io" || ri.Namespace == "" || ri.Subresource != "" {
			return next(c)
		}
		verb := tapVerb(ri.Verb)
		if verb == "" {
			return next(c)
		}
		key := tapKey{ri.Namespace, ri.Name}
		if r.Header.Get(CandidateHeader) != "" || request.InProcess(r.Context()) {
			// A candidate reports its own requests, and the server's own reads (its screens, its
			// lessons' judge) are no one's on the stage; a write still changes it.
			err := next(c)
			if verb != "GET" {
				t.wrote(key, statusOf(c, err))
			}
			return err
		}
		id := t.begin(key, clientName(r.UserAgent()), verb)
		err := next(c)
		t.finish(key, id, statusOf(c, err))
		return err
	}
}

// statusOf is the status a request was answered with, err being its handler's error.
func statusOf(c echo.Context, err error) int {
	if err != nil {
		status, _ := errorOf(err) // the status the error is answered with
		return status
	}
	return c.Response().Status
}

// tapVerb is the HTTP method the stage draws for an API verb on one lease; "" for the verbs
// it does not draw (lists, watches, collections).
func tapVerb(verb string) string {
	switch verb {
	case "get":
		return "GET"
	case "create":
		return "POST"
	case "update":
		return "PUT"
	case "patch":
		return "PATCH"
	case "delete":
		return "DELETE"
	}
	return ""
}

// clientName is the product of a User-Agent ("kubectl" of "kubectl/v1.36.0 (linux/amd64)"),
// cut short: how the stage names a client that is not a candidate.
func clientName(ua string) string {
	name, _, _ := strings.Cut(ua, "/")
	name, _, _ = strings.Cut(name, " ")
	if name == "" {
		name = "client"
	}
	if len(name) > 40 {
		name = name[:40]
	}
	return name
}

func (t *requestTap) leaseLocked(key tapKey) *tapLease {
	l := t.leases[key]
	if l == nil {
		if len(t.leases) >= maxTapLeases {
			for k, o := range t.leases {
				if len(o.subs) == 0 {
					delete(t.leases, k)
					break
				}
			}
		}
		l = &tapLease{subs: map[chan struct{}]struct{}{}}
		t.leases[key] = l
	}
	return l
}

func (t *requestTap) begin(key tapKey, who, verb string) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	l := t.leaseLocked(key)
	l.recent = append(l.recent, seenRequest{id: t.seq, who: who, verb: verb, start: t.now()})
	if n := len(l.recent); n > tapKeep {
		l.recent = append(l.recent[:0], l.recent[n-tapKeep:]...)
	}
	l.wakeLocked()
	return t.seq
}

func (t *requestTap) finish(key tapKey, id uint64, status int) {
	t.mu.Lock()
	l := t.leases[key]
	if l == nil {
		t.mu.Unlock()
		return
	}
	var done traffic.Request
	for i := range l.recent {
		if l.recent[i].id == id {
			l.recent[i].end, l.recent[i].status = t.now(), status
			done = l.recent[i].request()
			if l.recent[i].verb != "GET" {
				l.countWriteLocked(status)
			}
		}
	}
	l.wakeLocked()
	t.mu.Unlock()
	if t.keep != nil && done.ID != "" {
		t.keep.Add(key.namespace, key.name, done)
	}
}

// wrote wakes the followers of key after a write that is not drawn as a request (a
// candidate's, which reports its own, or the server's), and counts it when it succeeded.
func (t *requestTap) wrote(key tapKey, status int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.leases[key]; l != nil {
		l.countWriteLocked(status)
		l.wakeLocked()
	}
}

func (l *tapLease) wakeLocked() {
	for ch := range l.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// countWriteLocked counts a write answered with status when it succeeded.
func (l *tapLease) countWriteLocked(status int) {
	if status < 300 {
		l.writes++
	}
}

// writes counts the writes on ns/name that succeeded so far.
func (t *requestTap) writes(ns, name string) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.leases[tapKey{ns, name}]; l != nil {
		return l.writes
	}
	return 0
}

// recent are the requests on ns/name in flight, or ended since since.
func (t *requestTap) recent(ns, name string, since time.Time) []seenRequest {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.leases[tapKey{ns, name}]
	if l == nil {
		return nil
	}
	var out []seenRequest
	for _, q := range l.recent {
		if q.end.IsZero() || !q.end.Before(since) {
			out = append(out, q)
		}
	}
	return out
}

// subscribe is woken by every request on ns/name (and every write of a candidate's).
func (t *requestTap) subscribe(ns, name string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	key := tapKey{ns, name}
	t.mu.Lock()
	t.leaseLocked(key).subs[ch] = struct{}{}
	t.mu.Unlock()
	return ch, func() {
		t.mu.Lock()
		if l := t.leases[key]; l != nil {
			delete(l.subs, ch)
		}
		t.mu.Unlock()
	}
}
