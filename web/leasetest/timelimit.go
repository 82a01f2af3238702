package leasetest

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// WithTimeLimit fails the test once d of its time has passed since Start: inside a
// testing/synctest bubble that is fake time, so a test whose goroutines wait for something that
// never comes fails at once, instead of spinning through fake hours (the server's timers keep
// the bubble from ever looking deadlocked) until go test's -timeout dumps every goroutine. The
// failure panics, ending the test binary as -timeout would, with the stacks of the goroutines
// that run the test's own code: the ones that wait.
func WithTimeLimit(d time.Duration) Option { return func(opts *options) { opts.timeLimit = d } }

// watchTimeLimit arms the limit; Close disarms it.
func (s *Server) watchTimeLimit(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.AfterFunc(d, func() {
		select {
		case <-s.stopping:
			return // the test ended in time
		default:
		}
		panic(fmt.Sprintf("leasetest: %s still runs after %v of its time (WithTimeLimit): a goroutine waits for something that never comes.\n\nThe goroutines running the test's code:\n\n%s",
			s.tb.Name(), d, testStacks()))
	})
	s.tb.Cleanup(func() { t.Stop() })
}

// testStacks returns the stacks of the goroutines with a frame in a _test.go file.
func testStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var keep []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "_test.go:") {
			keep = append(keep, g)
		}
	}
	if len(keep) == 0 {
		return "(none: every goroutine is the server's or the libraries')"
	}
	return strings.Join(keep, "\n\n")
}
