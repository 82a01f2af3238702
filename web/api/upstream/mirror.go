package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/kinds"
)

// ResourceVersionAnnotation keeps, on each mirrored object, the resourceVersion the cluster
// gave it: the local store numbers its own revisions, which the screens and their watches use.
const ResourceVersionAnnotation = "leaselab.dev/upstream-resource-version"

// Mirror records the cluster's Leases, LeaseCandidates, Events about them and Namespaces into
// the local store, as an informer keeps its cache: a list, then a watch from the list's
// resourceVersion, and a new list when the watch cannot resume (410 Gone), after which what
// changed while the watch was away is written and what went away is deleted. The store's change
// log is then the cluster's history as leaselab saw it.
type Mirror struct {
	log     *slog.Logger
	cluster Cluster
	st      store.Interface
	reg     *kinds.Registry
	client  kubernetes.Interface

	// candidatesRefused says why LeaseCandidates are not mirrored nor served to coordinated
	// tabs; "" when they are. candidatesUnserved is set when the reason is that the cluster
	// does not serve them at all (rather than that the identity may not use them).
	candidatesRefused  string
	candidatesUnserved bool

	// readOnly says why the kubeconfig's identity may not write Leases, "" when it may.
	readOnly string

	relists atomic.Int64
	// expired counts the cluster's 410 answers to the mirror's lists and watches;
	// relistedAfterExpired the lists taken because of one.
	expired, relistedAfterExpired atomic.Int64

	// probe asks the cluster whether it answers, without client-go's retries.
	probe *http.Client

	mu       sync.Mutex
	lastErr  error // the latest list or watch failure, cleared by the next success
	probeErr error // the latest probe's failure (Check), cleared by the next success

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// newMirror returns a mirror of cluster into st; Start starts it.
func newMirror(logger *slog.Logger, cluster Cluster, st store.Interface) (*Mirror, error) {
	rc := rest.CopyConfig(cluster.REST)
	// The mirror's watches are long-lived; its lists and watches are few.
	rc.QPS, rc.Burst = 20, 40
	rc.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("upstream client: %w", err)
	}
	probe, err := rest.HTTPClientFor(cluster.REST)
	if err != nil {
		return nil, fmt.Errorf("upstream client: %w", err)
	}
	probe.Timeout = 5 * time.Second
	return &Mirror{log: logger, cluster: cluster, st: st, client: client, probe: probe}, nil
}

// mirrored is one resource the mirror keeps.
type mirrored struct {
	kind     *kinds.Kind
	client   rest.Interface
	resource string // the cluster's plural name
	expected runtime.Object
	// keep filters the objects written; nil keeps every one.
	keep func(runtime.Object) bool
}

// Start checks that the cluster can be mirrored (it answers, the kubeconfig's identity may list
// Leases in the namespaces mirrored, LeaseCandidates v1beta1 are served), starts the watches
// and waits until the Leases are recorded, encoded as reg stores them. It returns an error that
// says what is wrong: an unreachable cluster, credentials it refuses, or the verb and resource
// the identity lacks.
func (m *Mirror) Start(ctx context.Context, reg *kinds.Registry) error {
	m.reg = reg
	if err := m.refusePlaygroundObjects(ctx); err != nil {
		return err
	}
	namespaces := m.cluster.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	cv1 := m.client.CoordinationV1().RESTClient()
	for _, ns := range namespaces {
		if err := m.check(ctx, cv1, "coordination.k8s.io", "leases", ns); err != nil {
			return err
		}
	}
	resources := []mirrored{{kind: m.lookup("coordination.k8s.io", "v1", "leases"), client: cv1, resource: "leases", expected: &coordinationv1.Lease{}}}

	m.candidatesRefused, m.candidatesUnserved = m.candidatesProblem(ctx, namespaces)
	if m.candidatesRefused == "" {
		resources = append(resources, mirrored{kind: m.lookup("coordination.k8s.io", "v1beta1", "leasecandidates"),
			client: m.client.CoordinationV1beta1().RESTClient(), resource: "leasecandidates", expected: &coordinationv1beta1.LeaseCandidate{}})
	} else {
		m.log.Warn("LeaseCandidates are not mirrored; coordinated candidate tabs are refused", slog.String("reason", m.candidatesRefused))
	}
	m.readOnly = m.writeProblem(ctx, namespaces)
	if m.readOnly != "" {
		m.log.Warn("the cluster is shown read-only", slog.String("reason", m.readOnly))
	}
	core := m.client.CoreV1().RESTClient()
	if err := m.check(ctx, core, "", "events", namespaces[0]); err != nil {
		m.log.Warn("Events are not mirrored: the lease pages show none", slog.Any("error", err))
	} else {
		resources = append(resources, mirrored{kind: m.lookup("", "v1", "events"), client: core, resource: "events", expected: &corev1.Event{}, keep: aboutLeases})
	}

	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	var synced []func() bool
	for _, res := range resources {
		for _, ns := range namespaces {
			synced = append(synced, m.run(ctx, res, ns))
		}
	}
	m.startNamespaces(ctx)
	// Wait for the Leases' first lists: the screens then show the cluster from the start.
	for _, done := range synced[:len(namespaces)] {
		for !done() {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
			if err := m.Err(); err != nil {
				m.Close()
				return fmt.Errorf("upstream: %w", err)
			}
		}
	}
	return nil
}

