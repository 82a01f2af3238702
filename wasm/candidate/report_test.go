//go:build !js

package candidate_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

// TestSnapshotReport: the report a tab sends the hub is, byte for byte, what play.js built from
// the snapshot before the report was the candidate's to make, so that old and new tabs and
// servers understand each other.
func TestSnapshotReport(t *testing.T) {
	s := candidate.Snapshot{
		Identity: "tab-1", Namespace: "default", Lease: "demo", State: candidate.StateLeader, Role: candidate.RoleLeader, Holder: "tab-1",
		Faults:      tabproto.Faults{Partition: tabproto.PartitionHang, LatencyMs: 1500, ClockOffsetMs: -5000},
		Coordinated: true, BinaryVersion: "1.36.0", EmulationVersion: "1.35.0", Strategy: "OldestEmulationVersion", PreferredHolder: "tab-2",
		Log: []candidate.LogEntry{
			{At: time.UnixMilli(1767225600000), Kind: candidate.LogRenewed, Text: "renewed", Count: 3},
			{At: time.UnixMilli(1767225500000), Kind: candidate.LogJoined, Text: "joined", Count: 1},
		},
	}
	// As play.js sent it: JSON.stringify of {type:'report', tab:{...}} with its keys in this order.
	const want = `{"type":"report","tab":{"identity":"tab-1","namespace":"default","lease":"demo","state":"leader","role":"leader","holder":"tab-1",` +
		`"faults":{"paused":false,"partition":"hang","latencyMs":1500,"clockOffsetMs":-5000},` +
		`"activeFaults":["partitioned: requests hang","slow network: +1.5 s per request","clock 5 s behind"],` +
		`"lastLog":{"at":1767225600000,"kind":"renewed","text":"renewed"},` +
		`"coordinated":true,"binaryVersion":"1.36.0","emulationVersion":"1.35.0","strategy":"OldestEmulationVersion","preferredHolder":"tab-2","clock":0,"roleSince":0,"native":false}}`
	if b, err := tabproto.EncodeReport(s.Report()); err != nil || string(b) != want {
		t.Errorf("report %s, %v\nwant   %s", b, err, want)
	}

	// A stopped tab with an empty log: no role, an empty last line, no faults (an empty list,
	// never null).
	empty := candidate.Snapshot{Identity: "tab-2", State: candidate.StateStopped}
	const wantEmpty = `{"type":"report","tab":{"identity":"tab-2","namespace":"","lease":"","state":"stopped","role":"","holder":"",` +
		`"faults":{"paused":false,"partition":"","latencyMs":0,"clockOffsetMs":0},"activeFaults":[],"lastLog":{"at":0,"kind":"","text":""},` +
		`"coordinated":false,"binaryVersion":"","emulationVersion":"","strategy":"","preferredHolder":"","clock":0,"roleSince":0,"native":false}}`
	if b, err := tabproto.EncodeReport(empty.Report()); err != nil || string(b) != wantEmpty {
		t.Errorf("empty report %s, %v\nwant         %s", b, err, wantEmpty)
	}
}

// TestWorkerReportAndRemoteCommands: every snapshot the worker posts comes with the report the
// page passes on to the hub, and the page's "remote" messages (the hub's commands) are obeyed
// only when they are fault commands.
func TestWorkerReportAndRemoteCommands(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newLeaseServer(time.Now)
		p := &page{}
		w := candidate.NewWorker(candidate.WorkerOptions{Post: p.post, BaseURL: "http://leaselab.test", Transport: srv.transport()})
		defer w.Close()
		w.Handle([]byte(`{"type":"start","config":{"lease":"demo","identity":"tab-1"}}`))
		synctest.Wait()
		report := func() map[string]any {
			m := p.last("snapshot")
			if m == nil {
				t.Fatalf("no snapshot; error %v", p.last("error"))
			}
			r, _ := m["report"].(map[string]any)
			return r
		}
		r := report()
		if r["state"] != "leader" || r["identity"] != "tab-1" || r["holder"] != "tab-1" || r["lease"] != "demo" {
			t.Fatalf("report %v", r)
		}
		if last := r["lastLog"].(map[string]any); last["kind"] == "" || last["text"] == "" {
			t.Errorf("last log %v", last)
		}

		w.Handle([]byte(`{"type":"remote","command":{"type":"partition","mode":"fail"}}`))
		synctest.Wait()
		if r := report(); r["state"] != "partitioned" || r["faults"].(map[string]any)["partition"] != "fail" {
			t.Errorf("after a remote partition: %v", r)
		}
		for _, bad := range []string{
			`{"type":"remote","command":{"type":"start","config":{"lease":"other","baseURL":"http://evil.example"}}}`,
			`{"type":"remote","command":{"type":"slow","latencyMs":-1}}`,
			`{"type":"remote"}`,
		} {
			n := p.count()
			w.Handle([]byte(bad))
			if e := p.last("error"); e == nil || p.count() == n || !strings.Contains(e["error"].(string), "remote") && !strings.Contains(e["error"].(string), "refused") {
				t.Errorf("%s: error %v", bad, e)
			}
		}
		if c := w.Candidate(); c.Config().LeaseName != "demo" || c.Snapshot().Faults.LatencyMs != 0 {
			t.Errorf("a refused remote command changed the candidate: %v", c.Snapshot())
		}
	})
}
