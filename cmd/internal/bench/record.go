package bench

import (
	"math"
	"slices"
	"sync"
	"time"
)

// samples collects latencies from many goroutines.
type samples struct {
	mu sync.Mutex
	ds []time.Duration
}

// add records one latency.
func (s *samples) add(d time.Duration) {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	s.mu.Unlock()
}

// len is how many latencies were recorded.
func (s *samples) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ds)
}

// set replaces the latencies with ds, for those computed after the run.
func (s *samples) set(ds []time.Duration) {
	s.mu.Lock()
	s.ds = ds
	s.mu.Unlock()
}

// percentiles returns p50, p99 and max of the latencies in milliseconds.
func (s *samples) percentiles() (p50, p99, maxMs float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return percentiles(s.ds)
}

// percentiles returns p50, p99 and max of ds in milliseconds, 0 for none; a percentile is
// the smallest latency at least that share of ds does not exceed.
func percentiles(ds []time.Duration) (p50, p99, maxMs float64) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return float64(s[max(i, 0)]) / float64(time.Millisecond)
	}
	return at(0.50), at(0.99), float64(s[len(s)-1]) / float64(time.Millisecond)
}
