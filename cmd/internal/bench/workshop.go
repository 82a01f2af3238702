package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// WorkshopParticipant is one participant of a workshop: the user a join link signs in.
type WorkshopParticipant struct {
	// Name is the user name (participant-01); Namespace is the participant's own, where its
	// tabs' leases are written.
	Name, Namespace string
	// Token is the participant's bearer token.
	Token string
}

// WorkshopConfig configures RunWorkshop: a server in workshop mode and who takes part.
type WorkshopConfig struct {
	// URL is the server's base URL (https://127.0.0.1:8443).
	URL string
	// CA is the PEM certificate authority of an HTTPS server (its self-signed certificate); nil
	// for the system's roots.
	CA []byte
	// Instructor is the instructor's token; Participants are the participants taking part.
	Instructor   string
	Participants []WorkshopParticipant
	// Tabs is the number of candidate tabs each participant opens, each with a lease of its
	// own in the participant's namespace.
	Tabs int
	// LeaseDuration, RenewDeadline and RetryPeriod are the tabs' timings; zero means the
	// candidate tab's defaults, 10, 7 and 2 s.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Duration is how long the measured part runs, once every tab leads its lease and every
	// dashboard follows the server.
	Duration time.Duration
	// ServerPID is the server's process, for its CPU and memory; empty to find a local
	// server's by its port, or for none.
	ServerPID string
	// Progress receives a line per phase of the run; nil for none.
	Progress io.Writer
	// Room makes the run a conference room instead (RunRoom): every participant is one phone
	// with one candidate tab, all on the arena's lease, with the instructor's dashboard and the
	// projector's stage of that lease; Tabs is 1.
	Room bool
}

// WorkshopReport is what RunWorkshop measured. WriteTo prints it as `leaselab bench workshop`
// does; it marshals to the JSON of `--json`, whose field names scripts rely on (renewP99Ms,
// dashboardP99Ms, serverRssMiB and errors are a contract): they must not change.
type WorkshopReport struct {
	Server       string  `json:"server"`
	Participants int     `json:"participants"`
	Tabs         int     `json:"tabs"`
	DurationSec  float64 `json:"durationSeconds"`
	// Renewals counts the tabs' renewals in the measured part; RenewP50Ms and RenewP99Ms are
	// their latency, from the GET that begins a renewal to the answer of its PUT.
	Renewals     int64   `json:"renewals"`
	RenewalsPerS float64 `json:"renewalsPerSecond"`
	RenewP50Ms   float64 `json:"renewP50Ms"`
	RenewP99Ms   float64 `json:"renewP99Ms"`
	RenewMaxMs   float64 `json:"renewMaxMs"`
	// DashboardUpdates counts the (write, dashboard) pairs delivered: every renewal reaches the
	// lease card of every open dashboard that shows it (the instructor's, which shows every
	// namespace, and its participant's, which opens on the participant's own). The latency
	// counts from the start of the write (its PUT) to the dashboard's receipt of the card.
	DashboardUpdates int64   `json:"dashboardUpdates"`
	DashboardP50Ms   float64 `json:"dashboardP50Ms"`
	DashboardP99Ms   float64 `json:"dashboardP99Ms"`
	DashboardMaxMs   float64 `json:"dashboardMaxMs"`
	// APIWatchP50Ms and APIWatchP99Ms are the same writes reaching each participant's API
	// watch of its namespace's leases over a WebSocket (as the lease page follows a lease),
	// counted from the renewTime the tab wrote.
	// StageUpdates counts the room lease's writes the projector's stage drew (RunRoom);
	// StageP50Ms and StageP99Ms count from the start of the write (its PUT) to the stage's
	// picture showing its resourceVersion, or a newer one.
	StageUpdates   int64   `json:"stageUpdates"`
	StageP50Ms     float64 `json:"stageP50Ms"`
	StageP99Ms     float64 `json:"stageP99Ms"`
	APIWatchEvents int64   `json:"apiWatchEvents"`
	APIWatchP50Ms  float64 `json:"apiWatchP50Ms"`
	APIWatchP99Ms  float64 `json:"apiWatchP99Ms"`
	// TabReports counts the tabs' reports the instructor's dashboard showed; TabReportP50Ms and
	// TabReportP99Ms count from the tab sending a report to the instructor's tab list holding
	// it (or a newer report of the same tab).
	TabReports     int64   `json:"tabReports"`
	TabReportP50Ms float64 `json:"tabReportP50Ms"`
	TabReportP99Ms float64 `json:"tabReportP99Ms"`
	// TabListBytes is what each dashboard received of the tab lists per second, on average.
	TabListBytesPerS float64 `json:"tabListBytesPerSecond"`
	// ServerCPUCores is the server's CPU time (user and system) over the measured part divided
	// by its length: 1 is one core busy. ServerCPUPerRenewalMs divides it by the renewals.
	ServerCPUCores        float64 `json:"serverCpuCores"`
	ServerCPUPerRenewalMs float64 `json:"serverCpuPerRenewalMs"`
	ServerRSSMiB          float64 `json:"serverRssMiB"`
	ServerPeakRSSMiB      float64 `json:"serverPeakRssMiB"`
	ClientCPUCores        float64 `json:"clientCpuCores"`
	// Errors counts what went wrong: failed requests, WebSockets that broke or were dropped,
	// tabs that lost their lease, and deliveries a dashboard never got (also in Lost).
	Errors     int64            `json:"errors"`
	ErrorKinds map[string]int64 `json:"errorKinds,omitempty"`
	FirstError string           `json:"firstError,omitempty"`
	Lost       int64            `json:"lost"`
}

