package scenario

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// The ledger is the shared resource a lesson's leaders work on: while a member believes it
// leads, its work writes the ledger through the API server, once every workEvery, and whatever
// a stale leader writes there is the cost of a split brain made visible. The ledger is a
// second Lease in the run's namespace (LedgerLease), whose annotations record the entries: any
// object of the cluster would do, and a Lease is one the playground serves.
//
// Every write is a PUT over the copy its writer last wrote (or read), with that copy's
// resourceVersion: should anyone have written since, the server answers 409 Conflict, and the
// writer reads the ledger again and writes again (client-go's retry.RetryOnConflict). That
// keeps writes from overwriting each other unseen; it does not keep a stale leader out: its
// second try lands. With fencing on, every write carries its writer's token, the lease's
// leaseTransitions when it took the lease, and the ledger keeps the newest token written; after
// a 409 a writer writes again only if the ledger's token is not newer than its own. Kubernetes
// checks no token of ours, but its resourceVersion check makes "compare the token, then write"
// one compare-and-set: the write lands only over the copy whose token was compared. A new
// leader writes at once when it starts leading, so from then on every write of an older term
// meets a 409 and is refused.

// Annotations of the ledger.
const (
	ledgerWriterKey  = "leaselab.dev/ledger-writer"
	ledgerEntriesKey = "leaselab.dev/ledger-entries"
	ledgerTokenKey   = "leaselab.dev/fencing-token"
)

// workEvery is how often a leader's work writes the ledger, on the run's clock; workTick how
// often the ledger looks at who believes it leads.
const (
	workEvery = time.Second
	workTick  = 200 * time.Millisecond
	// maxEffects bounds the effects a run keeps: a lesson writes a few hundred at most.
	maxEffects = 2000
)

// LedgerLease is the name of the lease a lesson keeps its ledger in, beside the one its cast
// competes for.
func (s *Scenario) LedgerLease() string { return s.Lease + "-ledger" }

// Effect is one write of a leader's work to the ledger.
type Effect struct {
	// At is when it was written, from the run's start on its clock.
	At time.Duration
	// By is the member whose work wrote (its name in the run).
	By string
	// Token is the lease's leaseTransitions when By took the lease: its fencing token.
	Token int32
	// Fenced is true when the write carried the token and had it checked.
	Fenced bool
	// Accepted is true when the write landed.
	Accepted bool
	// Stale is true when the lease named another holder as the write was made: By believed it
	// led, and did not.
	Stale bool
	// Conflicts counts the 409s the write met.
	Conflicts int
}

// Damage reports whether the write landed from a stale leader.
func (e Effect) Damage() bool { return e.Accepted && e.Stale }

// Refused reports whether the write was refused: a 409, then a ledger with a newer token.
func (e Effect) Refused() bool { return !e.Accepted && e.Fenced && e.Conflicts > 0 }

// ledger keeps a run's ledger: who writes it, how, and what came of each write.
type ledger struct {
	// namespace, name and election are where the ledger is, its lease's name and the name of
	// the lease the cast competes for.
	namespace, name, election string
	// call makes one request of the run's own (no member's faults).
	call func(method, path, body string) (int, string, error)

	mu      sync.Mutex
	fenced  bool
	effects []Effect
	terms   map[string]*workTerm // by member name
}

// workTerm is a member's work in its current term.
type workTerm struct {
	leading bool
	token   int32
	// copy is the ledger as the member's last accepted write left it; nil until its first.
	copy *coordinationv1.Lease
	next time.Time // its next write, on the run's clock
}

// setFenced turns fencing on or off for the writes to come.
func (l *ledger) setFenced(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fenced = on
}

// list returns the effects so far.
func (l *ledger) list() []Effect {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.effects)
}

// state is the ledger as a page shows it.
func (l *ledger) state() *LedgerState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return &LedgerState{Lease: l.name, Fenced: l.fenced, Effects: slices.Clone(l.effects)}
}

// worker is what the ledger needs of a member at one look.
type worker struct {
	name, identity string
	leads, paused  bool
	transitions    int32
}

// startLedger creates r's ledger (a run of a lesson with one) and starts its work loop, which
// ends with the run.
func startLedger(r *Run) {
	l := &ledger{namespace: r.opts.Namespace, name: r.sc.LedgerLease(), election: r.sc.Lease, call: r.api.call, terms: map[string]*workTerm{}}
	r.ledger = l
	body := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":` + strconv.Quote(l.name) +
		`,"annotations":{"` + ledgerEntriesKey + `":"0"}}}`
	if code, msg, err := r.api.call(http.MethodPost, leasesPath(l.namespace), body); err != nil || code >= 300 && code != http.StatusConflict {
		r.log.Warn("scenario cannot create its ledger", slog.Int("code", code), slog.String("body", msg), slog.Any("error", err))
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			due := make(chan struct{})
			t := r.clock.AfterFunc(workTick, func() { close(due) })
			select {
			case <-r.ctx.Done():
				t.Stop()
				return
			case <-due:
			}
			l.look(r.clock.Now(), r.started, workersOf(r))
		}
	}()
}

