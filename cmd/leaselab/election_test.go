package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// The Coordinated Leader Election tests run client-go's coordinated electors (each with its
// LeaseCandidate helper) against leaselab with the election controller on, with short timings:
// the controller waits 1s for pings and looks again every 500ms; the electors hold 2s leases.
const (
	cleNamespace     = "default"
	cleLease         = "cle-demo"
	cleLeaseDuration = 2 * time.Second
	cleRenewDeadline = 1500 * time.Millisecond
	cleRetryPeriod   = 200 * time.Millisecond
)

func mustStartCLEServer(tb testing.TB) *testServer {
	tb.Helper()
	return mustStartServerWith(tb, "", func(c *serveConfig) {
		c.cleController = true
		c.cleElectionDuration = time.Second
		c.cleRequeueInterval = 500 * time.Millisecond
		c.cleLeaseDuration = 2 * time.Second
	})
}

// cleTerms records the electors' OnStartedLeading and OnStoppedLeading, and whether two ever led
// at once.
type cleTerms struct {
	mu      sync.Mutex
	leading map[string]bool
	events  []cleTermEvent
	overlap []string
}

type cleTermEvent struct {
	at      time.Time
	id      string
	started bool
}

func newCLETerms() *cleTerms { return &cleTerms{leading: map[string]bool{}} }

func (r *cleTerms) started(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for other := range r.leading {
		r.overlap = append(r.overlap, fmt.Sprintf("%s started while %s led", id, other))
	}
	r.leading[id] = true
	r.events = append(r.events, cleTermEvent{time.Now(), id, true})
}

func (r *cleTerms) stopped(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.leading[id] {
		return // Run calls OnStoppedLeading also for electors that never led
	}
	delete(r.leading, id)
	r.events = append(r.events, cleTermEvent{time.Now(), id, false})
}

// leader returns the one elector that leads, "" when none does.
func (r *cleTerms) leader() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.leading {
		return id
	}
	return ""
}

func (r *cleTerms) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.started {
			out = append(out, "start "+e.id)
		} else {
			out = append(out, "stop "+e.id)
		}
	}
	return out
}

func (r *cleTerms) startedAt(id string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e.started && e.id == id {
			return e.at
		}
	}
	return time.Time{}
}

func (r *cleTerms) checkNoOverlap(tb testing.TB) {
	tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.overlap) > 0 {
		tb.Errorf("two leaders at once: %v", r.overlap)
	}
}

// cleElector is one component: a LeaseCandidate helper and a coordinated elector.
type cleElector struct {
	id     string
	cancel context.CancelFunc
	done   chan struct{}
}

// startCLEElector declares a candidate and runs a coordinated elector for it until stopped or
// the test ends. It returns once the candidate exists.
func startCLEElector(tb testing.TB, ts *testServer, terms *cleTerms, id, binary, emulation string) *cleElector {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e := &cleElector{id: id, cancel: cancel, done: make(chan struct{})}
	cand, syncer, err := leaderelection.NewCandidate(ts.Client, cleNamespace, id, cleLease, binary, emulation, coordinationv1.OldestEmulationVersion)
	if err != nil {
		tb.Fatal(err)
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: cleNamespace, Name: cleLease},
			Client:     ts.Client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		},
		LeaseDuration:   cleLeaseDuration,
		RenewDeadline:   cleRenewDeadline,
		RetryPeriod:     cleRetryPeriod,
		ReleaseOnCancel: true,
		Coordinated:     true,
		Name:            cleLease,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { terms.started(id) },
			OnStoppedLeading: func() { terms.stopped(id) },
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { cand.Run(ctx) })
	syncer.WaitForCacheSync(ctx.Done())
	wg.Go(func() { le.Run(ctx) })
	go func() { wg.Wait(); close(e.done) }()
	tb.Cleanup(e.stop)
	cleWait(tb, 10*time.Second, "candidate "+id+" declared", func() bool {
		_, err := ts.Client.CoordinationV1beta1().LeaseCandidates(cleNamespace).Get(ctx, id, metav1.GetOptions{})
		return err == nil
	})
	return e
}

// stop ends the elector (which releases the lease if it holds it) and its candidate helper.
func (e *cleElector) stop() {
	e.cancel()
	<-e.done
}

// cleHolders follows the Lease with a watch: the sequence of holders (consecutive repeats
// folded) and the preferredHolder requests seen, as "preferred by holder".
type cleHolders struct {
	mu        sync.Mutex
	holders   []string
	preferred []string
}

