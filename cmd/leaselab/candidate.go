package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/leaselab/leaselab/cmd/internal/elector"
)

func runCandidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	host, _ := os.Hostname()
	var (
		c                  elector.Config
		kubeconfig, server string
	)
	fs := newFlagSet("candidate", "run a leader-election candidate (client-go tools/leaderelection) for a lease", "", stderr)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to use (default: $KUBECONFIG when set and --server is not given, else --server)")
	fs.StringVar(&server, "server", "http://127.0.0.1:8080", "URL of the API server; with a kubeconfig, overrides the server it names")
	fs.StringVar(&c.Namespace, "namespace", "", "namespace of the lease (default: the kubeconfig context's namespace, else default)")
	fs.StringVar(&c.Lease, "lease", "demo", "name of the lease")
	fs.StringVar(&c.Identity, "identity", host+"_"+fmt.Sprint(os.Getpid()), "identity of this candidate")
	durationVar(fs, &c.LeaseDuration, "lease-duration", 15*time.Second, "how long a lease is valid without renewal")
	durationVar(fs, &c.RenewDeadline, "renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it gives up leading")
	durationVar(fs, &c.RetryPeriod, "retry-period", 2*time.Second, "time between attempts")
	fs.BoolVar(&c.ReleaseOnCancel, "release-on-cancel", true, "release the lease when stopped (Ctrl-C)")
	fs.BoolVar(&c.Coordinated, "coordinated", false, "use Coordinated Leader Election: declare a LeaseCandidate and let the server pick the leader")
	fs.StringVar(&c.BinaryVersion, "binary-version", "1.36.0", "binary version of the LeaseCandidate (coordinated mode)")
	fs.StringVar(&c.EmulationVersion, "emulation-version", "1.36.0", "emulation version of the LeaseCandidate (coordinated mode)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, namespace, _, err := clientConfig(kubeconfig, server, flagGiven(fs, "server"))
	if err != nil {
		return err
	}
	if c.Namespace == "" {
		c.Namespace = cmp.Or(namespace, "default")
	}
	c.UserAgent = "leaselab-candidate/" + leaselabVersion()
	return elector.Run(ctx, c, cfg, stdout)
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
