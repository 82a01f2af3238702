package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/kinds"
)

// ReturnsDeletedObject reports whether a delete answers with the deleted object (namespaces, as
// the real server's) rather than a Status.
func (ks *Store) ReturnsDeletedObject() bool {
	return ks.isNamespace()
}

func (ks *Store) isNamespace() bool {
	return ks.kind.Resource == "namespaces" && ks.kind.Group == ""
}

// Delete deletes an object that meets opts' preconditions, as the real registry Store: an
// object without finalizers (after those opts' propagation asks for) is removed and returned
// as it was, with removed set; one with finalizers is marked as being deleted
// (deletionTimestamp, deletionGracePeriodSeconds 0), kept, and returned as marked. A namespace
// is marked Terminating and emptied (see deleteNamespace). Without preconditions a delete that
// lost a race with another write tries again. It returns 404 NotFound, 409 Conflict and the
// store's errors.
func (ks *Store) Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) (obj runtime.Object, removed bool, err error) {
	obj, removed, err = ks.delete(ctx, namespace, name, opts)
	if err == nil && len(opts.DryRun) == 0 {
		ks.r.afterDelete(ctx, ks.kind, namespace)
	}
	return obj, removed, err
}

// delete is Delete without what follows a delete (afterDelete).
func (ks *Store) delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	dryRun := len(opts.DryRun) > 0
	for {
		cur, err := ks.r.store.Get(ctx, ks.key(namespace, name))
		if err != nil {
			return nil, false, storeError(err, ks.kind.GroupResource(), name)
		}
		obj, err := ks.decode(cur)
		if err != nil {
			return nil, false, err
		}
		acc, _ := meta.Accessor(obj)
		if err := ks.checkDeletePreconditions(opts.Preconditions, acc); err != nil {
			return nil, false, err
		}
		if ks.isNamespace() && acc.GetDeletionTimestamp() == nil {
			out, err := ks.deleteNamespace(ctx, obj, cur.Revision, opts)
			if errors.Is(err, store.ErrConflict) && opts.Preconditions == nil {
				continue
			}
			return out, false, err
		}
		if ks.isNamespace() && !namespaceFinalized(obj) {
			return obj, false, nil // its content is still going
		}
		marked := obj.DeepCopyObject()
		markedAcc, _ := meta.Accessor(marked)
		changed, removeNow := prepareDeletion(markedAcc, opts, ks.r.opts.Now())
		if !removeNow {
			if !changed || dryRun {
				return marked, false, nil
			}
			out, err := ks.write(ctx, marked, cur.Revision)
			if errors.Is(err, store.ErrConflict) && opts.Preconditions == nil {
				continue
			}
			return out, false, err
		}
		if dryRun {
			return obj, true, nil
		}
		_, err = ks.r.store.Delete(ctx, ks.key(namespace, name), cur.Revision)
		switch {
		case errors.Is(err, store.ErrConflict) && opts.Preconditions == nil:
			continue // changed between our read and the delete: look again
		case errors.Is(err, store.ErrConflict):
			return nil, false, Modified(ks.kind.GroupResource(), name)
		case err != nil:
			return nil, false, storeError(err, ks.kind.GroupResource(), name)
		}
		return obj, true, nil
	}
}

// write stores obj, a storage-version object read at revision expect and changed by the server
// alone (deletion marks, finalizers): no strategy, validation or managed fields, as the real
// registry's updates inside a delete. A lost race is a store.ErrConflict.
func (ks *Store) write(ctx context.Context, obj runtime.Object, expect int64) (runtime.Object, error) {
	acc, _ := meta.Accessor(obj)
	value, err := ks.r.encodeStored(ks.kind, obj)
	if err != nil {
		return nil, err
	}
	o, err := ks.r.store.Update(ctx, ks.key(acc.GetNamespace(), acc.GetName()), expect, value)
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		return nil, storeConflict{Modified(ks.kind.GroupResource(), acc.GetName())}
	}
	if err != nil {
		return nil, storeError(err, ks.kind.GroupResource(), acc.GetName())
	}
	acc.SetResourceVersion(strconv.FormatInt(o.Revision, 10))
	return obj, nil
}

