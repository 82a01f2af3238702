package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// candidateConfig is everything `leaselab candidate` is configured with.
type candidateConfig struct {
	kubeconfig       string
	server           string
	namespace        string
	lease            string
	identity         string
	leaseDuration    time.Duration
	renewDeadline    time.Duration
	retryPeriod      time.Duration
	releaseOnCancel  bool
	coordinated      bool
	binaryVersion    string
	emulationVersion string
}

func runCandidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	host, _ := os.Hostname()
	var c candidateConfig
	fs := newFlagSet("candidate", "run a leader-election candidate (client-go tools/leaderelection) for a lease", "", stderr)
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to use (default: $KUBECONFIG when set and --server is not given, else --server)")
	fs.StringVar(&c.server, "server", "http://127.0.0.1:8080", "URL of the API server; with a kubeconfig, overrides the server it names")
	fs.StringVar(&c.namespace, "namespace", "", "namespace of the lease (default: the kubeconfig context's namespace, else default)")
	fs.StringVar(&c.lease, "lease", "demo", "name of the lease")
	fs.StringVar(&c.identity, "identity", host+"_"+fmt.Sprint(os.Getpid()), "identity of this candidate")
	durationVar(fs, &c.leaseDuration, "lease-duration", 15*time.Second, "how long a lease is valid without renewal")
	durationVar(fs, &c.renewDeadline, "renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it gives up leading")
	durationVar(fs, &c.retryPeriod, "retry-period", 2*time.Second, "time between attempts")
	fs.BoolVar(&c.releaseOnCancel, "release-on-cancel", true, "release the lease when stopped (Ctrl-C)")
	fs.BoolVar(&c.coordinated, "coordinated", false, "use Coordinated Leader Election: declare a LeaseCandidate and let the server pick the leader")
	fs.StringVar(&c.binaryVersion, "binary-version", "1.36.0", "binary version of the LeaseCandidate (coordinated mode)")
	fs.StringVar(&c.emulationVersion, "emulation-version", "1.36.0", "emulation version of the LeaseCandidate (coordinated mode)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, namespace, _, err := clientConfig(c.kubeconfig, c.server, flagGiven(fs, "server"))
	if err != nil {
		return err
	}
	if c.namespace == "" {
		c.namespace = cmp.Or(namespace, "default")
	}
	return runElector(ctx, c, cfg, stdout)
}

// clientConfig finds the cluster to talk to as kubectl does: --kubeconfig, else the files of
// $KUBECONFIG, else --server alone. An explicit --server without --kubeconfig means that
// server, whatever $KUBECONFIG says; with a kubeconfig, it replaces the server the kubeconfig
// names. namespace is the kubeconfig context's ("" without a kubeconfig); loaded says whether a
// kubeconfig was read. ~/.kube/config is not read: the default is the local leaselab, not
// whatever cluster the user works on.
func clientConfig(kubeconfig, server string, serverGiven bool) (cfg *rest.Config, namespace string, loaded bool, err error) {
	env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar)
	if kubeconfig == "" && (serverGiven || env == "") {
		return &rest.Config{Host: server}, "", false, nil
	}
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
	if kubeconfig == "" {
		rules.Precedence = filepath.SplitList(env)
	}
	overrides := &clientcmd.ConfigOverrides{}
	if serverGiven {
		overrides.ClusterInfo.Server = server
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	if cfg, err = cc.ClientConfig(); err != nil {
		return nil, "", false, fmt.Errorf("kubeconfig: %w", err)
	}
	if namespace, _, err = cc.Namespace(); err != nil {
		return nil, "", false, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, namespace, true, nil
}

// runElector runs one client-go leader elector until ctx ends, logging one line per event.
func runElector(ctx context.Context, c candidateConfig, cfg *rest.Config, stdout io.Writer) error {
	if c.identity == "" {
		return errors.New("--identity must not be empty")
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "leaselab-candidate/" + leaselabVersion()
	cfg.WarningHandler = rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true})
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if c.coordinated {
		// client-go's LeaseCandidate informer would wait for ever on a server without them.
		if err := servesLeaseCandidates(ctx, client); err != nil {
			return fmt.Errorf("--coordinated: %w", err)
		}
	}
	say := func(format string, args ...any) {
		fmt.Fprintf(stdout, "%s %s %s\n", time.Now().Format("15:04:05.000"), c.identity, fmt.Sprintf(format, args...))
	}
	// client-go's leader election and LeaseCandidate log through the context's klog logger: its
	// errors are said in the same one-line form, its chatter is dropped, and so is the request
	// a stop cuts short (a clean stop logs no error). The context's, not klog's global logger:
	// setting that races with every other client-go user of the process (a server's mirror
	// running beside candidates in one test binary).
	ctx = klog.NewContext(ctx, logr.FromSlogHandler(&klogLines{say: say, stopping: ctx.Done()}))

	// The broadcaster outlives ctx: the elector releases the lease after ctx ends and records an
	// event about it, so the broadcaster is shut down only once the elector has returned and
	// that event is written (shutting down cancels a write in flight).
	broadcaster := record.NewBroadcaster()
	var pending atomic.Int64
	broadcaster.StartRecordingToSink(&countingSink{EventSink: &typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events(c.namespace)}, pending: &pending})
	defer func() {
		for wait := time.Now().Add(2 * time.Second); pending.Load() > 0 && time.Now().Before(wait); {
			time.Sleep(10 * time.Millisecond)
		}
		broadcaster.Shutdown()
	}()
	recorder := countingRecorder{broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "leaselab-candidate"}), &pending}

	var led atomic.Bool
	view := newViewReporter(c.identity, c.namespace, c.lease)
	viewCtx, stopView := context.WithCancel(context.WithoutCancel(ctx))
	viewDone := make(chan struct{})
	go func() {
		defer close(viewDone)
		view.run(viewCtx, cfg, say)
	}()
	defer func() {
		stopView()
		<-viewDone
	}()
	leader, none := tabproto.RoleLeader, tabproto.RoleNone
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: c.namespace, Name: c.lease},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: c.identity, EventRecorder: recorder},
	}
	lec := leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   c.leaseDuration,
		RenewDeadline:   c.renewDeadline,
		RetryPeriod:     c.retryPeriod,
		ReleaseOnCancel: c.releaseOnCancel,
		Name:            c.lease,
		Coordinated:     c.coordinated,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				led.Store(true)
				view.update(&leader, &c.identity, "acquired", "became leader")
				say("became leader of %s/%s", c.namespace, c.lease)
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
				if id != c.identity {
					say("leader is now %s", id)
				}
			},
		},
	}
	le, err := leaderelection.NewLeaderElector(lec)
	if err != nil {
		return fmt.Errorf("leader election config: %w", err)
	}
	if c.coordinated {
		cand, waitForSync, err := leaderelection.NewCandidate(client, c.namespace, c.identity, c.lease,
			c.binaryVersion, c.emulationVersion, coordinationv1.OldestEmulationVersion)
		if err != nil {
			return fmt.Errorf("lease candidate: %w", err)
		}
		go cand.Run(ctx)
		waitForSync.WaitForCacheSync(ctx.Done())
		say("declared LeaseCandidate %s/%s (binary %s, emulation %s)", c.namespace, c.identity, c.binaryVersion, c.emulationVersion)
	}
	say("running for %s/%s on %s (lease %v, renew deadline %v, retry %v)", c.namespace, c.lease, cfg.Host, c.leaseDuration, c.renewDeadline, c.retryPeriod)
	le.Run(ctx)
	say("stopped")
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
