package bench

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// testReports are reports of every shape: each workload, with and without failures, the
// figures of a local server.
var testReports = []*Report{
	{Workload: "renew", Server: "http://127.0.0.1:8080", Clients: 64, DurationSec: 30.0012, Ops: 250000, OpsPerSec: 8333.05, P50Ms: 7.123, P99Ms: 20.5, MaxMs: 80.25,
		ServerRSSMiB: 45.5, ServerPeakRSSMiB: 60.25, ServerCPUPerOpMs: 0.1234, ClientCPUPerOpMs: 0.0456, DBSizeMiB: 12.3},
	{Workload: "contend", Server: "https://example:6443", Clients: 4, DurationSec: 1.002, Ops: 10, OpsPerSec: 9.98, Errors: 3, Throttled: 2, Conflicts: 7,
		FirstError: "the server is down", ErrorKinds: map[string]int64{"network": 2, "Timeout": 1}, P50Ms: 1, P99Ms: 2, MaxMs: 3},
	{Workload: "heartbeat", Server: "http://x", Clients: 2, DurationSec: 2, Ops: 0, Conflicts: 1},
	{Workload: "watch", Server: "http://127.0.0.1:1", Clients: 64, Watchers: 1000, DurationSec: 10, Ops: 1000, OpsPerSec: 100, Events: 1000000, EventsLost: 3,
		P50Ms: 5, P99Ms: 30, MaxMs: 40, WriteP50Ms: 2, WriteP99Ms: 8, AfterAckP50Ms: 3, AfterAckP99Ms: 22, ServerRSSMiB: 100, ServerPeakRSSMiB: 120},
}

// TestReportFormats: the table and the JSON are what `leaselab bench` printed before the load
// generator was a package (testdata holds that output): scripts and BENCHMARKS.md read them.
func TestReportFormats(t *testing.T) {
	var table, js strings.Builder
	for _, r := range testReports {
		if _, err := r.WriteTo(&table); err != nil {
			t.Fatal(err)
		}
		table.WriteString("--\n")
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		js.Write(b)
		js.WriteString("\n--\n")
	}
	for file, got := range map[string]string{"testdata/reports-table.txt": table.String(), "testdata/reports-json.txt": js.String()} {
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs:\n%s\nwant:\n%s", file, got, want)
		}
	}
}

// TestReportJSONRoundTrip: a report read back from its JSON prints the same table, so that
// tools can reprint a saved run.
func TestReportJSONRoundTrip(t *testing.T) {
	for _, r := range testReports {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Report
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		var want, got strings.Builder
		r.WriteTo(&want)
		back.WriteTo(&got)
		if got.String() != want.String() {
			t.Errorf("reprinted:\n%s\nwant:\n%s", got.String(), want.String())
		}
	}
}
