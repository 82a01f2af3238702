package bench

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// contended is the lease every client of the contend workload tries to take.
const contended = "contended"

// runContend is the contend workload: every client tries to take one lease, as fast as the
// server answers. Losing to another client's write (a 409) is an outcome, not a failure: it is
// counted as a conflict and timed like a win.
func runContend(ctx context.Context, r *runner) error {
	if _, err := r.ensureLease(ctx, contended); err != nil {
		return err
	}
	ctx, cancel := r.begin(ctx)
	defer cancel()
	return r.eachClient(ctx, func(ctx context.Context, i int) {
		me := fmt.Sprintf("contender-%d", i)
		leases := r.leases.session()
		take := func(ctx context.Context) error {
			l, err := leases.get(ctx, contended)
			if err != nil {
				return err
			}
			now := metav1.NewMicroTime(time.Now())
			if *l.Spec.HolderIdentity != me {
				l.Spec.LeaseTransitions = ptr.To(*l.Spec.LeaseTransitions + 1)
			}
			l.Spec.HolderIdentity, l.Spec.RenewTime = ptr.To(me), &now
			_, err = leases.update(ctx, l)
			if apierrors.IsConflict(err) && ctx.Err() == nil {
				r.conflicts.Add(1)
				return nil
			}
			return err
		}
		r.repeat(ctx, pacer(0, r.cfg.Clients, i), take, r.recordSince)
	})
}
