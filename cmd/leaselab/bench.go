package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// benchConfig configures `leaselab bench`.
type benchConfig struct {
	workload   string
	kubeconfig string
	server     string
	// viaKubeconfig: the client configuration came from a kubeconfig (--kubeconfig or
	// $KUBECONFIG), whose transport settings and credentials must be kept.
	viaKubeconfig bool
	namespace     string
	clients       int
	duration      time.Duration
	rate          float64
	leases        int
	interval      time.Duration
	watchers      int
	wsShare       float64
	db            string
	jsonOut       bool
	progress      time.Duration
	cpuProfile    string
}

const benchSummary = "generate lease load against leaselab or any Kubernetes API server and report throughput and latency"

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c benchConfig
	fs := newFlagSet("bench", benchSummary, " renew|contend|heartbeat|watch", stderr)
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to load (default: $KUBECONFIG when set and --server is not given, else --server)")
	fs.StringVar(&c.server, "server", "http://127.0.0.1:8080", "URL of the API server; with a kubeconfig, overrides the server it names")
	fs.StringVar(&c.namespace, "namespace", "leaselab-bench", "namespace the benchmark writes its leases in")
	fs.IntVar(&c.clients, "clients", 64, "concurrent clients (renew, contend, heartbeat senders)")
	fs.DurationVar(&c.duration, "duration", 30*time.Second, "how long the load runs")
	fs.Float64Var(&c.rate, "rate", 0, "renew: total renewals per second to aim for (0: as fast as possible); watch: writes per second (default 100)")
	fs.IntVar(&c.leases, "leases", 10000, "heartbeat: number of leases, each renewed every --interval")
	fs.DurationVar(&c.interval, "interval", 10*time.Second, "heartbeat: renewal interval of each lease")
	fs.IntVar(&c.watchers, "watchers", 1000, "watch: number of watchers")
	fs.Float64Var(&c.wsShare, "websocket-share", 0.5, "watch: share of watchers that use a WebSocket instead of chunked HTTP")
	fs.StringVar(&c.db, "db", "", "database file of a local leaselab, to report its size")
	fs.BoolVar(&c.jsonOut, "json", false, "print the result as JSON")
	fs.DurationVar(&c.progress, "progress", time.Second, "interval of the progress line on stderr (0: none)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the load generator to this file")
	var err error
	if c.workload, err = parseFlagsWord(fs, args); err != nil {
		return err
	}
	var workload func(context.Context, *benchRun) error
	switch c.workload {
	case "renew":
		workload = benchRenew
	case "contend":
		workload = benchContend
	case "heartbeat":
		workload = benchHeartbeat
	case "watch":
		workload = benchWatch
	case "":
		fmt.Fprintf(stderr, "leaselab bench: name a workload: renew, contend, heartbeat or watch\n")
		fs.Usage()
		return errUsage
	default:
		fmt.Fprintf(stderr, "leaselab bench: unknown workload %q: name one of renew, contend, heartbeat or watch\n", c.workload)
		fs.Usage()
		return errUsage
	}
	if c.clients < 1 {
		return errors.New("--clients must be at least 1")
	}
	if c.wsShare < 0 || c.wsShare > 1 {
		return fmt.Errorf("--websocket-share %v: want a share between 0 and 1", c.wsShare)
	}
	cfg, _, loaded, err := clientConfig(c.kubeconfig, c.server, flagGiven(fs, "server"))
	if err != nil {
		return err
	}
	c.viaKubeconfig = loaded
	if c.cpuProfile != "" {
		stop, err := startCPUProfile(c.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	res, err := runBenchmark(ctx, c, cfg, workload, stderr)
	if err != nil {
		return err
	}
	if c.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		res.print(stdout)
	}
	// Some failures under load are part of the measurement; a run in which nothing succeeded
	// measured nothing.
	if err == nil && res.Ops == 0 && res.Errors > 0 {
		err = fmt.Errorf("every operation failed; the first: %s", res.FirstError)
	}
	return err
}

