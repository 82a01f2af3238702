package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// Report is what a run measured. WriteTo prints it as the table of `leaselab bench`; it
// marshals to the JSON of `leaselab bench --json`, whose field names scripts and
// BENCHMARKS.md rely on: they must not change.
type Report struct {
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
}

// report builds the report of a run that has ended.
func (r *runner) report(w workload) *Report {
	ops := r.ops.Load()
	rep := &Report{
		Workload:    w.name,
		Server:      r.server,
		Clients:     r.cfg.Clients,
		DurationSec: r.elapsed.Seconds(),
		Ops:         ops,
		OpsPerSec:   float64(ops) / r.elapsed.Seconds(),
		Errors:      r.failures.n.Load(),
		Throttled:   r.throttled.Load(),
		Conflicts:   r.conflicts.Load(),
		Events:      r.events.Load(),
		EventsLost:  r.lost.Load(),
	}
	if w.name == "watch" {
		rep.Watchers = r.cfg.Watchers
	}
	r.failures.mu.Lock()
	if r.failures.first != nil {
		rep.FirstError, rep.ErrorKinds = r.failures.first.Error(), r.failures.kinds
	}
	r.failures.mu.Unlock()
	rep.P50Ms, rep.P99Ms, rep.MaxMs = r.latencies.percentiles()
	rep.WriteP50Ms, rep.WriteP99Ms, _ = r.writes.percentiles()
	rep.AfterAckP50Ms, rep.AfterAckP99Ms, _ = r.afterAck.percentiles()
	if ops > 0 {
		rep.ClientCPUPerOpMs = float64(r.clientCPU) / float64(time.Millisecond) / float64(ops)
		rep.ServerCPUPerOpMs = float64(r.serverCPU) / float64(time.Millisecond) / float64(ops)
	}
	if r.local {
		rss, peak := processRSS(r.serverPID)
		rep.ServerRSSMiB, rep.ServerPeakRSSMiB = float64(rss)/(1<<20), float64(peak)/(1<<20)
	}
	if r.cfg.DB != "" {
		rep.DBSizeMiB = float64(fileSize(r.cfg.DB, r.cfg.DB+"-wal")) / (1 << 20)
	}
	return rep
}

// fileSize returns the total size of the files at paths that exist.
func fileSize(paths ...string) int64 {
	var size int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			size += st.Size()
		}
	}
	return size
}

// WriteTo writes the report as the table `leaselab bench` prints; it implements io.WriterTo.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "workload    %s against %s\n", r.Workload, r.Server)
	if r.Workload == "watch" {
		fmt.Fprintf(&b, "watchers    %d for %.1f s\n", r.Watchers, r.DurationSec)
	} else {
		fmt.Fprintf(&b, "clients     %d for %.1f s\n", r.Clients, r.DurationSec)
	}
	ops := "operations"
	if wl, ok := lookupWorkload(r.Workload); ok {
		ops = wl.ops
	}
	fmt.Fprintf(&b, "%-11s %d (%.0f/s)\n", ops, r.Ops, r.OpsPerSec)
	if r.Events > 0 || r.Workload == "watch" {
		fmt.Fprintf(&b, "events      %d received, %d lost\n", r.Events, r.EventsLost)
	}
	if r.Conflicts > 0 || r.Workload == "contend" {
		fmt.Fprintf(&b, "conflicts   %d\n", r.Conflicts)
	}
	if r.Throttled > 0 {
		fmt.Fprintf(&b, "throttled   %d (429, waited as Retry-After asked)\n", r.Throttled)
	}
	r.writeErrors(&b)
	fmt.Fprintf(&b, "latency     p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", r.P50Ms, r.P99Ms, r.MaxMs)
	if r.Workload == "watch" {
		fmt.Fprintf(&b, "            from the start of each write, which took p50 %.2f ms  p99 %.2f ms;\n", r.WriteP50Ms, r.WriteP99Ms)
		fmt.Fprintf(&b, "            from its acknowledgement: p50 %.2f ms  p99 %.2f ms\n", r.AfterAckP50Ms, r.AfterAckP99Ms)
	}
	if r.ServerRSSMiB > 0 {
		fmt.Fprintf(&b, "server RSS  %.1f MiB (peak %.1f MiB)\n", r.ServerRSSMiB, r.ServerPeakRSSMiB)
	}
	if r.ServerCPUPerOpMs > 0 {
		fmt.Fprintf(&b, "CPU per op  server %.3f ms  client %.3f ms\n", r.ServerCPUPerOpMs, r.ClientCPUPerOpMs)
	}
	if r.DBSizeMiB > 0 {
		fmt.Fprintf(&b, "database    %.1f MiB\n", r.DBSizeMiB)
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// writeErrors writes the errors line: the count, the kinds in a stable order, and the first
// error's message.
func (r *Report) writeErrors(b *bytes.Buffer) {
	fmt.Fprintf(b, "errors      %d", r.Errors)
	if len(r.ErrorKinds) > 0 {
		kinds := make([]string, 0, len(r.ErrorKinds))
		for k, n := range r.ErrorKinds {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		slices.Sort(kinds)
		fmt.Fprintf(b, " (%s)", strings.Join(kinds, ", "))
	}
	fmt.Fprintln(b)
	if r.FirstError != "" {
		fmt.Fprintf(b, "            first: %s\n", r.FirstError)
	}
}