func watchCLEHolders(tb testing.TB, ts *testServer) *cleHolders {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := ts.Client.CoordinationV1().Leases(cleNamespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", cleLease).String(),
	})
	if err != nil {
		tb.Fatal(err)
	}
	h := &cleHolders{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			l, ok := ev.Object.(*coordinationv1.Lease)
			if !ok {
				continue
			}
			holder := ""
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			h.mu.Lock()
			if len(h.holders) == 0 || h.holders[len(h.holders)-1] != holder {
				h.holders = append(h.holders, holder)
			}
			if l.Spec.PreferredHolder != nil {
				p := *l.Spec.PreferredHolder + " by " + holder
				if !slices.Contains(h.preferred, p) {
					h.preferred = append(h.preferred, p)
				}
			}
			h.mu.Unlock()
		}
	}()
	tb.Cleanup(func() { cancel(); w.Stop(); <-done })
	return h
}

// leaders returns the non-empty holders in order, consecutive repeats folded.
func (h *cleHolders) leaders() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, x := range h.holders {
		if x != "" && (len(out) == 0 || out[len(out)-1] != x) {
			out = append(out, x)
		}
	}
	return out
}

func (h *cleHolders) preferredRequests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.preferred)
}

func cleWait(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	poll.Until(tb, d, what, func() (bool, string) { return cond(), "not yet" })
}

// keepsLeading fails the test as soon as leading() is anything but holder alone or the Lease
// names another holder, until the Lease shows a renewal by holder at or after until: a leader
// must be seen to keep its term through renewals, not merely found leading after a pause.
func keepsLeading(tb testing.TB, ts *testServer, holder string, until time.Time, leading func() []string) {
	tb.Helper()
	poll.Until(tb, time.Until(until)+10*time.Second, holder+" keeps leading", func() (bool, string) {
		if l := leading(); !slices.Equal(l, []string{holder}) {
			tb.Fatalf("leaders = %v, want [%s]", l, holder)
		}
		l, err := ts.Client.CoordinationV1().Leases(cleNamespace).Get(context.Background(), cleLease, metav1.GetOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		if h := ptr.Deref(l.Spec.HolderIdentity, ""); h != holder {
			tb.Fatalf("holder = %q, want %s", h, holder)
		}
		if l.Spec.RenewTime == nil {
			return false, "no renewTime"
		}
		return !l.Spec.RenewTime.Time.Before(until), "last renewal " + l.Spec.RenewTime.Format(time.StampMilli)
	})
}

// leaseHolder reads the Lease's holder from the API.
func leaseHolder(tb testing.TB, ts *testServer) string {
	tb.Helper()
	l, err := ts.Client.CoordinationV1().Leases(cleNamespace).Get(context.Background(), cleLease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		tb.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitLeading waits until id leads by its elector's account and holds the Lease.
func waitLeading(tb testing.TB, ts *testServer, terms *cleTerms, id string) {
	tb.Helper()
	cleWait(tb, 10*time.Second, id+" leading", func() bool { return terms.leader() == id && leaseHolder(tb, ts) == id })
}

func decisionsText(ds []election.Decision) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "  %s %-9s [%s] %s\n", d.Time.Format("15:04:05.000"), d.Kind, d.Candidate, d.Message)
	}
	return b.String()
}

func cleDecisions(ts *testServer) []election.Decision {
	return ts.election.Decisions(cleNamespace, cleLease)
}

// electedHolders returns the candidates of the elect decisions, in order.
func electedHolders(ds []election.Decision) []string {
	var out []string
	for _, d := range ds {
		if d.Kind == election.KindElect {
			out = append(out, d.Candidate)
		}
	}
	return out
}

// TestCoordinatedElectionOldestEmulationLeads starts three coordinated electors with different
// versions at once: the one with the oldest emulation version ends up leading, alone.
func TestCoordinatedElectionOldestEmulationLeads(t *testing.T) {
	t.Parallel()
	ts := mustStartCLEServer(t)
	terms := newCLETerms()
	var wg sync.WaitGroup
	for _, c := range []struct{ id, binary, emulation string }{
		{"cand-a", "1.36.0", "1.36.0"},
		{"cand-b", "1.36.0", "1.35.0"},
		{"cand-c", "1.37.0", "1.36.0"},
	} {
		wg.Go(func() { startCLEElector(t, ts, terms, c.id, c.binary, c.emulation) })
	}
	wg.Wait()
	waitLeading(t, ts, terms, "cand-b")
	terms.checkNoOverlap(t)
	ds := cleDecisions(ts)
	if h := electedHolders(ds); len(h) == 0 || h[len(h)-1] != "cand-b" {
		t.Errorf("elected %v, want cand-b last; decisions:\n%s", h, decisionsText(ds))
	}
	found := false
	for _, d := range ds {
		found = found || (d.Candidate == "cand-b" && strings.Contains(d.Message, "picked cand-b: emulation 1.35.0 < 1.36.0 of cand-"))
	}
	if !found {
		t.Errorf("no decision explains cand-b; decisions:\n%s", decisionsText(ds))
	}
	l, err := ts.Client.CoordinationV1().Leases(cleNamespace).Get(context.Background(), cleLease, metav1.GetOptions{})
	if err != nil || l.Spec.Strategy == nil || *l.Spec.Strategy != coordinationv1.OldestEmulationVersion {
		t.Errorf("lease = %+v, %v; want strategy OldestEmulationVersion", l, err)
	}
}

