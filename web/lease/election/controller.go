package election

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	coordinationv1listers "k8s.io/client-go/listers/coordination/v1"
	coordinationv1beta1listers "k8s.io/client-go/listers/coordination/v1beta1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// DefaultFieldManager is the field manager of the controller's writes.
const DefaultFieldManager = "leaselab-leader-election-controller"

// Options configure a Controller. Zero values take kube-apiserver's constants.
type Options struct {
	// Clock drives every decision and requeue; default the real clock. Tests pass a
	// k8s.io/utils/clock/testing.FakeClock.
	Clock clock.WithTicker
	// Logger gets one Info line per recorded decision; default slog.Default().
	Logger *slog.Logger
	// ElectionDuration is how long a ping waits for its answer (5s).
	ElectionDuration time.Duration
	// RequeueInterval is how soon a Lease is looked at again after most steps (5s).
	RequeueInterval time.Duration
	// LeaseDurationSeconds is the leaseDurationSeconds written with a new holder (5).
	LeaseDurationSeconds int32
	// CandidateValidDuration is how long a candidate counts without renewing before it is
	// ignored and garbage-collected (30m).
	CandidateValidDuration time.Duration
	// GCPeriod is how often stale candidates are garbage-collected (30m).
	GCPeriod time.Duration
	// FieldManager names the controller's writes (DefaultFieldManager).
	FieldManager string
	// DecisionsPerLease is how many decisions are kept per Lease (100).
	DecisionsPerLease int
}

func (o Options) withDefaults() Options {
	t := DefaultTiming()
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ElectionDuration == 0 {
		o.ElectionDuration = t.ElectionDuration
	}
	if o.RequeueInterval == 0 {
		o.RequeueInterval = 5 * time.Second
	}
	if o.LeaseDurationSeconds == 0 {
		o.LeaseDurationSeconds = t.LeaseDurationSeconds
	}
	if o.CandidateValidDuration == 0 {
		o.CandidateValidDuration = t.CandidateValidDuration
	}
	if o.GCPeriod == 0 {
		o.GCPeriod = 30 * time.Minute
	}
	if o.FieldManager == "" {
		o.FieldManager = DefaultFieldManager
	}
	if o.DecisionsPerLease == 0 {
		o.DecisionsPerLease = 100
	}
	return o
}

// maxLeasesWithDecisions bounds how many Leases keep decisions; the idlest is forgotten first.
const maxLeasesWithDecisions = 4096

// Controller elects the holders of Leases that have LeaseCandidates, as kube-apiserver's
// Coordinated Leader Election controller does, through an ordinary API client: informers on v1
// LeaseCandidates and (from the first candidate on) v1 Leases in every namespace, one worker on
// a queue of Leases, pings
// as updates of the candidates' pingTime, and a garbage collector of candidates that stopped
// renewing. Every decision worth showing is kept (Decisions) and published (Subscribe).
type Controller struct {
	client  kubernetes.Interface
	opts    Options
	timing  Timing
	log     *slog.Logger
	clock   clock.WithTicker
	factory informers.SharedInformerFactory

	// leases is nil until a Lease has an admissible candidate: the worker, its only reader, then
	// starts the Lease informer (watchLeases). A server whose clients never use Coordinated
	// Leader Election keeps no copy of its Leases and decodes none of their renewals.
	leases          coordinationv1listers.LeaseLister
	leasesSynced    cache.InformerSynced
	candidates      coordinationv1beta1listers.LeaseCandidateLister
	candidateSynced cache.InformerSynced

	queue     workqueue.TypedRateLimitingInterface[types.NamespacedName]
	decisions *decisionLog
	started   atomic.Bool
}

