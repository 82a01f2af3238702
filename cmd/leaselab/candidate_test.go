package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/webtest/poll"
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
	t.Parallel()
	ts := mustStartServer(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"candidate", "--server", ts.URL, "--namespace", "cands", "--lease", "cli",
			"--identity", "cli-1", "--lease-duration", "2s", "--renew-deadline", "1500ms", "--retry-period", "200ms"}, &out, &out)
	}()
	poll.Until(t, 10*time.Second, "leadership", func() (bool, string) {
		return strings.Contains(out.String(), "became leader of cands/cli"), "output:\n" + out.String()
	})
	rctx := ctxT(t, 10*time.Second)
	l, err := ts.Client.CoordinationV1().Leases("cands").Get(rctx, "cli", metav1.GetOptions{})
	if err != nil || *l.Spec.HolderIdentity != "cli-1" {
		t.Fatalf("lease = %+v, %v", l, err)
	}
	poll.Until(t, 10*time.Second, "a 'became leader' event", func() (bool, string) {
		evs, err := ts.Client.CoreV1().Events("cands").List(rctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Lease,involvedObject.name=cli"})
		if err != nil {
			t.Fatal(err)
		}
		return len(evs.Items) > 0 && strings.Contains(evs.Items[0].Message, "cli-1 became leader"), fmt.Sprintf("events %+v", evs.Items)
	})
	// It reports its own view to the server's tab hub, as a browser tab does: the lease page
	// lists it as a leader, and the server records its view beside the lease's history.
	poll.Until(t, 10*time.Second, "the lease page lists the candidate as leader", func() (bool, string) {
		page := mustGetBody(t, ts.URL+"/leases/cands/cli")
		return strings.Contains(page, `data-testid="lease-tab" data-identity="cli-1" data-state="leader"`), "output:\n" + out.String()
	})
	// The stage draws it as the leader with its renewals, as it reported them, and no
	// stranger: its requests carry its name.
	poll.Until(t, 10*time.Second, "the stage draws the candidate and its renewals", func() (bool, string) {
		page := mustGetBody(t, ts.URL+"/stage/live?namespace=cands&lease=cli")
		return strings.Contains(page, `data-identity="cli-1" data-role="leader"`) && strings.Contains(page, `data-identity="cli-1" data-verb="PUT" data-outcome="200"`) &&
			!strings.Contains(page, `data-role="client"`), page
	})
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("candidate exited %d; output:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "cli-1 stopped") {
		t.Errorf("no stop line; output:\n%s", out.String())
	}
	poll.Until(t, 10*time.Second, "the recorded views: leader, then gone", func() (bool, string) {
		var buf bytes.Buffer
		if err := sqlite.Export(rctx, ts.DB, &buf, sqlite.ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		var led, stopped bool
		for _, line := range strings.Split(buf.String(), "\n") {
			if !strings.Contains(line, `"resource":"candidateviews.leaselab.dev"`) || !strings.Contains(line, `"source":"native"`) {
				continue
			}
			led = led || strings.Contains(line, `"leads":true`)
			stopped = led && strings.Contains(line, `"state":"stopped"`)
		}
		return led && stopped, buf.String()
	})
}

// mustGetBody GETs url and returns the body of a 200 answer.
func mustGetBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// runCandidateUntil runs `leaselab candidate` with args until its output holds want, then stops
// it as Ctrl-C does and returns its whole output.
func runCandidateUntil(t *testing.T, want string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"candidate"}, args...), &out, &out) }()
	stop := sync.OnceValue(func() int { cancel(); return <-done })
	defer stop() // also when waitFor fails the test
	poll.Until(t, 10*time.Second, fmt.Sprintf("candidate %q: %q", args, want), func() (bool, string) {
		return strings.Contains(out.String(), want), "output:\n" + out.String()
	})
	if code := stop(); code != 0 {
		t.Fatalf("candidate %q exited %d; output:\n%s", args, code, out.String())
	}
	return out.String()
}

