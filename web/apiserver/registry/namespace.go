package registry

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/kinds"
)

// namespaceKind returns the registry's Namespace kind.
func (r *Registry) namespaceKind() *kinds.Kind {
	return r.reg.Lookup("", "v1", "namespaces")
}

// ensureNamespace creates a namespace the first time something is written in it: in leaselab a
// namespace exists once created or once used, so that a participant never has to create one
// before writing a lease.
func (r *Registry) ensureNamespace(ctx context.Context, ns string) error {
	r.nsMu.Lock()
	known := r.knownNS[ns]
	r.nsMu.Unlock()
	if known {
		return nil
	}
	k := r.namespaceKind()
	key := store.Key{Resource: k.StorageResource(), Name: ns}
	if _, err := r.store.Get(ctx, key); err == nil {
		r.markNamespace(ns, true)
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return storeError(err, k.GroupResource(), ns)
	}
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   ns,
		Labels: map[string]string{corev1.LabelMetadataName: ns},
	}}
	// The same Create as a client's, as the server's own write: no admission, no managed
	// fields. Another create of the same namespace may win the race.
	if _, err := r.For(k).Create(ctx, obj, WriteOptions{implicit: true}, false); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	r.markNamespace(ns, true)
	return nil
}

func (r *Registry) markNamespace(ns string, exists bool) {
	r.nsMu.Lock()
	defer r.nsMu.Unlock()
	if exists {
		r.knownNS[ns] = true
	} else {
		delete(r.knownNS, ns)
	}
}