// New returns a Controller that talks to the API through client. It fails on options out of
// range (negative durations, a lease duration below one second).
func New(client kubernetes.Interface, opts Options) (*Controller, error) {
	opts = opts.withDefaults()
	switch {
	case opts.ElectionDuration < 0, opts.RequeueInterval < 0, opts.CandidateValidDuration < 0, opts.GCPeriod < 0:
		return nil, fmt.Errorf("election controller: durations must be positive")
	case opts.LeaseDurationSeconds < 1:
		return nil, fmt.Errorf("election controller: lease duration must be at least 1 second, got %d", opts.LeaseDurationSeconds)
	case opts.DecisionsPerLease < 1:
		return nil, fmt.Errorf("election controller: decisions per lease must be at least 1")
	}
	c := &Controller{
		client: client,
		opts:   opts,
		timing: Timing{
			ElectionDuration:       opts.ElectionDuration,
			CandidateValidDuration: opts.CandidateValidDuration,
			LeaseDurationSeconds:   opts.LeaseDurationSeconds,
		},
		log:     opts.Logger.With(slog.String("component", "election")),
		clock:   opts.Clock,
		factory: informers.NewSharedInformerFactory(client, 0),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Clock: opts.Clock},
		),
		decisions: newDecisionLog(opts.DecisionsPerLease, maxLeasesWithDecisions),
	}
	candInformer := c.factory.Coordination().V1beta1().LeaseCandidates()
	c.candidates = candInformer.Lister()
	cr, err := candInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueCandidate,
		UpdateFunc: func(_, obj any) { c.enqueueCandidate(obj) },
		DeleteFunc: c.enqueueCandidate,
	})
	if err != nil {
		return nil, fmt.Errorf("election controller: candidate handler: %w", err)
	}
	c.candidateSynced = cr.HasSynced
	return c, nil
}

// Decisions returns the decisions kept about one Lease, oldest first.
func (c *Controller) Decisions(namespace, lease string) []Decision {
	return c.decisions.list(namespace, lease)
}

// Subscribe returns a channel that receives every decision from now on, and a function that
// ends the subscription and closes the channel. A subscriber that falls more than a few hundred
// decisions behind misses decisions; it never holds up the controller.
func (c *Controller) Subscribe() (<-chan Decision, func()) {
	return c.decisions.subscribe()
}

// Run starts the informers, waits for them to sync, then elects and garbage-collects until ctx
// ends. It returns once everything it started has stopped. A Controller runs once.
func (c *Controller) Run(ctx context.Context) {
	if !c.started.CompareAndSwap(false, true) {
		c.log.Error("election controller started twice")
		return
	}
	c.log.Info("election controller starting",
		slog.Duration("election_duration", c.opts.ElectionDuration),
		slog.Duration("requeue_interval", c.opts.RequeueInterval),
		slog.Int("lease_duration_seconds", int(c.opts.LeaseDurationSeconds)),
		slog.Duration("candidate_valid_duration", c.opts.CandidateValidDuration),
		slog.Duration("gc_period", c.opts.GCPeriod))
	defer c.log.Info("election controller stopped")
	defer c.factory.Shutdown()
	defer c.queue.ShutDown()

	c.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.candidateSynced) {
		return
	}
	// Candidates that existed before the start get their Leases looked at.
	all, err := c.candidates.List(labels.Everything())
	if err != nil {
		c.log.Warn("list candidates", slog.Any("error", err))
	}
	for _, lc := range all {
		c.enqueueCandidate(lc)
	}

	var wg sync.WaitGroup
	wg.Go(func() {
		for c.processNext(ctx) {
		}
	})
	wg.Go(func() { c.gcLoop(ctx) })
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

func (c *Controller) enqueueLease(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if l, ok := obj.(*coordinationv1.Lease); ok && l != nil {
		c.queue.Add(types.NamespacedName{Namespace: l.Namespace, Name: l.Name})
	}
}

