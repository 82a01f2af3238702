package joinbench

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/chromedp/cdproto"
)

func TestNetworks(t *testing.T) {
	// DevTools' presets, as its NetworkManager defines them.
	n, err := lookupNetwork("fast3g")
	if err != nil || n.LatencyMs != 562.5 || n.Download != 180000 || n.Upload != 84375 {
		t.Errorf("fast3g = %+v, %v", n, err)
	}
	if n, err := lookupNetwork("slow3g"); err != nil || n.LatencyMs != 2000 || n.Download != 50000 || n.Upload != 50000 {
		t.Errorf("slow3g = %+v, %v", n, err)
	}
	if _, err := lookupNetwork("4g"); err == nil || !strings.Contains(err.Error(), "none, fast3g, slow3g") {
		t.Errorf("an unknown network: %v", err)
	}
	if got := JoinPath("default", "a b"); got != "/play?lease=a+b&namespace=default" {
		t.Errorf("JoinPath = %q", got)
	}
}

func TestReport(t *testing.T) {
	r := &Report{URL: "https://x/play", Network: Networks[1], Runs: []Run{
		{CandidateMs: 9000, WasmMs: 8000, Bytes: 30}, {CandidateMs: 7000, WasmMs: 6000, Bytes: 10},
		{CandidateMs: 8000, WasmMs: 7000, Bytes: 20}, {CandidateMs: 12000, WasmMs: 11000, Bytes: 40},
	}, WasmBytes: 871451}
	r.summarize()
	if r.MedianMs != 8000 || r.MinMs != 7000 || r.MaxMs != 12000 || r.WasmMedianMs != 7000 || r.Bytes != 20 {
		t.Errorf("summary: %+v", r)
	}
	var b strings.Builder
	if _, err := r.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"median 8.00 s over 4 runs (7.00-12.00 s)", "latency 562.5 ms", "871451 bytes as sent"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	js, _ := json.Marshal(r)
	for _, f := range []string{`"medianMs":8000`, `"wasmBytes":871451`, `"network":{"name":"fast3g"`, `"runs":[{"candidateMs":9000`} {
		if !strings.Contains(string(js), f) {
			t.Errorf("JSON lacks %s: %s", f, js)
		}
	}
}

// fakeConn is a connection to a browser: what it reads, and what was written to it.
type fakeConn struct {
	in      []*cdproto.Message
	written []*cdproto.Message
}

func (f *fakeConn) Read(_ context.Context, m *cdproto.Message) error {
	if len(f.in) == 0 {
		return errors.New("closed")
	}
	*m, f.in = *f.in[0], f.in[1:]
	return nil
}

func (f *fakeConn) Write(_ context.Context, m *cdproto.Message) error {
	f.written = append(f.written, m)
	return nil
}

func (f *fakeConn) Close() error { return nil }

// TestTap: a session's auto-attached targets wait for the debugger; a worker gets its Network
// domain on before it runs, a frame only runs; the answers to the tap's commands are not
// passed on.
func TestTap(t *testing.T) {
	conn := &fakeConn{in: []*cdproto.Message{
		{Method: cdproto.EventTargetAttachedToTarget, SessionID: "page", Params: []byte(`{"sessionId":"w1","targetInfo":{"type":"worker"},"waitingForDebugger":true}`)},
		{ID: ownIDs + 1, SessionID: "w1", Result: []byte(`{}`)},
		{ID: ownIDs + 2, SessionID: "w1", Result: []byte(`{}`)},
		{Method: cdproto.EventTargetAttachedToTarget, SessionID: "page", Params: []byte(`{"sessionId":"f1","targetInfo":{"type":"iframe"},"waitingForDebugger":true}`)},
		{ID: ownIDs + 3, SessionID: "f1", Result: []byte(`{}`)},
		{ID: 7, SessionID: "page", Result: []byte(`{}`)},
	}}
	tp := &tap{Transport: conn}
	ctx := context.Background()
	if err := tp.Write(ctx, &cdproto.Message{ID: 1, SessionID: "page", Method: "Target.setAutoAttach", Params: []byte(`{"autoAttach":true,"flatten":true}`)}); err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if json.Unmarshal(conn.written[0].Params, &p); p["waitForDebuggerOnStart"] != true || p["flatten"] != true {
		t.Errorf("setAutoAttach sent as %s", conn.written[0].Params)
	}
	var passed []string
	for {
		var m cdproto.Message
		if err := tp.Read(ctx, &m); err != nil {
			break
		}
		passed = append(passed, string(m.Method)+"#"+string(m.SessionID))
	}
	if got := strings.Join(passed, " "); got != "Target.attachedToTarget#page Target.attachedToTarget#page #page" {
		t.Errorf("passed on: %s", got)
	}
	var sent []string
	for _, m := range conn.written[1:] {
		sent = append(sent, string(m.SessionID)+":"+string(m.Method))
	}
	if got := strings.Join(sent, " "); got != "w1:Network.enable w1:Runtime.runIfWaitingForDebugger f1:Runtime.runIfWaitingForDebugger" {
		t.Errorf("sent: %s", got)
	}
}
