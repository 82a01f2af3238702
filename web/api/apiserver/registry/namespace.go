package registry

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/kinds"
)

// namespaceKind returns the registry's Namespace kind.
func (r *Registry) namespaceKind() *kinds.Kind {
	return r.reg.Lookup("", "v1", "namespaces")
}

// systemNamespaces are the namespaces a real cluster always has: with NoImplicitNamespaces
// they are created at start, so that what works on a cluster works here.
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// CreateSystemNamespaces creates the system namespaces that do not exist yet. It returns the
// store's errors.
func (r *Registry) CreateSystemNamespaces(ctx context.Context) error {
	for _, ns := range systemNamespaces {
		if err := r.ensureNamespace(ctx, ns); err != nil {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	return nil
}

// admitNamespace is the real server's namespace lifecycle admission of a create of name in
// namespace ns: a namespace being deleted takes no new objects (403 Forbidden), and a missing
// one is a 404 unless namespaces are implicit (Create makes it after validation). It returns
// the store's errors too.
func (r *Registry) admitNamespace(ctx context.Context, gr schema.GroupResource, ns, name string) error {
	r.nsMu.Lock()
	known := r.knownNS[ns]
	r.nsMu.Unlock()
	if known {
		return nil
	}
	k := r.namespaceKind()
	o, err := r.store.Get(ctx, store.Key{Resource: k.StorageResource(), Name: ns})
	switch {
	case errors.Is(err, store.ErrNotFound) && r.opts.NoImplicitNamespaces:
		return apierrors.NewNotFound(k.GroupResource(), ns)
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return storeError(err, k.GroupResource(), ns)
	}
	obj, err := r.decodeStored(k, o)
	if err != nil {
		return err
	}
	if nsObj, ok := obj.(*corev1.Namespace); ok && (nsObj.Status.Phase == corev1.NamespaceTerminating || nsObj.DeletionTimestamp != nil) {
		st := apierrors.NewForbidden(gr, name, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
		st.ErrStatus.Details.Causes = append(st.ErrStatus.Details.Causes, metav1.StatusCause{
			Type:    corev1.NamespaceTerminatingCause,
			Message: fmt.Sprintf("namespace %s is being terminated", ns),
			Field:   "metadata.namespace",
		})
		return st
	}
	r.markNamespace(ns, true)
	return nil
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
		// It exists; whether it takes new objects is admitNamespace's to learn and remember.
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
