package auth

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/store"
)

// rateLimiter is a token bucket per identity: a client flooding the server is refused with 429
// while every other identity keeps its own full bucket.
type rateLimiter struct {
	qps   rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newRateLimiter(qps float64, burst int) *rateLimiter {
	if burst < 1 {
		burst = int(math.Max(1, qps))
	}
	return &rateLimiter{qps: rate.Limit(qps), burst: burst, buckets: map[string]*rate.Limiter{}}
}

// allow takes a token from user's bucket, or says how long until one is there.
func (l *rateLimiter) allow(user string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	b, ok := l.buckets[user]
	if !ok {
		b = rate.NewLimiter(l.qps, l.burst)
		l.buckets[user] = b
	}
	l.mu.Unlock()
	if b.AllowN(now, 1) {
		return true, 0
	}
	r := b.ReserveN(now, 1)
	d := r.DelayFrom(now)
	r.CancelAt(now)
	return false, d
}

// tooManyRequests is the 429 Status with the seconds to wait, at least one.
func tooManyRequests(msg string, wait time.Duration) *apierrors.StatusError {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return apierrors.NewTooManyRequests(msg, secs)
}

// watchCounter counts the open watches and WebSockets of each identity.
type watchCounter struct {
	max int

	mu   sync.Mutex
	open map[string]int
}

// acquire counts one more stream for user, or reports false at the limit.
func (w *watchCounter) acquire(user string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open == nil {
		w.open = map[string]int{}
	}
	if w.max > 0 && w.open[user] >= w.max {
		return false
	}
	w.open[user]++
	return true
}

func (w *watchCounter) release(user string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.open[user]--; w.open[user] <= 0 {
		delete(w.open, user)
	}
}

// quotaName is the name the quota refusal gives, as a ResourceQuota's.
const quotaName = "leaselab-objects"

// checkQuota refuses a create when namespace already holds max objects of the resource, with
// the ResourceQuota admission plugin's 403: `exceeded quota: NAME, requested: count/R=1, used:
// count/R=N, limited: count/R=MAX`. Counting uses one List with Limit 1 and its Remaining.
func checkQuota(ctx context.Context, st store.Interface, max int, gr schema.GroupResource, namespace, name string) error {
	if max <= 0 || namespace == "" {
		return nil
	}
	res, err := st.List(ctx, store.ListOptions{Resource: gr.String(), Namespace: namespace, Limit: 1})
	if err != nil {
		return fmt.Errorf("count objects: %w", err)
	}
	used := int64(len(res.Objects)) + res.Remaining
	if used < int64(max) {
		return nil
	}
	r := "count/" + gr.String()
	return apierrors.NewForbidden(gr, name, fmt.Errorf("exceeded quota: %s, requested: %s=1, used: %s=%d, limited: %s=%d",
		quotaName, r, r, used, r, max))
}
