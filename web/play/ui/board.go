package ui

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/lease/judge"
	"github.com/leaselab/leaselab/web/lease/views"
)

// The board keeps the dashboard's lease cards and feed as the judge decides them and pushes
// what changes to open dashboards. It follows the store's watch of leases, and wakes when a
// held lease runs out, so that an expiry is told by the server, once, when it happens; a
// dashboard that was disconnected gets the whole board again when it reconnects. It pushes
// its verdicts two ways: as JSON (/ui/board/watch, for programs) and, with the candidate
// tabs and the election controller's decisions, as the dashboard's own HTML (live, over
// /ui/dashboard/watch), which the page's script puts in place and decides nothing about.
type board struct {
	read *reader
	// dfeed says which leases have new election decisions.
	dfeed *decisionFeed

	mu      sync.Mutex
	started bool
	leases  map[leaseKey]*boardLease
	cands   map[leaseKey]templates.CandidateRow
	live    *liveDash
	feed    []templates.FeedItem // newest last, at most maxBoardFeed
	subs    map[*boardSub]struct{}
	wake    chan struct{}
	// recheck holds the leases to judge again once a disagreement begun at their last change
	// has lasted judge.OverlapGrace: only then is it a split brain to tell.
	recheck map[leaseKey]time.Time
	// from is the revision the board's watches started after; seenLease and seenViews the
	// revision of the last change of each lease, and of a view of it, they delivered. Each
	// change is handed to the lease's history and views caches as it arrives, so that judging
	// the lease reads nothing from the change log (known).
	from      int64
	seenLease map[leaseKey]int64
	seenViews map[leaseKey]int64
	// gone holds the keys of the feed lines told of deleted leases, at most maxGone of them:
	// a lease created again under the same name then does not tell its history a second time.
	gone map[leaseKey]map[string]bool
}

// maxGone bounds board.gone; past it a lease created again may tell its history before its
// deletion twice.
const maxGone = 1000

// boardLease is what the board knows of one lease.
type boardLease struct {
	lease *coordinationv1.Lease
	cur   judge.Change
	card  boardCard
	view  templates.LeaseCard // the card as the page renders it, before dressCard
	told  map[string]bool     // keys of the feed lines already told
}

// boardCard is a lease card as the board's JSON tells it.
type boardCard struct {
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	Holder          string `json:"holder"`
	Status          string `json:"status"`
	SinceMs         int64  `json:"sinceMs"`
	ExpiresMs       int64  `json:"expiresMs"`
	DurationSeconds int32  `json:"durationSeconds"`
	Transitions     int32  `json:"transitions"`
	Strategy        string `json:"strategy"`
	PreferredHolder string `json:"preferredHolder"`
	// Overlaps counts the lease's split-brain intervals in the recorded window;
	// OverlapText tells the newest.
	Overlaps    int    `json:"overlaps"`
	OverlapText string `json:"overlapText"`
	// overlapSays is OverlapText in both languages: each dashboard gets its own.
	overlapSays i18n.Text
}

// boardCandidate is a LeaseCandidate row as the board's JSON tells it.
type boardCandidate struct {
	Namespace        string `json:"namespace"`
	Name             string `json:"name"`
	LeaseName        string `json:"leaseName"`
	BinaryVersion    string `json:"binaryVersion"`
	EmulationVersion string `json:"emulationVersion"`
	// Strategies is how the strategy column reads (judge.StrategiesText); V1alpha1 marks a
	// candidate written through v1alpha1.
	Strategies string `json:"strategies"`
	V1alpha1   bool   `json:"v1alpha1"`
	PingTime   string `json:"pingTime"`
	RenewTime  string `json:"renewTime"`
}

// boardFeedItem is a feed line as the board's JSON tells it.
type boardFeedItem struct {
	AtMs      int64     `json:"atMs"`
	At        string    `json:"at"`
	Kind      string    `json:"kind"`
	Icon      string    `json:"icon"`
	Text      string    `json:"text"`
	Namespace string    `json:"namespace"`
	Lease     string    `json:"lease"`
	says      i18n.Text // Text in both languages
}

