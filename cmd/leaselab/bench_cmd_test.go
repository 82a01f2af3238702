package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/web/auth"
)

// TestBenchCommand runs every workload of `leaselab bench` briefly against the server and
// checks the JSON report: work was done, nothing failed, no watch event was lost.
func TestBenchCommand(t *testing.T) {
	ts := mustStartServer(t, "")
	for _, tc := range []struct {
		workload string
		args     []string
	}{
		{"renew", []string{"--clients", "4"}},
		{"contend", []string{"--clients", "4"}},
		{"heartbeat", []string{"--clients", "4", "--leases", "20", "--interval", "200ms"}},
		{"watch", []string{"--watchers", "6", "--rate", "50"}},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"bench", "--server", ts.URL, "--duration", "1s", "--json", "--progress", "0", "--db", ts.DB}, tc.args...)
			if tc.workload == "contend" { // after the flags, as the usage line writes it
				args = append(args, tc.workload)
			} else {
				args = slices.Insert(args, 1, tc.workload)
			}
			if code := run(context.Background(), args, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			var res benchResult
			if err := json.Unmarshal(out.Bytes(), &res); err != nil {
				t.Fatalf("report %q: %v", out.String(), err)
			}
			if res.Ops == 0 || res.Errors != 0 || res.EventsLost != 0 || res.P50Ms <= 0 || res.DBSizeMiB <= 0 {
				t.Errorf("report = %+v", res)
			}
			if res.ServerRSSMiB <= 0 {
				t.Errorf("no server RSS for a local server: %+v", res)
			}
			if tc.workload == "watch" {
				if res.Events < res.Ops*6 {
					t.Errorf("watch: %d events for %d writes and 6 watchers", res.Events, res.Ops)
				}
				// Counted from the acknowledgement, which follows the write's start, delivery is
				// never slower than counted from the start.
				if res.WriteP50Ms <= 0 || res.WriteP99Ms < res.WriteP50Ms || res.AfterAckP50Ms > res.P50Ms || res.AfterAckP99Ms > res.P99Ms {
					t.Errorf("watch: writes p50 %v p99 %v ms, delivery from start p50 %v p99 %v ms, after ack p50 %v p99 %v ms",
						res.WriteP50Ms, res.WriteP99Ms, res.P50Ms, res.P99Ms, res.AfterAckP50Ms, res.AfterAckP99Ms)
				}
			}
		})
	}
}

// TestBenchNoServer: with nothing listening, the workloads that create their leases first fail
// at once with the reason, rather than report a run of nothing but errors.
func TestBenchNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	for _, workload := range []string{"renew", "heartbeat"} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"bench", workload, "--server", url, "--duration", "1s", "--progress", "0",
			"--clients", "2", "--leases", "4"}, &out, &errOut)
		if code != 1 || !strings.Contains(errOut.String(), "set up the leases") || !strings.Contains(errOut.String(), "connection refused") {
			t.Errorf("%s: exit %d\n%s%s", workload, code, out.String(), errOut.String())
		}
	}
}

// TestBenchReportsErrors: operations that fail during the run are counted by kind and the
// report shows the first one's message.
func TestBenchReportsErrors(t *testing.T) {
	ts := mustStartServer(t, "")
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"bench", "heartbeat", "--server", ts.URL, "--duration", "2s", "--progress", "100ms",
			"--clients", "2", "--leases", "10", "--interval", "100ms"}, &out, &errOut)
	}()
	// Stop the server once the measured part has begun: every later beat fails.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errOut.String(), " ops ") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	ts.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	// A beat in flight when the server stops may end as a Timeout beside the network errors.
	if !regexp.MustCompile(`errors +[1-9]\d* \((\w+ \d+, )*network [1-9]\d*(, \w+ \d+)*\)\n +first: .+`).MatchString(out.String()) {
		t.Errorf("report without the errors' kind and first message:\n%s", out.String())
	}
}

// TestBenchRetryAfter: against a rate-limited server, the 429s are counted as throttled and
// followed by the wait their Retry-After asks for, not counted as errors.
func TestBenchRetryAfter(t *testing.T) {
	tf := filepath.Join(t.TempDir(), "tokens.csv")
	os.WriteFile(tf, []byte("t0ken,alice,1,\"leaselab:instructors\"\n"), 0o600)
	ts := mustStartServerWith(t, "", func(c *serveConfig) {
		c.access = accessConfig{tokenFile: tf, tls: "on", rateQPS: 5, rateBurst: 5}
	})
	// HTTPS: client-go sends a kubeconfig's token over TLS only.
	kc, err := auth.Kubeconfig(ts.URL, "default", "t0ken", "leaselab", ts.access.caData)
	if err != nil {
		t.Fatal(err)
	}
	kpath := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kpath, kc, 0o600)
	var out, errOut bytes.Buffer
	start := time.Now()
	if code := run(context.Background(), []string{"bench", "renew", "--kubeconfig", kpath, "--duration", "2s", "--progress", "0",
		"--clients", "2", "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res benchResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	// At 5 requests per second and two requests a renewal, about five renewals fit in 2 s.
	if res.Throttled == 0 || res.Errors != 0 || res.Ops == 0 || res.Ops > 20 {
		t.Errorf("report = %+v", res)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}