// startCPUProfile profiles this process into path until the returned function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// benchRun is the shared state of one benchmark run.
type benchRun struct {
	cfg    benchConfig
	rest   *rest.Config
	client kubernetes.Interface // setup: creates, lists, watches
	leases *leaseClient         // the measured GETs and PUTs

	ops       atomic.Int64 // completed operations (renewals, writes)
	errs      atomic.Int64
	throttled atomic.Int64 // 429s, each followed by the wait its Retry-After asked for
	conflicts atomic.Int64
	lost      atomic.Int64
	events    atomic.Int64

	mu        sync.Mutex
	firstErr  error            // the first failure, shown in the report
	errKinds  map[string]int64 // failures by reason (a Status reason, or network)
	latencies []time.Duration
	writes    []time.Duration // watch: each write's PUT, from request to acknowledgement
	afterAck  []time.Duration // watch: delivery counted from the write's acknowledgement

	stderr    io.Writer
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

// begin starts the measured part of a run, after the workload's setup: the clock, the CPU
// accounting and the progress line. It returns the context of the measured part, which ends
// after --duration.
func (b *benchRun) begin(ctx context.Context) (context.Context, context.CancelFunc) {
	b.start = time.Now()
	if b.local {
		b.serverCPU, _ = processCPU(b.serverPID)
	}
	b.clientCPU, _ = processCPU("self")
	ctx, cancel := context.WithTimeout(ctx, b.cfg.duration)
	b.stopProgress = startProgress(ctx, b, b.start, b.stderr)
	return ctx, cancel
}

// end ends the measured part of the run; later calls do nothing.
func (b *benchRun) end() {
	b.endOnce.Do(func() {
		if b.start.IsZero() {
			return
		}
		b.elapsed = time.Since(b.start)
		if cpu, ok := processCPU(b.serverPID); b.local && ok {
			b.serverCPU = cpu - b.serverCPU
		} else {
			b.serverCPU = 0
		}
		if cpu, ok := processCPU("self"); ok {
			b.clientCPU = cpu - b.clientCPU
		}
		b.stopProgress()
	})
}

// fail counts a failed operation by kind and keeps the first one's error for the report.
func (b *benchRun) fail(err error) {
	b.errs.Add(1)
	kind := string(apierrors.ReasonForError(err))
	if kind == "" {
		var ne net.Error
		// A connection the server closed mid-exchange ends in an (unexpected) EOF.
		if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			kind = "network"
		} else {
			kind = "other"
		}
	}
	b.mu.Lock()
	if b.firstErr == nil {
		b.firstErr = err
	}
	if b.errKinds == nil {
		b.errKinds = map[string]int64{}
	}
	b.errKinds[kind]++
	b.mu.Unlock()
}

