//go:build unix

package leasetest_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the test process has used so far: unlike the
// wall time, it does not grow with the load of a busy machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
