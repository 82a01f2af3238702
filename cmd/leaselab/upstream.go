package main

import (
	"flag"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/leaselab/leaselab/web/api/upstream"
)

// upstreamConfig is the cluster `leaselab serve` stands in front of, if any.
type upstreamConfig struct {
	kubeconfig string
	context    string
	namespaces string
}

func (c *upstreamConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.kubeconfig, "upstream-kubeconfig", "", "serve in front of the Kubernetes cluster this kubeconfig names: Leases, LeaseCandidates, Namespaces and Events are forwarded to it with the kubeconfig's credentials, the database records its changes, and the cluster's own controller decides elections")
	fs.StringVar(&c.context, "upstream-context", "", "context of --upstream-kubeconfig to use (default: its current context)")
	fs.StringVar(&c.namespaces, "namespaces", "", "with --upstream-kubeconfig, the only namespaces forwarded and shown, comma-separated (default: every namespace)")
}

// on says whether the server stands in front of a cluster.
func (c *upstreamConfig) on() bool { return c.kubeconfig != "" }

// namespaceList is --namespaces as a list, checked.
func (c *upstreamConfig) namespaceList() ([]string, error) {
	if c.namespaces == "" {
		return nil, nil
	}
	if !c.on() {
		return nil, fmt.Errorf("--namespaces needs --upstream-kubeconfig")
	}
	var out []string
	for _, ns := range strings.Split(c.namespaces, ",") {
		ns = strings.TrimSpace(ns)
		if ns == "" {
			continue
		}
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			return nil, fmt.Errorf("--namespaces: %q is not a namespace name: %s", ns, strings.Join(msgs, "; "))
		}
		out = append(out, ns)
	}
	return out, nil
}

// validate checks the flags without reading the kubeconfig.
func (c *upstreamConfig) validate() error {
	if c.context != "" && !c.on() {
		return fmt.Errorf("--upstream-context needs --upstream-kubeconfig")
	}
	_, err := c.namespaceList()
	return err
}

// cluster reads the kubeconfig: the cluster's address and the credentials of the context's
// user, as client-go loads them (tokens, client certificates, exec plugins).
func (c *upstreamConfig) cluster() (upstream.Cluster, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: c.kubeconfig}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.context})
	raw, err := cc.RawConfig()
	if err != nil {
		return upstream.Cluster{}, fmt.Errorf("--upstream-kubeconfig %s: %w", c.kubeconfig, err)
	}
	name := c.context
	if name == "" {
		name = raw.CurrentContext
	}
	kctx, ok := raw.Contexts[name]
	if !ok {
		if name == "" {
			return upstream.Cluster{}, fmt.Errorf("--upstream-kubeconfig %s has no current context: name one with --upstream-context", c.kubeconfig)
		}
		return upstream.Cluster{}, fmt.Errorf("--upstream-context %q: the kubeconfig %s has no such context", name, c.kubeconfig)
	}
	rc, err := cc.ClientConfig()
	if err != nil {
		return upstream.Cluster{}, fmt.Errorf("--upstream-kubeconfig %s: %w", c.kubeconfig, err)
	}
	rc.UserAgent = "leaselab/" + leaselabVersion()
	namespaces, err := c.namespaceList()
	if err != nil {
		return upstream.Cluster{}, err
	}
	user := kctx.AuthInfo
	if user == "" {
		user = "of the context " + name
	}
	return upstream.Cluster{REST: rc, User: user, Namespaces: namespaces}, nil
}
