package bench

import (
	"fmt"
	"sync"
	"time"
)

// startProgress writes a progress line every cfg.Progress until the returned function is
// called, which ends the line. The line is rewritten in place (a carriage return, no newline)
// so that a terminal shows one line that changes.
func (r *runner) startProgress() (stop func()) {
	every := r.cfg.Progress
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		var last int64
		for {
			select {
			case <-done:
				fmt.Fprintln(r.progress)
				return
			case <-t.C:
				n := r.ops.Load()
				fmt.Fprintf(r.progress, "\r%5.0fs  %d ops  %6.0f/s  errors %d  conflicts %d  events %d lost %d   ",
					time.Since(r.start).Seconds(), n, float64(n-last)/every.Seconds(), r.failures.n.Load(), r.conflicts.Load(), r.events.Load(), r.lost.Load())
				last = n
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
