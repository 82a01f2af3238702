package bench

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	typedv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
)

// With Config.ClientGo, the measured requests go through client-go's typed clientset with its
// defaults (its content type, its transport: HTTP/2 over TLS where the server offers it, as
// kube-apiserver does, else a connection per request in flight; leaselab's TLS is HTTP/1.1)
// instead of the lean lease client: the figures are then those of the client users run, its
// own CPU included. A renew client is an elector with a clientset of its
// own, as electors are separate programs; the watchers share one clientset, as the informers
// of one program do (against kube-apiserver, every watch on one HTTP/2 connection).

// clientGoLeases returns a clientset of its own for one renew client or writer.
func (r *runner) clientGoLeases() (typedv1.LeaseInterface, error) {
	rc := rest.CopyConfig(r.rest)
	if r.cfg.KeepTransport {
		// client-go shares one transport among clients of the same TLS settings; a proxy
		// function (the default's) makes it build one for this client.
		rc.Proxy = http.ProxyFromEnvironment
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return cs.CoordinationV1().Leases(r.cfg.Namespace), nil
}

// clientGoRenewer returns the renewal of lease name through client-go's typed client: Get,
// then Update with the resourceVersion read, as LeaseLock does.
func (r *runner) clientGoRenewer(name string) (func(ctx context.Context) (*coordinationv1.Lease, time.Time, error), error) {
	leases, err := r.clientGoLeases()
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (*coordinationv1.Lease, time.Time, error) {
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, time.Time{}, err
		}
		start := time.Now()
		now := metav1.NewMicroTime(start)
		l.Spec.RenewTime = &now
		l, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return l, start, err
	}, nil
}

// watchClientGo follows the namespace with client-go's typed Watch from revision fromRV and
// times each event when client-go hands it over, decoded, as a program receives it.
func (r *runner) watchClientGo(ctx context.Context, fromRV string, ready chan<- struct{}, on func(watchedLease, time.Time)) error {
	w, err := r.client.CoordinationV1().Leases(r.cfg.Namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: fromRV})
	ready <- struct{}{}
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok = <-w.ResultChan():
		}
		if !ok {
			return fmt.Errorf("watch ended")
		}
		at := time.Now()
		if ev.Type == watch.Error {
			return fmt.Errorf("watch error event: %v", ev.Object)
		}
		l, isLease := ev.Object.(*coordinationv1.Lease)
		if !isLease {
			continue
		}
		rev, err := strconv.ParseInt(l.ResourceVersion, 10, 64)
		if err != nil {
			return fmt.Errorf("resourceVersion %q: %w", l.ResourceVersion, err)
		}
		wl := watchedLease{revision: rev}
		if l.Spec.RenewTime != nil {
			wl.renewTime = l.Spec.RenewTime.Time
		}
		on(wl, at)
	}
}
