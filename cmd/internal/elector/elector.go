// Package elector is the leader-election candidate of `leaselab candidate`: one client-go
// elector (tools/leaderelection) for a lease, coordinated or not, that says each event in one
// line, records client-go's events, and reports its own view of the lease to a leaselab
// server's tab hub as a browser tab does (view.go). The command's flags fill Config.
package elector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// Config is what a candidate runs with.
type Config struct {
	Namespace        string
	Lease            string
	Identity         string
	LeaseDuration    time.Duration
	RenewDeadline    time.Duration
	RetryPeriod      time.Duration
	ReleaseOnCancel  bool
	Coordinated      bool
	BinaryVersion    string
	EmulationVersion string
	// UserAgent names the candidate's requests.
	UserAgent string
}

// Run runs one client-go leader elector against the server rc names until ctx ends, writing
// one line per event to stdout (client-go's warnings go to stderr). It returns an error when
// the elector cannot start: an empty identity, a server without LeaseCandidates for a
// coordinated candidate, or a configuration client-go refuses.
func Run(ctx context.Context, c Config, rc *rest.Config, stdout io.Writer) error {
	if c.Identity == "" {
		return errors.New("--identity must not be empty")
	}
	rc = rest.CopyConfig(rc)
	viewConfig := rest.CopyConfig(rc) // the tab hub's WebSocket is not a request on the lease
	rc.UserAgent = c.UserAgent
	view := newViewReporter(c.Identity, c.Namespace, c.Lease)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &flightTransport{next: rt, identity: c.Identity, view: view}
	})
	rc.WarningHandler = rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true})
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	if c.Coordinated {
		// client-go's LeaseCandidate informer would wait for ever on a server without them.
		if err := servesLeaseCandidates(ctx, client); err != nil {
			return fmt.Errorf("--coordinated: %w", err)
		}
	}
	say := func(format string, args ...any) {
		fmt.Fprintf(stdout, "%s %s %s\n", time.Now().Format("15:04:05.000"), c.Identity, fmt.Sprintf(format, args...))
	}
	// client-go's leader election and LeaseCandidate log through the context's klog logger: its
	// errors are said in the same one-line form, its chatter is dropped, and so is the request
	// a stop cuts short (a clean stop logs no error). The context's, not klog's global logger:
	// setting that races with every other client-go user of the process (a server's mirror
	// running beside candidates in one test binary).
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(&klogLines{say: say, stopping: ctx.Done()}))

	recorder, flushEvents := startEvents(client, c.Namespace)
	defer flushEvents()
	stopView := startView(ctx, view, viewConfig, say)
	defer stopView()
	le, err := leaderelection.NewLeaderElector(c.electorConfig(client, recorder, view, say))
	if err != nil {
		return fmt.Errorf("leader election config: %w", err)
	}
	if c.Coordinated {
		if err := c.declare(ctx, client, say); err != nil {
			return err
		}
	}
	say("running for %s/%s on %s (lease %v, renew deadline %v, retry %v)", c.Namespace, c.Lease, rc.Host, c.LeaseDuration, c.RenewDeadline, c.RetryPeriod)
	le.Run(ctx)
	say("stopped")
	return nil
}

// startEvents records client-go's events about the lease in namespace. The broadcaster
// outlives the elector's ctx: the elector releases the lease after ctx ends and records an
// event about it, so flush, called once the elector has returned, waits (up to two seconds)
// for the events being written before it shuts the broadcaster down (which cancels a write in
// flight).
func startEvents(client kubernetes.Interface, namespace string) (record.EventRecorder, func()) {
	broadcaster := record.NewBroadcaster()
	pending := new(atomic.Int64)
	broadcaster.StartRecordingToSink(&countingSink{EventSink: &typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events(namespace)}, pending: pending})
	flush := func() {
		for wait := time.Now().Add(2 * time.Second); pending.Load() > 0 && time.Now().Before(wait); {
			time.Sleep(10 * time.Millisecond)
		}
		broadcaster.Shutdown()
	}
	return countingRecorder{broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "leaselab-candidate"}), pending}, flush
}

// startView reports the candidate's view to the server's tab hub until stop is called, also
// after ctx ends: the elector's last words (it stopped) are reported too.
func startView(ctx context.Context, view *viewReporter, rc *rest.Config, say func(string, ...any)) (stop func()) {
	viewCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		view.run(viewCtx, rc, say)
	}()
	return func() {
		cancel()
		<-done
	}
}