// TestCoordinatedElectionBetterCandidateJoins: a better candidate joining later gets the lease
// through preferredHolder and the holder's orderly step-down, with no moment of two leaders.
func TestCoordinatedElectionBetterCandidateJoins(t *testing.T) {
	t.Parallel()
	ts := mustStartCLEServer(t)
	holders := watchCLEHolders(t, ts)
	terms := newCLETerms()
	startCLEElector(t, ts, terms, "cand-a", "1.36.0", "1.36.0")
	waitLeading(t, ts, terms, "cand-a")
	startCLEElector(t, ts, terms, "cand-b", "1.36.0", "1.36.0")

	joined := time.Now()
	startCLEElector(t, ts, terms, "cand-c", "1.36.0", "1.35.0")
	waitLeading(t, ts, terms, "cand-c")
	t.Logf("cand-c leads %v after joining", time.Since(joined).Round(time.Millisecond))

	terms.checkNoOverlap(t)
	if got, want := terms.log(), []string{"start cand-a", "stop cand-a", "start cand-c"}; !slices.Equal(got, want) {
		t.Errorf("terms = %v, want %v", got, want)
	}
	if got, want := holders.leaders(), []string{"cand-a", "cand-c"}; !slices.Equal(got, want) {
		t.Errorf("holders = %v, want %v", got, want)
	}
	if got := holders.preferredRequests(); !slices.Equal(got, []string{"cand-c by cand-a"}) {
		t.Errorf("preferredHolder requests = %v, want cand-c while cand-a held the lease", got)
	}
	ds := cleDecisions(ts)
	var prefer, elect *election.Decision
	for i, d := range ds {
		switch {
		case d.Kind == election.KindPrefer && prefer == nil:
			prefer = &ds[i]
		case d.Kind == election.KindElect && d.Candidate == "cand-c":
			elect = &ds[i]
		}
	}
	if prefer == nil || prefer.Candidate != "cand-c" ||
		!strings.HasPrefix(prefer.Message, "set preferredHolder cand-c (holder cand-a must step down): picked cand-c: emulation 1.35.0 < 1.36.0 of cand-") {
		t.Fatalf("prefer decision = %+v; decisions:\n%s", prefer, decisionsText(ds))
	}
	if elect == nil || !strings.HasPrefix(elect.Message, "strategy OldestEmulationVersion (was none), assigned cand-c (the lease had no holder)") {
		t.Fatalf("elect decision = %+v; decisions:\n%s", elect, decisionsText(ds))
	}
	if started := terms.startedAt("cand-c"); started.Before(elect.Time) {
		t.Errorf("cand-c started leading at %v, before the controller assigned it at %v", started, elect.Time)
	}
}

