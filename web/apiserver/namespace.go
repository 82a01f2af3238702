package apiserver

import (
	"context"

	"errors"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		Name:   ns,
		Labels: map[string]string{corev1.LabelMetadataName: ns},
	}}
	// The same Create as a client's, as the server's own write: no admission, no managed
	// fields. Another create of the same namespace may win the race.
	if _, err := s.kindStore(k).Create(ctx, obj, writeOptions{implicit: true}, false); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
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