// checkDeletePreconditions fails a delete whose preconditions the object does not meet, with the
// real server's words (rest.BeforeDelete): a Conflict on the kind, not the resource.
func (ks *Store) checkDeletePreconditions(p *metav1.Preconditions, acc metav1.Object) error {
	if p == nil {
		return nil
	}
	byKind := schema.GroupResource{Group: ks.kind.Group, Resource: ks.kind.Kind}
	if p.UID != nil && *p.UID != acc.GetUID() {
		return apierrors.NewConflict(byKind, acc.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, acc.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != acc.GetResourceVersion() {
		return apierrors.NewConflict(byKind, acc.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, acc.GetResourceVersion()))
	}
	return nil
}

// DeleteCollection deletes, as Delete with opts, the objects a list with listOpts returns, and
// returns them as they were read, with the list metadata: with a limit, the page's continue
// token and remaining count, for the client to delete the next page. Objects gone meanwhile
// are skipped. It returns List's errors and Delete's.
func (ks *Store) DeleteCollection(ctx context.Context, namespace string, listOpts *metainternalversion.ListOptions, opts *metav1.DeleteOptions) ([]runtime.Object, metav1.ListMeta, error) {
	items, lm, err := ks.List(ctx, namespace, listOpts)
	if err != nil {
		return nil, lm, err
	}
	dryRun := len(opts.DryRun) > 0
	var namespaces []string
	for _, it := range items {
		acc, _ := meta.Accessor(it)
		// Each delete checks the preconditions against its own object, as the real server's.
		if _, _, err := ks.delete(ctx, acc.GetNamespace(), acc.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
			return nil, lm, err
		}
		if !slices.Contains(namespaces, acc.GetNamespace()) {
			namespaces = append(namespaces, acc.GetNamespace())
		}
	}
	for _, ns := range namespaces {
		if !dryRun {
			ks.r.afterDelete(ctx, ks.kind, ns)
		}
	}
	return items, lm, nil
}

// deleteNamespace starts the deletion of a namespace read at revision rev: as the real
// server's namespace registry, it is marked Terminating with a deletionTimestamp (and the
// finalizers the options' propagation asks for), and that is the answer. Then leaselab does
// at once what the namespace controller does: it deletes the namespace's content and, once
// the content is gone, takes the "kubernetes" finalizer off and removes the namespace unless
// finalizers of its own keep it. It returns 409 Conflict (a store.ErrConflict when it lost a
// race) and the store's errors.
func (ks *Store) deleteNamespace(ctx context.Context, obj runtime.Object, rev int64, opts *metav1.DeleteOptions) (runtime.Object, error) {
	ns := obj.DeepCopyObject().(*corev1.Namespace)
	now := metav1.NewTime(ks.r.opts.Now().Truncate(1e9))
	ns.DeletionTimestamp = &now
	ns.Status.Phase = corev1.NamespaceTerminating
	if fins, ok := deletionFinalizers(ns, opts); ok {
		ns.Finalizers = fins
	}
	if len(opts.DryRun) > 0 {
		return ns, nil
	}
	ks.r.markNamespace(ns.Name, false)
	out, err := ks.write(ctx, ns, rev)
	if err != nil {
		return nil, err
	}
	ks.r.finishNamespace(ctx, ns.Name)
	return out, nil
}

// afterDelete does what follows a delete, or an update that removed an object, of kind k in
// namespace: the namespace controller's work when that namespace is being deleted, then the
// garbage collector's.
func (r *Registry) afterDelete(ctx context.Context, k *kinds.Kind, namespace string) {
	if k.Namespaced && namespace != "" && r.namespaceTerminating(ctx, namespace) {
		r.finishNamespace(ctx, namespace)
	}
	r.collect(ctx)
}

// namespaceTerminating reports whether a namespace exists and is being deleted.
func (r *Registry) namespaceTerminating(ctx context.Context, ns string) bool {
	r.nsMu.Lock()
	known := r.knownNS[ns]
	r.nsMu.Unlock()
	if known {
		return false
	}
	k := r.namespaceKind()
	o, err := r.store.Get(ctx, store.Key{Resource: k.StorageResource(), Name: ns})
	if err != nil {
		return false
	}
	obj, err := r.decodeStored(k, o)
	if err != nil {
		return false
	}
	acc, _ := meta.Accessor(obj)
	return acc.GetDeletionTimestamp() != nil
}

// finishNamespace is the namespace controller's work on a namespace being deleted: delete
// every object in it (objects with finalizers stay, marked, until they lose them), and once
// nothing is left, finalize the namespace: without its "kubernetes" finalizer, it is removed,
// or kept as being deleted while finalizers of its own remain. What fails is logged: the next
// delete in the namespace tries again.
func (r *Registry) finishNamespace(ctx context.Context, name string) {
	if err := r.emptyNamespace(ctx, name); err != nil {
		r.log.Warn("finish namespace", slog.String("namespace", name), slog.Any("error", err))
	}
}

func (r *Registry) emptyNamespace(ctx context.Context, name string) error {
	remaining := false
	for _, k := range r.reg.Kinds() {
		if !k.Namespaced {
			continue
		}
		res, err := r.store.List(ctx, store.ListOptions{Resource: k.StorageResource(), Namespace: name})
		if err != nil {
			return storeError(err, k.GroupResource(), "")
		}
		ks := r.For(k)
		for _, o := range res.Objects {
			_, removed, err := ks.delete(ctx, name, o.Name, &metav1.DeleteOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return err
			case !removed:
				remaining = true
			}
		}
	}
	if remaining {
		return nil
	}
	nsk := r.For(r.namespaceKind())
	for {
		cur, err := r.store.Get(ctx, nsk.key("", name))
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return storeError(err, nsk.kind.GroupResource(), name)
		}
		obj, err := nsk.decode(cur)
		if err != nil {
			return err
		}
		ns := obj.(*corev1.Namespace)
		if ns.DeletionTimestamp == nil {
			return nil
		}
		ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
		if len(ns.Spec.Finalizers) > 0 {
			return nil // another controller's, which leaselab has not
		}
		if len(ns.Finalizers) == 0 {
			_, err = r.store.Delete(ctx, cur.Key, cur.Revision)
		} else {
			markDeleting(ns, r.opts.Now())
			_, err = nsk.write(ctx, ns, cur.Revision)
		}
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return storeError(err, nsk.kind.GroupResource(), name)
		}
		return nil
	}
}
