package registry

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The rules of an object's end, as the real registry Store applies them to kinds without
// graceful deletion (all of leaselab's): a delete of an object with finalizers marks it as
// being deleted and keeps it; the object goes when an update takes its last finalizer away.
// The delete options add or remove the garbage collector's own finalizers (orphan,
// foregroundDeletion) first. These functions decide; Delete and Update write.

// prepareDeletion applies a delete with opts to the metadata acc of a copy of the stored
// object: the garbage collector's finalizers the options ask for, then, while finalizers are
// pending, the deletion marks. It reports whether acc changed, and whether the object is to be
// removed from the store now (no finalizers pending).
func prepareDeletion(acc metav1.Object, opts *metav1.DeleteOptions, now time.Time) (changed, removeNow bool) {
	if fins, ok := deletionFinalizers(acc, opts); ok {
		acc.SetFinalizers(fins)
		changed = true
	}
	if len(acc.GetFinalizers()) == 0 {
		return changed, true
	}
	return markDeleting(acc, now) || changed, false
}

// markDeleting sets deletionTimestamp to now, unless it is set already to an earlier time,
// and deletionGracePeriodSeconds to 0; a first mark bumps a generation in use, as the real
// server's markAsDeleting. It reports whether acc changed.
func markDeleting(acc metav1.Object, now time.Time) bool {
	changed := false
	ts := acc.GetDeletionTimestamp()
	if ts == nil && acc.GetGeneration() > 0 {
		acc.SetGeneration(acc.GetGeneration() + 1)
	}
	if ts == nil || ts.After(now) {
		t := metav1.NewTime(now)
		acc.SetDeletionTimestamp(&t)
		changed = true
	}
	if g := acc.GetDeletionGracePeriodSeconds(); g == nil || *g != 0 {
		var zero int64
		acc.SetDeletionGracePeriodSeconds(&zero)
		changed = true
	}
	return changed
}

// deletionFinalizers returns the finalizers an object has after a delete with opts: the
// orphan and foregroundDeletion finalizers as the options, else the object's own, ask. It
// reports false when the set does not change.
func deletionFinalizers(acc metav1.Object, opts *metav1.DeleteOptions) ([]string, bool) {
	orphan, foreground := propagation(acc.GetFinalizers(), opts)
	var fins []string
	for _, f := range acc.GetFinalizers() {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			fins = append(fins, f)
		}
	}
	if orphan {
		fins = append(fins, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		fins = append(fins, metav1.FinalizerDeleteDependents)
	}
	if sameSet(fins, acc.GetFinalizers()) {
		return nil, false
	}
	return fins, true
}

// propagation is what a delete with opts does to the dependents of an object with the
// finalizers fins: orphan them, or delete them before the object (foreground); neither means
// in the background. orphanDependents wins over propagationPolicy, and either over the
// finalizers already there.
func propagation(fins []string, opts *metav1.DeleteOptions) (orphan, foreground bool) {
	if opts != nil && opts.OrphanDependents != nil { //nolint:staticcheck // still sent by old clients
		return *opts.OrphanDependents, false //nolint:staticcheck
	}
	if opts != nil && opts.PropagationPolicy != nil {
		switch *opts.PropagationPolicy {
		case metav1.DeletePropagationOrphan:
			return true, false
		case metav1.DeletePropagationForeground:
			return false, true
		case metav1.DeletePropagationBackground:
			return false, false
		}
	}
	for _, f := range fins {
		switch f {
		case metav1.FinalizerOrphanDependents:
			return true, false
		case metav1.FinalizerDeleteDependents:
			return false, true
		}
	}
	return false, false
}

func sameSet(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// removedByUpdate reports whether an update that stores obj over old removes the object
// instead: old is being deleted without a grace period and obj has no finalizers left (for a
// namespace, no spec finalizers either), as the real registry's ShouldDeleteDuringUpdate.
func removedByUpdate(obj, old metav1.Object) bool {
	if len(obj.GetFinalizers()) > 0 || old.GetDeletionTimestamp() == nil {
		return false
	}
	if g := old.GetDeletionGracePeriodSeconds(); g != nil && *g != 0 {
		return false
	}
	return true
}

// namespaceFinalized reports whether a namespace has no spec finalizers left.
func namespaceFinalized(obj runtime.Object) bool {
	ns, ok := obj.(*corev1.Namespace)
	return !ok || len(ns.Spec.Finalizers) == 0
}
