package leasetest

import (
	"context"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// apimachinery's HandleError throttles callers with a backoff whose last error time is set
// when the package loads, on the real clock. Inside a synctest bubble the clock starts in
// 2000, so the first error handled there sleeps for decades of fake time, and the bubble
// ends with that goroutine still blocked (a candidate's LeaseCandidate worker that met an
// error as the test stopped, say). guardErrorBackoff keeps the handlers but replaces that
// backoff, once per process, with one that never sleeps for a clock that went backwards.
var guardErrorBackoff = sync.OnceFunc(func() {
	if len(utilruntime.ErrorHandlers) != 2 { // not apimachinery's own: the test set its own
		return
	}
	var (
		mu   sync.Mutex
		last time.Time
	)
	const minPeriod = time.Millisecond                                   // apimachinery's own
	handlers := []utilruntime.ErrorHandler{utilruntime.ErrorHandlers[0]} // logError
	handlers = append(handlers, func(context.Context, error, string, ...any) {
		now := time.Now()
		mu.Lock()
		d := now.Sub(last)
		last = now
		mu.Unlock()
		if d >= 0 && d < minPeriod {
			time.Sleep(minPeriod - d)
		}
	})
	utilruntime.ErrorHandlers = handlers
})
