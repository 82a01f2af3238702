package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// workload is one kind of load. run does the workload's setup, which is not measured, then
// calls runner.begin and generates the load until the context begin returned ends.
type workload struct {
	name string
	// ops names what the workload counts as an operation, in the report's table.
	ops string
	run func(ctx context.Context, r *runner) error
}

// workloads are the workloads Run knows, in the order the help names them.
var workloads = []workload{
	{"renew", "renewals", runRenew},
	{"contend", "attempts", runContend},
	{"heartbeat", "heartbeats", runHeartbeat},
	{"watch", "writes", runWatch},
}

// Workloads returns the names of the workloads Run knows, in the order the help names them.
func Workloads() []string {
	names := make([]string, len(workloads))
	for i, w := range workloads {
		names[i] = w.name
	}
	return names
}

func lookupWorkload(name string) (workload, bool) {
	for _, w := range workloads {
		if w.name == name {
			return w, true
		}
	}
	return workload{}, false
}

// The label on every lease a run creates, by which it deletes them at the end.
const (
	createdByLabel = "app.kubernetes.io/created-by"
	createdBy      = "leaselab-bench"
)

// ensureLease creates a lease for the benchmark or returns the existing one, so that a run
// can follow another on the same server.
func (r *runner) ensureLease(ctx context.Context, name string) (*coordinationv1.Lease, error) {
	leases := r.client.CoordinationV1().Leases(r.cfg.Namespace)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{createdByLabel: createdBy}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40),
			AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0)},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return leases.Get(ctx, name, metav1.GetOptions{})
	}
	return l, err
}

// createLeases ensures the leases named name(0) to name(n-1), spread over the clients, and
// returns them in that order. It stops at the first failure and returns it: a run whose
// leases are missing would only measure failures.
func (r *runner) createLeases(ctx context.Context, n int, name func(i int) string) ([]*coordinationv1.Lease, error) {
	created := make([]*coordinationv1.Lease, n)
	var next atomic.Int64
	var first atomic.Pointer[error]
	err := r.eachClient(ctx, func(ctx context.Context, _ int) {
		for {
			i := int(next.Add(1)) - 1
			if i >= n || ctx.Err() != nil || first.Load() != nil {
				return
			}
			l, err := r.ensureLease(ctx, name(i))
			if err != nil {
				first.CompareAndSwap(nil, &err)
				return
			}
			created[i] = l
		}
	})
	if p := first.Load(); p != nil {
		return nil, fmt.Errorf("set up the leases: %w", *p)
	}
	if err == nil {
		// A setup cut short by the deadline of the whole run leaves leases missing.
		err = ctx.Err()
	}
	return created, err
}