// workshopRun is the shared state of one RunWorkshop.
type workshopRun struct {
	cfg      WorkshopConfig
	progress io.Writer
	// api carries each participant's API requests, as one browser's fetches share its
	// connections (HTTP/2 over TLS where the server offers it; leaselab offers HTTP/1.1 only);
	// ws dials WebSockets, each on a connection of its own.
	api      map[string]*http.Client // by participant name
	ws       *http.Client
	leases   map[string]*leaseWrites // by namespace/name, fixed after setup
	tabs     map[string]*simTab      // by identity, fixed after setup
	measure  atomic.Bool
	failures failures

	renewals   atomic.Int64
	renew      samples
	dashboard  samples
	apiWatch   samples
	tabReports samples
	tabBytes   atomic.Int64 // tab list bytes received by all dashboards while measuring
	stage      samples      // the room's writes until the stage drew them
	room       roomWrites

	// startNs and endNs bound the measured part, unix nanoseconds; 0 until known.
	startNs, endNs atomic.Int64
}

// RunWorkshop puts on the server what a workshop does: every participant opens cfg.Tabs
// candidate tabs (the browser candidate, wasm/candidate, run natively with the tab's timings),
// each renewing a lease of its own in the participant's namespace and reporting to the tab
// hub as a tab does, and follows the room on a dashboard (the board's lease cards, the tab
// list, the namespaces' API watch) and its leases on an API watch; the instructor's dashboard
// follows everything. Once every tab leads, it measures for cfg.Duration: renewal latency,
// each write until every dashboard has it, each tab report until the instructor's dashboard
// has it, the server's CPU and memory, and errors. It returns an error when the setup fails
// (a tab that never leads, a dashboard that cannot connect) or ctx ends before it is done.
func RunWorkshop(ctx context.Context, cfg WorkshopConfig) (*WorkshopReport, error) {
	w, err := newWorkshopRun(cfg)
	if err != nil {
		return nil, err
	}
	defer w.closeIdleConnections()
	cfg = w.cfg
	pid, local := cfg.ServerPID, cfg.ServerPID != ""
	if !local {
		pid, local = localServerPID(cfg.URL)
	}
	all := w.newTabs()

	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	dashes, err := w.connectDashboards(ctx, sctx, &wg)
	if err != nil {
		return nil, err
	}
	if cfg.Room {
		connected := make(chan error, 1)
		wg.Go(func() { w.followStage(sctx, connected) })
		if err := <-connected; err != nil {
			return nil, fmt.Errorf("the projector's stage: %w", err)
		}
	}
	if err := w.openTabs(ctx, sctx, &wg, all); err != nil {
		return nil, err
	}

	fmt.Fprintf(w.progress, "measuring for %s\n", cfg.Duration)
	m, err := w.measureFor(ctx, pid, local)
	if err != nil {
		return nil, err
	}
	// The last writes of the measured part get a moment to reach every dashboard, and the
	// stage (which may show a write up to a redraw interval after it).
	toDashboards := func() (n int64) {
		for _, d := range dashes {
			n += d.missing(m.start, m.end)
		}
		return n
	}
	toStage := func() int64 {
		if !cfg.Room {
			return 0
		}
		return w.room.missing(m.start, m.end)
	}
	awaitNone(5*time.Second, func() int64 { return toDashboards() + toStage() })
	lost := toDashboards()
	if n := toStage(); n > 0 {
		lost += n
		w.failures.addN("stage", n, fmt.Errorf("%d writes never reached the stage", n))
	}
	if lost > 0 {
		w.failures.addN("lost", lost, fmt.Errorf("%d deliveries of writes to dashboards never arrived", lost))
	}
	for _, t := range all {
		if t.lostLead.Load() {
			w.failures.addN("lost lease", 1, fmt.Errorf("tab %s: %w", t.identity, errLostLead))
		}
	}
	cancel()
	wg.Wait()
	return w.report(m, lost, len(dashes)), nil
}