// refusePlaygroundObjects refuses a database that holds Leases or LeaseCandidates the mirror
// did not write (they lack ResourceVersionAnnotation): the playground's own, or a workshop's.
// The mirror's first list would delete every one of them as gone from the cluster.
func (m *Mirror) refusePlaygroundObjects(ctx context.Context) error {
	mark := []byte(`"` + ResourceVersionAnnotation + `"`)
	var found []string
	for _, k := range []*kinds.Kind{m.lookup("coordination.k8s.io", "v1", "leases"), m.lookup("coordination.k8s.io", "v1beta1", "leasecandidates")} {
		res, err := m.st.List(ctx, store.ListOptions{Resource: k.StorageResource(), Match: func(o store.Object) bool {
			return !bytes.Contains(o.Value, mark)
		}})
		if err != nil {
			return fmt.Errorf("read the database: %w", err)
		}
		for _, o := range res.Objects {
			found = append(found, k.Kind+" "+o.Key.Namespace+"/"+o.Key.Name)
		}
	}
	if len(found) == 0 {
		return nil
	}
	named := strings.Join(found[:min(len(found), 3)], ", ")
	if len(found) > 3 {
		named += fmt.Sprintf(" and %d more", len(found)-3)
	}
	return fmt.Errorf("the database holds objects of its own (%s): serving in front of a cluster mirrors the cluster into the database, which would delete them; give it a database of its own (--db upstream.db)", named)
}

// lookup is the registry's kind; the registry serves every kind the mirror writes.
func (m *Mirror) lookup(group, version, resource string) *kinds.Kind {
	k := m.reg.Lookup(group, version, resource)
	if k == nil {
		panic("registry does not serve " + group + "/" + version + " " + resource)
	}
	return k
}

// check lists one object of resource in ns, to find out whether the cluster answers and lets
// the identity list it.
func (m *Mirror) check(ctx context.Context, c rest.Interface, group, resource, ns string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := c.Get().Namespace(ns).Resource(resource).Param("limit", "1").Do(ctx).Error()
	if err == nil {
		return nil
	}
	gr := schema.GroupResource{Group: group, Resource: resource}
	where := "in every namespace"
	if ns != "" {
		where = fmt.Sprintf("in the namespace %q", ns)
	}
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("the kubeconfig's identity (user %q) may not list %s %s on the cluster at %s: leaselab needs the verbs get, list and watch on %s there (and create, update, patch, delete to write); see docs/operations.md, RBAC. The cluster said: %v",
			m.cluster.User, gr, where, m.cluster.Server(), gr, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the cluster at %s does not accept the credentials of --upstream-kubeconfig (user %q): %v", m.cluster.Server(), m.cluster.User, err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("the cluster at %s does not serve %s: %v", m.cluster.Server(), gr, err)
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return fmt.Errorf("the cluster at %s answered the list of %s %s with %d: %v", m.cluster.Server(), gr, where, se.Status().Code, err)
	}
	return fmt.Errorf("the cluster at %s is unreachable: %v", m.cluster.Server(), unwrapURLError(err))
}

// candidatesProblem says why LeaseCandidates cannot be mirrored and written (a cluster without
// coordination.k8s.io/v1beta1, or an identity that may not list them), "" when they can, and
// whether the reason is that the cluster does not serve them.
func (m *Mirror) candidatesProblem(ctx context.Context, namespaces []string) (string, bool) {
	list, err := m.client.Discovery().ServerResourcesForGroupVersion("coordination.k8s.io/v1beta1")
	served := false
	if err == nil {
		for _, r := range list.APIResources {
			served = served || r.Name == "leasecandidates"
		}
	}
	if !served {
		return fmt.Sprintf("the cluster at %s does not serve coordination.k8s.io/v1beta1 LeaseCandidates (kube-apiserver serves them with --feature-gates=CoordinatedLeaderElection=true --runtime-config=coordination.k8s.io/v1beta1=true): coordinated candidates cannot take part; plain ones can", m.cluster.Server()), true
	}
	for _, ns := range namespaces {
		if err := m.check(ctx, m.client.CoordinationV1beta1().RESTClient(), "coordination.k8s.io", "leasecandidates", ns); err != nil {
			return err.Error(), false
		}
	}
	return "", false
}