// TestCoordinatedRollingUpgrade replaces three 1.35 components one by one with 1.36 ones, the
// leader last but one: the leader changes exactly when the controller elects a new holder, and
// to the candidate it names.
func TestCoordinatedRollingUpgrade(t *testing.T) {
	t.Parallel()
	ts := mustStartCLEServer(t)
	holders := watchCLEHolders(t, ts)
	terms := newCLETerms()
	electors := map[string]*cleElector{}
	for _, id := range []string{"old-1", "old-2", "old-3"} {
		electors[id] = startCLEElector(t, ts, terms, id, "1.35.0", "1.35.0")
		if id == "old-1" {
			waitLeading(t, ts, terms, "old-1")
		}
	}
	cands := ts.Client.CoordinationV1beta1().LeaseCandidates(cleNamespace)
	// replace stops a component and starts its successor, as a rolling update does; the
	// stopped component's candidate goes with it.
	replace := func(old, successor string) {
		t.Helper()
		if err := cands.Delete(context.Background(), old, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		electors[old].stop()
		electors[successor] = startCLEElector(t, ts, terms, successor, "1.36.0", "1.36.0")
	}
	steps := []struct {
		old, successor, leader string
	}{
		{"old-3", "new-1", "old-1"}, // not the leader: nothing changes
		{"old-1", "new-2", "old-2"}, // the leader: the oldest remaining 1.35 takes over
		{"old-2", "new-3", "new-1"}, // the last 1.35 leader: the oldest 1.36 takes over
	}
	for _, s := range steps {
		elected := len(electedHolders(cleDecisions(ts)))
		replace(s.old, s.successor)
		waitLeading(t, ts, terms, s.leader)
		if s.leader == "old-1" {
			// Give the controller a few rounds (every 500 ms) to disagree; it must not.
			keepsLeading(t, ts, "old-1", time.Now().Add(4*500*time.Millisecond), func() []string { return []string{terms.leader()} })
			if now := len(electedHolders(cleDecisions(ts))); now != elected {
				t.Errorf("the controller elected after a follower was replaced; decisions:\n%s", decisionsText(cleDecisions(ts)))
			}
		}
	}
	terms.checkNoOverlap(t)

	want := []string{"old-1", "old-2", "new-1"}
	ds := cleDecisions(ts)
	if got := holders.leaders(); !slices.Equal(got, want) {
		t.Errorf("holders = %v, want %v; decisions:\n%s", got, want, decisionsText(ds))
	}
	if got := electedHolders(ds); !slices.Equal(got, want) {
		t.Errorf("elect decisions = %v, want exactly one per holder %v; decisions:\n%s", got, want, decisionsText(ds))
	}
	var starts []string
	for _, e := range terms.log() {
		if id, ok := strings.CutPrefix(e, "start "); ok {
			starts = append(starts, id)
		}
	}
	if !slices.Equal(starts, want) {
		t.Errorf("terms = %v, want leaders %v", terms.log(), want)
	}
	for _, d := range ds {
		if d.Kind == election.KindElect {
			if at := terms.startedAt(d.Candidate); at.Before(d.Time) {
				t.Errorf("%s started leading at %v, before it was elected at %v", d.Candidate, at, d.Time)
			}
		}
	}
	for _, d := range ds {
		if d.Kind == election.KindElect && d.Candidate == "new-1" &&
			!strings.Contains(d.Message, "picked new-1: same versions as new-2 (emulation 1.36.0, binary 1.36.0), created earlier") &&
			!strings.Contains(d.Message, "picked new-1: same versions and creation time as new-2") {
			t.Errorf("new-1 elected because %q", d.Message)
		}
	}
}

// TestElectionFlags checks the controller's flags: on by default with kube-apiserver's
// constants, and a lease duration that is not whole seconds refused.
func TestElectionFlags(t *testing.T) {
	var cfg serveConfig
	fs := newFlagSet("serve", "", "", io.Discard)
	cfg.register(fs)
	if err := parseFlags(fs, nil); err != nil {
		t.Fatal(err)
	}
	if !cfg.coordinated || !cfg.cleController {
		t.Errorf("coordinated=%v controller=%v, want both on by default", cfg.coordinated, cfg.cleController)
	}
	opts, err := cfg.electionOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.ElectionDuration != 5*time.Second || opts.RequeueInterval != 5*time.Second || opts.LeaseDurationSeconds != 5 ||
		opts.CandidateValidDuration != 30*time.Minute || opts.GCPeriod != 30*time.Minute {
		t.Errorf("default options = %+v", opts)
	}

	if err := parseFlags(fs, []string{"--cle-election-duration=1s", "--cle-lease-duration=3s", "--cle-candidate-ttl=2m", "--cle-gc-period=1m", "--cle-requeue-interval=250ms"}); err != nil {
		t.Fatal(err)
	}
	opts, err = cfg.electionOptions(nil)
	if err != nil || opts.ElectionDuration != time.Second || opts.LeaseDurationSeconds != 3 || opts.CandidateValidDuration != 2*time.Minute ||
		opts.GCPeriod != time.Minute || opts.RequeueInterval != 250*time.Millisecond {
		t.Errorf("options = %+v, %v", opts, err)
	}
	cfg.cleLeaseDuration = 1500 * time.Millisecond
	if _, err := cfg.electionOptions(nil); err == nil {
		t.Error("--cle-lease-duration=1.5s accepted")
	}

	off := mustStartServerWith(t, "", func(c *serveConfig) { c.cleController = true; c.coordinated = false })
	if off.election != nil {
		t.Error("the controller runs with --coordinated-leader-election=false")
	}
}
