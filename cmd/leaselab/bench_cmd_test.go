package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/leaselab/leaselab/cmd/internal/access"
	"github.com/leaselab/leaselab/cmd/internal/bench"
	"github.com/leaselab/leaselab/cmd/internal/joinbench"
	"github.com/leaselab/leaselab/web/api/auth"
)

// TestBenchFlags: every flag of `leaselab bench` reaches the run's configuration, the workload
// may come before or after the flags, and the environment sets defaults. The workloads
// themselves are tested in cmd/internal/bench.
func TestBenchFlags(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("LEASELAB_INTERVAL", "3s")
	want := bench.Config{
		Workload: "heartbeat", Rest: &rest.Config{Host: "http://127.0.0.1:9"}, UserAgent: "leaselab-bench/" + leaselabVersion(),
		Namespace: "ns", Clients: 3, Duration: 2 * time.Second, Rate: 7, Leases: 11, Interval: 3 * time.Second,
		Watchers: 5, WebSocketShare: 0.25, DB: "x.db", Progress: 0,
	}
	flags := []string{"--server", "http://127.0.0.1:9", "--namespace", "ns", "--clients", "3", "--duration", "2s", "--rate", "7",
		"--leases", "11", "--watchers", "5", "--websocket-share", "0.25", "--db", "x.db", "--progress", "0",
		"--json", "--cpuprofile", "cpu.out"}
	for _, args := range [][]string{append([]string{"heartbeat"}, flags...), append(flags[:len(flags):len(flags)], "heartbeat")} {
		c, err := parseBenchFlags(args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if !c.jsonOut || c.cpuProfile != "cpu.out" || c.KeepTransport {
			t.Errorf("%q: json %v, cpuprofile %q, keep transport %v", args, c.jsonOut, c.cpuProfile, c.KeepTransport)
		}
		got := c.Config
		if got.Rest == nil || got.Rest.Host != want.Rest.Host {
			t.Fatalf("%q: client configuration %+v", args, got.Rest)
		}
		got.Rest = want.Rest
		if got != want {
			t.Errorf("%q:\n got %+v\nwant %+v", args, got, want)
		}
	}
}

// TestBenchCommand runs `leaselab bench` briefly against the server, once with the JSON report
// and the workload after the flags, as the usage line writes it, and once with the table.
func TestBenchCommand(t *testing.T) {
	t.Parallel()
	ts := mustStartServer(t, "")
	var out, errOut bytes.Buffer
	args := []string{"bench", "--server", ts.URL, "--duration", "1s", "--json", "--progress", "0", "--db", ts.DB, "--clients", "4", "contend"}
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	if rep.Workload != "contend" || rep.Clients != 4 || rep.Ops == 0 || rep.Errors != 0 || rep.P50Ms <= 0 || rep.DBSizeMiB <= 0 || rep.ServerRSSMiB <= 0 {
		t.Errorf("report = %+v", rep)
	}

	out.Reset()
	errOut.Reset()
	args = []string{"bench", "renew", "--server", ts.URL, "--duration", "1s", "--progress", "0", "--clients", "2"}
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.HasPrefix(out.String(), "workload    renew against "+ts.URL+"\nclients     2 for ") || !strings.Contains(out.String(), "\nrenewals    ") {
		t.Errorf("table:\n%s", out.String())
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

// TestBenchRetryAfter: against a rate-limited server, the 429s are counted as throttled and
// followed by the wait their Retry-After asks for, not counted as errors. The server is loaded
// through a kubeconfig, whose TLS settings and token the run keeps.
func TestBenchRetryAfter(t *testing.T) {
	t.Parallel()
	tf := filepath.Join(t.TempDir(), "tokens.csv")
	os.WriteFile(tf, []byte("t0ken,alice,1,\"leaselab:instructors\"\n"), 0o600)
	ts := mustStartServerWith(t, "", func(c *serveConfig) {
		c.access = access.Config{TokenFile: tf, TLS: "on", RateQPS: 5, RateBurst: 5}
	})
	// HTTPS: client-go sends a kubeconfig's token over TLS only.
	kc, err := auth.Kubeconfig(ts.URL, "default", "t0ken", "leaselab", ts.access.CAData)
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
	var res bench.Report
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

// TestBenchWorkshop runs `leaselab bench workshop` small: it starts a workshop server (this
// test binary acting as leaselab), opens the tabs and dashboards and reports in the JSON
// whose field names scripts rely on. Figures are checked for plausibility, not against
// targets: those belong in BENCHMARKS.md.
func TestBenchWorkshop(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	args := []string{"bench", "workshop", "--participants", "3", "--tabs", "2", "--duration", "3s", "--retry-period", "500ms", "--json"}
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	for _, f := range []string{"renewP99Ms", "dashboardP99Ms", "serverRssMiB", "tabReportP99Ms"} {
		if v, ok := rep[f].(float64); !ok || v <= 0 {
			t.Errorf("%s = %v, want a figure above 0", f, rep[f])
		}
	}
	if rep["errors"] != float64(0) || rep["lost"] != float64(0) {
		t.Errorf("errors %v (%v: %v), lost %v", rep["errors"], rep["errorKinds"], rep["firstError"], rep["lost"])
	}
	if rep["participants"] != float64(3) || rep["tabs"] != float64(2) {
		t.Errorf("participants %v, tabs %v", rep["participants"], rep["tabs"])
	}
	if n, _ := rep["renewals"].(float64); n < 1 {
		t.Errorf("renewals %v", rep["renewals"])
	}
}

// TestBenchWorkshopFlags: bad numbers are refused before anything starts, and the workshop
// workload is found wherever the word stands.
func TestBenchWorkshopFlags(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "workshop", "--participants", "0"},
		{"bench", "--tabs", "0", "workshop"},
		{"bench", "workshop", "--server", "https://127.0.0.1:9"},
	} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "leaselab bench: --") {
			t.Errorf("%q: exit %d, %s", args, code, errOut.String())
		}
	}
	if rest, ok := isWorkshopBench([]string{"--namespace", "workshop", "renew"}); ok {
		t.Errorf("--namespace workshop taken for the workload (%q)", rest)
	}
}