// throttle reports whether err is a 429 and, if so, counts it and waits as long as its
// Retry-After asks (a second when it names no delay), as client-go does, instead of hammering
// a server that is shedding load.
func (b *benchRun) throttle(ctx context.Context, err error) bool {
	if !apierrors.IsTooManyRequests(err) {
		return false
	}
	b.throttled.Add(1)
	secs, ok := apierrors.SuggestsClientDelay(err)
	if !ok || secs < 1 {
		secs = 1
	}
	t := time.NewTimer(time.Duration(secs) * time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return true
}

// setupError returns an error from a workload's unmeasured setup (creating its leases): a
// benchmark whose leases are missing would only measure failures.
func (b *benchRun) setupError(first *atomic.Pointer[error]) error {
	if p := first.Load(); p != nil {
		return fmt.Errorf("set up the leases: %w", *p)
	}
	return nil
}

func (b *benchRun) record(d time.Duration) {
	b.mu.Lock()
	b.latencies = append(b.latencies, d)
	b.mu.Unlock()
}

// benchResult is the report of a run.
type benchResult struct {
	Workload    string  `json:"workload"`
	Server      string  `json:"server"`
	Clients     int     `json:"clients"`
	Watchers    int     `json:"watchers,omitempty"`
	DurationSec float64 `json:"durationSeconds"`
	Ops         int64   `json:"operations"`
	OpsPerSec   float64 `json:"operationsPerSecond"`
	Errors      int64   `json:"errors"`
	// FirstError is the message of the first failed operation; ErrorKinds counts the failures
	// by reason (a Status reason such as Forbidden, or network).
	FirstError string           `json:"firstError,omitempty"`
	ErrorKinds map[string]int64 `json:"errorKinds,omitempty"`
	// Throttled counts the 429 answers; each was followed by the wait of its Retry-After.
	Throttled  int64   `json:"throttled,omitempty"`
	Conflicts  int64   `json:"conflicts,omitempty"`
	Events     int64   `json:"events,omitempty"`
	EventsLost int64   `json:"eventsLost"`
	P50Ms      float64 `json:"p50Ms"`
	P99Ms      float64 `json:"p99Ms"`
	MaxMs      float64 `json:"maxMs"`
	// WriteP50Ms and WriteP99Ms are, for watch, the latency of the writes themselves (PUT to
	// acknowledgement). Delivery latency counts from the start of the write, before its
	// commit: the time from commit to receipt is shorter by up to the write's latency.
	WriteP50Ms float64 `json:"writeP50Ms,omitempty"`
	WriteP99Ms float64 `json:"writeP99Ms,omitempty"`
	// AfterAckP50Ms and AfterAckP99Ms are, for watch, the delivery latency counted from each
	// write's acknowledgement instead of its start: the lower bound of commit to receipt.
	AfterAckP50Ms float64 `json:"afterAckP50Ms,omitempty"`
	AfterAckP99Ms float64 `json:"afterAckP99Ms,omitempty"`
	ServerRSSMiB  float64 `json:"serverRSSMiB,omitempty"`
	// ServerPeakRSSMiB is the server's peak resident memory since it started (VmHWM).
	ServerPeakRSSMiB float64 `json:"serverPeakRSSMiB,omitempty"`
	// ServerCPUPerOpMs and ClientCPUPerOpMs are the CPU time (user and system) the server
	// and this load generator spent per operation during the run: unlike throughput, they
	// do not depend on how the two share the machine's cores.
	ServerCPUPerOpMs float64 `json:"serverCPUPerOpMs,omitempty"`
	ClientCPUPerOpMs float64 `json:"clientCPUPerOpMs,omitempty"`
	DBSizeMiB        float64 `json:"dbSizeMiB,omitempty"`
	opName           string
}

func (r *benchResult) print(w io.Writer) {
	fmt.Fprintf(w, "workload    %s against %s\n", r.Workload, r.Server)
	if r.Workload == "watch" {
		fmt.Fprintf(w, "watchers    %d for %.1f s\n", r.Watchers, r.DurationSec)
	} else {
		fmt.Fprintf(w, "clients     %d for %.1f s\n", r.Clients, r.DurationSec)
	}
	fmt.Fprintf(w, "%-11s %d (%.0f/s)\n", r.opName, r.Ops, r.OpsPerSec)
	if r.Events > 0 || r.Workload == "watch" {
		fmt.Fprintf(w, "events      %d received, %d lost\n", r.Events, r.EventsLost)
	}
	if r.Conflicts > 0 || r.Workload == "contend" {
		fmt.Fprintf(w, "conflicts   %d\n", r.Conflicts)
	}
	if r.Throttled > 0 {
		fmt.Fprintf(w, "throttled   %d (429, waited as Retry-After asked)\n", r.Throttled)
	}
	fmt.Fprintf(w, "errors      %d", r.Errors)
	if len(r.ErrorKinds) > 0 {
		kinds := make([]string, 0, len(r.ErrorKinds))
		for k, n := range r.ErrorKinds {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		slices.Sort(kinds)
		fmt.Fprintf(w, " (%s)", strings.Join(kinds, ", "))
	}
	fmt.Fprintln(w)
	if r.FirstError != "" {
		fmt.Fprintf(w, "            first: %s\n", r.FirstError)
	}
	fmt.Fprintf(w, "latency     p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", r.P50Ms, r.P99Ms, r.MaxMs)
	if r.Workload == "watch" {
		fmt.Fprintf(w, "            from the start of each write, which took p50 %.2f ms  p99 %.2f ms;\n", r.WriteP50Ms, r.WriteP99Ms)
		fmt.Fprintf(w, "            from its acknowledgement: p50 %.2f ms  p99 %.2f ms\n", r.AfterAckP50Ms, r.AfterAckP99Ms)
	}
	if r.ServerRSSMiB > 0 {
		fmt.Fprintf(w, "server RSS  %.1f MiB (peak %.1f MiB)\n", r.ServerRSSMiB, r.ServerPeakRSSMiB)
	}
	if r.ServerCPUPerOpMs > 0 {
		fmt.Fprintf(w, "CPU per op  server %.3f ms  client %.3f ms\n", r.ServerCPUPerOpMs, r.ClientCPUPerOpMs)
	}
	if r.DBSizeMiB > 0 {
		fmt.Fprintf(w, "database    %.1f MiB\n", r.DBSizeMiB)
	}
}

func runBenchmark(ctx context.Context, c benchConfig, cfg *rest.Config, workload func(context.Context, *benchRun) error, stderr io.Writer) (*benchResult, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side throttling: the load is the point
	cfg.UserAgent = "leaselab-bench/" + leaselabVersion()
	// Enough idle connections for every client to keep its own.
	cfg.Transport = &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        4 * c.clients,
		MaxIdleConnsPerHost: 4 * c.clients,
		IdleConnTimeout:     90 * time.Second,
	}
	if c.viaKubeconfig {
		cfg.Transport = nil // the kubeconfig's TLS settings build the transport
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// A local server without TLS gets a connection per client without net/http's Transport;
	// with a kubeconfig, requests go through the Transport its settings build.
	leases, err := newLeaseClient(cfg, c.namespace, !c.viaKubeconfig)
	if err != nil {
		return nil, err
	}
	b := &benchRun{cfg: c, rest: cfg, client: client, leases: leases}

	b.serverPID, b.local = localServerPID(cfg.Host)
	b.stderr = stderr

	// The workload's setup (creating leases, connecting watchers) is not measured; it calls
	// b.begin when the measured part starts. The bound on the whole keeps a dead server from
	// hanging the setup.
	wctx, cancel := context.WithTimeout(ctx, c.duration+2*time.Minute)
	defer cancel()
	werr := workload(wctx, b)
	b.end()
	if werr != nil && !errors.Is(werr, context.DeadlineExceeded) && !errors.Is(werr, context.Canceled) {
		return nil, werr
	}
	if b.start.IsZero() {
		return nil, fmt.Errorf("setup did not finish: %w", cmp.Or(werr, ctx.Err(), context.DeadlineExceeded))
	}
	elapsed := b.elapsed
	res := &benchResult{
		Workload:    c.workload,
		Server:      cfg.Host,
		Clients:     c.clients,
		DurationSec: elapsed.Seconds(),
		Ops:         b.ops.Load(),
		OpsPerSec:   float64(b.ops.Load()) / elapsed.Seconds(),
		Errors:      b.errs.Load(),
		Throttled:   b.throttled.Load(),
		Conflicts:   b.conflicts.Load(),
		Events:      b.events.Load(),
		EventsLost:  b.lost.Load(),
		opName:      map[string]string{"renew": "renewals", "contend": "attempts", "heartbeat": "heartbeats", "watch": "writes"}[c.workload],
	}
	if c.workload == "watch" {
		res.Watchers = c.watchers
	}
	b.mu.Lock()
	if b.firstErr != nil {
		res.FirstError, res.ErrorKinds = b.firstErr.Error(), b.errKinds
	}
	res.P50Ms, res.P99Ms, res.MaxMs = percentiles(b.latencies)
	res.WriteP50Ms, res.WriteP99Ms, _ = percentiles(b.writes)
	res.AfterAckP50Ms, res.AfterAckP99Ms, _ = percentiles(b.afterAck)
	b.mu.Unlock()
	if ops := float64(b.ops.Load()); ops > 0 {
		res.ClientCPUPerOpMs = float64(b.clientCPU) / float64(time.Millisecond) / ops
		res.ServerCPUPerOpMs = float64(b.serverCPU) / float64(time.Millisecond) / ops
	}
	if b.local {
		rss, peak := processRSS(b.serverPID)
		res.ServerRSSMiB, res.ServerPeakRSSMiB = float64(rss)/(1<<20), float64(peak)/(1<<20)
	}
	if c.db != "" {
		var size int64
		for _, suffix := range []string{"", "-wal"} {
			if st, err := os.Stat(c.db + suffix); err == nil {
				size += st.Size()
			}
		}
		res.DBSizeMiB = float64(size) / (1 << 20)
	}
	return res, nil
}

// startProgress prints a progress line every interval until stopped.
func startProgress(ctx context.Context, b *benchRun, start time.Time, w io.Writer) func() {
	if b.cfg.progress <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(b.cfg.progress)
		defer t.Stop()
		var last int64
		for {
			select {
			case <-done:
				fmt.Fprintln(w)
				return
			case <-t.C:
				n := b.ops.Load()
				fmt.Fprintf(w, "\r%5.0fs  %d ops  %6.0f/s  errors %d  conflicts %d  events %d lost %d   ",
					time.Since(start).Seconds(), n, float64(n-last)/b.cfg.progress.Seconds(), b.errs.Load(), b.conflicts.Load(), b.events.Load(), b.lost.Load())
				last = n
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// percentiles returns p50, p99 and max in milliseconds.
func percentiles(ds []time.Duration) (p50, p99, maxMs float64) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return float64(s[max(i, 0)]) / float64(time.Millisecond)
	}
	return at(0.50), at(0.99), float64(s[len(s)-1]) / float64(time.Millisecond)
}

// ensureLease creates a lease for the benchmark or returns the existing one.
func (b *benchRun) ensureLease(ctx context.Context, name string) (*coordinationv1.Lease, error) {
	leases := b.client.CoordinationV1().Leases(b.cfg.namespace)
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/created-by": "leaselab-bench"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](40),
			AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0)},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return leases.Get(ctx, name, metav1.GetOptions{})
	}
	return l, err
}

