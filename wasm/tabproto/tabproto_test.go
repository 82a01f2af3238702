package tabproto_test

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// wireReport is a report byte for byte as tabs have always sent it (play.js's JSON.stringify
// of the object it built from the candidate's snapshot, keys in its order).
const wireReport = `{"type":"report","tab":{"identity":"tab-1","namespace":"default","lease":"demo","state":"leader","role":"leader","holder":"tab-1",` +
	`"faults":{"paused":false,"partition":"hang","latencyMs":1500,"clockOffsetMs":-5000},` +
	`"activeFaults":["partitioned: requests hang","slow network: +1.5 s per request","clock 5 s behind"],` +
	`"lastLog":{"at":1767225600000,"kind":"renewed","text":"renewed"},` +
	`"coordinated":true,"binaryVersion":"1.36.0","emulationVersion":"1.35.0","strategy":"OldestEmulationVersion","preferredHolder":"tab-2"}}`

// wireReportNow is the same report as tabs send it since they date their role changes: the
// fields added at the end.
var wireReportNow = wireReport[:len(wireReport)-2] + `,"clock":0,"roleSince":0,"native":false}}`

var wantReport = tabproto.Report{
	Identity: "tab-1", Namespace: "default", Lease: "demo", State: tabproto.StateLeader, Role: tabproto.RoleLeader, Holder: "tab-1",
	Faults:       tabproto.Faults{Partition: tabproto.PartitionHang, LatencyMs: 1500, ClockOffsetMs: -5000},
	ActiveFaults: []string{"partitioned: requests hang", "slow network: +1.5 s per request", "clock 5 s behind"},
	LastLog:      tabproto.LogLine{At: 1767225600000, Kind: "renewed", Text: "renewed"},
	Coordinated:  true, BinaryVersion: "1.36.0", EmulationVersion: "1.35.0", Strategy: "OldestEmulationVersion", PreferredHolder: "tab-2",
}

// TestWireCompatible: what tabs have always sent decodes, and encodes back to the same bytes;
// the hub's messages are the bytes it has always written.
func TestWireCompatible(t *testing.T) {
	r, err := tabproto.DecodeReport([]byte(wireReport))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, wantReport) {
		t.Errorf("decoded %+v\nwant %+v", r, wantReport)
	}
	b, err := tabproto.EncodeReport(wantReport)
	if err != nil || string(b) != wireReportNow {
		t.Errorf("encoded %s, %v\nwant %s", b, err, wireReportNow)
	}

	if got := string(tabproto.EncodeHello("0123456789abcdef")); got != `{"id":"0123456789abcdef","type":"hello"}` {
		t.Errorf("hello: %s", got)
	}
	ms, secs := 2500.0, -3.0
	for _, tc := range []struct {
		cmd  tabproto.Command
		want string
	}{
		{tabproto.Command{Type: tabproto.CommandPause}, `{"type":"command","command":{"type":"pause"}}`},
		{tabproto.Command{Type: tabproto.CommandPartition, Mode: tabproto.PartitionFail}, `{"type":"command","command":{"type":"partition","mode":"fail"}}`},
		{tabproto.Command{Type: tabproto.CommandSlow, LatencyMs: &ms}, `{"type":"command","command":{"type":"slow","latencyMs":2500}}`},
		{tabproto.Command{Type: tabproto.CommandClockOffset, Seconds: &secs}, `{"type":"command","command":{"type":"clockOffset","seconds":-3}}`},
	} {
		if b, err := tabproto.EncodeCommand(tc.cmd, ""); err != nil || string(b) != tc.want {
			t.Errorf("command %+v: %s, %v, want %s", tc.cmd, b, err, tc.want)
		}
	}
}

func TestDecodeReportRefuses(t *testing.T) {
	for _, msg := range []string{
		`not json`,
		`{"type":"command","tab":{"state":"leader"}}`,
		`{"type":"report","tab":{"state":"king"}}`,
		`{"type":"report","tab":{}}`,
		`{"type":"report","tab":{"state":"leader","faults":{"latencyMs":"slow"}}}`,
	} {
		if r, err := tabproto.DecodeReport([]byte(msg)); err == nil {
			t.Errorf("%s: accepted as %+v", msg, r)
		}
	}
}

