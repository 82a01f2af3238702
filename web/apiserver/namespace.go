package apiserver

import (
	"context"
	"errors"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	items, lm, err := q.objects.DeleteCollection(q.r.Context(), q.ri.Namespace, opts, len(dopts.DryRun) > 0)
	if err != nil {
		return err
	}
	// The answer is the list as it was read, as the real server's DeleteCollection returns
	// it: items at their last resourceVersions.
	list, err := q.newList(items, lm)
	if err != nil {
		return err
	}
	q.writeObject(http.StatusOK, out, list, q.gv)
	return nil
}
