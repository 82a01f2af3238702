package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/apiserver/gc"
)

// gcManager is the field manager of the garbage collector's writes.
const gcManager = "leaselab-garbage-collector"

// gcRounds bounds the rounds of one collection: each round's actions change what the next
// sees (an owner deleted in the background makes its dependents' dependents dangling).
const gcRounds = 64

// collect does, right after the API's answer is settled, what kube-controller-manager's
// garbage collector would do to the stored objects (package gc decides): leaselab is the API
// server and the cluster at once. A collection asked for while one runs makes that one run
// again instead. What fails is logged: the next delete collects again.
func (r *Registry) collect(ctx context.Context) {
	r.gcMu.Lock()
	if r.gcRunning {
		r.gcAgain = true
		r.gcMu.Unlock()
		return
	}
	r.gcRunning = true
	r.gcMu.Unlock()
	// The collector's work does not end with the request that asked for it.
	ctx = context.WithoutCancel(ctx)
	for {
		if err := r.collectRounds(ctx); err != nil && !errors.Is(err, context.Canceled) {
			r.log.Warn("garbage collection", slog.Any("error", err))
		}
		r.gcMu.Lock()
		if !r.gcAgain {
			r.gcRunning = false
			r.gcMu.Unlock()
			return
		}
		r.gcAgain = false
		r.gcMu.Unlock()
	}
}

func (r *Registry) collectRounds(ctx context.Context) error {
	for range gcRounds {
		nodes, err := r.gcNodes(ctx)
		if err != nil {
			return err
		}
		plan := gc.Plan(nodes)
		if len(plan) == 0 {
			return nil
		}
		for _, a := range plan {
			// An action that fails stops the round: an owner must not be let go before its
			// dependents were dealt with.
			if err := r.gcDo(ctx, a); err != nil {
				return fmt.Errorf("%s %s/%s: %w", a.Type, a.Target.Namespace, a.Target.Name, err)
			}
		}
	}
	return fmt.Errorf("still not done after %d rounds", gcRounds)
}

// gcNodes reads what the collector needs of every stored object.
func (r *Registry) gcNodes(ctx context.Context) ([]gc.Node, error) {
	var nodes []gc.Node
	for _, k := range r.reg.Kinds() {
		res, err := r.store.List(ctx, store.ListOptions{Resource: k.StorageResource()})
		if err != nil {
			return nil, storeError(err, k.GroupResource(), "")
		}
		for _, o := range res.Objects {
			// Not through the cache of decoded objects: a scan of everything would flush it.
			obj, err := r.decodeStored(k, o)
			if err != nil {
				return nil, err
			}
			acc, _ := meta.Accessor(obj)
			nodes = append(nodes, gc.Node{
				Ref:        gc.Ref{Resource: k.StorageResource(), Namespace: o.Namespace, Name: o.Name},
				UID:        acc.GetUID(),
				Owners:     acc.GetOwnerReferences(),
				Finalizers: acc.GetFinalizers(),
				Deleting:   acc.GetDeletionTimestamp() != nil,
			})
		}
	}
	return nodes, nil
}

// gcDo carries out one action through the registry, as the real collector through the API:
// deletes with the object's uid as a precondition, the other changes as updates.
func (r *Registry) gcDo(ctx context.Context, a gc.Action) error {
	k := r.reg.ByStorageResource(a.Target.Resource)
	if k == nil {
		return fmt.Errorf("unknown resource %s", a.Target.Resource)
	}
	ks := r.For(k)
	if a.Type == gc.Delete {
		policy := a.Policy
		_, _, err := ks.delete(ctx, a.Target.Namespace, a.Target.Name, &metav1.DeleteOptions{
			PropagationPolicy: &policy,
			Preconditions:     &metav1.Preconditions{UID: &a.UID},
		})
		if err == nil {
			r.afterDelete(ctx, k, a.Target.Namespace)
		}
		return ignoreGone(err)
	}
	transform := func(cur runtime.Object) (runtime.Object, error) {
		if cur == nil {
			return nil, apierrors.NewNotFound(k.GroupResource(), a.Target.Name)
		}
		acc, _ := meta.Accessor(cur)
		switch a.Type {
		case gc.DropOwners:
			acc.SetOwnerReferences(slices.DeleteFunc(acc.GetOwnerReferences(), func(ref metav1.OwnerReference) bool {
				return slices.Contains(a.Owners, ref.UID)
			}))
		case gc.DropFinalizer:
			acc.SetFinalizers(slices.DeleteFunc(acc.GetFinalizers(), func(f string) bool { return f == a.Finalizer }))
		}
		return cur, nil
	}
	gv := schema.GroupVersion{Group: k.Group, Version: k.StorageVersion}
	_, _, err := ks.Update(ctx, a.Target.Namespace, a.Target.Name, UpdatedObject{UID: a.UID, Transform: transform, Retry: true},
		WriteOptions{Manager: gcManager, GV: gv})
	return ignoreGone(err)
}

// ignoreGone drops the errors of an action on an object that went or was replaced meanwhile:
// the next round sees what is there now.
func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// ownersChanged reports whether an update changes an object's owner references, which may
// leave it without owners.
func ownersChanged(obj, old metav1.Object) bool {
	a, b := obj.GetOwnerReferences(), old.GetOwnerReferences()
	return len(a) != len(b) || !slices.EqualFunc(a, b, func(x, y metav1.OwnerReference) bool { return x.UID == y.UID })
}
