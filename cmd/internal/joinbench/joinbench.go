// Package joinbench is `leaselab bench join`: what a phone waits for from opening a lease's join
// link (/play?namespace=…&lease=…) until its tab is a candidate, measured in a headless Chromium
// over an emulated network (DevTools' presets), each run in a fresh browser context, so with an
// empty cache, as a phone that scans the QR code for the first time.
package joinbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Network is an emulated network: Chromium's Network.emulateNetworkConditionsByRule with one
// rule for every request.
type Network struct {
	Name string `json:"name"`
	// LatencyMs is the least time from a request's start to its response's headers.
	LatencyMs float64 `json:"latencyMs"`
	// Download and Upload are throughputs in bytes a second; 0: not limited.
	Download float64 `json:"downloadBytesPerSec"`
	Upload   float64 `json:"uploadBytesPerSec"`
}

// Networks are the networks a run can emulate: DevTools' presets "Fast 3G" and "Slow 3G" (the
// figures of its SDK's NetworkManager: 1.6 Mbit/s down and 750 kbit/s up at 90 %, 150 ms × 3.75;
// 500 kbit/s both ways at 80 %, 400 ms × 5), and none.
var Networks = []Network{
	{Name: "none"},
	{Name: "fast3g", LatencyMs: 150 * 3.75, Download: 1.6 * 1000 * 1000 / 8 * .9, Upload: 750 * 1000 / 8 * .9},
	{Name: "slow3g", LatencyMs: 400 * 5, Download: 500 * 1000 / 8 * .8, Upload: 500 * 1000 / 8 * .8},
}

// NetworkNames are the names of Networks, in order.
func NetworkNames() []string {
	names := make([]string, len(Networks))
	for i, n := range Networks {
		names[i] = n.Name
	}
	return names
}

// Config is one measurement.
type Config struct {
	// URL is the server's base URL.
	URL string
	// Namespace and Lease are the lease the join link names.
	Namespace, Lease string
	// Runs is how many times a phone joins, each in a fresh browser context.
	Runs int
	// Network is the name of one of Networks.
	Network string
	// Chromium is the browser's path; empty: the first of chromium.Names on PATH.
	Chromium string
	// AcceptEncoding, when set, replaces the Accept-Encoding of the page's requests (not its
	// worker's): "gzip, deflate" is a browser that takes no Brotli, as on plain HTTP off
	// loopback.
	AcceptEncoding string
	// Timeout bounds each run.
	Timeout time.Duration
	// Progress, when not nil, gets a line a run.
	Progress io.Writer
}

// JoinPath is the join link of a lease, as the dashboard's card and QR code give it.
func JoinPath(namespace, lease string) string {
	return "/play?" + url.Values{"namespace": {namespace}, "lease": {lease}}.Encode()
}

// Run is one phone joining.
type Run struct {
	// CandidateMs is the time from the navigation's start until the tab showed follower or
	// leader; State is which.
	CandidateMs float64 `json:"candidateMs"`
	State       string  `json:"state"`
	// WasmMs is when the candidate's wasm had arrived, ReadyMs when its program ran (compiled,
	// started: its worker's "ready"), from the same start (0: not seen).
	WasmMs  float64 `json:"wasmMs"`
	ReadyMs float64 `json:"readyMs"`
	// Bytes is what came over the network, headers included, until the tab was a candidate;
	// Requests counts the requests.
	Bytes    int64 `json:"bytes"`
	Requests int   `json:"requests"`
	// WasmBytes is the wasm's body as it came (compressed: Brotli over HTTPS, else gzip),
	// WasmRawBytes decoded.
	WasmBytes    int64 `json:"wasmBytes"`
	WasmRawBytes int64 `json:"wasmRawBytes"`
}

