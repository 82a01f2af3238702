package bench

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runHeartbeat is the heartbeat workload: cfg.Leases leases each renewed every cfg.Interval,
// as node kubelets do: a PUT from the cached lease, and a GET only after a conflict. The
// senders (cfg.Clients) share the leases out, and the beats are spread evenly over the
// interval.
func runHeartbeat(ctx context.Context, r *runner) error {
	cached, err := r.createLeases(ctx, r.cfg.Leases, func(i int) string { return fmt.Sprintf("node-%05d", i) })
	if err != nil {
		return err
	}
	ctx, cancel := r.begin(ctx)
	defer cancel()
	start := r.start
	return r.eachClient(ctx, func(ctx context.Context, c int) {
		leases := r.leases.session()
		beats := &beatSchedule{start: start, interval: r.cfg.Interval, leases: len(cached), sender: c, senders: r.cfg.Clients, nextLease: c}
		// Latency counts from when the beat was due: a late start is the server's doing when
		// the senders are all waiting for it.
		r.repeat(ctx, beats.next, func(ctx context.Context) error {
			i := beats.lease
			upd, err := r.beat(ctx, leases, cached[i])
			if err == nil {
				cached[i] = upd
			}
			return err
		}, r.recordSince)
	})
}

// beat renews l from the cache, and after a conflict (another writer changed the lease) from
// a fresh read.
func (r *runner) beat(ctx context.Context, leases *leaseClient, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	now := metav1.NewMicroTime(time.Now())
	l.Spec.RenewTime = &now
	upd, err := leases.update(ctx, l)
	if !apierrors.IsConflict(err) {
		return upd, err
	}
	r.conflicts.Add(1)
	fresh, gerr := leases.get(ctx, l.Name)
	if gerr != nil {
		// The conflict is what failed; the read only tried to recover from it.
		return nil, err
	}
	fresh.Spec.RenewTime = &now
	return leases.update(ctx, fresh)
}

// beatSchedule is when one sender's leases beat: the sender owns leases sender,
// sender+senders, ..., and lease i of n beats at start + (i/n)*interval + k*interval.
type beatSchedule struct {
	start           time.Time
	interval        time.Duration
	leases          int
	sender, senders int
	lease           int // the lease of the beat next returned last
	round           int // how many times the sender went through its leases
	nextLease       int // starts at sender
}

// next waits until the sender's next beat is due and returns when that was; lease is then
// the lease to renew. It reports false when ctx ends, at once for a sender without leases.
func (s *beatSchedule) next(ctx context.Context) (time.Time, bool) {
	if s.sender >= s.leases {
		return time.Time{}, false
	}
	if s.nextLease >= s.leases {
		s.round, s.nextLease = s.round+1, s.sender
	}
	s.lease = s.nextLease
	s.nextLease += s.senders
	due := s.start.Add(time.Duration(s.round)*s.interval + time.Duration(float64(s.interval)*float64(s.lease)/float64(s.leases)))
	return due, sleepUntil(ctx, due)
}
