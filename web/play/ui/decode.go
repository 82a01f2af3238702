package ui

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/kinds"
)

// decodeStored decodes a stored object of kind k (kinds.Registry.DecodeStored).
func decodeStored(reg *kinds.Registry, k *kinds.Kind, o store.Object) (runtime.Object, error) {
	obj, err := reg.DecodeStored(k, o.Value, o.Revision)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", o.Namespace, o.Name, err)
	}
	return obj, nil
}

// decodeLease decodes a stored Lease.
func (u *reader) decodeLease(o store.Object) (*coordinationv1.Lease, error) {
	obj, err := decodeStored(u.reg, u.leases, o)
	if err != nil {
		return nil, err
	}
	l, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return nil, fmt.Errorf("decode lease: got %T", obj)
	}
	return l, nil
}

// list lists objects as of the moment m: at its revision, the current ones when m is live. A
// past moment before any change lists nothing.
func (u *reader) list(ctx context.Context, m moment, opts store.ListOptions) (store.ListResult, error) {
	if m.past() && m.rev == 0 {
		return store.ListResult{}, nil
	}
	opts.Revision = m.rev
	return u.store.List(ctx, opts)
}

// listLeases returns every lease as of m (of one namespace when ns is set) and the list's
// revision.
func (u *reader) listLeases(ctx context.Context, ns string, m moment) ([]*coordinationv1.Lease, int64, error) {
	res, err := u.list(ctx, m, store.ListOptions{Resource: u.leases.StorageResource(), Namespace: ns})
	if err != nil {
		return nil, 0, fmt.Errorf("list leases: %w", err)
	}
	out := make([]*coordinationv1.Lease, 0, len(res.Objects))
	for _, o := range res.Objects {
		l, err := u.decodeLease(o)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, l)
	}
	return out, res.Revision, nil
}

// listCandidates returns every LeaseCandidate as of m (of one namespace when ns is set).
func (u *reader) listCandidates(ctx context.Context, ns string, m moment) ([]*coordinationv1beta1.LeaseCandidate, int64, error) {
	res, err := u.list(ctx, m, store.ListOptions{Resource: u.candidates.StorageResource(), Namespace: ns})
	if err != nil {
		return nil, 0, fmt.Errorf("list lease candidates: %w", err)
	}
	out := make([]*coordinationv1beta1.LeaseCandidate, 0, len(res.Objects))
	for _, o := range res.Objects {
		obj, err := decodeStored(u.reg, u.candidates, o)
		if err != nil {
			return nil, 0, err
		}
		if lc, ok := obj.(*coordinationv1beta1.LeaseCandidate); ok {
			out = append(out, lc)
		}
	}
	return out, res.Revision, nil
}

// listNamespaces returns the names of every namespace as of m.
func (u *reader) listNamespaces(ctx context.Context, m moment) ([]string, int64, error) {
	res, err := u.list(ctx, m, store.ListOptions{Resource: u.namespaces.StorageResource()})
	if err != nil {
		return nil, 0, fmt.Errorf("list namespaces: %w", err)
	}
	out := make([]string, 0, len(res.Objects))
	for _, o := range res.Objects {
		out = append(out, o.Name)
	}
	return out, res.Revision, nil
}

// leaseEvents returns the core v1 Events of ns as of m whose involvedObject is the lease name.
func (u *reader) leaseEvents(ctx context.Context, ns, name string, m moment) ([]*corev1.Event, error) {
	res, err := u.list(ctx, m, store.ListOptions{Resource: u.events.StorageResource(), Namespace: ns})
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	var out []*corev1.Event
	for _, o := range res.Objects {
		obj, err := decodeStored(u.reg, u.events, o)
		if err != nil {
			return nil, err
		}
		ev, ok := obj.(*corev1.Event)
		if !ok {
			continue
		}
		io := ev.InvolvedObject
		if io.Kind == "Lease" && io.Name == name && (io.Namespace == "" || io.Namespace == ns) {
			out = append(out, ev)
		}
	}
	return out, nil
}