// enqueueCandidate looks at the candidate's Lease again, except while the candidate has a ping
// to answer: the controller's own ping would otherwise wake it up for nothing, and the answer
// (a new renewTime) will.
func (c *Controller) enqueueCandidate(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	lc, ok := obj.(*Candidate)
	if !ok || lc == nil {
		return
	}
	if lc.Spec.PingTime != nil && (lc.Spec.RenewTime == nil || lc.Spec.RenewTime.Before(lc.Spec.PingTime)) {
		return
	}
	c.queue.Add(types.NamespacedName{Namespace: lc.Namespace, Name: lc.Spec.LeaseName})
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	requeue, err := c.reconcile(ctx, key)
	if err != nil && ctx.Err() == nil {
		c.log.Debug("election step", slog.String("namespace", key.Namespace), slog.String("lease", key.Name), slog.Any("error", err))
	}
	c.queue.Forget(key)
	if requeue > 0 {
		c.queue.AddAfter(key, requeue)
	}
	return true
}

// errNoCandidates ends an election in which no candidate answered.
var errNoCandidates = errors.New("no available candidates")

// reconcile is one step of the election of one Lease (kube-apiserver's reconcileElectionStep):
// it reads the caches, decides with the policy, and makes at most one kind of write. It returns
// when to look at the Lease again (0: only on the next event).
func (c *Controller) reconcile(ctx context.Context, key types.NamespacedName) (time.Duration, error) {
	requeue := c.opts.RequeueInterval
	now := c.clock.Now()
	cands, lease, err := c.readElection(ctx, key, now)
	if err != nil {
		return requeue, err
	}
	if len(cands) == 0 {
		return 0, nil
	}

	need, err := ElectionNeeded(cands, lease, now, c.timing)
	if err != nil {
		c.decide(key, KindConflict, "", say("election.conflict", ErrorSays(err)))
		return requeue, err
	}
	if !need.Needed {
		if need.Best != nil {
			c.decide(key, KindKeep, need.Best.Name, say("election.noElection", need.Says))
		} else {
			c.decide(key, KindIdle, "", say("election.noElection", need.Says))
		}
		return requeue, nil
	}

	plan := PlanPings(cands, now, c.timing.ElectionDuration)
	if len(plan.ToPing) > 0 {
		return requeue, c.pingStep(ctx, key, plan, need.Says, now)
	}
	// kube-apiserver then waits (without requeue) while a ping younger than the election
	// duration is unanswered (step 4); that is exactly plan.Waiting, handled here.
	if len(plan.Waiting) > 0 {
		c.decide(key, KindWait, "", say("election.waiting", c.timing.ElectionDuration, list(plan.Waiting)))
		return requeue, nil
	}
	return c.elect(ctx, key, cands, plan.Unanswered, now)
}

// readElection reads from the caches the admissible candidates for the Lease key and, when there
// is one, the Lease (nil when there is none).
func (c *Controller) readElection(ctx context.Context, key types.NamespacedName, now time.Time) ([]*Candidate, *coordinationv1.Lease, error) {
	all, err := c.candidates.LeaseCandidates(key.Namespace).List(labels.Everything())
	if err != nil {
		return nil, nil, fmt.Errorf("list candidates: %w", err)
	}
	cands, _ := Admissible(all, key.Name, now, c.timing)
	if len(cands) == 0 {
		return nil, nil, nil
	}
	if err := c.watchLeases(ctx); err != nil {
		return nil, nil, err
	}
	lease, err := c.leases.Leases(key.Namespace).Get(key.Name)
	switch {
	case apierrors.IsNotFound(err):
		lease = nil
	case err != nil:
		return nil, nil, fmt.Errorf("get lease: %w", err)
	}
	return cands, lease, nil
}

// pingStep pings the candidates the plan names and decides so, saying why an election is needed.
func (c *Controller) pingStep(ctx context.Context, key types.NamespacedName, plan PingPlan, why Said, now time.Time) error {
	if err := c.ping(ctx, plan.ToPing, now); err != nil {
		switch {
		case ctx.Err() != nil:
		case apierrors.IsConflict(err):
			c.decide(key, KindRetry, "", say("election.retryPing", ErrorSays(err)))
		default:
			c.decide(key, KindError, "", say("election.errPing", ErrorSays(err)))
		}
		return err
	}
	msg := []Said{say("election.pinged", names(plan.ToPing), why)}
	if len(plan.Waiting) > 0 {
		msg = append(msg, say("election.stillWaiting", list(plan.Waiting)))
	}
	if len(plan.Unanswered) > 0 {
		msg = append(msg, say("election.noAnswerFrom", list(plan.Unanswered)))
	}
	c.decide(key, KindPing, "", concat(msg...))
	return nil
}

