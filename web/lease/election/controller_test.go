package election_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/wasm/said"
	"github.com/leaselab/leaselab/web"
	"github.com/leaselab/leaselab/web/api/front"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/webtest"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// env is the controller on a fake clock against a real leaselab API (SQLite in a temporary
// directory, served on 127.0.0.1), with candidates that answer pings on the same fake clock as
// client-go's candidate helper does, unless muted.
type env struct {
	client kubernetes.Interface
	dyn    dynamic.Interface
	clock  *clocktesting.FakeClock
	ctrl   *election.Controller

	// failedSteps counts the controller's election steps that ended in an error (a strategy
	// conflict among them): the rounds that leave the Lease alone, seen in its log.
	failedSteps *atomic.Int64

	mu    sync.Mutex
	muted map[string]bool
	// asked lists the controller's requests, as "METHOD path?query".
	asked []string
}

// controllerAsked returns the requests the controller's client has made so far.
func (en *env) controllerAsked() []string {
	en.mu.Lock()
	defer en.mu.Unlock()
	return slices.Clone(en.asked)
}

// recordRequests is the controller's transport: it notes every request, then sends it.
type recordRequests struct {
	en   *env
	next http.RoundTripper
}

func (rr recordRequests) RoundTrip(r *http.Request) (*http.Response, error) {
	rr.en.mu.Lock()
	rr.en.asked = append(rr.en.asked, r.Method+" "+r.URL.RequestURI())
	rr.en.mu.Unlock()
	return rr.next.RoundTrip(r)
}

// countingHandler counts the log records with one message, whatever child logger wrote them.
type countingHandler struct {
	slog.Handler
	msg string
	n   *atomic.Int64
}

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	return h.Handler.Handle(ctx, r)
}

func (h countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return countingHandler{h.Handler.WithAttrs(as), h.msg, h.n}
}

func (h countingHandler) WithGroup(name string) slog.Handler {
	return countingHandler{h.Handler.WithGroup(name), h.msg, h.n}
}

// waitFor polls cond every 10 ms until it holds, and fails the test with cond's last account

// stepAndLookAgain advances the fake clock by d, then renews candidate name, as a live
// candidate does, and waits until the controller has looked at the Lease again in a step that
// ended in an error. A strategy conflict is only looked at again on an event; this is one that
// changes nothing the election depends on.
func (en *env) stepAndLookAgain(tb testing.TB, d time.Duration, name string) {
	tb.Helper()
	n := en.failedSteps.Load()
	en.clock.Step(d)
	cands := en.client.CoordinationV1beta1().LeaseCandidates(ns)
	c, err := cands.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	c.Spec.RenewTime = &metav1.MicroTime{Time: en.clock.Now()}
	if _, err := cands.Update(context.Background(), c, metav1.UpdateOptions{}); err != nil {
		tb.Fatal(err)
	}
	poll.Until(tb, 10*time.Second, "the controller looks again", func() (bool, string) {
		return en.failedSteps.Load() > n, "decisions:\n" + en.decisionText()
	})
}

const ns = "default"

func testLogger() *slog.Logger {
	var w io.Writer = io.Discard
	if os.Getenv("LEASELAB_TEST_LOG") != "" {
		w = os.Stderr
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// mustStartEnv starts the API server, the ping responder and the controller; configure may
// change the controller's options, and seed may write objects before the controller starts, so
// that it sees them all at once.
func mustStartEnv(tb testing.TB, configure func(*election.Options), seed func(*env)) *env {
	tb.Helper()
	failedSteps := new(atomic.Int64)
	logger := slog.New(countingHandler{testLogger().Handler(), "election step", failedSteps})
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC))
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { // after the server's and the controller's cleanups
		if err := db.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	srv := webtest.Start(tb, web.Config{Config: front.Config{Logger: logger, Store: db, CoordinatedLeaderElection: true, Now: clk.Now}})
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL, QPS: -1, UserAgent: "election-test/v0"})
	dyn := dynamic.NewForConfigOrDie(&rest.Config{Host: srv.URL, QPS: -1, UserAgent: "election-test/v0"})
	en := &env{client: client, dyn: dyn, clock: clk, failedSteps: failedSteps, muted: map[string]bool{}}

	opts := election.Options{Clock: clk, Logger: logger}
	if configure != nil {
		configure(&opts)
	}
	ctrlClient := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL, QPS: -1, UserAgent: "election-controller-test/v0",
		WrapTransport: func(next http.RoundTripper) http.RoundTripper { return recordRequests{en, next} }})
	ctrl, err := election.New(ctrlClient, opts)
	if err != nil {
		tb.Fatal(err)
	}
	en.ctrl = ctrl
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { en.answerPings(ctx) })
	if seed != nil {
		seed(en)
	}
	wg.Go(func() { ctrl.Run(ctx) })
	tb.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return en
}