// boardMessage is one message of the board's stream. Reset replaces every card and the feed;
// otherwise Cards changed, Gone were deleted, Feed are new lines (oldest first) and Renewals
// counts the renewals since the last message; Candidates and CandidatesGone are the
// LeaseCandidate rows that changed and those deleted.
type boardMessage struct {
	Type           string           `json:"type"`
	Reset          bool             `json:"reset,omitempty"`
	Cards          []boardCard      `json:"cards"`
	Gone           []boardCard      `json:"gone,omitempty"`
	Candidates     []boardCandidate `json:"candidates"`
	CandidatesGone []boardCandidate `json:"candidatesGone,omitempty"`
	Feed           []boardFeedItem  `json:"feed"`
	Renewals       int              `json:"renewals,omitempty"`
	// renewalsIn counts Renewals by namespace, for the dashboards that follow one.
	renewalsIn map[string]int
}

// empty says whether msg tells nothing.
func (msg boardMessage) empty() bool {
	return len(msg.Cards)+len(msg.Gone)+len(msg.Feed)+msg.Renewals+len(msg.Candidates)+len(msg.CandidatesGone) == 0
}

// inNamespace is msg for a dashboard that follows namespace ns ("": every namespace). A
// participant's dashboard opens on the participant's own namespace; sending it every other
// lease's renewals ten times a second cost the server a TLS write per dashboard and message
// for cards the page hides (BENCHMARKS.md, "Decisions and the figures behind them").
func (msg boardMessage) inNamespace(ns string) boardMessage {
	if ns == "" {
		return msg
	}
	out := boardMessage{Type: msg.Type, Reset: msg.Reset, Renewals: msg.renewalsIn[ns]}
	out.Cards = keepNamespace(msg.Cards, ns, func(c boardCard) string { return c.Namespace })
	out.Gone = keepNamespace(msg.Gone, ns, func(c boardCard) string { return c.Namespace })
	out.Candidates = keepNamespace(msg.Candidates, ns, func(c boardCandidate) string { return c.Namespace })
	out.CandidatesGone = keepNamespace(msg.CandidatesGone, ns, func(c boardCandidate) string { return c.Namespace })
	out.Feed = keepNamespace(msg.Feed, ns, func(f boardFeedItem) string { return f.Namespace })
	return out
}

// keepNamespace is the items of namespace ns, never nil.
func keepNamespace[T any](items []T, ns string, namespace func(T) string) []T {
	out := make([]T, 0, len(items))
	for _, it := range items {
		if namespace(it) == ns {
			out = append(out, it)
		}
	}
	return out
}

// boardSub is one open dashboard.
type boardSub struct {
	lang i18n.Lang // the language the dashboard reads
	// namespace is the one namespace the dashboard follows; empty for all of them.
	namespace string
	outbox
}

const (
	// maxBoardFeed is how many feed lines the board keeps for dashboards that (re)connect.
	maxBoardFeed = 60
	// boardQueue bounds the messages waiting for one dashboard; one that falls further behind
	// is dropped and reconnects to a fresh board.
	boardQueue = 64
	// boardFlush spaces the board's messages: changes in between are sent together.
	boardFlush = 100 * time.Millisecond
)

func newBoard(read *reader, dfeed *decisionFeed) *board {
	return &board{read: read, dfeed: dfeed, leases: map[leaseKey]*boardLease{}, cands: map[leaseKey]templates.CandidateRow{},
		live: newLiveDash(), subs: map[*boardSub]struct{}{}, wake: make(chan struct{}, 1), recheck: map[leaseKey]time.Time{},
		seenLease: map[leaseKey]int64{}, seenViews: map[leaseKey]int64{}, gone: map[leaseKey]map[string]bool{}}
}