// TestCandidateKubeconfig: without --kubeconfig and --server, the candidate uses $KUBECONFIG and
// its context's namespace, as kubectl does; --namespace and --server still win.
func TestCandidateKubeconfig(t *testing.T) {
	w := mustStartWorkshop(t, 1, "", nil)
	kc, err := auth.Kubeconfig(w.URL, "participant-01", w.tokens["participant-01"], "leaselab", w.access.CAData)
	if err != nil {
		t.Fatal(err)
	}
	kpath := filepath.Join(t.TempDir(), "participant.kubeconfig")
	os.WriteFile(kpath, kc, 0o600)
	timing := []string{"--lease-duration", "2s", "--renew-deadline", "1500ms", "--retry-period", "200ms"}

	t.Setenv("KUBECONFIG", kpath)
	runCandidateUntil(t, "became leader of participant-01/env", append([]string{"--lease", "env", "--identity", "a"}, timing...)...)
	t.Setenv("KUBECONFIG", "")
	runCandidateUntil(t, "became leader of arena/flag", append([]string{"--kubeconfig", kpath, "--namespace", "arena", "--lease", "flag", "--identity", "a"}, timing...)...)
	if _, err := w.client(t, "participant-01").CoordinationV1().Leases("participant-01").Get(ctxT(t, 10*time.Second), "env", metav1.GetOptions{}); err != nil {
		t.Errorf("lease of the $KUBECONFIG run: %v", err)
	}
	// An explicit --server is that server, whatever $KUBECONFIG names.
	open := mustStartServer(t, "")
	t.Setenv("KUBECONFIG", kpath)
	runCandidateUntil(t, "became leader of default/server", append([]string{"--server", open.URL, "--lease", "server", "--identity", "a"}, timing...)...)
}

// TestCandidateStopOutput: a candidate stopped while leading releases the lease without an
// error from its event recorder and says it stopped leading; one that never led does not.
func TestCandidateStopOutput(t *testing.T) {
	ts := mustStartServer(t, "")
	timing := []string{"--server", ts.URL, "--lease", "stop", "--lease-duration", "10s", "--renew-deadline", "5s", "--retry-period", "200ms"}
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, append([]string{"candidate", "--identity", "leader"}, timing...), &out, &out) }()
	poll.Until(t, 10*time.Second, "the first candidate leads", func() (bool, string) {
		return strings.Contains(out.String(), "became leader"), "output:\n" + out.String()
	})
	// A follower that never leads.
	follower := runCandidateUntil(t, "leader is now leader", append([]string{"--identity", "follower"}, timing...)...)
	if strings.Contains(follower, "stopped leading") {
		t.Errorf("a follower said it stopped leading:\n%s", follower)
	}
	if strings.Contains(follower, "client-go:") || strings.Contains(follower, "canceled") {
		t.Errorf("a clean stop logged an error:\n%s", follower)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("leader exited %d:\n%s", code, out.String())
	}
	if o := out.String(); !strings.Contains(o, "leader stopped leading") || strings.Contains(o, "client-go:") || strings.Contains(o, "canceled") {
		t.Errorf("leader output:\n%s", o)
	}
	rctx := ctxT(t, 10*time.Second)
	l, err := ts.Client.CoordinationV1().Leases("default").Get(rctx, "stop", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
		t.Errorf("lease after the leader stopped: %+v %v", l, err)
	}
	// The release's Event was recorded: the recorder was still running when the elector
	// released the lease.
	evs, err := ts.Client.CoreV1().Events("default").List(rctx, metav1.ListOptions{FieldSelector: "involvedObject.name=stop"})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, e := range evs.Items {
		msgs = append(msgs, e.Message)
	}
	if !strings.Contains(strings.Join(msgs, "\n"), "leader stopped leading") {
		t.Errorf("events: %q", msgs)
	}
}

// TestCandidateSaysClientErrors: what client-go's leader election reports (here, a server that
// cannot be reached) is said on the candidate's own lines.
func TestCandidateSaysClientErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	out := runCandidateUntil(t, "client-go: Error retrieving lease lock", "--server", "http://"+addr, "--lease", "gone", "--identity", "a", "--retry-period", "200ms")
	if !strings.Contains(out, "connection refused") {
		t.Errorf("output:\n%s", out)
	}
}
