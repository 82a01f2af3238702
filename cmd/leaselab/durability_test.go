package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestMain lets the test binary act as the leaselab binary, so that crash tests can run the
// real program in a child process and kill it; at the end it stops the browser tests' Chromium.
func TestMain(m *testing.M) {
	if os.Getenv("LEASELAB_TEST_AS_BINARY") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	// Every leaselab a test starts of this binary (bench's own server, serve in a child) is
	// then the program, not its tests: set once here, not by each test, which could then not
	// run in parallel.
	os.Setenv("LEASELAB_TEST_AS_BINARY", "1")
	flag.Parse()
	// The browser tests take turns for Chromium (holdBrowserSlot); the others wait on servers,
	// children and clocks far more than they compute, so they run beside them. Unless -parallel
	// is given, twice as many tests run at once as there are browser slots.
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(2*cap(browserSlots)))
	}
	code := m.Run()
	stopSharedBrowser()
	os.Exit(code)
}

// startChild runs `leaselab serve` in a child process and returns its URL.
func startChild(t *testing.T, db string) (*exec.Cmd, string) {
	t.Helper()
	return startChildWith(t, db, nil, os.Stderr)
}

// startChildWith is startChild with more environment and the child's logs going to stderr.
func startChildWith(t *testing.T, db string, env []string, stderr io.Writer) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "warn")
	cmd.Env = append(os.Environ(), env...) // with LEASELAB_TEST_AS_BINARY=1, which TestMain set
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), "serving on "); ok {
			url, _, _ := strings.Cut(rest, " ")
			go func() {
				for lines.Scan() {
				}
			}()
			return cmd, url
		}
	}
	t.Fatalf("child exited before serving: %v", lines.Err())
	return nil, ""
}