// pacer spaces client i's operations (of clients) to reach a total rate over all clients, the
// clients staggered over one period. It returns when each operation is due, so that latency
// is measured from then: an operation that starts late because the previous one was slow
// counts its wait (no coordinated omission). Without a rate, operations are due when called.
func pacer(rate float64, clients, i int) func(ctx context.Context) (time.Time, bool) {
	if rate <= 0 {
		return func(ctx context.Context) (time.Time, bool) { return time.Now(), ctx.Err() == nil }
	}
	every := time.Duration(float64(time.Second) * float64(clients) / rate)
	next := time.Now().Add(every * time.Duration(i) / time.Duration(max(clients, 1)))
	return func(ctx context.Context) (time.Time, bool) {
		due := next
		next = next.Add(every)
		if d := time.Until(due); d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return due, false
			case <-t.C:
			}
		}
		return due, ctx.Err() == nil
	}
}

// benchRenew: each client renews its own lease as client-go's LeaseLock does, GET then PUT
// with the resourceVersion the GET returned.
func benchRenew(ctx context.Context, b *benchRun) error {
	var setupErr atomic.Pointer[error]
	if err := b.eachClient(ctx, func(ctx context.Context, i int) {
		if _, err := b.ensureLease(ctx, fmt.Sprintf("renew-%d", i)); err != nil {
			setupErr.CompareAndSwap(nil, &err)
		}
	}); err != nil {
		return err
	}
	if err := b.setupError(&setupErr); err != nil {
		return err
	}
	ctx, cancel := b.begin(ctx)
	defer cancel()
	return b.eachClient(ctx, func(ctx context.Context, i int) {
		name := fmt.Sprintf("renew-%d", i)
		leases := b.leases.session()
		wait := pacer(b.cfg.rate, b.cfg.clients, i)
		for {
			start, ok := wait(ctx)
			if !ok {
				return
			}
			l, err := leases.get(ctx, name)
			if err == nil {
				now := metav1.NewMicroTime(time.Now())
				l.Spec.RenewTime = &now
				_, err = leases.update(ctx, l)
			}
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				if !b.throttle(ctx, err) {
					b.fail(err)
				}
				continue
			}
			b.record(time.Since(start))
			b.ops.Add(1)
		}
	})
}

