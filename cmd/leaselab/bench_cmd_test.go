package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"
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
