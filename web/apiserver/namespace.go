package apiserver

import (
	"context"
	"errors"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"

	corev1 "k8s.io/api/core/v1"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/kinds"
)

// namespaceKind returns the registry's Namespace kind.
func (s *Server) namespaceKind() *kinds.Kind {
	return s.reg.Lookup("", "v1", "namespaces")
}

// ensureNamespace creates a namespace the first time something is written in it: in leaselab a
// namespace exists once created or once used, so that a participant never has to create one
// before writing a lease.
func (s *Server) ensureNamespace(ctx context.Context, ns string) error {
	s.nsMu.Lock()
	known := s.knownNS[ns]
	s.nsMu.Unlock()
	if known {
		return nil
	}
	k := s.namespaceKind()
	key := store.Key{Resource: k.StorageResource(), Name: ns}
	if _, err := s.store.Get(ctx, key); err == nil {
		s.markNamespace(ns, true)
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return storeError(err, k.GroupResource(), ns)
	}
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:              ns,
		UID:               uuid.NewUUID(),
		CreationTimestamp: metav1.NewTime(s.opts.Now().Truncate(1e9)),
		Labels:            map[string]string{corev1.LabelMetadataName: ns},
	}}
	if k.PrepareForCreate != nil {
		k.PrepareForCreate(obj)
	}
	value, err := s.encodeStored(k, obj)
	if err != nil {
		return err
	}
	if _, err := s.store.Create(ctx, key, value); err != nil && !errors.Is(err, store.ErrExists) {
		return storeError(err, k.GroupResource(), ns)
	}
	s.markNamespace(ns, true)
	return nil
}

func (s *Server) markNamespace(ns string, exists bool) {
	s.nsMu.Lock()
	defer s.nsMu.Unlock()
	if exists {
		s.knownNS[ns] = true
	} else {
		delete(s.knownNS, ns)
	}
}

// deleteNamespace deletes a namespace with everything in it. The real server marks the
// namespace Terminating and empties it in the background; leaselab does it at once and
// answers, like the real server, with the namespace as it was being deleted.
func (q *request) deleteNamespace(out output, obj runtime.Object, rev int64, dryRun bool) error {
	ctx := q.r.Context()
	name := q.ri.Name
	ns := obj.(*corev1.Namespace)
	now := metav1.NewTime(q.s.opts.Now().Truncate(1e9))
	ns.DeletionTimestamp = &now
	ns.Status.Phase = corev1.NamespaceTerminating
	if dryRun {
		return q.respond(http.StatusOK, out, ns)
	}
	q.s.markNamespace(name, false)
	for _, k := range q.s.reg.Kinds() {
		if !k.Namespaced {
			continue
		}
		if err := q.s.deleteAll(ctx, k, name); err != nil {
			return err
		}
	}
	if _, err := q.s.store.Delete(ctx, q.key(name), 0); err != nil {
		return storeError(err, q.kind.GroupResource(), name)
	}
	q.s.markNamespace(name, false)
	return q.respond(http.StatusOK, out, ns)
}

// deleteAll deletes every object of a kind in a namespace.
func (s *Server) deleteAll(ctx context.Context, k *kinds.Kind, ns string) error {
	res, err := s.store.List(ctx, store.ListOptions{Resource: k.StorageResource(), Namespace: ns})
	if err != nil {
		return storeError(err, k.GroupResource(), "")
	}
	for _, o := range res.Objects {
		if _, err := s.store.Delete(ctx, o.Key, 0); err != nil && !errors.Is(err, store.ErrNotFound) {
			return storeError(err, k.GroupResource(), o.Name)
		}
	}
	return nil
}

func (q *request) deleteCollection() error {
	dopts, err := q.deleteOptions()
	if err != nil {
		return err
	}
	out, err := q.negotiateOutput(false)
	if err != nil {
		return err
	}
	opts, err := q.listOptions()
	if err != nil {
		return err
	}
	items, lm, err := q.listObjects(opts)
	if err != nil {
		return err
	}
	for i := 0; i < len(items) && len(dopts.DryRun) == 0; i++ {
		acc, _ := meta.Accessor(items[i])
		key := store.Key{Resource: q.kind.StorageResource(), Namespace: acc.GetNamespace(), Name: acc.GetName()}
		if _, err := q.s.store.Delete(q.r.Context(), key, 0); err != nil && !errors.Is(err, store.ErrNotFound) {
			return storeError(err, q.kind.GroupResource(), acc.GetName())
		}
	}
	// The answer is the list as it was read, as the real server's DeleteCollection returns
	// it: items at their last resourceVersions, and with a limit the page's continue token
	// and remaining count, for the client to delete the next page.
	list, err := q.newList(items, lm)
	if err != nil {
		return err
	}
	q.writeObject(http.StatusOK, out, list, q.gv)
	return nil
}