// elect picks the Lease's holder among the candidates that answered, and writes it; unanswered
// name those that did not.
func (c *Controller) elect(ctx context.Context, key types.NamespacedName, cands []*Candidate, unanswered []string, now time.Time) (time.Duration, error) {
	acked := Acked(cands, now, c.timing.ElectionDuration)
	if len(acked) == 0 {
		c.decide(key, KindNoAnswer, "", say("election.noneAnswered", names(cands), c.timing.ElectionDuration))
		return 0, errNoCandidates
	}
	desired, err := DesiredLease(acked, c.timing)
	switch {
	case IsStrategyConflict(err):
		c.decide(key, KindConflict, "", say("election.conflict", ErrorSays(err)))
		return 0, err
	case err != nil:
		c.decide(key, KindIdle, "", say("election.noElection", ErrorSays(err)))
		return 0, err
	}
	if len(unanswered) > 0 {
		desired.Says = concat(desired.Says, say("election.noAnswerFrom", list(unanswered)))
		desired.Reason = desired.Says.English()
	}
	return c.write(ctx, key, desired)
}

// watchLeases starts the Lease informer, once, and waits until its cache holds every Lease.
// Only the worker calls it.
func (c *Controller) watchLeases(ctx context.Context) error {
	if c.leases == nil {
		inf := c.factory.Coordination().V1().Leases()
		reg, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    c.enqueueLease,
			UpdateFunc: func(_, obj any) { c.enqueueLease(obj) },
			DeleteFunc: c.enqueueLease,
		})
		if err != nil {
			return fmt.Errorf("lease handler: %w", err)
		}
		c.leases, c.leasesSynced = inf.Lister(), reg.HasSynced
		c.log.Info("watching leases: a lease has candidates")
		c.factory.Start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), c.leasesSynced) {
		return fmt.Errorf("lease cache: %w", context.Cause(ctx))
	}
	return nil
}