// Report is the measurement's result. Its JSON field names do not change.
type Report struct {
	URL     string  `json:"url"`
	Network Network `json:"network"`
	Runs    []Run   `json:"runs"`
	// MedianMs, MinMs and MaxMs are of the runs' CandidateMs; WasmMedianMs of their WasmMs.
	MedianMs     float64 `json:"medianMs"`
	MinMs        float64 `json:"minMs"`
	MaxMs        float64 `json:"maxMs"`
	WasmMedianMs float64 `json:"wasmMedianMs"`
	// Bytes is the median of the runs' Bytes; WasmBytes and WasmRawBytes are the last run's.
	Bytes        int64  `json:"bytes"`
	WasmBytes    int64  `json:"wasmBytes"`
	WasmRawBytes int64  `json:"wasmRawBytes"`
	Chromium     string `json:"chromium"`
}

// lookupNetwork returns the network named name.
func lookupNetwork(name string) (Network, error) {
	for _, n := range Networks {
		if n.Name == name {
			return n, nil
		}
	}
	return Network{}, fmt.Errorf("--network %q: want %s", name, strings.Join(NetworkNames(), ", "))
}

// Measure runs cfg.Runs phones one after another and reports.
func Measure(ctx context.Context, cfg Config) (*Report, error) {
	nw, err := lookupNetwork(cfg.Network)
	if err != nil {
		return nil, err
	}
	if cfg.Runs < 1 {
		return nil, errors.New("no runs")
	}
	rep := &Report{URL: cfg.URL + JoinPath(cfg.Namespace, cfg.Lease), Network: nw}
	b, err := startBrowser(ctx, cfg.Chromium)
	if err != nil {
		return nil, err
	}
	defer b.stop()
	rep.Chromium = b.version
	for i := range cfg.Runs {
		r, err := b.join(ctx, rep.URL, nw, cfg)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		rep.Runs = append(rep.Runs, r)
		rep.WasmBytes, rep.WasmRawBytes = r.WasmBytes, r.WasmRawBytes
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "run %d/%d: %s after %.2f s (the wasm in at %.2f s, running at %.2f s), %d bytes in %d requests\n",
				i+1, cfg.Runs, r.State, r.CandidateMs/1000, r.WasmMs/1000, r.ReadyMs/1000, r.Bytes, r.Requests)
		}
	}
	rep.summarize()
	return rep, nil
}

// summarize fills the medians and the spread from the runs.
func (r *Report) summarize() {
	var ms, wasm []float64
	var bytes []int64
	for _, run := range r.Runs {
		ms = append(ms, run.CandidateMs)
		wasm = append(wasm, run.WasmMs)
		bytes = append(bytes, run.Bytes)
	}
	r.MedianMs, r.WasmMedianMs, r.Bytes = median(ms), median(wasm), median(bytes)
	r.MinMs, r.MaxMs = slices.Min(ms), slices.Max(ms)
}

// median is the middle value (the lower of the two middle ones of an even count).
func median[T int64 | float64](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// WriteTo writes the report for people.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "join link    %s\n", r.URL)
	fmt.Fprintf(&b, "network      %s", r.Network.Name)
	if r.Network.Name != "none" {
		fmt.Fprintf(&b, " (latency %.1f ms, down %.0f B/s, up %.0f B/s)", r.Network.LatencyMs, r.Network.Download, r.Network.Upload)
	}
	fmt.Fprintf(&b, "\nbrowser      %s, a fresh browser context a run (empty cache)\n", r.Chromium)
	fmt.Fprintf(&b, "candidate    median %.2f s over %d runs (%.2f-%.2f s), from the navigation's start\n", r.MedianMs/1000, len(r.Runs), r.MinMs/1000, r.MaxMs/1000)
	fmt.Fprintf(&b, "wasm in      median %.2f s\n", r.WasmMedianMs/1000)
	fmt.Fprintf(&b, "transferred  %d bytes (median)\n", r.Bytes)
	fmt.Fprintf(&b, "wasm         %d bytes as sent, %d decoded\n", r.WasmBytes, r.WasmRawBytes)
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}
