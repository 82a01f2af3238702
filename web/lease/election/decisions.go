package election

import (
	"sync"
	"time"
)

// Kind says what a decision did.
type Kind string

// The kinds of decisions. Actions (ping, elect, prefer, strategy, gc) are recorded every time;
// states (keep, wait, idle, conflict, no-answer, error) only when they differ from the last
// decision about the same Lease, so that a requeue every few seconds does not flood the log.
const (
	// KindPing: candidates were pinged.
	KindPing Kind = "ping"
	// KindWait: pings are out; the election waits for the answers.
	KindWait Kind = "wait"
	// KindElect: a holder was written (a new Lease, a Lease without holder, an expired one).
	KindElect Kind = "elect"
	// KindPrefer: preferredHolder was set; the holder is expected to step down.
	KindPrefer Kind = "prefer"
	// KindStrategy: only the strategy was written (a strategy this controller does not handle).
	KindStrategy Kind = "strategy"
	// KindKeep: no election is needed; the holder stays.
	KindKeep Kind = "keep"
	// KindIdle: no election is needed, and none can be held (no parsable versions, a strategy
	// left to another controller).
	KindIdle Kind = "idle"
	// KindConflict: the candidates disagree on the strategy; the Lease is left alone.
	KindConflict Kind = "conflict"
	// KindNoAnswer: no candidate answered its ping.
	KindNoAnswer Kind = "no-answer"
	// KindGC: a candidate that stopped renewing was deleted.
	KindGC Kind = "gc"
	// KindError: a request to the API failed.
	KindError Kind = "error"
	// KindRetry: a request met a newer version of what it wrote (409 Conflict), which the
	// controller's next pass retries: routine, as a candidate renewing at the same moment is.
	KindRetry Kind = "retry"
)

// action reports whether a kind is an action, recorded even when it repeats.
func (k Kind) action() bool {
	switch k {
	case KindPing, KindElect, KindPrefer, KindStrategy, KindGC:
		return true
	}
	return false
}

// Decision is one outcome of the controller's loop worth showing.
type Decision struct {
	// Time is when the controller decided, by its clock.
	Time time.Time
	// Namespace and Lease name the Lease the decision is about.
	Namespace string
	Lease     string
	Kind      Kind
	// Candidate is the candidate the decision names, when there is one: the holder written
	// (elect), the preferred holder (prefer), the holder kept (keep), the candidate deleted (gc).
	Candidate string
	// Message says what was decided and why, for people
	// ("set preferredHolder cand-b (holder cand-a must step down): picked cand-b: ...").
	Message string
	// Says is Message as a sentence, which the screens put in their reader's language (zero
	// for a decision made elsewhere, which they show as Message).
	Says Said
}

// decisionLog keeps the last decisions per Lease and fans new ones out to subscribers.
type decisionLog struct {
	perLease  int
	maxLeases int

	mu     sync.Mutex
	leases map[leaseKey]*ring
	subs   map[int]chan Decision
	nextID int
}

type leaseKey struct{ namespace, name string }

// ring is a bounded, oldest-first buffer of decisions.
type ring struct {
	items []Decision
	start int
	last  time.Time // when the last decision was recorded, to evict idle Leases first
}

func (r *ring) add(d Decision, size int) {
	r.last = d.Time
	if len(r.items) < size {
		r.items = append(r.items, d)
		return
	}
	r.items[r.start] = d
	r.start = (r.start + 1) % len(r.items)
}

func (r *ring) latest() (Decision, bool) {
	if len(r.items) == 0 {
		return Decision{}, false
	}
	return r.items[(r.start+len(r.items)-1)%len(r.items)], true
}

func (r *ring) list() []Decision {
	out := make([]Decision, 0, len(r.items))
	out = append(out, r.items[r.start:]...)
	return append(out, r.items[:r.start]...)
}

// subscriberBuffer is how many decisions a subscriber may fall behind before it misses some.
const subscriberBuffer = 256

func newDecisionLog(perLease, maxLeases int) *decisionLog {
	return &decisionLog{perLease: perLease, maxLeases: maxLeases, leases: map[leaseKey]*ring{}, subs: map[int]chan Decision{}}
}

// record keeps d and delivers it to every subscriber that has room. It reports false, and keeps
// nothing, when d is a state that repeats the last decision about its Lease.
func (l *decisionLog) record(d Decision) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := leaseKey{d.Namespace, d.Lease}
	r := l.leases[k]
	if r == nil {
		if len(l.leases) >= l.maxLeases {
			l.evictLocked()
		}
		r = &ring{}
		l.leases[k] = r
	}
	if last, ok := r.latest(); ok && !d.Kind.action() && last.Kind == d.Kind && last.Message == d.Message && last.Candidate == d.Candidate {
		return false
	}
	r.add(d, l.perLease)
	for _, ch := range l.subs {
		select {
		case ch <- d:
		default: // a slow subscriber misses decisions rather than holding up the controller
		}
	}
	return true
}

// evictLocked forgets the Lease whose last decision is the oldest.
func (l *decisionLog) evictLocked() {
	var oldest leaseKey
	var at time.Time
	first := true
	for k, r := range l.leases {
		if first || r.last.Before(at) {
			oldest, at, first = k, r.last, false
		}
	}
	delete(l.leases, oldest)
}

func (l *decisionLog) list(namespace, lease string) []Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.leases[leaseKey{namespace, lease}]
	if r == nil {
		return nil
	}
	return r.list()
}

func (l *decisionLog) subscribe() (<-chan Decision, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := l.nextID
	l.nextID++
	ch := make(chan Decision, subscriberBuffer)
	l.subs[id] = ch
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			delete(l.subs, id)
			close(ch)
		})
	}
}