// TestClean: what a tab reports is bounded, and a plain tab carries no coordinated fields.
func TestClean(t *testing.T) {
	long := strings.Repeat("é", 1000)
	r := tabproto.Report{Identity: long, Namespace: long, Lease: long, State: tabproto.StateFollower, Role: tabproto.Role(long), Holder: long,
		Faults: tabproto.Faults{Partition: tabproto.Partition(long), Paused: true, PausedSince: 1767225600000}, ActiveFaults: make([]string, 20),
		LastLog: tabproto.LogLine{Kind: long, Text: long + "\xff"}, Coordinated: true,
		BinaryVersion: long, EmulationVersion: long, Strategy: long, PreferredHolder: long}
	r.ActiveFaults[0] = long
	if err := r.Clean(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		s   string
		max int
	}{
		{r.Identity, tabproto.MaxIdentityLen}, {r.Namespace, tabproto.MaxNameLen}, {r.Lease, tabproto.MaxNameLen},
		{string(r.Role), tabproto.MaxWordLen}, {r.Holder, tabproto.MaxIdentityLen}, {string(r.Faults.Partition), tabproto.MaxWordLen},
		{r.ActiveFaults[0], tabproto.MaxFaultLen}, {r.LastLog.Kind, tabproto.MaxWordLen}, {r.LastLog.Text, tabproto.MaxTextLen},
		{r.BinaryVersion, tabproto.MaxVersionLen}, {r.EmulationVersion, tabproto.MaxVersionLen}, {r.Strategy, tabproto.MaxVersionLen},
		{r.PreferredHolder, tabproto.MaxIdentityLen},
	} {
		// "é" is two bytes: an odd limit cuts before the rune, not through it.
		if len(f.s) > f.max || len(f.s) < f.max-1 || !strings.HasPrefix(long, f.s) {
			t.Errorf("cut to %d bytes (limit %d): %q", len(f.s), f.max, f.s)
		}
	}
	// A pause's start is the tab page's alone: the hub neither keeps nor passes it on.
	if !r.Faults.Paused || r.Faults.PausedSince != 0 {
		t.Errorf("faults after Clean: %+v", r.Faults)
	}
	if len(r.ActiveFaults) != tabproto.MaxFaults {
		t.Errorf("%d active faults kept", len(r.ActiveFaults))
	}

	plain := tabproto.Report{State: tabproto.StateLeader, BinaryVersion: "1.36.0", EmulationVersion: "1.35.0", Strategy: "x", PreferredHolder: "y"}
	if err := plain.Clean(); err != nil {
		t.Fatal(err)
	}
	if plain.BinaryVersion != "" || plain.EmulationVersion != "" || plain.Strategy != "" || plain.PreferredHolder != "" || plain.ActiveFaults == nil {
		t.Errorf("plain tab after Clean: %+v", plain)
	}
}

func TestSteppingDown(t *testing.T) {
	for _, tc := range []struct {
		r    tabproto.Report
		want bool
	}{
		{tabproto.Report{Identity: "a", Role: tabproto.RoleLeader, Coordinated: true, PreferredHolder: "b"}, true},
		{tabproto.Report{Identity: "a", Role: tabproto.RoleFollower, Holder: "a", Coordinated: true, PreferredHolder: "b"}, true},
		{tabproto.Report{Identity: "a", Role: tabproto.RoleFollower, Holder: "b", Coordinated: true, PreferredHolder: "a"}, false},
		{tabproto.Report{Identity: "a", Role: tabproto.RoleLeader, Coordinated: true, PreferredHolder: "a"}, false},
		{tabproto.Report{Identity: "a", Role: tabproto.RoleLeader, Coordinated: true}, false},
		{tabproto.Report{Identity: "a", Role: tabproto.RoleLeader, PreferredHolder: "b"}, false},
	} {
		if got := tc.r.SteppingDown(); got != tc.want {
			t.Errorf("%+v: stepping down %v, want %v", tc.r, got, tc.want)
		}
	}
}

// TestStates: the states are a contract with outside tests and pages.
func TestStates(t *testing.T) {
	var got []string
	for _, s := range tabproto.States() {
		if !s.Valid() || s.Word() != strings.ToUpper(string(s)) {
			t.Errorf("state %q: valid %v, word %q", s, s.Valid(), s.Word())
		}
		got = append(got, string(s))
	}
	if want := []string{"leader", "follower", "paused", "partitioned", "stopped"}; !reflect.DeepEqual(got, want) {
		t.Errorf("states %v, want %v", got, want)
	}
	for _, s := range []tabproto.State{"", "held", "LEADER"} {
		if s.Valid() {
			t.Errorf("%q is valid", s)
		}
	}
}