// benchContend: every client tries to take one lease; the losers' 409s are expected.
func benchContend(ctx context.Context, b *benchRun) error {
	if _, err := b.ensureLease(ctx, "contended"); err != nil {
		return err
	}
	ctx, cancel := b.begin(ctx)
	defer cancel()
	return b.eachClient(ctx, func(ctx context.Context, i int) {
		me := fmt.Sprintf("contender-%d", i)
		leases := b.leases.session()
		for ctx.Err() == nil {
			start := time.Now()
			l, err := leases.get(ctx, "contended")
			if err == nil {
				now := metav1.NewMicroTime(time.Now())
				if *l.Spec.HolderIdentity != me {
					l.Spec.LeaseTransitions = ptr.To(*l.Spec.LeaseTransitions + 1)
				}
				l.Spec.HolderIdentity, l.Spec.RenewTime = ptr.To(me), &now
				_, err = leases.update(ctx, l)
			}
			if ctx.Err() != nil {
				return
			}
			switch {
			case apierrors.IsConflict(err):
				b.conflicts.Add(1)
			case b.throttle(ctx, err):
				continue
			case err != nil:
				b.fail(err)
				continue
			}
			b.record(time.Since(start))
			b.ops.Add(1)
		}
	})
}

// benchHeartbeat: --leases leases each renewed every --interval, as node kubelets do: a PUT
// from the cached lease, and a GET only after a conflict.
func benchHeartbeat(ctx context.Context, b *benchRun) error {
	n := b.cfg.leases
	cached := make([]*coordinationv1.Lease, n)
	// Create the leases first (not measured), spread over the clients.
	var next atomic.Int64
	var setupErr atomic.Pointer[error]
	setup := b.eachClient(ctx, func(ctx context.Context, _ int) {
		for {
			i := int(next.Add(1)) - 1
			if i >= n || ctx.Err() != nil || setupErr.Load() != nil {
				return
			}
			l, err := b.ensureLease(ctx, fmt.Sprintf("node-%05d", i))
			if err != nil {
				setupErr.CompareAndSwap(nil, &err)
				return
			}
			cached[i] = l
		}
	})
	if setup != nil {
		return setup
	}
	if err := b.setupError(&setupErr); err != nil {
		return err
	}
	ctx, cancel := b.begin(ctx)
	defer cancel()
	start := b.start
	return b.eachClient(ctx, func(ctx context.Context, c int) {
		// Client c owns leases c, c+clients, ...; lease i beats at start + (i/n)*interval + k*interval.
		leases := b.leases.session()
		for k := 0; ; k++ {
			for i := c; i < n; i += b.cfg.clients {
				due := start.Add(time.Duration(k)*b.cfg.interval + time.Duration(float64(b.cfg.interval)*float64(i)/float64(n)))
				if d := time.Until(due); d > 0 {
					t := time.NewTimer(d)
					select {
					case <-ctx.Done():
						t.Stop()
						return
					case <-t.C:
					}
				}
				l := cached[i]
				if l == nil {
					continue
				}
				// Latency counts from when the beat was due: a late start is the server's
				// doing when the senders are all waiting for it.
				t0 := due
				now := metav1.NewMicroTime(time.Now())
				l.Spec.RenewTime = &now
				upd, err := leases.update(ctx, l)
				if apierrors.IsConflict(err) {
					b.conflicts.Add(1)
					if fresh, gerr := leases.get(ctx, l.Name); gerr == nil {
						fresh.Spec.RenewTime = &now
						upd, err = leases.update(ctx, fresh)
					}
				}
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					if !b.throttle(ctx, err) {
						b.fail(err)
					}
					continue
				}
				cached[i] = upd
				b.record(time.Since(t0))
				b.ops.Add(1)
			}
		}
	})
}