// TestCrashLosesNoAcknowledgedWrite kills the server with SIGKILL in the middle of a write
// burst, restarts it on the same database, and checks that every acknowledged write is there
// and that revisions keep increasing.
func TestCrashLosesNoAcknowledgedWrite(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "crash.db")
	cmd, url := startChild(t, db)
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: url, QPS: -1})

	const writers = 16
	type acked struct {
		n  int   // last acknowledged holder index
		rv int64 // its resourceVersion
	}
	var mu sync.Mutex
	last := map[string]acked{}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for w := 0; w < writers; w++ {
		name := fmt.Sprintf("burst-%02d", w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			leases := client.CoordinationV1().Leases("crash")
			l, err := leases.Create(ctx, newLease(name, "0", nil), metav1.CreateOptions{})
			if err != nil {
				return
			}
			for n := 0; ; n++ {
				rv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
				mu.Lock()
				last[name] = acked{n, rv}
				mu.Unlock()
				l.Spec.HolderIdentity = ptr.To(strconv.Itoa(n + 1))
				if l, err = leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
					return
				}
			}
		}()
	}
	// Kill it in the middle of the burst, once every writer has had a few writes acknowledged.
	poll.Until(t, 30*time.Second, "every writer acknowledged", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		least := -1
		for _, a := range last {
			if least < 0 || a.n < least {
				least = a.n
			}
		}
		return len(last) == writers && least >= 10, fmt.Sprintf("%d writers, the slowest at %d writes", len(last), least)
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	cancel()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	total, maxRV := 0, int64(0)
	for _, a := range last {
		total += a.n + 1
		maxRV = max(maxRV, a.rv)
	}
	if len(last) != writers || total < writers*5 {
		t.Fatalf("the burst acknowledged only %d writes on %d leases: too few to test anything", total, len(last))
	}
	t.Logf("%d writes acknowledged before SIGKILL, highest resourceVersion %d", total, maxRV)

	_, url = startChild(t, db)
	client = kubernetes.NewForConfigOrDie(&rest.Config{Host: url, QPS: -1})
	rctx := ctxT(t, 30*time.Second)
	for name, a := range last {
		l, err := client.CoordinationV1().Leases("crash").Get(rctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s after restart: %v", name, err)
		}
		n, _ := strconv.Atoi(*l.Spec.HolderIdentity)
		rv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
		// The write in flight at the kill may or may not have landed; nothing acknowledged may
		// be missing.
		if n < a.n || rv < a.rv {
			t.Errorf("%s: after restart holder %d rv %d, but holder %d rv %d was acknowledged", name, n, rv, a.n, a.rv)
		}
	}
	fresh, err := client.CoordinationV1().Leases("crash").Create(rctx, newLease("after", "x", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rv, _ := strconv.ParseInt(fresh.ResourceVersion, 10, 64); rv <= maxRV {
		t.Errorf("revision after restart %d is not above %d", rv, maxRV)
	}
}

// TestWatchResumesAfterRestart restarts the server on the same database and resumes a watch
// from a revision taken before the restart.
func TestWatchResumesAfterRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "resume.db")
	ts := mustStartServer(t, db)
	ctx := ctxT(t, time.Minute)
	leases := ts.Client.CoordinationV1().Leases("default")
	l, err := leases.Create(ctx, newLease("r", "0", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	from := l.ResourceVersion
	var want []string
	for i := 1; i <= 3; i++ {
		l.Spec.HolderIdentity = ptr.To(strconv.Itoa(i))
		if l, err = leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, l.ResourceVersion)
	}
	if err := ts.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	ts = mustStartServer(t, db)
	leases = ts.Client.CoordinationV1().Leases("default")
	w, err := leases.Watch(ctx, metav1.ListOptions{ResourceVersion: from})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	l.Spec.HolderIdentity = ptr.To("after-restart")
	if l, err = leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want = append(want, l.ResourceVersion)
	for i, rv := range want {
		select {
		case ev := <-w.ResultChan():
			got := ev.Object.(*coordinationv1.Lease)
			if ev.Type != watch.Modified || got.ResourceVersion != rv {
				t.Fatalf("event %d = %s rv %s, want MODIFIED rv %s", i, ev.Type, got.ResourceVersion, rv)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d (rv %s) did not arrive", i, rv)
		}
	}
}

// TestWatchExpiredAfterCompaction watches from a revision that compaction removed and expects
// the 410 Expired ERROR event a client relists on.
func TestWatchExpiredAfterCompaction(t *testing.T) {
	ts := mustStartServerWith(t, "", func(c *serveConfig) {
		c.compactKeep = 5
		c.compactInterval = 50 * time.Millisecond
	})
	ctx := ctxT(t, time.Minute)
	leases := ts.Client.CoordinationV1().Leases("default")
	l, err := leases.Create(ctx, newLease("c", "0", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	from := l.ResourceVersion
	for i := 1; i <= 20; i++ {
		l.Spec.HolderIdentity = ptr.To(strconv.Itoa(i))
		if l, err = leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	poll.Until(t, 10*time.Second, "compaction expires the old revision", func() (bool, string) {
		w, err := leases.Watch(ctx, metav1.ListOptions{ResourceVersion: from})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Error {
				if err := apierrors.FromObject(ev.Object); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
					t.Fatalf("error event = %v, want 410 Expired", err)
				}
				return true, ""
			}
			return false, fmt.Sprintf("a watch from %s still starts with a %s event", from, ev.Type)
		case <-time.After(5 * time.Second):
			t.Fatal("no event")
			return false, ""
		}
	})
}

// TestShutdownEndsWatches checks that a graceful shutdown ends open watches at once instead of
// waiting for them to time out, and closes the database.
func TestShutdownEndsWatches(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, time.Minute)
	w, err := ts.Client.CoordinationV1().Leases("").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := ts.Client.CoordinationV1().Leases("default").Create(ctx, newLease("s", "h", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Added {
		t.Fatalf("first event %s", ev.Type)
	}
	start := time.Now()
	if err := ts.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("shutdown took %v with a watch open", d)
	}
	select {
	case _, ok := <-w.ResultChan():
		if ok {
			t.Error("watch delivered an event after shutdown")
		}
	case <-time.After(3 * time.Second):
		t.Error("watch still open after shutdown")
	}
}
