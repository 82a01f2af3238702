package candidate

import (
	"context"
	"errors"
	"maps"
	"sync"
)

// errLeaseNotRead is update's error before any read or write.
var errLeaseNotRead = errors.New("lease not read yet")

// leaseLock is the elector's lock, as client-go's resourcelock.LeaseLock: it
// gets, creates and updates one Lease and keeps the last copy read or
// written, so that an update carries its resourceVersion and every field this
// package does not know. Its requests go through the pause fault.
type leaseLock struct {
	client          *Client
	namespace, name string
	freezer         *freezer
	// annotate, when set, returns annotations every create and update writes.
	annotate func() map[string]string

	mu     sync.Mutex
	cached *Lease // last object read or written; never changed in place
}

// get reads the lease and returns its record. Errors are the client's (an
// *APIError, IsNotFound when there is no lease) or ctx's.
func (l *leaseLock) get(ctx context.Context) (record, error) {
	lease, err := frozenCall(l.freezer, ctx, func(ctx context.Context) (*Lease, error) {
		return l.client.GetLease(ctx, l.namespace, l.name)
	})
	if err != nil {
		return record{}, err
	}
	l.keep(lease)
	return recordFromSpec(lease.Spec), nil
}

// create creates the lease with r. Errors are the client's (IsAlreadyExists
// when another candidate created it first) or ctx's.
func (l *leaseLock) create(ctx context.Context, r record) error {
	lease := &Lease{
		Kind:       LeaseKind,
		APIVersion: LeaseAPIVersion,
		Metadata:   ObjectMeta{Name: l.name, Namespace: l.namespace},
		Spec:       specFromRecord(r, nil),
	}
	l.annotateLease(lease)
	out, err := frozenCall(l.freezer, ctx, func(ctx context.Context) (*Lease, error) {
		return l.client.CreateLease(ctx, lease)
	})
	if err != nil {
		return err
	}
	l.keep(out)
	return nil
}

// update PUTs the cached Lease with its spec replaced by r, keeping every
// other field (and unknown spec fields) as last read. Like client-go it drops
// strategy and preferredHolder unless r carries them. Errors are
// errLeaseNotRead, the client's (IsConflict when the lease changed since it
// was read) or ctx's.
func (l *leaseLock) update(ctx context.Context, r record) error {
	lease := l.lease().DeepCopy()
	if lease == nil {
		return errLeaseNotRead
	}
	lease.Kind, lease.APIVersion = LeaseKind, LeaseAPIVersion
	lease.Spec = specFromRecord(r, lease.Spec.Unknown)
	l.annotateLease(lease)
	out, err := frozenCall(l.freezer, ctx, func(ctx context.Context) (*Lease, error) {
		return l.client.UpdateLease(ctx, lease)
	})
	if err != nil {
		return err
	}
	l.keep(out)
	return nil
}

// annotateLease sets the annotations annotate returns on lease, a copy of its own.
func (l *leaseLock) annotateLease(lease *Lease) {
	if l.annotate == nil {
		return
	}
	extra := l.annotate()
	if len(extra) == 0 {
		return
	}
	m := make(map[string]string, len(lease.Metadata.Annotations)+len(extra))
	maps.Copy(m, lease.Metadata.Annotations)
	maps.Copy(m, extra)
	lease.Metadata.Annotations = m
}

// lease returns the last Lease read or written, nil when none; the caller
// must not change it.
func (l *leaseLock) lease() *Lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cached
}

// keep makes lease the cached copy.
func (l *leaseLock) keep(lease *Lease) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cached = lease
}
