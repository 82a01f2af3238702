package ui

import (
	"cmp"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// maxDecisions is how many election decisions the lease page lists.
const maxDecisions = 30

// decisionsChanged tells the UI that the election controller decided something about a lease:
// every open dashboard is sent the lease's latest decision. It never blocks; changes that come
// faster than dashboards take them are folded together. New calls it for every decision the
// controller publishes (Elections.Subscribe).
func (u *tabScreen) decisionsChanged(namespace, lease string) {
	u.dfeed.touch(leaseKey{namespace, lease})
}

// electionDecisions adapts the controller's Decisions for the screens.
func electionDecisions(list func(namespace, lease string) []election.Decision) func(namespace, lease string) []templates.DecisionView {
	return func(namespace, lease string) []templates.DecisionView {
		ds := list(namespace, lease)
		out := make([]templates.DecisionView, len(ds))
		for i, d := range ds {
			out[i] = templates.DecisionView{At: d.Time, Kind: string(d.Kind), Icon: judge.DecisionIcon(string(d.Kind)), Word: judge.DecisionWord(string(d.Kind)), Candidate: d.Candidate, Message: d.Message, Says: d.Says.Both()}
		}
		return out
	}
}

// decisionsFunc returns the source of decisions, nil when the controller does not run.
func (u *reader) decisionsFunc() func(namespace, lease string) []templates.DecisionView {
	return u.decisions
}

// decisionViews orders decisions newest first, keeps the latest maxDecisions and fills in
// their times for the page.
func decisionViews(ds []templates.DecisionView, now time.Time) []templates.DecisionView {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b templates.DecisionView) int { return b.At.Compare(a.At) })
	if len(out) > maxDecisions {
		out = out[:maxDecisions]
	}
	for i := range out {
		fillDecision(&out[i], now)
	}
	return out
}

func fillDecision(d *templates.DecisionView, now time.Time) {
	d.AtMs = d.At.UnixMilli()
	d.Time = clockTime(d.At)
	d.Age = ageText(d.At, now)
	d.AgeSays = ageSays(d.At, now)
}

// latestDecision is the decision of f about a lease that the dashboard shows, with its times
// filled in: the newest outcome. Pings, waits and retried conflicts are the controller's routine between
// outcomes (while candidates disagree, it pings them again every few seconds), so they are
// shown only when nothing else was decided yet; otherwise a conflict would blink between
// "conflict" and "ping".
func latestDecision(f func(namespace, lease string) []templates.DecisionView, k leaseKey, now time.Time) (templates.DecisionView, bool) {
	if f == nil {
		return templates.DecisionView{}, false
	}
	ds := f(k.ns, k.name)
	if len(ds) == 0 {
		return templates.DecisionView{}, false
	}
	routine := func(d templates.DecisionView) bool {
		return d.Kind == string(election.KindPing) || d.Kind == string(election.KindWait) || d.Kind == string(election.KindRetry)
	}
	// An outcome beats routine; otherwise the newer wins (the log is oldest first, so the last
	// of equal times).
	better := func(d, than templates.DecisionView) bool {
		if routine(d) != routine(than) {
			return !routine(d)
		}
		return !d.At.Before(than.At)
	}
	latest := ds[0]
	for _, d := range ds[1:] {
		if better(d, latest) {
			latest = d
		}
	}
	fillDecision(&latest, now)
	return latest, true
}

// maxPushedMessage bounds a decision's message as pushed to dashboards.
const maxPushedMessage = 2000

// decisionSummary is a lease's latest decision as dashboards get it over /ui/tabs/watch.
type decisionSummary struct {
	Namespace string `json:"namespace"`
	Lease     string `json:"lease"`
	// Kind is "" when there is no decision (any more) about the lease.
	Kind string `json:"kind"`
	// Icon and Word are how the kind is drawn: the icon's name and the badge's word.
	Icon      string `json:"icon"`
	Word      string `json:"word"`
	Candidate string `json:"candidate"`
	Message   string `json:"message"`
	AtMs      int64  `json:"atMs"`
	Time      string `json:"time"`
}

// decisionsMessage encodes the "decisions" message with the latest decision about each of keys,
// its sentences in lang.
func (u *tabScreen) decisionsMessage(keys []leaseKey, lang i18n.Lang) []byte {
	f := u.decisionsFunc()
	now := u.opts.Now()
	msg := struct {
		Type      string            `json:"type"`
		Election  bool              `json:"election"`
		Decisions []decisionSummary `json:"decisions"`
	}{Type: "decisions", Election: f != nil, Decisions: make([]decisionSummary, 0, len(keys))}
	for _, k := range keys {
		s := decisionSummary{Namespace: k.ns, Lease: k.name}
		if d, ok := latestDecision(f, k, now); ok {
			message := d.Message
			if !d.Says.IsZero() {
				message = d.Says.In(lang)
			}
			s.Kind, s.Icon, s.Word, s.Candidate, s.Message, s.AtMs, s.Time = d.Kind, d.Icon, d.Word, d.Candidate, tabproto.Cut(message, maxPushedMessage), d.AtMs, d.Time
		}
		msg.Decisions = append(msg.Decisions, s)
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return []byte(`{"type":"decisions","decisions":[]}`)
	}
	return b
}

// maxFeedLeases bounds how many leases the decision feed remembers; the one that changed
// longest ago is forgotten first (as the controller forgets the idlest lease's decisions).
const maxFeedLeases = 4096

// decisionFeed remembers which leases have new decisions, by a sequence number, and wakes the
// dashboards that follow it. Each dashboard keeps its own cursor: after a wake-up it sends the
// leases changed since.
type decisionFeed struct {
	mu       sync.Mutex
	seq      uint64
	changed  map[leaseKey]uint64
	watchers map[chan struct{}]struct{}
}

func newDecisionFeed() *decisionFeed {
	return &decisionFeed{changed: map[leaseKey]uint64{}, watchers: map[chan struct{}]struct{}{}}
}

// touch records that k has a new decision and wakes every watcher.
func (f *decisionFeed) touch(k leaseKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.changed[k]; !ok && len(f.changed) >= maxFeedLeases {
		var oldest leaseKey
		lowest := f.seq + 1
		for key, s := range f.changed {
			if s < lowest {
				oldest, lowest = key, s
			}
		}
		delete(f.changed, oldest)
	}
	f.seq++
	f.changed[k] = f.seq
	f.wakeLocked()
}

func (f *decisionFeed) wakeLocked() {
	for ch := range f.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// since returns the leases changed after cursor, by namespace and name, and the new cursor.
func (f *decisionFeed) since(cursor uint64) ([]leaseKey, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keys []leaseKey
	for k, s := range f.changed {
		if s > cursor {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b leaseKey) int {
		return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name))
	})
	return keys, f.seq
}

// watch returns a channel that gets a signal (folded, it has room for one) after changes, and
// a function that stops it.
func (f *decisionFeed) watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	f.mu.Lock()
	f.watchers[ch] = struct{}{}
	f.mu.Unlock()
	return ch, func() {
		f.mu.Lock()
		delete(f.watchers, ch)
		f.mu.Unlock()
	}
}
