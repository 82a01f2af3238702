package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
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
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to use; empty uses --server")
	fs.StringVar(&c.server, "server", "http://127.0.0.1:8080", "URL of the API server when no --kubeconfig is given")
	fs.StringVar(&c.namespace, "namespace", "default", "namespace of the lease")
	fs.StringVar(&c.lease, "lease", "demo", "name of the lease")
	fs.StringVar(&c.identity, "identity", host+"_"+fmt.Sprint(os.Getpid()), "identity of this candidate")
	fs.DurationVar(&c.leaseDuration, "lease-duration", 15*time.Second, "how long a lease is valid without renewal")
	fs.DurationVar(&c.renewDeadline, "renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it gives up leading")
	fs.DurationVar(&c.retryPeriod, "retry-period", 2*time.Second, "time between attempts")
	fs.BoolVar(&c.releaseOnCancel, "release-on-cancel", true, "release the lease when stopped (Ctrl-C)")
	fs.BoolVar(&c.coordinated, "coordinated", false, "use Coordinated Leader Election: declare a LeaseCandidate and let the server pick the leader")
	fs.StringVar(&c.binaryVersion, "binary-version", "1.36.0", "binary version of the LeaseCandidate (coordinated mode)")
	fs.StringVar(&c.emulationVersion, "emulation-version", "1.36.0", "emulation version of the LeaseCandidate (coordinated mode)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := candidateRESTConfig(c)
	if err != nil {
		return err
	}
	return runElector(ctx, c, cfg, stdout)
}

func candidateRESTConfig(c candidateConfig) (*rest.Config, error) {
	if c.kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		return cfg, nil
	}
	return &rest.Config{Host: c.server}, nil
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
	// client-go logs its own retries through klog; the one-line log below says what matters.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)

	say := func(format string, args ...any) {
		fmt.Fprintf(stdout, "%s %s %s\n", time.Now().Format("15:04:05.000"), c.identity, fmt.Sprintf(format, args...))
	}

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events(c.namespace)})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "leaselab-candidate"})

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
			OnStartedLeading: func(context.Context) { say("became leader of %s/%s", c.namespace, c.lease) },
			OnStoppedLeading: func() { say("stopped leading") },
			OnNewLeader: func(id string) {
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