// newWorkshopRun checks cfg, fills in its defaults and makes the run's HTTP clients.
func newWorkshopRun(cfg WorkshopConfig) (*workshopRun, error) {
	if cfg.Room {
		cfg.Tabs = 1
	}
	if cfg.Tabs < 1 || len(cfg.Participants) == 0 {
		return nil, fmt.Errorf("%d participants with %d tabs: want at least one of each", len(cfg.Participants), cfg.Tabs)
	}
	if cfg.Duration <= 0 {
		return nil, fmt.Errorf("duration %s: want more than 0", cfg.Duration)
	}
	cfg.LeaseDuration = orDefault(cfg.LeaseDuration, 10*time.Second)
	cfg.RenewDeadline = orDefault(cfg.RenewDeadline, 7*time.Second)
	cfg.RetryPeriod = orDefault(cfg.RetryPeriod, 2*time.Second)
	cfg.URL = strings.TrimRight(cfg.URL, "/")
	w := &workshopRun{cfg: cfg, progress: cfg.Progress, api: map[string]*http.Client{},
		leases: map[string]*leaseWrites{}, tabs: map[string]*simTab{}}
	if w.progress == nil {
		w.progress = io.Discard
	}
	tlsConfig, err := workshopTLS(cfg.CA)
	if err != nil {
		return nil, err
	}
	w.ws = &http.Client{Transport: workshopTransport(tlsConfig, false)}
	for _, p := range cfg.Participants {
		w.api[p.Name] = &http.Client{Transport: workshopTransport(tlsConfig, true)}
	}
	return w, nil
}

// closeIdleConnections closes the connections the run's clients keep.
func (w *workshopRun) closeIdleConnections() {
	for _, c := range w.api {
		c.CloseIdleConnections()
	}
	w.ws.CloseIdleConnections()
}

// newTabs makes every participant's tabs. The tabs and their leases are known before anything
// connects: the dashboards match the cards they receive against the writes.
func (w *workshopRun) newTabs() []*simTab {
	var all []*simTab
	for _, p := range w.cfg.Participants {
		for i := 1; i <= w.cfg.Tabs; i++ {
			t := w.newTab(p, i)
			w.tabs[t.identity] = t
			w.leases[t.namespace+"/"+t.lease] = t.writes
			all = append(all, t)
		}
	}
	return all
}

// connectDashboards opens the instructor's dashboard and every participant's, running until
// sctx ends, and waits until each is connected or ctx ends.
func (w *workshopRun) connectDashboards(ctx, sctx context.Context, wg *sync.WaitGroup) ([]*dashboard, error) {
	dashes := []*dashboard{w.newDashboard("instructor", w.cfg.Instructor, "", true)}
	if w.cfg.Room {
		fmt.Fprintf(w.progress, "connecting the instructor's dashboard and the projector's stage\n")
	} else {
		fmt.Fprintf(w.progress, "connecting %d dashboards\n", len(w.cfg.Participants)+1)
	}
	for _, p := range w.cfg.Participants {
		if w.cfg.Room {
			break // phones open a candidate tab, not a dashboard
		}
		dashes = append(dashes, w.newDashboard(p.Name, p.Token, p.Namespace, false))
	}
	for _, d := range dashes {
		wg.Go(func() { d.run(sctx) })
	}
	for _, d := range dashes {
		if err := d.awaitConnected(ctx); err != nil {
			return nil, fmt.Errorf("dashboard of %s: %w", d.user, err)
		}
	}
	return dashes, nil
}