// benchWatch: --watchers watchers (chunked HTTP and WebSocket) follow the benchmark namespace
// while a writer updates leases at --rate writes per second. Latency is measured from the
// moment the writer started the write (the renewTime it wrote) to the receipt of its event,
// and every acknowledged write must reach every watcher.
func benchWatch(ctx context.Context, b *benchRun) error {
	const writeLeases = 10
	for i := 0; i < writeLeases; i++ {
		if _, err := b.ensureLease(ctx, fmt.Sprintf("watched-%d", i)); err != nil {
			return err
		}
	}
	list, err := b.client.CoordinationV1().Leases(b.cfg.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	fromRV := list.ResourceVersion

	// Watchers record which resourceVersions they saw, in the order they came: a watch
	// delivers in revision order.
	type seenSet struct {
		mu  sync.Mutex
		rvs []int64
		at  []int64 // receipt of rvs[i], unix nanoseconds
	}
	seen := make([]*seenSet, b.cfg.watchers)
	ready := make(chan struct{}, b.cfg.watchers)
	var wg sync.WaitGroup
	onEvent := func(s *seenSet, ev watchedLease, at time.Time) {
		if !ev.renewTime.IsZero() {
			b.record(at.Sub(ev.renewTime))
		}
		b.events.Add(1)
		s.mu.Lock()
		s.rvs = append(s.rvs, ev.revision)
		s.at = append(s.at, at.UnixNano())
		s.mu.Unlock()
	}
	watchCtx, stopWatchers := context.WithCancel(context.Background())
	defer stopWatchers()
	wsCount := int(math.Round(float64(b.cfg.watchers) * b.cfg.wsShare))
	for w := 0; w < b.cfg.watchers; w++ {
		s := &seenSet{}
		seen[w] = s
		wg.Add(1)
		go func(useWS bool) {
			defer wg.Done()
			var err error
			on := func(ev watchedLease, at time.Time) { onEvent(s, ev, at) }
			if useWS {
				err = b.watchWebSocket(watchCtx, fromRV, ready, on)
			} else {
				err = b.watchHTTP(watchCtx, fromRV, ready, on)
			}
			if err != nil && watchCtx.Err() == nil {
				b.fail(fmt.Errorf("watch: %w", err))
			}
		}(w < wsCount)
	}
	for i := 0; i < b.cfg.watchers; i++ {
		select {
		case <-ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	rate := b.cfg.rate
	if rate <= 0 {
		rate = 100
	}
	writeCtx, cancel := b.begin(ctx)
	defer cancel()
	// One writer per lease, together at --rate: a write waits for its commit, so a single
	// writer could not keep the rate when commits are slow.
	var (
		ackedMu sync.Mutex
		acked   []int64
		ackedAt = map[int64]int64{} // revision -> acknowledgement, unix nanoseconds
	)
	var writers sync.WaitGroup
	for w := 0; w < writeLeases; w++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			name := fmt.Sprintf("watched-%d", w)
			leases := b.leases.session()
			wait := pacer(rate, writeLeases, w)
			for {
				if _, ok := wait(writeCtx); !ok {
					return
				}
				l, err := leases.get(writeCtx, name)
				var start time.Time
				if err == nil {
					start = time.Now()
					now := metav1.NewMicroTime(start)
					l.Spec.RenewTime = &now
					l, err = leases.update(writeCtx, l)
				}
				if writeCtx.Err() != nil {
					return
				}
				if err != nil {
					if !b.throttle(writeCtx, err) {
						b.fail(err)
					}
					continue
				}
				took := time.Since(start)
				b.mu.Lock()
				b.writes = append(b.writes, took)
				b.mu.Unlock()
				rev, err := strconv.ParseInt(l.ResourceVersion, 10, 64)
				if err != nil {
					b.fail(err)
					continue
				}
				ackedMu.Lock()
				acked = append(acked, rev)
				ackedAt[rev] = start.Add(took).UnixNano()
				ackedMu.Unlock()
				b.ops.Add(1)
			}
		}()
	}
	writers.Wait()
	b.end()
	// Give the last events a moment to arrive, then count what each watcher missed.
	grace := time.Now().Add(5 * time.Second)
	slices.Sort(acked)
	for {
		missing := int64(0)
		for _, s := range seen {
			s.mu.Lock()
			missing += int64(missingFrom(acked, s.rvs))
			s.mu.Unlock()
		}
		if missing == 0 || time.Now().After(grace) {
			b.lost.Store(missing)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	stopWatchers()
	wg.Wait()
	// Delivery after the acknowledgement: the commit came before it, so this is the lower
	// bound of the time from commit to receipt (an event that beat its acknowledgement
	// counts 0), as the latency from the write's start is the upper one.
	var afterAck []time.Duration
	for _, s := range seen {
		for i, rv := range s.rvs {
			if ack, ok := ackedAt[rv]; ok {
				afterAck = append(afterAck, time.Duration(max(s.at[i]-ack, 0)))
			}
		}
	}
	b.mu.Lock()
	b.afterAck = afterAck
	b.mu.Unlock()
	return nil
}

// missingFrom counts the revisions of want (ascending) that got (ascending) lacks.
func missingFrom(want, got []int64) int {
	missing, j := 0, 0
	for _, rv := range want {
		for j < len(got) && got[j] < rv {
			j++
		}
		if j == len(got) || got[j] != rv {
			missing++
		}
	}
	return missing
}

// eachClient runs f in --clients goroutines and waits for them.
func (b *benchRun) eachClient(ctx context.Context, f func(ctx context.Context, i int)) error {
	var wg sync.WaitGroup
	for i := 0; i < b.cfg.clients; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); f(ctx, i) }()
	}
	wg.Wait()
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ctx.Err()
	}
	return nil
}