func (en *env) mute(name string) {
	en.mu.Lock()
	defer en.mu.Unlock()
	en.muted[name] = true
}

func (en *env) isMuted(name string) bool {
	en.mu.Lock()
	defer en.mu.Unlock()
	return en.muted[name]
}

// answerPings renews every candidate whose pingTime is after its renewTime, with the fake
// clock's time, as client-go's LeaseCandidate helper does.
func (en *env) answerPings(ctx context.Context) {
	cands := en.client.CoordinationV1beta1().LeaseCandidates(ns)
	for ctx.Err() == nil {
		w, err := cands.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			time.Sleep(10 * time.Millisecond) // back off before watching again
			continue
		}
		for ev := range w.ResultChan() {
			c, ok := ev.Object.(*coordinationv1beta1.LeaseCandidate)
			if !ok || ev.Type == watch.Deleted || en.isMuted(c.Name) {
				continue
			}
			if c.Spec.PingTime != nil && c.Spec.RenewTime != nil && c.Spec.PingTime.After(c.Spec.RenewTime.Time) {
				c.Spec.RenewTime = &metav1.MicroTime{Time: en.clock.Now()}
				_, _ = cands.Update(ctx, c, metav1.UpdateOptions{}) // a conflict means a newer event is coming
			}
		}
		w.Stop()
	}
}

// createCandidate declares a candidate for lease "demo" that renewed renewedAgo before now.
func (en *env) createCandidate(tb testing.TB, name, binary, emulation string, renewedAgo time.Duration, s coordinationv1.CoordinatedLeaseStrategy) {
	tb.Helper()
	c := &coordinationv1beta1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: coordinationv1beta1.LeaseCandidateSpec{
			LeaseName: "demo", BinaryVersion: binary, EmulationVersion: emulation, Strategy: s,
			RenewTime: &metav1.MicroTime{Time: en.clock.Now().Add(-renewedAgo)},
		},
	}
	if _, err := en.client.CoordinationV1beta1().LeaseCandidates(ns).Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
		tb.Fatalf("create candidate %s: %v", name, err)
	}
}

var candidatesV1alpha1 = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1alpha1", Resource: "leasecandidates"}

// applyAlpha1Candidate creates or updates a candidate through LeaseCandidate v1alpha1 with
// these preferred strategies, by server-side apply.
func (en *env) applyAlpha1Candidate(tb testing.TB, name string, strategies ...coordinationv1.CoordinatedLeaseStrategy) {
	tb.Helper()
	list := make([]any, len(strategies))
	for i, s := range strategies {
		list[i] = string(s)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1alpha1", "kind": "LeaseCandidate",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"leaseName": "demo", "binaryVersion": "1.31.0", "emulationVersion": "1.31.0",
			"renewTime":           en.clock.Now().UTC().Format(metav1.RFC3339Micro),
			"preferredStrategies": list,
		},
	}}
	if _, err := en.dyn.Resource(candidatesV1alpha1).Namespace(ns).Apply(context.Background(), name, u, metav1.ApplyOptions{FieldManager: "candidate-" + name, Force: true}); err != nil {
		tb.Fatalf("apply v1alpha1 candidate %s: %v", name, err)
	}
}

