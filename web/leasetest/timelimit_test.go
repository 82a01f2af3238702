package leasetest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

const deadlockEnv = "LEASETEST_DEADLOCK_CHILD"

// TestTimeLimitEndsADeadlock: a test that waits forever inside a synctest bubble, with the
// server's timers running, fails as soon as its time limit has passed in fake time, naming the
// line it waits at, instead of spinning until go test's -timeout. The deadlocked test runs in a
// child process, since the failure ends the test binary.
func TestTimeLimitEndsADeadlock(t *testing.T) {
	if os.Getenv(deadlockEnv) != "" {
		synctest.Test(t, func(t *testing.T) {
			Start(t, WithTimeLimit(time.Minute))
			never := make(chan struct{})
			<-never // the line the failure must name
		})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTimeLimitEndsADeadlock$", "-test.timeout=10m")
	// The panic ends the child before its cleanups: its temporary directories go in the
	// parent's, which are removed.
	cmd.Env = append(os.Environ(), deadlockEnv+"=1", "TMPDIR="+t.TempDir())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the deadlocked test passed:\n%s", out)
	}
	if !strings.Contains(string(out), "still runs after 1m0s of its time") || !strings.Contains(string(out), "TestTimeLimitEndsADeadlock.func1") {
		t.Fatalf("the deadlocked test ended with:\n%s", out)
	}
	if strings.Count(string(out), "\n") > 150 {
		t.Errorf("%d lines of output: want the stacks that matter, not every goroutine", strings.Count(string(out), "\n"))
	}
	t.Logf("failed after %v of real time", time.Since(start).Round(time.Millisecond))
}
