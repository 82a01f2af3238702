package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// syncBuffer is a bytes.Buffer safe for the elector's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCandidateCommand runs `leaselab candidate` against the server: it leads, logs it, and its
// event recorder writes the "became leader" Event that kubectl describe shows.
func TestCandidateCommand(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"candidate", "--server", ts.URL, "--namespace", "cands", "--lease", "cli",
			"--identity", "cli-1", "--lease-duration", "2s", "--renew-deadline", "1500ms", "--retry-period", "200ms"}, &out, &out)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "became leader of cands/cli") {
		if time.Now().After(deadline) {
			t.Fatalf("no leadership; output:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	rctx := ctxT(t, 10*time.Second)
	l, err := ts.Client.CoordinationV1().Leases("cands").Get(rctx, "cli", metav1.GetOptions{})
	if err != nil || *l.Spec.HolderIdentity != "cli-1" {
		t.Fatalf("lease = %+v, %v", l, err)
	}
	for {
		evs, err := ts.Client.CoreV1().Events("cands").List(rctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Lease,involvedObject.name=cli"})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs.Items) > 0 && strings.Contains(evs.Items[0].Message, "cli-1 became leader") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 'became leader' event: %+v", evs.Items)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("candidate exited %d; output:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "cli-1 stopped") {
		t.Errorf("no stop line; output:\n%s", out.String())
	}
}
