package bench

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// startProgress writes a progress line every cfg.Progress until the returned function is
// called, which ends the line. On a terminal the line is rewritten in place (a carriage
// return, no newline), so that it shows one line that changes; in a file or a pipe every line
// is a line of its own.
func (r *runner) startProgress() (stop func()) {
	every := r.cfg.Progress
	if every <= 0 {
		return func() {}
	}
	start, end := "", "\n"
	if isTerminal(r.progress) {
		start, end = "\r", ""
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
				if start != "" {
					fmt.Fprintln(r.progress)
				}
				return
			case <-t.C:
				n := r.ops.Load()
				fmt.Fprintf(r.progress, "%s%5.0fs  %d ops  %6.0f/s  errors %d  conflicts %d  events %d lost %d%s",
					start, time.Since(r.start).Seconds(), n, float64(n-last)/every.Seconds(), r.failures.n.Load(), r.conflicts.Load(), r.events.Load(), r.lost.Load(), end)
				last = n
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