func TestCommandValidate(t *testing.T) {
	num := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		cmd tabproto.Command
		err string
	}{
		{tabproto.Command{Type: "pause"}, ""},
		{tabproto.Command{Type: "partition"}, ""},
		{tabproto.Command{Type: "partition", Mode: "hang"}, ""},
		{tabproto.Command{Type: "partition", Mode: "sideways"}, "partition mode must be hang or fail"},
		{tabproto.Command{Type: "slow"}, ""},
		{tabproto.Command{Type: "slow", LatencyMs: num(600_001)}, "latencyMs must be between 0 and 600000"},
		{tabproto.Command{Type: "clockOffset"}, "clockOffset needs seconds between -86400 and 86400"},
		{tabproto.Command{Type: "clockOffset", Seconds: num(-86_400)}, ""},
		{tabproto.Command{Type: "clockRate"}, "clockRate needs a rate between 0.5 and 2"},
		{tabproto.Command{Type: "clockRate", Rate: num(2.5)}, "clockRate needs a rate between 0.5 and 2"},
		{tabproto.Command{Type: "clockRate", Rate: num(math.NaN())}, "clockRate needs a rate between 0.5 and 2"},
		{tabproto.Command{Type: "clockRate", Rate: num(1.25)}, ""},
		{tabproto.Command{Type: "loss"}, "loss needs lossPercent between 0 and 90"},
		{tabproto.Command{Type: "loss", LossPercent: new(91)}, "loss needs lossPercent between 0 and 90"},
		{tabproto.Command{Type: "loss", LossPercent: new(-1)}, "loss needs lossPercent between 0 and 90"},
		{tabproto.Command{Type: "loss", LossPercent: new(30)}, ""},
		{tabproto.Command{Type: "start"}, `unknown command "start"`},
	} {
		err := tc.cmd.Validate()
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%+v: %v, want %q", tc.cmd, err, tc.err)
		}
		if _, encErr := tabproto.EncodeCommand(tc.cmd, ""); (encErr == nil) != (err == nil) {
			t.Errorf("%+v: EncodeCommand %v, Validate %v", tc.cmd, encErr, err)
		}
	}
}

// FuzzDecodeReport: whatever a tab sends, decoding does not panic, and a report it accepts is
// bounded and survives a round trip.
func FuzzDecodeReport(f *testing.F) {
	f.Add([]byte(wireReport))
	f.Add([]byte(`{"type":"report","tab":{"state":"paused","activeFaults":null}}`))
	f.Add([]byte(`{"type":"report","tab":{"state":"stopped","identity":"\u00e9\ud800"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := tabproto.DecodeReport(data)
		if err != nil {
			return
		}
		if !r.State.Valid() || len(r.Identity) > tabproto.MaxIdentityLen || len(r.LastLog.Text) > tabproto.MaxTextLen || r.ActiveFaults == nil {
			t.Fatalf("accepted %+v", r)
		}
		b, err := tabproto.EncodeReport(r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := tabproto.DecodeReport(b)
		if err != nil || !reflect.DeepEqual(again, r) {
			b2, _ := json.Marshal(again)
			t.Fatalf("round trip: %v\n%s\n%s", err, b, b2)
		}
	})
}

// TestLossOnTheWire: packet loss is the last of a report's faults and of a command's values,
// left out when off, so that every older message keeps its bytes; a report's loss is bounded.
func TestLossOnTheWire(t *testing.T) {
	r := wantReport
	r.Faults.LossPercent = 30
	b, err := tabproto.EncodeReport(r)
	if err != nil || !strings.Contains(string(b), `"faults":{"paused":false,"partition":"hang","latencyMs":1500,"clockOffsetMs":-5000,"lossPercent":30}`) {
		t.Errorf("report with loss: %s, %v", b, err)
	}
	if b, err := tabproto.EncodeCommand(tabproto.Command{Type: tabproto.CommandLoss, LossPercent: new(30)}, ""); err != nil ||
		string(b) != `{"type":"command","command":{"type":"loss","lossPercent":30}}` {
		t.Errorf("loss command: %s, %v", b, err)
	}
	if got, _ := tabproto.DecodeReport([]byte(`{"type":"report","tab":{"state":"follower","faults":{"lossPercent":500}}}`)); got.Faults.LossPercent != tabproto.MaxLossPercent {
		t.Errorf("a report's loss of 500 %% kept as %d", got.Faults.LossPercent)
	}
	if got := tabproto.Words(r.Faults.Describe(), "en"); !slices.Contains(got, "packet loss: 30% of requests lost") {
		t.Errorf("faults in words: %q", got)
	}
}

// TestFlights: the log keeps the newest MaxFlights requests, an end marks its own request, and
// a list once handed out does not change.
func TestFlights(t *testing.T) {
	var f tabproto.Flights
	for i := range tabproto.MaxFlights + 3 {
		f.Start("GET", int64(1000+i))
	}
	taken := f.List()
	f.End(tabproto.MaxFlights+3, "409", 5000)
	got := f.List()
	if len(got) != tabproto.MaxFlights || got[0].ID != 4 || got[len(got)-1].Outcome != "409" || got[len(got)-1].EndMs != 5000 {
		t.Errorf("flights %+v", got)
	}
	if taken[len(taken)-1].Outcome != "" {
		t.Errorf("a list handed out changed: %+v", taken[len(taken)-1])
	}
}
