package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// watchedLeases is how many leases the watch workload writes, one writer each: a write waits
// for its commit, so a single writer could not keep the rate when commits are slow.
const watchedLeases = 10

// runWatch is the watch workload: cfg.Watchers watchers (chunked HTTP and WebSocket) follow the
// benchmark namespace while writers update leases at cfg.Rate writes per second (100 when not
// set). Latency is measured from the moment a writer started a write (the renewTime it wrote)
// to the receipt of its event, and every acknowledged write must reach every watcher.
func runWatch(ctx context.Context, r *runner) error {
	names := make([]string, watchedLeases)
	for i := range names {
		names[i] = fmt.Sprintf("watched-%d", i)
		if _, err := r.ensureLease(ctx, names[i]); err != nil {
			return err
		}
	}
	list, err := r.client.CoordinationV1().Leases(r.cfg.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	ws, err := r.startWatchers(ctx, list.ResourceVersion)
	if err != nil {
		return err
	}
	defer ws.stop()
	rate := r.cfg.Rate
	if rate <= 0 {
		rate = 100
	}
	writeCtx, cancel := r.begin(ctx)
	defer cancel()
	acked := r.writeLeases(writeCtx, names, rate)
	r.end()
	// Give the last events a moment to arrive, then count what each watcher missed.
	r.lost.Store(ws.awaitDelivery(acked.revs, 5*time.Second))
	ws.stop()
	r.afterAck.set(ws.afterAck(acked.at))
	return nil
}

// acks are the revisions at which the writers' writes were acknowledged, and when.
type acks struct {
	mu   sync.Mutex
	revs []int64
	at   map[int64]int64 // revision -> acknowledgement, unix nanoseconds
}

// writeLeases updates the named leases, one writer each, together at rate writes per second,
// until ctx ends. It records each write's own latency and returns the acknowledgements, their
// revisions in ascending order.
func (r *runner) writeLeases(ctx context.Context, names []string, rate float64) *acks {
	a := &acks{at: map[int64]int64{}}
	var writers sync.WaitGroup
	for w, name := range names {
		var viaClientGo func(context.Context) (*coordinationv1.Lease, time.Time, error)
		if r.cfg.ClientGo {
			var err error
			if viaClientGo, err = r.clientGoRenewer(name); err != nil {
				r.failures.add(err)
				continue
			}
		}
		writers.Go(func() {
			leases := r.leases.session()
			var (
				start time.Time
				took  time.Duration
				rev   int64
			)
			write := func(ctx context.Context) error {
				if viaClientGo != nil {
					l, began, err := viaClientGo(ctx)
					if err != nil {
						return err
					}
					start, took = began, time.Since(began)
					rev, err = strconv.ParseInt(l.ResourceVersion, 10, 64)
					return err
				}
				l, err := leases.get(ctx, name)
				if err != nil {
					return err
				}
				start = time.Now()
				now := metav1.NewMicroTime(start)
				l.Spec.RenewTime = &now
				if l, err = leases.update(ctx, l); err != nil {
					return err
				}
				took = time.Since(start)
				rev, err = strconv.ParseInt(l.ResourceVersion, 10, 64)
				return err
			}
			// A write is timed from its PUT, not from when it was due: the delivery latency
			// counts from the same moment.
			r.repeat(ctx, pacer(rate, len(names), w), write, func(time.Time) {
				r.writes.add(took)
				a.mu.Lock()
				a.revs = append(a.revs, rev)
				a.at[rev] = start.Add(took).UnixNano()
				a.mu.Unlock()
			})
		})
	}
	writers.Wait()
	slices.Sort(a.revs)
	return a
}

// watchers are the watch workload's watchers. They have a context of their own: they outlive
// the measured part, to receive the events of its last writes.
type watchers struct {
	seen   []*seenRevisions
	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// seenRevisions is what one watcher received: the revisions in the order they came (a watch
// delivers in revision order) and when each arrived.
type seenRevisions struct {
	mu  sync.Mutex
	rvs []int64
	at  []int64 // receipt of rvs[i], unix nanoseconds
}

// startWatchers starts cfg.Watchers watchers from revision fromRV, the share
// cfg.WebSocketShare of them over WebSockets, and returns once each has connected or failed
// to (a failure is counted). It returns ctx's error if ctx ends first.
func (r *runner) startWatchers(ctx context.Context, fromRV string) (*watchers, error) {
	n := r.cfg.Watchers
	wctx, cancel := context.WithCancel(context.Background())
	ws := &watchers{seen: make([]*seenRevisions, n), cancel: cancel}
	ready := make(chan struct{}, n)
	onWebSocket := int(math.Round(float64(n) * r.cfg.WebSocketShare)) // none with ClientGo
	for w := range n {
		s := &seenRevisions{}
		ws.seen[w] = s
		ws.wg.Go(func() {
			on := func(ev watchedLease, at time.Time) { r.received(s, ev, at) }
			var err error
			if r.cfg.ClientGo {
				err = r.watchClientGo(wctx, fromRV, ready, on)
			} else if w < onWebSocket {
				err = r.leases.watchWebSocket(wctx, fromRV, ready, on)
			} else {
				err = r.leases.watchHTTP(wctx, fromRV, ready, on)
			}
			if err != nil && wctx.Err() == nil {
				r.failures.add(fmt.Errorf("watch: %w", err))
			}
		})
	}
	for range n {
		select {
		case <-ready:
		case <-ctx.Done():
			ws.stop()
			return nil, ctx.Err()
		}
	}
	return ws, nil
}

// received records an event a watcher received at at: its delivery latency, counted from
// the start of its write, and its revision.
func (r *runner) received(s *seenRevisions, ev watchedLease, at time.Time) {
	if !ev.renewTime.IsZero() {
		r.latencies.add(at.Sub(ev.renewTime))
	}
	r.events.Add(1)
	s.mu.Lock()
	s.rvs = append(s.rvs, ev.revision)
	s.at = append(s.at, at.UnixNano())
	s.mu.Unlock()
}

// stop ends the watchers and waits for them; later calls do nothing more.
func (ws *watchers) stop() {
	ws.cancel()
	ws.wg.Wait()
}

// awaitDelivery waits up to grace for every watcher to have received every revision of acked
// (ascending) and returns how many deliveries are missing then.
func (ws *watchers) awaitDelivery(acked []int64, grace time.Duration) int64 {
	missing := func() (n int64) {
		for _, s := range ws.seen {
			s.mu.Lock()
			n += int64(missingFrom(acked, s.rvs))
			s.mu.Unlock()
		}
		return n
	}
	awaitNone(grace, missing)
	return missing()
}

// afterAck returns the delivery latencies counted from each write's acknowledgement (ackedAt,
// by revision). The commit came before the acknowledgement, so this is the lower bound of the
// time from commit to receipt (an event that beat its acknowledgement counts 0), as the
// latency from the write's start is the upper one. It is called once the watchers stopped.
func (ws *watchers) afterAck(ackedAt map[int64]int64) []time.Duration {
	var ds []time.Duration
	for _, s := range ws.seen {
		for i, rv := range s.rvs {
			if ack, ok := ackedAt[rv]; ok {
				ds = append(ds, time.Duration(max(s.at[i]-ack, 0)))
			}
		}
	}
	return ds
}

// missingFrom counts the revisions of want (ascending) that got (ascending) lacks.
func missingFrom(want, got []int64) int {
	missing, j := 0, 0
	for _, rv := range want {
		for j < len(got) && got[j] < rv {
			j++
		}
		if j == len(got) || got[j] != rv {
			missing++
		}
	}
	return missing
}