// openTabs starts the tabs, running until sctx ends, and waits until each leads its lease.
func (w *workshopRun) openTabs(ctx, sctx context.Context, wg *sync.WaitGroup, all []*simTab) error {
	fmt.Fprintf(w.progress, "opening %d candidate tabs (%d participants x %d)\n", len(all), len(w.cfg.Participants), w.cfg.Tabs)
	// People open their tabs over a few seconds, not all in the same millisecond.
	spread := w.cfg.RetryPeriod
	for i, t := range all {
		wg.Go(func() {
			if !sleepUntil(sctx, time.Now().Add(spread*time.Duration(i)/time.Duration(len(all)))) {
				return
			}
			t.run(sctx)
		})
	}
	if w.cfg.Room {
		return w.awaitRoom(ctx, all)
	}
	leadBy := time.Now().Add(w.cfg.LeaseDuration + 2*time.Minute)
	for _, t := range all {
		if err := t.awaitLeader(ctx, leadBy); err != nil {
			return fmt.Errorf("tab %s: %w", t.identity, err)
		}
	}
	return nil
}

// measurement is the measured part of a run: its bounds, the CPU time the server (when local)
// and this process spent in it, and the server's memory at its end.
type measurement struct {
	start, end           time.Time
	serverCPU, clientCPU time.Duration
	local                bool
	rss, peakRSS         int64
}

// measureFor counts what the tabs and dashboards see for cfg.Duration, and the CPU time of the
// server (process pid, when local) and of this process.
func (w *workshopRun) measureFor(ctx context.Context, pid string, local bool) (measurement, error) {
	m := measurement{local: local}
	if local {
		m.serverCPU, _ = processCPU(pid)
	}
	m.clientCPU, _ = processCPU("self")
	m.start = time.Now()
	w.startNs.Store(m.start.UnixNano())
	w.measure.Store(true)
	if !sleepUntil(ctx, m.start.Add(w.cfg.Duration)) {
		return measurement{}, ctx.Err()
	}
	w.measure.Store(false)
	m.end = time.Now()
	w.endNs.Store(m.end.UnixNano())
	if cpu, ok := processCPU(pid); local && ok {
		m.serverCPU = cpu - m.serverCPU
	} else {
		m.serverCPU = 0
	}
	if cpu, ok := processCPU("self"); ok {
		m.clientCPU = cpu - m.clientCPU
	}
	if local {
		m.rss, m.peakRSS = processRSS(pid)
	}
	return m, nil
}

// report is the run's report: the measurement m, the samples the run took, lost deliveries and
// the errors, the tab list bytes averaged over the dashboards.
func (w *workshopRun) report(m measurement, lost int64, dashboards int) *WorkshopReport {
	cfg := w.cfg
	elapsed := m.end.Sub(m.start)
	rep := &WorkshopReport{Server: cfg.URL, Participants: len(cfg.Participants), Tabs: cfg.Tabs, DurationSec: elapsed.Seconds()}
	if m.local {
		rep.ServerRSSMiB, rep.ServerPeakRSSMiB = float64(m.rss)/(1<<20), float64(m.peakRSS)/(1<<20)
	}
	rep.Renewals = w.renewals.Load()
	rep.RenewalsPerS = float64(rep.Renewals) / elapsed.Seconds()
	rep.RenewP50Ms, rep.RenewP99Ms, rep.RenewMaxMs = w.renew.percentiles()
	rep.DashboardUpdates = int64(w.dashboard.len())
	rep.DashboardP50Ms, rep.DashboardP99Ms, rep.DashboardMaxMs = w.dashboard.percentiles()
	rep.StageUpdates = int64(w.stage.len())
	rep.StageP50Ms, rep.StageP99Ms, _ = w.stage.percentiles()
	rep.APIWatchEvents = int64(w.apiWatch.len())
	rep.APIWatchP50Ms, rep.APIWatchP99Ms, _ = w.apiWatch.percentiles()
	rep.TabReports = int64(w.tabReports.len())
	rep.TabReportP50Ms, rep.TabReportP99Ms, _ = w.tabReports.percentiles()
	rep.TabListBytesPerS = float64(w.tabBytes.Load()) / elapsed.Seconds() / float64(dashboards)
	rep.ServerCPUCores = m.serverCPU.Seconds() / elapsed.Seconds()
	rep.ClientCPUCores = m.clientCPU.Seconds() / elapsed.Seconds()
	if rep.Renewals > 0 {
		rep.ServerCPUPerRenewalMs = float64(m.serverCPU) / float64(time.Millisecond) / float64(rep.Renewals)
	}
	rep.Lost = lost
	rep.Errors = w.failures.n.Load()
	w.failures.mu.Lock()
	if w.failures.first != nil {
		rep.FirstError, rep.ErrorKinds = w.failures.first.Error(), w.failures.kinds
	}
	w.failures.mu.Unlock()
	return rep
}

