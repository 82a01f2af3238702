// Package bench generates lease load against leaselab or any Kubernetes API server, the way
// lease clients do, and reports throughput, latency and what the load cost the server: the
// engine of `leaselab bench`. Run takes a Config and returns a Report; each workload (renew,
// contend, heartbeat, watch) is a file of its own, and all of them settle their operations'
// outcomes in one loop (runner.repeat).
package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Config configures a run: what the flags of `leaselab bench` fill.
type Config struct {
	// Workload names one of Workloads().
	Workload string
	// Rest is the client configuration of the server to load. Run copies it and turns off
	// client-side rate limiting: the load is the point.
	Rest *rest.Config
	// KeepTransport keeps the transport settings and credentials of Rest, as those of a
	// kubeconfig must be kept: every request then goes through the transport they build.
	// Without it, Run uses a transport with an idle connection for every client (Rest must
	// then have no TLS options of its own), and against plain HTTP each worker keeps a
	// connection of its own, which costs the load generator less CPU.
	KeepTransport bool
	// UserAgent is sent with every request; empty means "leaselab-bench".
	UserAgent string
	// Namespace is where the workload writes its leases.
	Namespace string
	// Clients is the number of concurrent clients (renew, contend, heartbeat senders).
	Clients int
	// Duration is how long the measured part runs, after the workload's setup.
	Duration time.Duration
	// Rate is, for renew, the total renewals per second to aim for (0: as fast as possible);
	// for watch, writes per second (0: 100).
	Rate float64
	// Leases is, for heartbeat, the number of leases, each renewed every Interval.
	Leases   int
	Interval time.Duration
	// Watchers is, for watch, the number of watchers; WebSocketShare is the share of them
	// that use a WebSocket instead of chunked HTTP.
	Watchers       int
	WebSocketShare float64
	// DB is the database file of a local leaselab, whose size the report includes; empty
	// for none.
	DB string
	// Progress is the interval of the progress line Run writes; 0 for none.
	Progress time.Duration
	// ClientGo makes the renew and watch workloads use client-go's typed clientset with its
	// defaults for what they measure, instead of the lean lease client (see clientgo.go).
	ClientGo bool
}

// validate checks what the workloads cannot run with and returns the workload cfg names.
func (cfg Config) validate() (workload, error) {
	w, ok := lookupWorkload(cfg.Workload)
	switch {
	case !ok:
		return workload{}, fmt.Errorf("unknown workload %q", cfg.Workload)
	case cfg.Rest == nil:
		return workload{}, errors.New("no client configuration")
	case cfg.Clients < 1:
		return workload{}, fmt.Errorf("%d clients: want at least 1", cfg.Clients)
	case cfg.WebSocketShare < 0 || cfg.WebSocketShare > 1:
		return workload{}, fmt.Errorf("WebSocket share %v: want a share between 0 and 1", cfg.WebSocketShare)
	case w.name == "watch" && cfg.Watchers < 0:
		return workload{}, fmt.Errorf("%d watchers: want 0 or more", cfg.Watchers)
	case w.name == "heartbeat" && cfg.Leases < 1:
		// A sender without leases would have nothing to wait for and spin.
		return workload{}, fmt.Errorf("heartbeat with %d leases: want at least 1", cfg.Leases)
	}
	return w, nil
}

// Run loads the server cfg.Rest names with cfg.Workload for cfg.Duration and reports what it
// measured, writing a progress line to progress every cfg.Progress. The workload's setup
// (creating its leases, connecting its watchers) is not measured. Operations that fail during
// the measured part are counted in the report, not returned; Run returns an error for an
// invalid cfg, a failed setup (a run whose leases are missing would only measure failures),
// or a ctx that ended before the setup finished. A ctx that ends during the measured part
// ends it early, with a report.
func Run(ctx context.Context, cfg Config, progress io.Writer) (*Report, error) {
	w, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	r, err := newRunner(cfg, progress)
	if err != nil {
		return nil, err
	}
	// The bound on the whole keeps a dead server from hanging the setup.
	wctx, cancel := context.WithTimeout(ctx, cfg.Duration+2*time.Minute)
	defer cancel()
	werr := w.run(wctx, r)
	r.end()
	if werr != nil && !errors.Is(werr, context.DeadlineExceeded) && !errors.Is(werr, context.Canceled) {
		return nil, werr
	}
	if r.start.IsZero() {
		r.cleanUp()
		return nil, fmt.Errorf("setup did not finish: %w", cmp.Or(werr, ctx.Err(), context.DeadlineExceeded))
	}
	rep := r.report(w)
	r.cleanUp()
	return rep, nil
}