// subscribe adds a program following the board's JSON; its first message is the whole board.
// It starts the board on first use.
func (b *board) subscribe(ctx context.Context, namespace string) (*boardSub, error) {
	lang := i18n.FromContext(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.startLocked(ctx); err != nil {
		return nil, err
	}
	s := &boardSub{lang: lang, namespace: namespace, outbox: newOutbox()}
	s.msgs <- b.snapshotLocked(lang, namespace)
	b.subs[s] = struct{}{}
	return s, nil
}

func (b *board) unsubscribe(s *boardSub) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.subs, s)
}

// follow adds a dashboard of namespace ns ("": every namespace) for who, in the language of
// ctx, and returns its first messages, the whole live part (liveDash), which come before those
// it is sent. It starts the board on first use.
func (b *board) follow(ctx context.Context, ns string, who templates.SignedIn) (*dashSub, [][]byte, error) {
	lang := i18n.FromContext(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.startLocked(ctx); err != nil {
		return nil, nil, err
	}
	s := b.live.addLocked(lang, ns, who)
	return s, b.live.resetLocked(s, b.feed), nil
}

// unfollow removes a dashboard.
func (b *board) unfollow(s *dashSub) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.live.subs, s)
}

// startLocked starts the board unless it runs.
func (b *board) startLocked(ctx context.Context) error {
	if b.started {
		return nil
	}
	if err := b.start(ctx); err != nil {
		return err
	}
	b.started = true
	return nil
}

// start reads every lease, tells their history and follows their changes. Called with b.mu.
func (b *board) start(ctx context.Context) error {
	leases, rev, err := b.read.listLeases(ctx, "", moment{})
	if err != nil {
		return err
	}
	now := b.read.opts.Now()
	b.from = rev
	clear(b.seenLease)
	clear(b.seenViews)
	clear(b.gone)
	var feed []templates.FeedItem
	for _, l := range leases {
		// Read after the list: the caches then hold everything up to its revision.
		bl, items, err := b.tellLease(ctx, l, nil, now, known{changes: rev, views: rev})
		if err != nil {
			return err
		}
		b.leases[leaseKey{l.Namespace, l.Name}] = bl
		feed = append(feed, items...)
	}
	b.feed = slices.Clone(newestFeed(feed))
	slices.Reverse(b.feed)
	cands, candsRev, err := b.read.listCandidates(ctx, "", moment{})
	if err != nil {
		return err
	}
	for _, lc := range cands {
		b.cands[leaseKey{lc.Namespace, lc.Name}] = candidateRow(lc, now)
	}
	// The namespace filter lists the namespaces.
	namespaces, nsRev, err := b.read.listNamespaces(ctx, moment{})
	if err != nil {
		return err
	}
	// Candidates' views change the split-brain count; the leases were judged with every view
	// up to rev.
	watches, err := b.watch([]store.WatchOptions{{Resource: b.read.leases.StorageResource(), After: rev},
		{Resource: b.read.candidates.StorageResource(), After: candsRev}, {Resource: views.Resource, After: rev},
		{Resource: b.read.namespaces.StorageResource(), After: nsRev}})
	if err != nil {
		return err
	}
	// The candidate tabs and the election controller's decisions change the dashboard too.
	tabs := b.read.hub.addWatcher("", "")
	decided, stopDecided := b.dfeed.watch()
	b.live.loadLocked(b, namespaces, now)
	go func() {
		defer b.read.hub.removeWatcher(tabs)
		defer stopDecided()
		b.run(watches, tabs.notify, decided)
	}()
	return nil
}

