package gc

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func lease(name string, uid types.UID, owners ...metav1.OwnerReference) Node {
	return Node{Ref: Ref{Resource: "leases.coordination.k8s.io", Namespace: "default", Name: name}, UID: uid, Owners: owners}
}

func ownedBy(uid types.UID, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Name: string(uid), UID: uid, BlockOwnerDeletion: &block}
}

func deleting(n Node, finalizers ...string) Node {
	n.Deleting, n.Finalizers = true, finalizers
	return n
}

func TestPlan(t *testing.T) {
	owner := lease("owner", "o")
	other := lease("other", "x")
	for _, tc := range []struct {
		name  string
		nodes []Node
		want  []Action
	}{{
		name:  "owner standing: nothing to do",
		nodes: []Node{owner, lease("dep", "d", ownedBy("o", true))},
	}, {
		name:  "owner gone: the dependent goes in the background",
		nodes: []Node{lease("dep", "d", ownedBy("o", false))},
		want:  []Action{{Type: Delete, Target: lease("dep", "d").Ref, UID: "d", Policy: metav1.DeletePropagationBackground}},
	}, {
		name:  "owner gone, another standing: the reference goes",
		nodes: []Node{other, lease("dep", "d", ownedBy("o", false), ownedBy("x", false))},
		want:  []Action{{Type: DropOwners, Target: lease("dep", "d").Ref, UID: "d", Owners: []types.UID{"o"}}},
	}, {
		name:  "owner in another namespace does not count",
		nodes: []Node{{Ref: Ref{Resource: "leases.coordination.k8s.io", Namespace: "elsewhere", Name: "owner"}, UID: "o"}, lease("dep", "d", ownedBy("o", false))},
		want:  []Action{{Type: Delete, Target: lease("dep", "d").Ref, UID: "d", Policy: metav1.DeletePropagationBackground}},
	}, {
		name:  "foreground: the dependent goes first, the owner waits for the blocking one",
		nodes: []Node{deleting(owner, metav1.FinalizerDeleteDependents), lease("dep", "d", ownedBy("o", true))},
		want:  []Action{{Type: Delete, Target: lease("dep", "d").Ref, UID: "d", Policy: metav1.DeletePropagationBackground}},
	}, {
		name:  "foreground, dependent with dependents of its own: foreground too",
		nodes: []Node{deleting(owner, metav1.FinalizerDeleteDependents), lease("dep", "d", ownedBy("o", true)), lease("grand", "g", ownedBy("d", true))},
		want:  []Action{{Type: Delete, Target: lease("dep", "d").Ref, UID: "d", Policy: metav1.DeletePropagationForeground}},
	}, {
		name:  "foreground, dependent being deleted and blocking: wait",
		nodes: []Node{deleting(owner, metav1.FinalizerDeleteDependents), deleting(lease("dep", "d", ownedBy("o", true)), "example.com/keep")},
	}, {
		name:  "foreground, dependent not blocking: the owner goes",
		nodes: []Node{deleting(owner, metav1.FinalizerDeleteDependents), deleting(lease("dep", "d", ownedBy("o", false)), "example.com/keep")},
		want:  []Action{{Type: DropFinalizer, Target: owner.Ref, UID: "o", Finalizer: metav1.FinalizerDeleteDependents}},
	}, {
		name:  "orphan: references dropped, then the owner goes",
		nodes: []Node{deleting(owner, metav1.FinalizerOrphanDependents), lease("dep", "d", ownedBy("o", true))},
		want: []Action{
			{Type: DropOwners, Target: lease("dep", "d").Ref, UID: "d", Owners: []types.UID{"o"}},
			{Type: DropFinalizer, Target: owner.Ref, UID: "o", Finalizer: metav1.FinalizerOrphanDependents},
		},
	}, {
		name: "a dependent with the orphan finalizer goes orphaning its own",
		nodes: []Node{func() Node {
			n := lease("dep", "d", ownedBy("o", false))
			n.Finalizers = []string{metav1.FinalizerOrphanDependents}
			return n
		}()},
		want: []Action{{Type: Delete, Target: lease("dep", "d").Ref, UID: "d", Policy: metav1.DeletePropagationOrphan}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Plan(tc.nodes); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Plan:\n%+v\nwant:\n%+v", got, tc.want)
			}
		})
	}
}