// localServerPID finds the process listening on a loopback server's port through /proc. It
// reports false for remote servers or where /proc is missing.
func localServerPID(host string) (string, bool) {
	u, err := url.Parse(host)
	if err != nil {
		return "", false
	}
	h, p := u.Hostname(), u.Port()
	if ip := net.ParseIP(h); !(h == "localhost" || ip != nil && ip.IsLoopback()) || p == "" {
		return "", false
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", false
	}
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			// local_address is HEXIP:HEXPORT; state 0A is LISTEN.
			if len(fields) < 10 || fields[3] != "0A" {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			if n, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(n) == port {
				inodes["socket:["+fields[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return "", false
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		target, err := os.Readlink(fd)
		if err == nil && inodes[target] {
			return strings.Split(fd, "/")[2], true
		}
	}
	return "", false
}

// processRSS returns the resident memory of a process and its peak, from /proc/PID/status.
func processRSS(pid string) (rss, peak int64) {
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, 0
	}
	kb := func(v string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		return n << 10
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = kb(v)
		}
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			peak = kb(v)
		}
	}
	return rss, peak
}

// processCPU returns the user and system CPU time a process ("self" for this one) has used,
// from /proc/PID/stat.
func processCPU(pid string) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: fields are counted after it.
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok {
		return 0, false
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	// Clock ticks: USER_HZ is 100 on every Linux architecture Go supports.
	return time.Duration(utime+stime) * (time.Second / 100), true
}