// watch starts a store watch for each of opts; none when one fails.
func (b *board) watch(opts []store.WatchOptions) ([]store.Watch, error) {
	var out []store.Watch
	for _, o := range opts {
		w, err := b.read.store.Watch(b.read.opts.Context, o)
		if err != nil {
			for _, w := range out {
				w.Close()
			}
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// boardCandidateOf is a LeaseCandidate's row as the board's JSON tells it.
func boardCandidateOf(r templates.CandidateRow) boardCandidate {
	return boardCandidate{
		Namespace: r.Namespace, Name: r.Name, LeaseName: r.LeaseName, BinaryVersion: r.BinaryVersion,
		EmulationVersion: r.EmulationVersion, Strategies: r.Strategies, V1alpha1: r.V1alpha1,
		PingTime: r.PingTime, RenewTime: r.RenewTime,
	}
}

// tellLease judges one lease: its card, and the feed lines not told before (all of them when
// prev is nil).
func (b *board) tellLease(ctx context.Context, l *coordinationv1.Lease, prev *boardLease, now time.Time, k known) (*boardLease, []templates.FeedItem, error) {
	st, err := b.read.storyKnown(ctx, l, now, false, k)
	if err != nil {
		return nil, nil, err
	}
	bl := &boardLease{lease: l, cur: st.cur, card: cardOf(st.card), view: st.card, told: map[string]bool{}}
	if st.disagreeing {
		// Judge it again once the disagreement is long enough to tell, if nothing else does.
		b.recheck[leaseKey{l.Namespace, l.Name}] = now.Add(judge.OverlapGrace + boardFlush)
	}
	var fresh []templates.FeedItem
	for _, t := range st.told {
		k := t.Key()
		bl.told[k] = true
		if prev == nil || !prev.told[k] {
			fresh = append(fresh, feedItem(l.Namespace, l.Name, t))
		}
	}
	return bl, fresh, nil
}

// tellDeletedLocked tells what the deletion of lease k ended (its story read up to the
// deletion) and keeps the lines told of it in b.gone.
func (b *board) tellDeletedLocked(ctx context.Context, k leaseKey, prev *boardLease, now time.Time, seen known) []templates.FeedItem {
	told := prev.told
	var items []templates.FeedItem
	stub := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: k.ns, Name: k.name}}
	if bl, fresh, err := b.tellLease(ctx, stub, prev, now, seen); err != nil {
		b.read.log.Warn("dashboard board: lease history", slog.Any("error", err))
	} else {
		told, items = bl.told, fresh
	}
	if len(b.gone) >= maxGone {
		for g := range b.gone {
			delete(b.gone, g)
			break
		}
	}
	b.gone[k] = told
	return items
}

// cardOf is the card the script draws.
func cardOf(c templates.LeaseCard) boardCard {
	return boardCard{
		Namespace: c.Namespace, Name: c.Name, Holder: c.Holder, Status: c.Status,
		SinceMs: c.SinceMs, ExpiresMs: c.ExpiresAtMs, DurationSeconds: c.DurationSeconds,
		Transitions: c.Transitions, Strategy: c.Strategy, PreferredHolder: c.PreferredHolder,
		Overlaps: c.Overlaps, OverlapText: c.OverlapText, overlapSays: c.OverlapSays,
	}
}

// run applies the changes of the watches (of leases, LeaseCandidates, candidate views and
// namespaces), the leases running out and the changes of the candidate tabs (tabs) and of the
// election decisions (decided), every boardFlush at most.
func (b *board) run(watches []store.Watch, tabs, decided <-chan struct{}) {
	for _, w := range watches {
		defer w.Close()
	}
	w, cw, vw, nw := watches[0], watches[1], watches[2], watches[3]
	ctx := b.read.opts.Context
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var pending []store.Event
	gathering := false
	for {
		var ev store.Event
		ok := true
		select {
		case <-ctx.Done():
			return
		case ev, ok = <-w.Events():
		case ev, ok = <-cw.Events():
		case ev, ok = <-vw.Events():
		case ev, ok = <-nw.Events():
		case <-tabs:
		case <-decided:
		case <-timer.C:
			wait := b.apply(ctx, pending)
			pending, gathering = pending[:0], false
			timer.Reset(max(wait, boardFlush))
			continue
		}
		if !ok {
			b.ended(watches)
			return
		}
		if ev.Object.Resource != "" {
			pending = append(pending, ev)
		}
		// Gather what else arrives within boardFlush.
		if !gathering {
			gathering = true
			timer.Reset(boardFlush)
		}
	}
}

// ended logs why a watch ended (fell behind, compacted, store closed) and restarts the board.
func (b *board) ended(watches []store.Watch) {
	for _, w := range watches {
		if err := w.Err(); err != nil && !errors.Is(err, context.Canceled) {
			b.read.log.Warn("dashboard board: watch ended", slog.Any("error", err))
		}
	}
	b.restart()
}

// restart forgets the board after its watch ended (fell behind, compacted, store closed): the
// dashboards reconnect and the next one starts it afresh.
func (b *board) restart() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.started = false
	clear(b.leases)
	clear(b.cands)
	clear(b.recheck)
	clear(b.gone)
	for s := range b.subs {
		s.drop()
		delete(b.subs, s)
	}
	b.live.dropAllLocked()
}