// writeProblem says why the kubeconfig's identity may create a Lease in none of namespaces,
// "" when it may in one of them (or the cluster does not say). It asks with a dry run, which
// the cluster authorizes as the write itself and does not keep.
func (m *Mirror) writeProblem(ctx context.Context, namespaces []string) string {
	var refused error
	for _, ns := range namespaces {
		if ns == metav1.NamespaceAll {
			ns = metav1.NamespaceDefault
		}
		probe := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "leaselab-write-check"}}
		_, err := m.client.CoordinationV1().Leases(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if !apierrors.IsForbidden(err) {
			return ""
		}
		refused = err
	}
	return fmt.Sprintf("the kubeconfig's identity (user %q) may not create leases.coordination.k8s.io in %s: the cluster is shown read-only. The cluster said: %v",
		m.cluster.User, strings.Join(quoted(namespaces), ", "), refused)
}

func quoted(namespaces []string) []string {
	out := make([]string, len(namespaces))
	for i, ns := range namespaces {
		if ns == metav1.NamespaceAll {
			ns = metav1.NamespaceDefault
		}
		out[i] = fmt.Sprintf("%q", ns)
	}
	return out
}

// Cluster is the cluster mirrored.
func (m *Mirror) Cluster() Cluster { return m.cluster }

// ReadOnly says why the kubeconfig's identity may not write Leases in the namespaces shown, ""
// when it may. Valid after Start.
func (m *Mirror) ReadOnly() string { return m.readOnly }

// CandidatesRefused says why coordinated candidates cannot run against the cluster, "" when
// they can. Valid after Start.
func (m *Mirror) CandidatesRefused() string { return m.candidatesRefused }

// CandidatesUnserved is CandidatesRefused when the reason is that the cluster does not serve
// LeaseCandidates v1beta1, "" otherwise. Valid after Start.
func (m *Mirror) CandidatesUnserved() string {
	if !m.candidatesUnserved {
		return ""
	}
	return m.candidatesRefused
}

// Relists counts the lists the mirror took: one per watched resource and namespace at start,
// and one more each time a watch could not resume (410 Gone) or the cluster was away.
func (m *Mirror) Relists() int64 { return m.relists.Load() }

// History says how the mirror followed the cluster: how often it listed it, how often the
// cluster answered 410 (its history no longer reached back to where the mirror's watch would
// resume) and how many lists followed such an answer. What changed on the cluster between a
// 410 and the list after it is recorded as one change per object.
type History struct {
	// Lists counts every list recorded, the first ones included.
	Lists int64
	// Expired counts the cluster's 410 Expired (or Gone) answers to a watch or a list.
	Expired int64
	// RelistedAfterExpired counts the lists recorded after a 410.
	RelistedAfterExpired int64
}

// History is how the mirror has followed the cluster so far.
func (m *Mirror) History() History {
	return History{Lists: m.relists.Load(), Expired: m.expired.Load(), RelistedAfterExpired: m.relistedAfterExpired.Load()}
}

// Err is the latest failure to reach the cluster (Check) or to list or watch it, nil once it
// answers again.
func (m *Mirror) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.probeErr != nil {
		return m.probeErr
	}
	return m.lastErr
}

// Check asks the cluster for its /version now, once, without retrying (client-go's requests
// retry a broken connection for many seconds), and returns Err. Readiness calls it.
func (m *Mirror) Check(ctx context.Context) error {
	err := m.ask(ctx)
	m.mu.Lock()
	m.probeErr = err
	m.mu.Unlock()
	return m.Err()
}

func (m *Mirror) ask(ctx context.Context) error {
	base, err := m.cluster.baseURL()
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String()+"/version", nil)
	if err != nil {
		return err
	}
	resp, err := m.probe.Do(req)
	if err != nil {
		return fmt.Errorf("the cluster at %s is unreachable: %w", m.cluster.Server(), unwrapURLError(err))
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return fmt.Errorf("the cluster at %s answers /version with %s", m.cluster.Server(), resp.Status)
	}
	return nil
}

func (m *Mirror) setErr(err error) {
	m.mu.Lock()
	m.lastErr = err
	m.mu.Unlock()
}