// workersOf is what the ledger needs of r's started members, in the cast's order: a member
// believes it leads while its candidate does, or while its work outlives its leadership.
func workersOf(r *Run) []worker {
	type started struct {
		name, identity string
		cand           *candidate.Candidate
		workUntil      time.Time
	}
	var ms []started
	r.mu.Lock()
	for _, id := range r.memberIDs() {
		if m := r.members[id]; m.started {
			ms = append(ms, started{id, m.spec.Identity, m.cand, m.workUntil})
		}
	}
	r.mu.Unlock()
	now := r.clock.Now()
	out := make([]worker, 0, len(ms))
	for _, m := range ms {
		s := m.cand.Snapshot()
		out = append(out, worker{name: m.name, identity: m.identity, transitions: s.Transitions, paused: s.Faults.Paused,
			leads: s.Role == candidate.RoleLeader || now.Before(m.workUntil)})
	}
	return out
}

// look has every member that believes it leads, and is not frozen, write when its write is due.
// A member that starts leading takes the lease's leaseTransitions as its token and writes at
// once; one that wakes from a pause writes the write it was due to make.
func (l *ledger) look(now, started time.Time, ws []worker) {
	for _, w := range ws {
		l.mu.Lock()
		t := l.terms[w.name]
		if t == nil {
			t = &workTerm{}
			l.terms[w.name] = t
		}
		if !w.leads {
			t.leading = false
			l.mu.Unlock()
			continue
		}
		if !t.leading {
			*t = workTerm{leading: true, token: w.transitions, next: now}
		}
		due := !w.paused && !now.Before(t.next)
		if due {
			t.next = now.Add(workEvery)
		}
		fenced := l.fenced
		l.mu.Unlock()
		if !due {
			continue
		}
		e := l.write(w, t, fenced)
		e.At = now.Sub(started).Round(time.Millisecond)
		e.Stale = l.holder() != w.identity
		l.mu.Lock()
		if len(l.effects) < maxEffects {
			l.effects = append(l.effects, e)
		}
		l.mu.Unlock()
	}
}

// write makes one write of w's work, as the ledger's comment says, and returns what came of it
// (At and Stale left for the caller).
func (l *ledger) write(w worker, t *workTerm, fenced bool) Effect {
	e := Effect{By: w.name, Token: t.token, Fenced: fenced}
	l.mu.Lock()
	cur := t.copy
	l.mu.Unlock()
	for range 3 {
		if cur == nil {
			code, body, err := l.call(http.MethodGet, leasePath(l.namespace, l.name), "")
			if err != nil || code != http.StatusOK {
				return e
			}
			if cur = decodeLease(body); cur == nil {
				return e
			}
		}
		if fenced && tokenOf(cur) > t.token {
			// The ledger has seen a newer term: the write is refused, and the writer keeps the
			// copy it had (the ledger is not its to write any more).
			return e
		}
		next := cur.DeepCopy()
		if next.Annotations == nil {
			next.Annotations = map[string]string{}
		}
		entries, _ := strconv.Atoi(next.Annotations[ledgerEntriesKey])
		next.Annotations[ledgerEntriesKey] = strconv.Itoa(entries + 1)
		next.Annotations[ledgerWriterKey] = w.name
		if fenced {
			next.Annotations[ledgerTokenKey] = strconv.Itoa(int(max(tokenOf(cur), t.token)))
		}
		b, err := json.Marshal(next)
		if err != nil {
			return e
		}
		code, body, err := l.call(http.MethodPut, leasePath(l.namespace, l.name), string(b))
		switch {
		case err != nil:
			return e
		case code == http.StatusOK:
			e.Accepted = true
			l.mu.Lock()
			t.copy = decodeLease(body)
			l.mu.Unlock()
			return e
		case code == http.StatusConflict:
			e.Conflicts++
			cur = nil // read it again
		default:
			return e
		}
	}
	return e
}

// tokenOf is the newest fencing token the ledger has taken; -1 before any.
func tokenOf(l *coordinationv1.Lease) int32 {
	v, err := strconv.ParseInt(l.Annotations[ledgerTokenKey], 10, 32)
	if err != nil {
		return -1
	}
	return int32(v)
}

// holder reads the election lease's holder ("" when it cannot be read or names nobody).
func (l *ledger) holder() string {
	code, body, err := l.call(http.MethodGet, leasePath(l.namespace, l.election), "")
	if err != nil || code != http.StatusOK {
		return ""
	}
	if lease := decodeLease(body); lease != nil && lease.Spec.HolderIdentity != nil {
		return *lease.Spec.HolderIdentity
	}
	return ""
}

func decodeLease(body string) *coordinationv1.Lease {
	var l coordinationv1.Lease
	if json.Unmarshal([]byte(body), &l) != nil {
		return nil
	}
	return &l
}

// LedgerState is a run's ledger as its page shows it.
type LedgerState struct {
	// Lease is the ledger's lease name.
	Lease   string
	Fenced  bool
	Effects []Effect
}

// Counts are the ledger's writes that landed, those that landed from a stale leader (damage),
// and those refused.
func (s LedgerState) Counts() (landed, damage, refused int) {
	for _, e := range s.Effects {
		switch {
		case e.Damage():
			landed++
			damage++
		case e.Accepted:
			landed++
		case e.Refused():
			refused++
		}
	}
	return landed, damage, refused
}