// apply judges the leases that changed and those whose hold ran out, pushes the result to every
// dashboard and returns how long until the next held lease runs out.
func (b *board) apply(ctx context.Context, evs []store.Event) time.Duration {
	now := b.read.opts.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	msg := boardMessage{Type: "board"}
	// dirty are the leases to judge again, each as it now is (nil: deleted).
	dirty := map[leaseKey]*coordinationv1.Lease{}
	for _, ev := range evs {
		switch ev.Object.Resource {
		case views.Resource:
			b.applyViewLocked(dirty, ev)
		case b.read.leases.StorageResource():
			b.applyLeaseLocked(&msg, dirty, ev)
		case b.read.namespaces.StorageResource():
			b.live.namespaceLocked(ev)
		default:
			b.applyCandidateLocked(&msg, ev, now)
		}
	}
	b.markDueLocked(dirty, now)
	feed := b.judgeLocked(ctx, &msg, dirty, now)
	b.addFeedLocked(&msg, feed)
	if !msg.empty() {
		b.broadcastLocked(msg)
	}
	b.live.flushLocked(b, msg, feed, now)
	return b.nextExpiryLocked(now).Sub(now)
}

// applyViewLocked takes a candidate's view: its lease is judged again, unless the lease changed
// too.
func (b *board) applyViewLocked(dirty map[leaseKey]*coordinationv1.Lease, ev store.Event) {
	k := leaseKey{ev.Object.Namespace, ev.Object.Name}
	_, k.name = views.LeaseOf(ev.Object)
	b.read.views.Observe(ev, b.seen(b.seenViews, k))
	b.seenViews[k] = ev.Object.Revision
	b.markLocked(dirty, k)
}

// applyLeaseLocked takes a lease's change into its history and marks it dirty, counting a
// renewal in msg.
func (b *board) applyLeaseLocked(msg *boardMessage, dirty map[leaseKey]*coordinationv1.Lease, ev store.Event) {
	k := leaseKey{ev.Object.Namespace, ev.Object.Name}
	if ev.Type == store.Deleted {
		b.read.hist.observe(k.ns, k.name, nil, ev.Object.Revision, ev.Time, b.seen(b.seenLease, k))
		b.seenLease[k] = ev.Object.Revision
		dirty[k] = nil
		return
	}
	l, err := b.read.decodeLease(ev.Object)
	if err != nil {
		b.read.log.Warn("dashboard board: undecodable lease", slog.Any("error", err))
		return
	}
	b.read.hist.observe(k.ns, k.name, l, ev.Object.Revision, ev.Time, b.seen(b.seenLease, k))
	b.seenLease[k] = ev.Object.Revision
	if prev := b.leases[k]; prev != nil {
		if judge.Renewal(prev.cur, judge.ChangeOf(l, ev.Object.Revision, ev.Time, &prev.cur)) {
			msg.Renewals++
			if msg.renewalsIn == nil {
				msg.renewalsIn = map[string]int{}
			}
			msg.renewalsIn[k.ns]++
		}
	}
	dirty[k] = l
}

// markLocked marks lease k, as the board has it, to be judged again, unless it is dirty already.
func (b *board) markLocked(dirty map[leaseKey]*coordinationv1.Lease, k leaseKey) {
	if bl := b.leases[k]; bl != nil {
		if _, ok := dirty[k]; !ok {
			dirty[k] = bl.lease
		}
	}
}