// errLostLead is a tab that stopped leading its lease during the run: nothing else competes
// for it, so only a renewal that came too late can have lost it.
var errLostLead = errors.New("lost its lease")

// fail counts a failure of kind (a short word for the report) while the run measures; setup
// and the end of the run are not counted.
func (w *workshopRun) fail(kind string, err error) {
	if !w.measure.Load() {
		return
	}
	w.failures.addN(kind, 1, err)
}

// inWindow says whether t lies in the measured part (so far).
func (w *workshopRun) inWindow(t time.Time) bool {
	start, end, ns := w.startNs.Load(), w.endNs.Load(), t.UnixNano()
	return start != 0 && ns >= start && (end == 0 || ns < end)
}

// awaitNone waits up to grace for missing to count nothing more to arrive.
func awaitNone(grace time.Duration, missing func() int64) {
	for deadline := time.Now().Add(grace); missing() > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// workshopTLS is the TLS configuration of the clients: the server's CA when given.
func workshopTLS(caPEM []byte) (*tls.Config, error) {
	if caPEM == nil {
		return nil, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("the certificate authority holds no PEM certificate")
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// workshopTransport is a browser's transport: HTTP/2 over TLS for API requests (h2, where the
// server offers it), or
// HTTP/1.1 only, for WebSockets, which need a connection each.
func workshopTransport(tlsConfig *tls.Config, h2 bool) *http.Transport {
	t := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   h2,
	}
	if !h2 {
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return t
}

// WriteTo writes the report as `leaselab bench workshop` prints it; it implements io.WriterTo.
func (r *WorkshopReport) WriteTo(out io.Writer) (int64, error) {
	var b bytes.Buffer
	if r.StageUpdates > 0 {
		fmt.Fprintf(&b, "room        %d phones, one candidate each on %s/%s, against %s, %.1f s measured\n", r.Participants, roomNamespace, roomLease, r.Server, r.DurationSec)
		fmt.Fprintf(&b, "stage       %d updates  p50 %.2f ms  p99 %.2f ms  (a write until the projector's stage draws it)\n", r.StageUpdates, r.StageP50Ms, r.StageP99Ms)
	} else {
		fmt.Fprintf(&b, "workshop    %d participants x %d tabs against %s, %.1f s measured\n", r.Participants, r.Tabs, r.Server, r.DurationSec)
	}
	fmt.Fprintf(&b, "renewals    %d (%.0f/s)  p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", r.Renewals, r.RenewalsPerS, r.RenewP50Ms, r.RenewP99Ms, r.RenewMaxMs)
	fmt.Fprintf(&b, "dashboards  %d updates  p50 %.2f ms  p99 %.2f ms  max %.2f ms  (a write until a dashboard's card has it)\n",
		r.DashboardUpdates, r.DashboardP50Ms, r.DashboardP99Ms, r.DashboardMaxMs)
	fmt.Fprintf(&b, "API watch   %d events  p50 %.2f ms  p99 %.2f ms  (participants' WebSocket watches of their leases)\n", r.APIWatchEvents, r.APIWatchP50Ms, r.APIWatchP99Ms)
	fmt.Fprintf(&b, "tab reports %d  p50 %.2f ms  p99 %.2f ms  (a tab's report until the instructor's dashboard has it)\n", r.TabReports, r.TabReportP50Ms, r.TabReportP99Ms)
	fmt.Fprintf(&b, "tab lists   %.0f KiB/s to each dashboard\n", r.TabListBytesPerS/1024)
	if r.ServerRSSMiB > 0 {
		fmt.Fprintf(&b, "server      CPU %.2f cores (%.3f ms per renewal)  RSS %.1f MiB (peak %.1f MiB)\n", r.ServerCPUCores, r.ServerCPUPerRenewalMs, r.ServerRSSMiB, r.ServerPeakRSSMiB)
	}
	fmt.Fprintf(&b, "load        CPU %.2f cores (this process: the tabs, dashboards and their TLS)\n", r.ClientCPUCores)
	fmt.Fprintf(&b, "lost        %d\n", r.Lost)
	(&Report{Errors: r.Errors, ErrorKinds: r.ErrorKinds, FirstError: r.FirstError}).writeErrors(&b)
	n, err := out.Write(b.Bytes())
	return int64(n), err
}