// electorConfig is client-go's configuration of the elector: the lease lock, the timings and
// callbacks that say each change and report it to the view.
func (c Config) electorConfig(client kubernetes.Interface, recorder record.EventRecorder, view *viewReporter, say func(string, ...any)) leaderelection.LeaderElectionConfig {
	var led atomic.Bool
	leader, none := tabproto.RoleLeader, tabproto.RoleNone
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Lease},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity, EventRecorder: recorder},
	}
	return leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   c.LeaseDuration,
		RenewDeadline:   c.RenewDeadline,
		RetryPeriod:     c.RetryPeriod,
		ReleaseOnCancel: c.ReleaseOnCancel,
		Name:            c.Lease,
		Coordinated:     c.Coordinated,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				led.Store(true)
				view.update(&leader, &c.Identity, "acquired", "became leader")
				say("became leader of %s/%s", c.Namespace, c.Lease)
			},
			// client-go calls it whenever Run returns, also for a candidate that never led.
			OnStoppedLeading: func() {
				view.update(&none, nil, "stopped", "stopped")
				if led.Load() {
					say("stopped leading")
				}
			},
			OnNewLeader: func(id string) {
				view.update(nil, &id, "waiting", "the leader is "+id)
				if id != c.Identity {
					say("leader is now %s", id)
				}
			},
		},
	}
}

// declare declares the candidate's LeaseCandidate and keeps it renewed until ctx ends; it
// returns once the candidate's informer has synced.
func (c Config) declare(ctx context.Context, client kubernetes.Interface, say func(string, ...any)) error {
	cand, waitForSync, err := leaderelection.NewCandidate(client, c.Namespace, c.Identity, c.Lease,
		c.BinaryVersion, c.EmulationVersion, coordinationv1.OldestEmulationVersion)
	if err != nil {
		return fmt.Errorf("lease candidate: %w", err)
	}
	go cand.Run(ctx)
	waitForSync.WaitForCacheSync(ctx.Done())
	say("declared LeaseCandidate %s/%s (binary %s, emulation %s)", c.Namespace, c.Identity, c.BinaryVersion, c.EmulationVersion)
	return nil
}

// servesLeaseCandidates checks that the server serves coordination.k8s.io/v1beta1
// LeaseCandidates, which a coordinated candidate declares itself with. It returns the server's
// answer when it does not.
func servesLeaseCandidates(ctx context.Context, client kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var list metav1.APIResourceList
	err := client.Discovery().RESTClient().Get().AbsPath("/apis/coordination.k8s.io/v1beta1").Do(ctx).Into(&list)
	if err != nil {
		return fmt.Errorf("the server does not serve coordination.k8s.io/v1beta1 LeaseCandidates: %w", err)
	}
	for _, r := range list.APIResources {
		if r.Name == "leasecandidates" {
			return nil
		}
	}
	return errors.New("the server does not serve coordination.k8s.io/v1beta1 LeaseCandidates")
}

// countingRecorder counts the events recorded and not yet written by a countingSink.
type countingRecorder struct {
	record.EventRecorder
	pending *atomic.Int64
}

func (r countingRecorder) Eventf(obj runtime.Object, eventType, reason, message string, args ...any) {
	r.pending.Add(1)
	r.EventRecorder.Eventf(obj, eventType, reason, message, args...)
}

// countingSink counts down the events of a countingRecorder as each write ends.
type countingSink struct {
	record.EventSink
	pending *atomic.Int64
}

func (s *countingSink) Create(e *corev1.Event) (*corev1.Event, error) {
	defer s.pending.Add(-1)
	return s.EventSink.Create(e)
}

func (s *countingSink) Update(e *corev1.Event) (*corev1.Event, error) {
	defer s.pending.Add(-1)
	return s.EventSink.Update(e)
}

func (s *countingSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	defer s.pending.Add(-1)
	return s.EventSink.Patch(e, data)
}

// klogLines says client-go's error records as the candidate's own lines; everything else, and
// any record once the candidate is stopping, is dropped.
type klogLines struct {
	say      func(format string, args ...any)
	stopping <-chan struct{}
	attrs    []slog.Attr
}

func (k *klogLines) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (k *klogLines) Handle(_ context.Context, r slog.Record) error {
	select {
	case <-k.stopping:
		return nil
	default:
	}
	var b strings.Builder
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range k.attrs {
		add(a)
	}
	r.Attrs(add)
	if strings.Contains(b.String(), context.Canceled.Error()) {
		return nil
	}
	k.say("client-go: %s", b.String())
	return nil
}

func (k *klogLines) WithAttrs(as []slog.Attr) slog.Handler {
	return &klogLines{say: k.say, stopping: k.stopping, attrs: append(slices.Clip(k.attrs), as...)}
}

func (k *klogLines) WithGroup(string) slog.Handler { return k }
