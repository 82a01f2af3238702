// Package gc decides what kube-controller-manager's garbage collector would do to a set of
// stored objects, from their owner references and finalizers alone: delete dependents whose
// owners are gone or are being deleted in the foreground, drop references to owners that
// are gone while other owners remain, orphan the dependents of an owner deleted with the orphan
// finalizer, and let an owner go (take its orphan or foregroundDeletion finalizer off) once
// that work is done. Plan is a pure function of the objects; the registry reads them, asks,
// carries the actions out and asks again until nothing is left to do.
package gc

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Ref names a stored object.
type Ref struct {
	// Resource is the object's kind as the store files it ("leases.coordination.k8s.io").
	Resource  string
	Namespace string // "" for a cluster-scoped object
	Name      string
}

// Node is what the collector knows of one stored object.
type Node struct {
	Ref        Ref
	UID        types.UID
	Owners     []metav1.OwnerReference
	Finalizers []string
	// Deleting is set once the object has a deletionTimestamp.
	Deleting bool
}

// ActionType says what an Action does.
type ActionType string

const (
	// Delete deletes Target (whose uid is UID) with the propagation Policy.
	Delete ActionType = "Delete"
	// DropOwners removes from Target the owner references to the uids Owners.
	DropOwners ActionType = "DropOwners"
	// DropFinalizer removes Finalizer from Target, an owner whose dependents are dealt with.
	DropFinalizer ActionType = "DropFinalizer"
)

// Action is one change the collector makes.
type Action struct {
	Type      ActionType
	Target    Ref
	UID       types.UID
	Policy    metav1.DeletionPropagation
	Owners    []types.UID
	Finalizer string
}

// Plan returns what the garbage collector does next to nodes, in order: first the dependents
// (deletes and dropped references), then the owners it lets go. An empty plan means there
// is nothing left to do.
func Plan(nodes []Node) []Action {
	byUID := make(map[types.UID]*Node, len(nodes))
	for i := range nodes {
		byUID[nodes[i].UID] = &nodes[i]
	}
	// owner returns the owner a reference of n names, nil when it does not exist: an owner is
	// cluster-scoped or in n's namespace.
	owner := func(n *Node, ref metav1.OwnerReference) *Node {
		o := byUID[ref.UID]
		if o == nil || o.Ref.Namespace != "" && o.Ref.Namespace != n.Ref.Namespace {
			return nil
		}
		return o
	}
	dependents := make(map[types.UID][]*Node)
	for i := range nodes {
		n := &nodes[i]
		for _, ref := range n.Owners {
			if o := owner(n, ref); o != nil {
				dependents[o.UID] = append(dependents[o.UID], n)
			}
		}
	}

	var plan, owners []Action
	for i := range nodes {
		n := &nodes[i]
		if a, ok := dependentAction(n, owner, len(dependents[n.UID]) > 0); ok {
			plan = append(plan, a)
		}
		if !n.Deleting {
			continue
		}
		switch {
		case slices.Contains(n.Finalizers, metav1.FinalizerOrphanDependents):
			for _, d := range dependents[n.UID] {
				plan = append(plan, Action{Type: DropOwners, Target: d.Ref, UID: d.UID, Owners: []types.UID{n.UID}})
			}
			owners = append(owners, Action{Type: DropFinalizer, Target: n.Ref, UID: n.UID, Finalizer: metav1.FinalizerOrphanDependents})
		case slices.Contains(n.Finalizers, metav1.FinalizerDeleteDependents):
			// Only dependents that block their owner's deletion hold it back.
			blocked := slices.ContainsFunc(dependents[n.UID], func(d *Node) bool {
				return slices.ContainsFunc(d.Owners, func(ref metav1.OwnerReference) bool {
					return ref.UID == n.UID && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
				})
			})
			if !blocked {
				owners = append(owners, Action{Type: DropFinalizer, Target: n.Ref, UID: n.UID, Finalizer: metav1.FinalizerDeleteDependents})
			}
		}
	}
	return append(plan, owners...)
}

// dependentAction is what becomes of n for its owners: nothing while one of them stands;
// references to owners that are gone or going in the foreground are dropped when another
// owner stands; with none standing, n is deleted.
func dependentAction(n *Node, owner func(*Node, metav1.OwnerReference) *Node, hasDependents bool) (Action, bool) {
	if n.Deleting || len(n.Owners) == 0 {
		return Action{}, false
	}
	var gone, waiting []types.UID
	solid := 0
	for _, ref := range n.Owners {
		o := owner(n, ref)
		switch {
		case o == nil:
			gone = append(gone, ref.UID)
		case o.Deleting && slices.Contains(o.Finalizers, metav1.FinalizerDeleteDependents):
			waiting = append(waiting, ref.UID)
		default:
			solid++
		}
	}
	switch {
	case len(gone)+len(waiting) == 0:
		return Action{}, false
	case solid > 0:
		return Action{Type: DropOwners, Target: n.Ref, UID: n.UID, Owners: append(gone, waiting...)}, true
	}
	// As the real collector: a dependent of an owner going in the foreground that has
	// dependents of its own goes in the foreground too; otherwise as its finalizers say.
	policy := metav1.DeletePropagationBackground
	switch {
	case len(waiting) > 0 && hasDependents:
		policy = metav1.DeletePropagationForeground
	case slices.Contains(n.Finalizers, metav1.FinalizerOrphanDependents):
		policy = metav1.DeletePropagationOrphan
	case slices.Contains(n.Finalizers, metav1.FinalizerDeleteDependents):
		policy = metav1.DeletePropagationForeground
	}
	return Action{Type: Delete, Target: n.Ref, UID: n.UID, Policy: policy}, true
}
