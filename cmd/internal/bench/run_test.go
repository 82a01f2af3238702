package bench

import (
	"bytes"
	"context"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestWorkloads runs every workload briefly against a real server and checks its report: work
// was done, nothing failed, no watch event was lost, and what the report measures of a local
// server is there.
func TestWorkloads(t *testing.T) {
	ts := mustStartServer(t)
	for _, workload := range Workloads() {
		t.Run(workload, func(t *testing.T) {
			cfg := testConfig(ts, workload)
			if workload == "watch" {
				cfg.Rate = 50
			}
			rep, err := Run(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Workload != workload || rep.Ops == 0 || rep.Errors != 0 || rep.EventsLost != 0 || rep.P50Ms <= 0 || rep.DBSizeMiB <= 0 {
				t.Errorf("report = %+v", rep)
			}
			if rep.ServerRSSMiB <= 0 {
				t.Errorf("no server RSS for a local server: %+v", rep)
			}
			if workload == "watch" {
				checkWatchReport(t, rep, cfg.Watchers)
			}
		})
	}
}

// TestWorkloadsClientGo runs renew and watch with client-go's typed clientset measuring.
func TestWorkloadsClientGo(t *testing.T) {
	ts := mustStartServer(t)
	for _, workload := range []string{"renew", "watch"} {
		t.Run(workload, func(t *testing.T) {
			cfg := testConfig(ts, workload)
			cfg.ClientGo = true
			if workload == "watch" {
				cfg.Rate = 50
			}
			rep, err := Run(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Ops == 0 || rep.Errors != 0 || rep.EventsLost != 0 || rep.P50Ms <= 0 {
				t.Errorf("report = %+v", rep)
			}
			if workload == "watch" {
				checkWatchReport(t, rep, cfg.Watchers)
			}
		})
	}
}

// checkWatchReport checks what only the watch workload reports.
func checkWatchReport(t *testing.T, rep *Report, watchers int) {
	t.Helper()
	if rep.Watchers != watchers || rep.Events < rep.Ops*int64(watchers) {
		t.Errorf("watch: %d events for %d writes and %d watchers", rep.Events, rep.Ops, rep.Watchers)
	}
	// Counted from the acknowledgement, which follows the write's start, delivery is never
	// slower than counted from the start.
	if rep.WriteP50Ms <= 0 || rep.WriteP99Ms < rep.WriteP50Ms || rep.AfterAckP50Ms > rep.P50Ms || rep.AfterAckP99Ms > rep.P99Ms {
		t.Errorf("watch: writes p50 %v p99 %v ms, delivery from start p50 %v p99 %v ms, after ack p50 %v p99 %v ms",
			rep.WriteP50Ms, rep.WriteP99Ms, rep.P50Ms, rep.P99Ms, rep.AfterAckP50Ms, rep.AfterAckP99Ms)
	}
}

// TestRunNoServer: with nothing listening, the workloads that create many leases first fail
// at once with the reason, rather than report a run of nothing but errors.
func TestRunNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	for _, workload := range []string{"renew", "heartbeat"} {
		cfg := Config{Workload: workload, Rest: &rest.Config{Host: url}, Namespace: "ns", Clients: 2, Leases: 4,
			Interval: time.Second, Duration: time.Second}
		rep, err := Run(context.Background(), cfg, nil)
		if err == nil || !strings.Contains(err.Error(), "set up the leases") || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("%s: report %+v, error %v", workload, rep, err)
		}
	}
}

// TestRunReportsErrors: operations that fail during the run are counted by kind and the
// report shows the first one's message.
func TestRunReportsErrors(t *testing.T) {
	ts := mustStartServer(t)
	cfg := testConfig(ts, "heartbeat")
	cfg.Clients, cfg.Leases, cfg.Interval = 2, 10, 100*time.Millisecond
	cfg.Duration, cfg.Progress = time.Second, 100*time.Millisecond
	progress := &firstWrite{c: make(chan struct{})}
	type result struct {
		rep *Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := Run(context.Background(), cfg, progress)
		done <- result{rep, err}
	}()
	// Stop the server once the measured part has begun (the progress line shows it): every
	// later beat fails.
	select {
	case <-progress.c:
	case res := <-done:
		t.Fatalf("the run ended before its first progress line: %+v, %v", res.rep, res.err)
	}
	ts.Close()
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.rep.ErrorKinds["network"] == 0 || res.rep.FirstError == "" {
		t.Errorf("report = %+v", res.rep)
	}
	var table strings.Builder
	if _, err := res.rep.WriteTo(&table); err != nil {
		t.Fatal(err)
	}
	// A beat in flight when the server stops may end as a Timeout beside the network errors.
	if !regexp.MustCompile(`errors +[1-9]\d* \((\w+ \d+, )*network [1-9]\d*(, \w+ \d+)*\)\n +first: .+`).MatchString(table.String()) {
		t.Errorf("report without the errors' kind and first message:\n%s", table.String())
	}
}

// firstWrite is a writer that closes c at its first write.
type firstWrite struct {
	once sync.Once
	c    chan struct{}
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.c) })
	return len(p), nil
}

// TestRunRefusesConfig: a configuration the workloads cannot run with is refused before any
// request.
func TestRunRefusesConfig(t *testing.T) {
	good := Config{Workload: "heartbeat", Rest: &rest.Config{Host: "http://127.0.0.1:1"}, Clients: 1, Leases: 1,
		Interval: time.Second, Duration: time.Second}
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Workload = "fight" }, `unknown workload "fight"`},
		{func(c *Config) { c.Rest = nil }, "no client configuration"},
		{func(c *Config) { c.Clients = 0 }, "0 clients"},
		{func(c *Config) { c.WebSocketShare = 1.5 }, "WebSocket share 1.5"},
		{func(c *Config) { c.Leases = 0 }, "heartbeat with 0 leases"},
		{func(c *Config) { c.Workload, c.Watchers = "watch", -1 }, "-1 watchers"},
	} {
		cfg := good
		tc.change(&cfg)
		if _, err := Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", cfg, err, tc.want)
		}
	}
}

// TestProgressOffATerminal: progress written to a file or a pipe comes as whole lines, without
// the carriage returns that rewrite a terminal's line.
func TestProgressOffATerminal(t *testing.T) {
	ts := mustStartServer(t)
	cfg := testConfig(ts, "renew")
	cfg.Progress = 200 * time.Millisecond
	out, err := os.CreateTemp(t.TempDir(), "progress")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cfg, out); err != nil {
		t.Fatal(err)
	}
	out.Close()
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("\r")) || !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("ops")) < 2 {
		t.Errorf("progress in a file: %q; want lines of their own", b)
	}
	// The run leaves none of its leases behind.
	left, err := kubernetes.NewForConfigOrDie(ts.Config).CoordinationV1().Leases(cfg.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(left.Items) > 0 {
		t.Errorf("after the run, %d leases left in %s (%v)", len(left.Items), cfg.Namespace, err)
	}
}