// Close stops the watches and waits for them.
func (m *Mirror) Close() {
	if m.cancel != nil {
		m.cancel()
	}
	m.wg.Wait()
}

// run starts a reflector of res in ns; the function it returns reports whether the first list
// was recorded.
func (m *Mirror) run(ctx context.Context, res mirrored, ns string) func() bool {
	// A change read is recorded even when the mirror stops meanwhile: Close waits for it.
	target := &storeWriter{m: m, res: res, ns: ns, ctx: context.WithoutCancel(ctx)}
	lw := cache.NewListWatchFromClient(res.client, res.resource, ns, fields.Everything())
	name := res.kind.GroupResource().String()
	if ns != "" {
		name += " in " + ns
	}
	// The reflector keeps its errors to itself (only an informer's handler hears them): the
	// list and watch calls are wrapped to learn whether the cluster answers.
	list, watchFn := lw.ListWithContextFunc, lw.WatchFuncWithContext
	lw.ListWithContextFunc = func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		obj, err := list(ctx, opts)
		if isExpired(err) {
			target.expired(name, "list", opts.ResourceVersion, err)
			return obj, err
		}
		m.observe(ctx, name, err)
		return obj, err
	}
	lw.WatchFuncWithContext = func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		wi, err := watchFn(ctx, opts)
		if isExpired(err) {
			target.expired(name, "watch", opts.ResourceVersion, err)
			return wi, err
		}
		m.observe(ctx, name, err)
		if err != nil {
			return wi, err
		}
		// A real API server answers a watch from a compacted resourceVersion with 200 and one
		// ERROR event of reason Expired; the reflector then lists again.
		return watch.Filter(wi, func(ev watch.Event) (watch.Event, bool) {
			if ev.Type == watch.Error {
				if err := apierrors.FromObject(ev.Object); isExpired(err) {
					target.expired(name, "watch", opts.ResourceVersion, err)
				}
			}
			return ev, true
		}), nil
	}
	r := cache.NewReflectorWithOptions(lw, res.expected, target, cache.ReflectorOptions{Name: "upstream " + name})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		r.RunWithContext(ctx)
	}()
	return target.synced.Load
}

// isExpired says whether err is the cluster's 410: the resourceVersion asked for is older than
// the history it keeps.
func isExpired(err error) bool {
	return err != nil && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err))
}

// expired records the cluster's 410 answer to a list or a watch from resourceVersion: the
// reflector lists again, and Replace counts that list as one after a 410.
func (w *storeWriter) expired(name, verb, resourceVersion string, err error) {
	w.m.expired.Add(1)
	w.expiredPending.Store(true)
	w.m.log.Info("the cluster no longer keeps the history the mirror would resume from (410 Expired): listing it again; what changed meanwhile is recorded as one change per object",
		slog.String("resource", name), slog.String("verb", verb), slog.String("resourceVersion", resourceVersion), slog.Any("error", err))
}

// observe records the outcome of a list or a watch request to the cluster.
func (m *Mirror) observe(ctx context.Context, name string, err error) {
	if ctx.Err() != nil {
		return
	}
	if err == nil {
		m.setErr(nil)
		return
	}
	if m.Err() == nil {
		m.log.Warn("the cluster does not answer the mirror; retrying", slog.String("resource", name), slog.Any("error", err))
	}
	m.setErr(fmt.Errorf("the mirror of %s cannot reach the cluster at %s: %w", name, m.cluster.Server(), unwrapURLError(err)))
}

// aboutLeases keeps the Events about Leases and LeaseCandidates: a cluster records many others.
func aboutLeases(obj runtime.Object) bool {
	ev, ok := obj.(*corev1.Event)
	return ok && (ev.InvolvedObject.Kind == "Lease" || ev.InvolvedObject.Kind == "LeaseCandidate")
}

// startNamespaces records the Namespace objects: watched when every namespace is mirrored, or
// the ones of --namespaces (as the cluster has them, or as a bare Namespace when the identity
// may not read them: a Role grants nothing on cluster-scoped objects).
func (m *Mirror) startNamespaces(ctx context.Context) {
	res := mirrored{kind: m.lookup("", "v1", "namespaces"), client: m.client.CoreV1().RESTClient(), resource: "namespaces", expected: &corev1.Namespace{}}
	if len(m.cluster.Namespaces) == 0 {
		m.run(ctx, res, "")
		return
	}
	w := &storeWriter{m: m, res: res, ctx: ctx}
	for _, name := range m.cluster.Namespaces {
		ns, err := m.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
		}
		if err := w.put(ns); err != nil {
			m.log.Warn("could not record a namespace", slog.String("namespace", name), slog.Any("error", err))
		}
	}
}