func (en *env) lease(tb testing.TB) *coordinationv1.Lease {
	tb.Helper()
	l, err := en.client.CoordinationV1().Leases(ns).Get(context.Background(), "demo", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func (en *env) candidate(tb testing.TB, name string) *coordinationv1beta1.LeaseCandidate {
	tb.Helper()
	c, err := en.client.CoordinationV1beta1().LeaseCandidates(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// stepUntil advances the fake clock by step, giving the controller a moment of real time after
// each step, until cond holds; it fails after max of fake time. A zero step waits for cond
// without moving the clock.
func (en *env) stepUntil(tb testing.TB, step, max time.Duration, what string, cond func() bool) {
	tb.Helper()
	start := en.clock.Now()
	settle := 300 * time.Millisecond
	if step == 0 {
		settle = 10 * time.Second
	}
	for {
		// Real time for the watches and the worker to catch up with the last step.
		deadline := time.Now().Add(settle)
		for time.Now().Before(deadline) {
			if cond() {
				return
			}
			time.Sleep(10 * time.Millisecond) // the poll interval
		}
		if en.clock.Since(start) >= max {
			tb.Fatalf("%s: not after %s of fake time; decisions:\n%s", what, max, en.decisionText())
		}
		en.clock.Step(step)
	}
}

func (en *env) decisionText() string {
	var b strings.Builder
	for _, d := range en.ctrl.Decisions(ns, "demo") {
		b.WriteString("  " + d.Time.Format("15:04:05.000") + " " + string(d.Kind) + " [" + d.Candidate + "] " + d.Message + "\n")
	}
	return b.String()
}

// findDecision returns the first decision about default/demo of the kind whose message
// contains text.
func (en *env) findDecision(kind election.Kind, text string) (election.Decision, bool) {
	for _, d := range en.ctrl.Decisions(ns, "demo") {
		if d.Kind == kind && strings.Contains(d.Message, text) {
			return d, true
		}
	}
	return election.Decision{}, false
}

// stepUntilDecision steps the fake clock until a decision of the kind whose message contains
// text is recorded, and returns it.
func (en *env) stepUntilDecision(tb testing.TB, step, max time.Duration, kind election.Kind, text string) election.Decision {
	tb.Helper()
	var d election.Decision
	en.stepUntil(tb, step, max, string(kind)+" decision "+text, func() bool {
		var ok bool
		d, ok = en.findDecision(kind, text)
		return ok
	})
	return d
}

func holder(l *coordinationv1.Lease) string {
	if l == nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func TestControllerPingsAndElects(t *testing.T) {
	en := mustStartEnv(t, nil, func(en *env) {
		en.mute("cand-c")
		en.createCandidate(t, "cand-a", "1.36.0", "1.36.0", time.Minute, coordinationv1.OldestEmulationVersion)
		en.createCandidate(t, "cand-b", "1.36.0", "1.35.0", time.Minute, coordinationv1.OldestEmulationVersion)
		en.createCandidate(t, "cand-c", "1.36.0", "1.34.0", time.Minute, coordinationv1.OldestEmulationVersion)
		// A candidate that never renewed is neither a voter nor pinged.
		if _, err := en.client.CoordinationV1beta1().LeaseCandidates(ns).Create(context.Background(), &coordinationv1beta1.LeaseCandidate{
			ObjectMeta: metav1.ObjectMeta{Name: "cand-new"},
			Spec:       coordinationv1beta1.LeaseCandidateSpec{LeaseName: "demo", BinaryVersion: "1.30.0", EmulationVersion: "1.30.0", Strategy: coordinationv1.OldestEmulationVersion},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	sub, cancel := en.ctrl.Subscribe()
	defer cancel()

	// The stale candidates are pinged at once, on the fake clock's time.
	start := en.clock.Now()
	if d := en.stepUntilDecision(t, 0, 0, election.KindPing, "pinged cand-a, cand-b, cand-c: election needed because the lease does not exist"); !d.Time.Equal(start) {
		t.Errorf("ping decision at %v, want %v", d.Time, start)
	}
	for _, n := range []string{"cand-a", "cand-b", "cand-c"} {
		if c := en.candidate(t, n); c.Spec.PingTime == nil || !c.Spec.PingTime.Time.Equal(start) {
			t.Errorf("%s: pingTime = %v, want %v", n, c.Spec.PingTime, start)
		}
	}
	// cand-c does not answer: the election waits for it, up to the election duration.
	en.stepUntil(t, 0, 0, "waiting", func() bool {
		_, ok := en.findDecision(election.KindWait, "waiting up to 5s for cand-c to answer the ping")
		return ok
	})
	if l := en.lease(t); l != nil {
		t.Fatalf("lease written while a ping is unanswered: %+v", l.Spec)
	}
	// Then it goes on without it: cand-b, not the better but silent cand-c.
	d := en.stepUntilDecision(t, 700*time.Millisecond, 20*time.Second, election.KindElect,
		"created the lease with holder cand-b: picked cand-b: emulation 1.35.0 < 1.36.0 of cand-a; no answer from cand-c")
	if d.Candidate != "cand-b" {
		t.Errorf("elect decision = %+v", d)
	}
	// Every decision is a sentence of known keys, for the screens to put in their language.
	for _, d := range en.ctrl.Decisions(ns, "demo") {
		if d.Says.IsZero() || d.Says.English() != d.Message {
			t.Errorf("decision %q says %+v", d.Message, d.Says)
		}
		checkKeys(t, d.Says)
	}
	if d.Says.Key != "election.created" {
		t.Errorf("elect decision's sentence: %+v", d.Says)
	}
	l := en.lease(t)
	if holder(l) != "cand-b" || *l.Spec.Strategy != coordinationv1.OldestEmulationVersion || *l.Spec.LeaseDurationSeconds != 5 ||
		l.Spec.AcquireTime != nil || l.Spec.PreferredHolder != nil {
		t.Fatalf("lease = %+v", l.Spec)
	}
	if len(l.ManagedFields) == 0 || l.ManagedFields[0].Manager != election.DefaultFieldManager {
		t.Errorf("managedFields = %+v, want the controller's field manager", l.ManagedFields)
	}
	// (The garbage collector's first pass at start may have deleted it: it never renewed.)
	if c := en.candidate(t, "cand-new"); c != nil && c.Spec.PingTime != nil {
		t.Errorf("a candidate without renewTime was pinged: %+v", c.Spec)
	}
	// Subscribers saw the same decisions.
	var kinds []election.Kind
	for len(sub) > 0 {
		kinds = append(kinds, (<-sub).Kind)
	}
	if !slices.Contains(kinds, election.KindElect) {
		t.Errorf("subscriber got %v", kinds)
	}
}

// TestControllerWatchesLeasesForCandidates: the controller neither lists nor watches Leases
// until a Lease has a candidate, so that renewals on a server without Coordinated Leader
// Election cost it nothing; from the first candidate on it elects as usual.
func TestControllerWatchesLeasesForCandidates(t *testing.T) {
	en := mustStartEnv(t, nil, nil)
	leaseRequests := func() []string {
		var out []string
		for _, r := range en.controllerAsked() {
			if strings.Contains(r, "/leases") {
				out = append(out, r)
			}
		}
		return out
	}
	// The candidate informer is watching: the controller has started, and an informer of
	// Leases started with it would have listed them by now.
	poll.Until(t, 10*time.Second, "the controller watches LeaseCandidates", func() (bool, string) {
		for _, r := range en.controllerAsked() {
			if strings.HasPrefix(r, "GET ") && strings.Contains(r, "/leasecandidates?") && strings.Contains(r, "watch=true") {
				return true, ""
			}
		}
		return false, strings.Join(en.controllerAsked(), "\n")
	})
	leases := en.client.CoordinationV1().Leases(ns)
	l, err := leases.Create(context.Background(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "plain"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("someone")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		l.Spec.RenewTime = &metav1.MicroTime{Time: en.clock.Now()}
		if l, err = leases.Update(context.Background(), l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if r := leaseRequests(); len(r) > 0 {
		t.Fatalf("the controller asked for Leases before any candidate: %q", r)
	}

	en.createCandidate(t, "cand-a", "1.36.0", "1.36.0", 0, coordinationv1.OldestEmulationVersion)
	en.stepUntil(t, 700*time.Millisecond, 20*time.Second, "cand-a elected", func() bool { return holder(en.lease(t)) == "cand-a" })
	var watched bool
	for _, r := range leaseRequests() {
		watched = watched || strings.HasPrefix(r, "GET /apis/coordination.k8s.io/v1/leases?") && strings.Contains(r, "watch=true")
	}
	if !watched {
		t.Errorf("no watch of Leases after the first candidate; the controller asked for %q", leaseRequests())
	}
}

func TestControllerPreferredHolder(t *testing.T) {
	en := mustStartEnv(t, nil, nil)
	ctx := context.Background()
	leases := en.client.CoordinationV1().Leases(ns)
	// cand-a holds the lease, as its elector would after an earlier election.
	if _, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "demo"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("cand-a"), LeaseDurationSeconds: ptr.To[int32](60),
			RenewTime: &metav1.MicroTime{Time: en.clock.Now()}, Strategy: ptr.To(coordinationv1.OldestEmulationVersion),
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	en.createCandidate(t, "cand-a", "1.36.0", "1.36.0", 0, coordinationv1.OldestEmulationVersion)
	en.stepUntil(t, 0, 0, "keep", func() bool {
		_, ok := en.findDecision(election.KindKeep, "holder cand-a is already the best candidate")
		return ok
	})

	// A better candidate joins: the holder is asked to step down, not replaced.
	en.clock.Step(10 * time.Second) // cand-a's renewTime is stale now: it gets pinged and answers
	en.createCandidate(t, "cand-b", "1.36.0", "1.35.0", 0, coordinationv1.OldestEmulationVersion)
	d := en.stepUntilDecision(t, 700*time.Millisecond, 20*time.Second, election.KindPrefer,
		"set preferredHolder cand-b (holder cand-a must step down): picked cand-b: emulation 1.35.0 < 1.36.0 of cand-a")
	if d.Candidate != "cand-b" {
		t.Errorf("prefer decision = %+v", d)
	}
	l := en.lease(t)
	if holder(l) != "cand-a" || l.Spec.PreferredHolder == nil || *l.Spec.PreferredHolder != "cand-b" {
		t.Fatalf("lease = %+v", l.Spec)
	}
	if _, ok := en.findDecision(election.KindPing, "pinged cand-a: election needed because holder cand-a is not the best candidate"); !ok {
		t.Errorf("no ping of the stale holder; decisions:\n%s", en.decisionText())
	}

	// cand-a steps down and releases the lease as client-go does; cand-b gets it directly.
	l.Spec = coordinationv1.LeaseSpec{
		HolderIdentity: ptr.To(""), LeaseDurationSeconds: ptr.To[int32](1), LeaseTransitions: ptr.To[int32](0),
		RenewTime: &metav1.MicroTime{Time: en.clock.Now()}, AcquireTime: &metav1.MicroTime{Time: en.clock.Now()},
	}
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	en.stepUntilDecision(t, 700*time.Millisecond, 20*time.Second, election.KindElect,
		"strategy OldestEmulationVersion (was none), assigned cand-b (the lease had no holder): picked cand-b")
	l = en.lease(t)
	if holder(l) != "cand-b" || l.Spec.PreferredHolder != nil || l.Spec.AcquireTime != nil || *l.Spec.LeaseDurationSeconds != 5 || *l.Spec.Strategy != coordinationv1.OldestEmulationVersion {
		t.Errorf("lease after the handover = %+v", l.Spec)
	}
}

func TestControllerExpiredLease(t *testing.T) {
	en := mustStartEnv(t, nil, nil)
	if _, err := en.client.CoordinationV1().Leases(ns).Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "demo"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("gone"), LeaseDurationSeconds: ptr.To[int32](10),
			RenewTime: &metav1.MicroTime{Time: en.clock.Now().Add(-time.Minute)},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	en.createCandidate(t, "cand-a", "1.36.0", "1.36.0", 0, coordinationv1.OldestEmulationVersion)
	en.stepUntilDecision(t, 700*time.Millisecond, 10*time.Second, election.KindElect,
		"strategy OldestEmulationVersion (was none), assigned cand-a (the lease of gone expired): picked cand-a: the only candidate")
	if h := holder(en.lease(t)); h != "cand-a" {
		t.Errorf("holder = %q", h)
	}
}

func TestControllerStrategies(t *testing.T) {
	const custom = coordinationv1.CoordinatedLeaseStrategy("example.com/custom")
	en := mustStartEnv(t, nil, func(en *env) {
		en.createCandidate(t, "cand-a", "1.36.0", "1.36.0", 0, coordinationv1.OldestEmulationVersion)
		en.createCandidate(t, "cand-b", "1.36.0", "1.35.0", 0, custom)
	})
	en.stepUntilDecision(t, 700*time.Millisecond, 10*time.Second, election.KindConflict,
		`strategy conflict: candidates "cand-a", "cand-b" at same binary version but received differing strategies OldestEmulationVersion, example.com/custom; the lease is left alone until the candidates agree`)
	en.stepAndLookAgain(t, 2*time.Second, "cand-a")
	if l := en.lease(t); l != nil {
		t.Fatalf("lease written despite the conflict: %+v", l.Spec)
	}

	// A newer binary settles it: its strategy, a custom one, gets a lease without holder.
	en.createCandidate(t, "cand-c", "1.37.0", "1.37.0", 0, custom)
	en.stepUntilDecision(t, 700*time.Millisecond, 20*time.Second, election.KindStrategy, "created the lease with strategy example.com/custom and no holder")
	l := en.lease(t)
	if *l.Spec.Strategy != custom || l.Spec.HolderIdentity != nil {
		t.Errorf("lease = %+v, want strategy %s and no holder", l.Spec, custom)
	}
}

// v1alpha1 candidates whose preferences contradict each other leave the Lease alone, with the
// reason in the decisions; once one of them changes its list, the election runs.
func TestControllerV1alpha1Preferences(t *testing.T) {
	const custom = coordinationv1.CoordinatedLeaseStrategy("example.com/custom")
	en := mustStartEnv(t, nil, func(en *env) {
		en.applyAlpha1Candidate(t, "cand-a", coordinationv1.OldestEmulationVersion, custom)
		en.clock.Step(time.Second) // cand-a is the older candidate
		en.applyAlpha1Candidate(t, "cand-b", custom, coordinationv1.OldestEmulationVersion)
	})
	en.stepUntilDecision(t, 700*time.Millisecond, 10*time.Second, election.KindConflict,
		"strategy conflict: candidates disagree on the strategy: cand-a prefers [OldestEmulationVersion, example.com/custom], cand-b prefers [example.com/custom, OldestEmulationVersion]; their preferences contradict each other; the lease is left alone until the candidates agree")
	en.stepAndLookAgain(t, 2*time.Second, "cand-a")
	if l := en.lease(t); l != nil {
		t.Fatalf("lease written despite the contradiction: %+v", l.Spec)
	}

	// cand-b gives in: every list now starts with OldestEmulationVersion, and the older
	// candidate at the same versions leads.
	en.applyAlpha1Candidate(t, "cand-b", coordinationv1.OldestEmulationVersion)
	en.stepUntilDecision(t, 700*time.Millisecond, 20*time.Second, election.KindElect, "picked cand-a")
	if l := en.lease(t); holder(l) != "cand-a" || *l.Spec.Strategy != coordinationv1.OldestEmulationVersion {
		t.Errorf("lease = %+v, want cand-a under OldestEmulationVersion", l.Spec)
	}
}

// TestControllerGarbageCollectsAtStart: candidates that stopped renewing before the controller
// started are deleted at once, without waiting a GC period.
func TestControllerGarbageCollectsAtStart(t *testing.T) {
	en := mustStartEnv(t, nil, func(en *env) {
		en.mute("gone")
		en.createCandidate(t, "gone", "1.36.0", "1.36.0", 31*time.Minute, coordinationv1.OldestEmulationVersion)
	})
	// The decision is recorded once the delete has returned: wait for both.
	poll.Until(t, 10*time.Second, "the stale candidate is deleted, and the decision says why", func() (bool, string) {
		_, decided := en.findDecision(election.KindGC, "deleted candidate gone: it last renewed 31m0s ago (more than 30m0s)")
		c := en.candidate(t, "gone")
		if c == nil {
			return decided, "the candidate is gone; decisions:\n" + en.decisionText()
		}
		// What is there, should it outlive a delete that returned.
		return false, fmt.Sprintf("the candidate is there (uid %s, resourceVersion %s, renewTime %v, pingTime %v, managed by %d); decisions:\n%s",
			c.UID, c.ResourceVersion, c.Spec.RenewTime, c.Spec.PingTime, len(c.ManagedFields), en.decisionText())
	})
}

func TestControllerGarbageCollects(t *testing.T) {
	en := mustStartEnv(t, func(o *election.Options) { o.GCPeriod = time.Minute }, nil)
	en.mute("old")
	en.mute("alive")
	en.createCandidate(t, "old", "1.36.0", "1.36.0", 29*time.Minute+30*time.Second, coordinationv1.OldestEmulationVersion)
	en.createCandidate(t, "alive", "1.36.0", "1.36.0", 0, coordinationv1.OldestEmulationVersion)
	en.stepUntilDecision(t, time.Minute, 5*time.Minute, election.KindGC, "")
	if en.candidate(t, "old") != nil {
		t.Error("the stale candidate is still there")
	}
	if en.candidate(t, "alive") == nil {
		t.Error("a live candidate was deleted")
	}
	d, ok := en.findDecision(election.KindGC, "deleted candidate old: it last renewed 30m30s ago (more than 30m0s)")
	if !ok || d.Candidate != "old" {
		t.Errorf("gc decision = %+v, %v; decisions:\n%s", d, ok, en.decisionText())
	}
}

// checkKeys fails when s, or a sentence within, has a key the controller does not know.
func checkKeys(tb testing.TB, s election.Said) {
	tb.Helper()
	if _, ok := said.Lookup(s.Key); (!ok || !strings.HasPrefix(s.Key, "election.")) && s.Key != "" && s.Key != election.KeyList {
		tb.Errorf("unknown key %q", s.Key)
	}
	for _, a := range s.Args {
		if n, ok := a.(election.Said); ok {
			checkKeys(tb, n)
		}
	}
}
