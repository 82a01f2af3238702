package bench

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runRenew is the renew workload: each client renews its own lease as client-go's LeaseLock
// does, GET then PUT with the resourceVersion the GET returned, at cfg.Rate renewals per
// second over all clients or as fast as the server answers.
func runRenew(ctx context.Context, r *runner) error {
	name := func(i int) string { return fmt.Sprintf("renew-%d", i) }
	if _, err := r.createLeases(ctx, r.cfg.Clients, name); err != nil {
		return err
	}
	if r.cfg.ClientGo {
		renewers := make([]func(context.Context) (*coordinationv1.Lease, time.Time, error), r.cfg.Clients)
		for i := range renewers {
			var err error
			if renewers[i], err = r.clientGoRenewer(name(i)); err != nil {
				return err
			}
		}
		ctx, cancel := r.begin(ctx)
		defer cancel()
		return r.eachClient(ctx, func(ctx context.Context, i int) {
			renew := func(ctx context.Context) error { _, _, err := renewers[i](ctx); return err }
			r.repeat(ctx, pacer(r.cfg.Rate, r.cfg.Clients, i), renew, r.recordSince)
		})
	}
	ctx, cancel := r.begin(ctx)
	defer cancel()
	return r.eachClient(ctx, func(ctx context.Context, i int) {
		leases := r.leases.session()
		renew := func(ctx context.Context) error {
			l, err := leases.get(ctx, name(i))
			if err != nil {
				return err
			}
			now := metav1.NewMicroTime(time.Now())
			l.Spec.RenewTime = &now
			_, err = leases.update(ctx, l)
			return err
		}
		r.repeat(ctx, pacer(r.cfg.Rate, r.cfg.Clients, i), renew, r.recordSince)
	})
}