// markDueLocked marks the leases whose hold ran out by now, and those due a check again.
func (b *board) markDueLocked(dirty map[leaseKey]*coordinationv1.Lease, now time.Time) {
	for k, bl := range b.leases {
		if _, ok := dirty[k]; !ok && bl.card.Status == judge.StatusHeld && judge.Status(bl.cur, now) != judge.StatusHeld {
			dirty[k] = bl.lease
		}
	}
	for k, at := range b.recheck {
		if !at.After(now) {
			delete(b.recheck, k)
			b.markLocked(dirty, k)
		}
	}
}

// judgeLocked judges the dirty leases again: their cards, and those of deleted leases, go to msg;
// it returns what the feed tells of them.
func (b *board) judgeLocked(ctx context.Context, msg *boardMessage, dirty map[leaseKey]*coordinationv1.Lease, now time.Time) []templates.FeedItem {
	var feed []templates.FeedItem
	for k, l := range dirty {
		prev := b.leases[k]
		seen := known{changes: b.seen(b.seenLease, k), views: b.seen(b.seenViews, k)}
		if l == nil {
			if prev != nil {
				delete(b.leases, k)
				msg.Gone = append(msg.Gone, prev.card)
				feed = append(feed, b.tellDeletedLocked(ctx, k, prev, now, seen)...)
			}
			continue
		}
		if told := b.gone[k]; prev == nil && told != nil {
			prev = &boardLease{told: told}
			delete(b.gone, k)
		}
		bl, items, err := b.tellLease(ctx, l, prev, now, seen)
		if err != nil {
			b.read.log.Warn("dashboard board: lease history", slog.Any("error", err))
			continue
		}
		b.leases[k] = bl
		msg.Cards = append(msg.Cards, bl.card)
		feed = append(feed, items...)
	}
	return feed
}

// addFeedLocked adds feed, in time order, to msg and to the feed the board keeps for the next
// dashboard.
func (b *board) addFeedLocked(msg *boardMessage, feed []templates.FeedItem) {
	slices.SortStableFunc(feed, func(a, c templates.FeedItem) int { return cmp.Compare(a.AtMs, c.AtMs) })
	for _, f := range feed {
		msg.Feed = append(msg.Feed, boardItem(f))
	}
	b.feed = append(b.feed, feed...)
	if n := len(b.feed); n > maxBoardFeed {
		b.feed = slices.Clone(b.feed[n-maxBoardFeed:])
	}
}

// seen is the revision of the last change of lease k the board's watch delivered in seen,
// or the revision the watches started after.
func (b *board) seen(seen map[leaseKey]int64, k leaseKey) int64 {
	if rev, ok := seen[k]; ok {
		return rev
	}
	return b.from
}

// applyCandidateLocked adds a LeaseCandidate's change to msg.
func (b *board) applyCandidateLocked(msg *boardMessage, ev store.Event, now time.Time) {
	k := leaseKey{ev.Object.Namespace, ev.Object.Name}
	if ev.Type == store.Deleted {
		if r, ok := b.cands[k]; ok {
			delete(b.cands, k)
			msg.CandidatesGone = append(msg.CandidatesGone, boardCandidateOf(r))
		}
		return
	}
	obj, err := decodeStored(b.read.reg, b.read.candidates, ev.Object)
	lc, ok := obj.(*coordinationv1beta1.LeaseCandidate)
	if err != nil || !ok {
		b.read.log.Warn("dashboard board: undecodable lease candidate", slog.Any("error", err))
		return
	}
	r := candidateRow(lc, now)
	b.cands[k] = r
	msg.Candidates = append(msg.Candidates, boardCandidateOf(r))
}

// nextExpiryLocked is when the next held lease runs out; an hour from now when none is held.
func (b *board) nextExpiryLocked(now time.Time) time.Time {
	next := now.Add(time.Hour)
	for _, at := range b.recheck {
		if at.Before(next) {
			next = at
		}
	}
	for _, bl := range b.leases {
		if bl.card.Status != judge.StatusHeld {
			continue
		}
		if exp := bl.cur.Expiry(); !exp.IsZero() && exp.Before(next) {
			next = exp
		}
	}
	return next
}

