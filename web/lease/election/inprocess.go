package election

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// NewForConfig returns a Controller whose client is made from rc: how a server runs the
// controller as a client of itself (web.New, web/leasetest), its requests going through rc's
// transport. It fails as New does, or when rc makes no client.
func NewForConfig(rc *rest.Config, opts Options) (*Controller, error) {
	rc = rest.CopyConfig(rc)
	// The controller uses LeaseCandidate v1beta1 on purpose, as kube-apiserver's does; its
	// deprecation warning would only fill the log.
	rc.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("election client: %w", err)
	}
	return New(client, opts)
}

// Start runs the controller in the background (Run) until stop is called; stop waits for it to
// end. A Controller starts once.
func (c *Controller) Start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}