// ping sets pingTime on every candidate in parallel. It never pings a candidate without
// renewTime: client-go's candidate helper dereferences it when it sees the ping.
func (c *Controller) ping(ctx context.Context, cands []*Candidate, now time.Time) error {
	var wg sync.WaitGroup
	errs := make([]error, len(cands))
	for i, lc := range cands {
		if lc.Spec.RenewTime == nil {
			continue
		}
		wg.Go(func() {
			clone := lc.DeepCopy()
			clone.Spec.PingTime = &metav1.MicroTime{Time: now}
			_, err := c.client.CoordinationV1beta1().LeaseCandidates(clone.Namespace).Update(ctx, clone, metav1.UpdateOptions{FieldManager: c.opts.FieldManager})
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", lc.Name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// write creates the Lease the election wants, or updates the existing one (step 9).
func (c *Controller) write(ctx context.Context, key types.NamespacedName, d Desired) (time.Duration, error) {
	requeue := c.opts.RequeueInterval
	leases := c.client.CoordinationV1().Leases(key.Namespace)
	_, err := leases.Create(ctx, NewLease(key.Namespace, key.Name, d, c.clock.Now()), metav1.CreateOptions{FieldManager: c.opts.FieldManager})
	switch {
	case err == nil:
		if d.Holder != nil {
			c.decide(key, KindElect, *d.Holder, say("election.created", *d.Holder, d.Says))
		} else {
			c.decide(key, KindStrategy, "", say("election.createdStrategy", d.Strategy, d.Says))
		}
		return requeue, nil
	case !apierrors.IsAlreadyExists(err):
		if ctx.Err() == nil {
			c.decide(key, KindError, "", say("election.errCreate", ErrorSays(err)))
		}
		return 0, fmt.Errorf("create lease: %w", err)
	}

	existing, err := leases.Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		if ctx.Err() == nil {
			c.decide(key, KindError, "", say("election.errGet", ErrorSays(err)))
		}
		return 0, fmt.Errorf("get lease: %w", err)
	}
	u := PlanLeaseUpdate(existing, d, c.clock.Now())
	if u.Lease == nil {
		return requeue, nil
	}
	if _, err := leases.Update(ctx, u.Lease, metav1.UpdateOptions{FieldManager: c.opts.FieldManager}); err != nil {
		// A conflict means someone wrote the Lease in between; that write's event brings the
		// Lease back here.
		if ctx.Err() == nil && !apierrors.IsConflict(err) {
			c.decide(key, KindError, "", say("election.errUpdate", ErrorSays(err)))
		}
		return 0, fmt.Errorf("update lease: %w", err)
	}
	switch u.Action {
	case ActionAssign:
		c.decide(key, KindElect, *d.Holder, u.Says)
	case ActionPrefer:
		c.decide(key, KindPrefer, *d.Holder, u.Says)
	default:
		c.decide(key, KindStrategy, "", u.Says)
	}
	return requeue, nil
}

// gcLoop deletes candidates that stopped renewing: once at start, as the real controller does,
// so that a restart does not keep them for another period, then every GCPeriod.
func (c *Controller) gcLoop(ctx context.Context) {
	c.collectGarbage(ctx)
	t := c.clock.NewTicker(c.opts.GCPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			c.collectGarbage(ctx)
		}
	}
}

// collectGarbage deletes every candidate whose renewTime is missing or older than the valid
// duration, after checking a fresh copy (the cache may lag behind a renewal). The delete is
// conditional on that copy, so a renewal in between wins.
func (c *Controller) collectGarbage(ctx context.Context) {
	all, err := c.candidates.List(labels.Everything())
	if err != nil {
		c.log.Warn("gc: list candidates", slog.Any("error", err))
		return
	}
	for _, cached := range byName(all) {
		if ctx.Err() != nil {
			return
		}
		if !CandidateExpired(cached, c.clock.Now(), c.timing.CandidateValidDuration) {
			continue
		}
		api := c.client.CoordinationV1beta1().LeaseCandidates(cached.Namespace)
		fresh, err := api.Get(ctx, cached.Name, metav1.GetOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) && ctx.Err() == nil {
				c.log.Warn("gc: get candidate", slog.String("namespace", cached.Namespace), slog.String("candidate", cached.Name), slog.Any("error", err))
			}
			continue
		}
		now := c.clock.Now()
		if !CandidateExpired(fresh, now, c.timing.CandidateValidDuration) {
			continue
		}
		err = api.Delete(ctx, fresh.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &fresh.UID, ResourceVersion: &fresh.ResourceVersion}})
		if err != nil {
			if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
				c.log.Warn("gc: delete candidate", slog.String("namespace", fresh.Namespace), slog.String("candidate", fresh.Name), slog.Any("error", err))
			}
			continue
		}
		why := say("election.gcNoRenewTime")
		if fresh.Spec.RenewTime != nil {
			why = say("election.gcLastRenewed", now.Sub(fresh.Spec.RenewTime.Time).Round(time.Second), c.timing.CandidateValidDuration)
		}
		c.decide(types.NamespacedName{Namespace: fresh.Namespace, Name: fresh.Spec.LeaseName}, KindGC, fresh.Name,
			say("election.deleted", fresh.Name, why))
	}
}

// decide records a decision and logs it when it is new.
func (c *Controller) decide(key types.NamespacedName, kind Kind, candidate string, msg Said) {
	d := Decision{Time: c.clock.Now(), Namespace: key.Namespace, Lease: key.Name, Kind: kind, Candidate: candidate, Message: msg.English(), Says: msg}
	if c.decisions.record(d) {
		c.log.Info("election decision",
			slog.String("namespace", d.Namespace),
			slog.String("lease", d.Lease),
			slog.String("kind", string(d.Kind)),
			slog.String("candidate", d.Candidate),
			slog.String("message", d.Message))
	}
}