func (b *board) broadcastLocked(msg boardMessage) {
	// Each language and namespace followed is encoded once; nil: nothing to tell there.
	type audience struct {
		lang i18n.Lang
		ns   string
	}
	encoded := map[audience][]byte{}
	for s := range b.subs {
		a := audience{s.lang, s.namespace}
		data, ok := encoded[a]
		if !ok {
			if m := msg.inNamespace(a.ns); !m.empty() {
				var err error
				if data, err = json.Marshal(m.in(a.lang)); err != nil {
					b.read.log.Error("dashboard board: encode", slog.Any("error", err))
					return
				}
			}
			encoded[a] = data
		}
		if data == nil {
			continue
		}
		if !s.offer(data) {
			delete(b.subs, s) // it reconnects and gets the whole board
		}
	}
}

// in is msg with its sentences in lang.
func (msg boardMessage) in(lang i18n.Lang) boardMessage {
	out := msg
	out.Cards = slices.Clone(msg.Cards)
	for i := range out.Cards {
		if c := &out.Cards[i]; !c.overlapSays.IsZero() {
			c.OverlapText = c.overlapSays.In(lang)
		}
	}
	out.Feed = slices.Clone(msg.Feed)
	for i := range out.Feed {
		if f := &out.Feed[i]; !f.says.IsZero() {
			f.Text = f.says.In(lang)
		}
	}
	return out
}

// snapshotLocked is the whole board as one message, in lang, of namespace ns ("": all).
func (b *board) snapshotLocked(lang i18n.Lang, ns string) []byte {
	msg := boardMessage{Type: "board", Reset: true, Cards: make([]boardCard, 0, len(b.leases)), Feed: make([]boardFeedItem, 0, len(b.feed))}
	for _, bl := range b.leases {
		msg.Cards = append(msg.Cards, bl.card)
	}
	for _, f := range b.feed {
		msg.Feed = append(msg.Feed, boardItem(f))
	}
	msg.Candidates = make([]boardCandidate, 0, len(b.cands))
	for _, r := range b.cands {
		msg.Candidates = append(msg.Candidates, boardCandidateOf(r))
	}
	slices.SortFunc(msg.Candidates, func(a, c boardCandidate) int {
		return strings.Compare(a.Namespace+"/"+a.Name, c.Namespace+"/"+c.Name)
	})
	data, _ := json.Marshal(msg.inNamespace(ns).in(lang))
	return data
}

func boardItem(f templates.FeedItem) boardFeedItem {
	return boardFeedItem{AtMs: f.AtMs, At: f.At, Kind: f.Kind, Icon: templates.IconName(f.Kind), Text: f.Text, Namespace: f.Namespace, Lease: f.Lease, says: f.Says}
}

// boardWatch serves GET /ui/board/watch: the WebSocket that keeps a dashboard's lease cards and
// feed current. The first message is the whole board, then what changes; the stream is
// write-only (anything the browser sends closes it).
func (u *dashboardScreen) boardWatch(c echo.Context) error {
	conn, err := acceptWS(c, watchReadLimit)
	if err != nil {
		u.log.Debug("board watch refused", slog.Any("error", err))
		return nil
	}
	sub, err := u.board.subscribe(c.Request().Context(), c.QueryParam("namespace"))
	if err != nil {
		u.log.Error("dashboard board", slog.Any("error", err))
		conn.Close(websocket.StatusInternalError, "the board could not be read") //said:english a WebSocket close reason, read by developers
		return nil
	}
	defer u.board.unsubscribe(sub)
	ctx := conn.CloseRead(u.opts.Context)
	for {
		select {
		case <-ctx.Done():
			conn.Close(websocket.StatusNormalClosure, "")
			return nil
		case <-sub.dropped:
			conn.Close(websocket.StatusTryAgainLater, "fell behind: reconnect")
			return nil
		case msg := <-sub.msgs:
			if err := wsWrite(ctx, conn, msg); err != nil {
				conn.Close(websocket.StatusGoingAway, "write failed")
				return nil
			}
		}
	}
}