// TestBenchRoom: `leaselab bench room` at a small N (a smoke test of the 1,000-phone room):
// every phone a candidate on the arena's lease, one leads and renews, the projector's stage
// draws every write, and the report has the figures scripts read.
func TestBenchRoom(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	args := []string{"bench", "room", "--candidates", "6", "--duration", "3s", "--retry-period", "500ms", "--json"}
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	for _, f := range []string{"renewP99Ms", "stageP99Ms", "serverRssMiB", "serverCpuCores"} {
		if v, ok := rep[f].(float64); !ok || v <= 0 {
			t.Errorf("%s = %v, want a figure above 0", f, rep[f])
		}
	}
	if rep["errors"] != float64(0) || rep["lost"] != float64(0) {
		t.Errorf("errors %v (%v: %v), lost %v", rep["errors"], rep["errorKinds"], rep["firstError"], rep["lost"])
	}
	if rep["participants"] != float64(6) || rep["tabs"] != float64(1) {
		t.Errorf("participants %v, tabs %v", rep["participants"], rep["tabs"])
	}
	if n, _ := rep["stageUpdates"].(float64); n < 1 {
		t.Errorf("stageUpdates %v", rep["stageUpdates"])
	}
	for _, args := range [][]string{{"bench", "room", "--candidates", "0"}, {"bench", "room", "--retry-period", "5s"}} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "leaselab bench: --") {
			t.Errorf("%q: exit %d, %s", args, code, errOut.String())
		}
	}
}

// TestBenchJoin runs `leaselab bench join` once on an unthrottled network: it starts a server
// over HTTPS (this test binary acting as leaselab), opens the join link in Chromium and
// reports when the tab was a candidate and what the wasm weighed. No timing is checked
// against a target: the figures belong in BENCHMARKS.md.
func TestBenchJoin(t *testing.T) {
	browserTest(t) // bench join drives a Chromium of its own
	chromium := mustFindChromium(t)
	var out, errOut bytes.Buffer
	args := []string{"bench", "join", "--runs", "1", "--network", "none", "--chromium", chromium, "--json"}
	if code := run(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep joinbench.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report %q: %v", out.String(), err)
	}
	if len(rep.Runs) != 1 || rep.MedianMs <= 0 || rep.Runs[0].State != "follower" && rep.Runs[0].State != "leader" {
		t.Errorf("runs %+v, median %v ms", rep.Runs, rep.MedianMs)
	}
	// Over HTTPS the browser takes the Brotli candidate.
	if rep.WasmBytes <= 0 || rep.WasmRawBytes <= rep.WasmBytes || rep.Bytes < rep.WasmBytes || !strings.HasPrefix(rep.URL, "https://") {
		t.Errorf("wasm %d bytes (%d decoded), %d in all, at %s", rep.WasmBytes, rep.WasmRawBytes, rep.Bytes, rep.URL)
	}
	if !strings.Contains(errOut.String(), "run 1/1: ") {
		t.Errorf("no progress line: %s", errOut.String())
	}
	for _, bad := range [][]string{{"bench", "join", "--network", "5g"}, {"bench", "join", "--runs", "0"}} {
		if code := run(context.Background(), bad, &out, &errOut); code == 0 {
			t.Errorf("%v: exit 0", bad)
		}
	}
}