// storeWriter is the reflector's store: it writes each object into the local store as the
// cluster has it (its resourceVersion kept in ResourceVersionAnnotation), and on a list
// (Replace) deletes what the cluster no longer has.
type storeWriter struct {
	m      *Mirror
	res    mirrored
	ns     string // the namespace the reflector lists; "" for every one
	ctx    context.Context
	synced atomic.Bool
	// expiredPending is set by the cluster's 410 and cleared by the list after it.
	expiredPending atomic.Bool
}

var _ cache.ReflectorStore = (*storeWriter)(nil)

func (w *storeWriter) key(obj runtime.Object) (store.Key, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return store.Key{}, err
	}
	return store.Key{Resource: w.res.kind.StorageResource(), Namespace: acc.GetNamespace(), Name: acc.GetName()}, nil
}

// put writes obj unless the local copy is the same.
func (w *storeWriter) put(obj runtime.Object) error {
	if w.res.keep != nil && !w.res.keep(obj) {
		return nil
	}
	obj = obj.DeepCopyObject()
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	ann := acc.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[ResourceVersionAnnotation] = acc.GetResourceVersion()
	acc.SetAnnotations(ann)
	value, err := w.m.reg.EncodeStored(w.res.kind, obj)
	if err != nil {
		return fmt.Errorf("encode %s: %w", w.res.kind.GroupResource(), err)
	}
	key, err := w.key(obj)
	if err != nil {
		return err
	}
	for {
		cur, err := w.m.st.Get(w.ctx, key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			_, err = w.m.st.Create(w.ctx, key, value)
			if errors.Is(err, store.ErrExists) {
				continue
			}
		case err != nil:
		case bytes.Equal(cur.Value, value):
			return nil
		default:
			_, err = w.m.st.Update(w.ctx, key, cur.Revision, value)
			if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("record %s %s/%s: %w", w.res.kind.GroupResource(), key.Namespace, key.Name, err)
		}
		return nil
	}
}

func (w *storeWriter) remove(key store.Key) error {
	_, err := w.m.st.Delete(w.ctx, key, 0)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("record the delete of %s %s/%s: %w", w.res.kind.GroupResource(), key.Namespace, key.Name, err)
	}
	return nil
}

// done records the outcome of a write: a failure is logged (the reflector would only count
// it), a success means the cluster is reachable.
func (w *storeWriter) done(err error) error {
	if err != nil {
		if w.ctx.Err() == nil {
			w.m.log.Warn("upstream mirror could not record a change", slog.Any("error", err))
		}
		return err
	}
	w.m.setErr(nil)
	return nil
}

func (w *storeWriter) Add(obj any) error    { return w.done(w.put(obj.(runtime.Object))) }
func (w *storeWriter) Update(obj any) error { return w.done(w.put(obj.(runtime.Object))) }

func (w *storeWriter) Delete(obj any) error {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	ro, ok := obj.(runtime.Object)
	if !ok {
		return nil
	}
	key, err := w.key(ro)
	if err != nil {
		return err
	}
	return w.done(w.remove(key))
}

// Replace records a whole list: every object the cluster has, and the delete of every local
// object of the list's scope it no longer has.
func (w *storeWriter) Replace(list []any, _ string) error {
	w.m.relists.Add(1)
	seen := map[store.Key]bool{}
	var firstErr error
	for _, o := range list {
		ro := o.(runtime.Object)
		if err := w.put(ro); err != nil && firstErr == nil {
			firstErr = err
		}
		if k, err := w.key(ro); err == nil {
			seen[k] = true
		}
	}
	local, err := w.m.st.List(w.ctx, store.ListOptions{Resource: w.res.kind.StorageResource(), Namespace: w.ns})
	if err != nil {
		return w.done(err)
	}
	for _, o := range local.Objects {
		if !seen[o.Key] {
			if err := w.remove(o.Key); err != nil && firstErr == nil {
				firstErr = err
			}
		}
	}
	w.synced.Store(true)
	if w.expiredPending.Swap(false) {
		n := w.m.relistedAfterExpired.Add(1)
		w.m.log.Info("listed the cluster again after its 410 Expired", slog.String("resource", w.res.kind.GroupResource().String()),
			slog.String("namespace", w.ns), slog.Int("objects", len(list)), slog.Int64("relistedAfterExpired", n))
	}
	return w.done(firstErr)
}

func (w *storeWriter) Resync() error { return nil }