// cleanUp deletes the leases the run created (they carry its label), so that a playground's
// database or a cluster keeps nothing of the benchmark but the history of its changes.
func (r *runner) cleanUp() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := r.client.CoordinationV1().Leases(r.cfg.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: createdByLabel + "=" + createdBy})
	if err != nil && r.progress != nil {
		fmt.Fprintf(r.progress, "could not delete the benchmark's leases in %s: %v\n", r.cfg.Namespace, err)
	}
}

// runner is the shared state of one run: its clients, counters and samples.
type runner struct {
	cfg    Config
	rest   *rest.Config         // the client configuration, throttling off
	client kubernetes.Interface // setup: creates, lists; with ClientGo, the watches
	leases *leaseClient         // the measured GETs and PUTs, and the watches

	ops       atomic.Int64 // completed operations (renewals, writes)
	throttled atomic.Int64 // 429s, each followed by the wait its Retry-After asked for
	conflicts atomic.Int64
	lost      atomic.Int64
	events    atomic.Int64
	failures  failures

	latencies samples // of the operations, or for watch of the deliveries
	writes    samples // watch: each write's PUT, from request to acknowledgement
	afterAck  samples // watch: delivery counted from the write's acknowledgement

	progress  io.Writer
	server    string // as configured, for the report
	serverPID string
	local     bool // serverPID is the server's process

	// Set by begin and end: the measured part of the run and the CPU the server and this
	// process used in it.
	start                time.Time
	elapsed              time.Duration
	serverCPU, clientCPU time.Duration
	stopProgress         func()
	endOnce              sync.Once
}

// newRunner builds the clients of a run.
func newRunner(cfg Config, progress io.Writer) (*runner, error) {
	rc := rest.CopyConfig(cfg.Rest)
	rc.QPS, rc.Burst = -1, 0 // no client-side throttling: the load is the point
	rc.UserAgent = cmp.Or(cfg.UserAgent, "leaselab-bench")
	if !cfg.KeepTransport {
		// Enough idle connections for every client to keep its own.
		rc.Transport = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        4 * cfg.Clients,
			MaxIdleConnsPerHost: 4 * cfg.Clients,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	// A local server without TLS gets a connection per client without net/http's Transport;
	// with a kubeconfig, requests go through the Transport its settings build.
	leases, err := newLeaseClient(rc, cfg.Namespace, !cfg.KeepTransport)
	if err != nil {
		return nil, err
	}
	if progress == nil {
		progress = io.Discard
	}
	r := &runner{cfg: cfg, rest: rc, client: client, leases: leases, progress: progress, server: rc.Host}
	r.serverPID, r.local = localServerPID(rc.Host)
	return r, nil
}

// begin starts the measured part of a run, after the workload's setup: the clock, the CPU
// accounting and the progress line. It returns the context of the measured part, which ends
// after cfg.Duration.
func (r *runner) begin(ctx context.Context) (context.Context, context.CancelFunc) {
	r.start = time.Now()
	if r.local {
		r.serverCPU, _ = processCPU(r.serverPID)
	}
	r.clientCPU, _ = processCPU("self")
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Duration)
	r.stopProgress = r.startProgress()
	return ctx, cancel
}

// end ends the measured part of the run; later calls, and calls before begin, do nothing.
func (r *runner) end() {
	r.endOnce.Do(func() {
		if r.start.IsZero() {
			return
		}
		r.elapsed = time.Since(r.start)
		if cpu, ok := processCPU(r.serverPID); r.local && ok {
			r.serverCPU = cpu - r.serverCPU
		} else {
			r.serverCPU = 0
		}
		if cpu, ok := processCPU("self"); ok {
			r.clientCPU = cpu - r.clientCPU
		}
		r.stopProgress()
	})
}

// eachClient runs f in cfg.Clients goroutines and waits for them. It returns ctx's error
// unless ctx ended by its deadline, which is how a measured part ends.
func (r *runner) eachClient(ctx context.Context, f func(ctx context.Context, i int)) error {
	var wg sync.WaitGroup
	for i := range r.cfg.Clients {
		wg.Go(func() { f(ctx, i) })
	}
	wg.Wait()
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ctx.Err()
	}
	return nil
}
