//go:build !js

package candidate_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
)

type page struct {
	mu   sync.Mutex
	msgs []map[string]any
}

func (p *page) post(b []byte) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, m)
}

func (p *page) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.msgs)
}

func (p *page) last(typ string) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.msgs) - 1; i >= 0; i-- {
		if p.msgs[i]["type"] == typ {
			return p.msgs[i]
		}
	}
	return nil
}

func (p *page) snapshot() map[string]any {
	m := p.last("snapshot")
	if m == nil {
		return nil
	}
	return m["snapshot"].(map[string]any)
}

func TestWorkerProtocol(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newLeaseServer(time.Now)
		p := &page{}
		w := candidate.NewWorker(candidate.WorkerOptions{Post: p.post, BaseURL: "http://leaselab.test", Transport: srv.transport()})
		defer w.Close()
		w.Ready()
		if p.last("ready") == nil {
			t.Fatal("no ready message")
		}

		w.Handle([]byte(`{"type":"pause"}`))
		if e := p.last("error"); e == nil || !strings.Contains(e["error"].(string), "before start") {
			t.Errorf("command before start: %v", e)
		}
		w.Handle([]byte(`{"type":"start","config":{"lease":"demo","identity":"tab-1","leaseDuration":5,"renewDeadline":5}}`))
		e := p.last("error")
		if probs, _ := e["problems"].([]any); len(probs) != 1 || !strings.Contains(probs[0].(string), "greater than renewDeadline") {
			t.Fatalf("bad config: %v", e)
		}
		w.Handle([]byte(`not json`))
		if e := p.last("error"); !strings.Contains(e["error"].(string), "bad message") {
			t.Errorf("bad json: %v", e)
		}

		w.Handle([]byte(`{"type":"start","config":{"lease":"demo","identity":"tab-1","leaseDuration":15,"renewDeadline":10,"retryPeriod":2}}`))
		synctest.Wait()
		s := p.snapshot()
		if s["state"] != "leader" || s["identity"] != "tab-1" || s["holder"] != "tab-1" || s["lease"] != "demo" || s["namespace"] != "default" {
			t.Fatalf("snapshot %v", s)
		}
		timings := s["timings"].(map[string]any)
		if timings["leaseDurationMs"] != float64(15000) || timings["renewDeadlineMs"] != float64(10000) {
			t.Errorf("timings %v", timings)
		}
		for _, k := range []string{"now", "observedAt", "observedExpiry", "recordRenewTime", "recordExpiry", "renewDeadline", "nextRetry"} {
			if v, _ := s[k].(float64); v <= 0 {
				t.Errorf("%s = %v", k, s[k])
			}
		}
		if s["observedExpiry"].(float64)-s["observedAt"].(float64) != 15000 {
			t.Errorf("observedExpiry - observedAt = %v", s["observedExpiry"].(float64)-s["observedAt"].(float64))
		}
		if s["coordinated"] != false || s["binaryVersion"] != "" || s["emulationVersion"] != "" || s["strategy"] != "" {
			t.Errorf("a plain candidate reports coordinated mode: coordinated %v, versions %q %q, strategy %q",
				s["coordinated"], s["binaryVersion"], s["emulationVersion"], s["strategy"])
		}
		if log := s["log"].([]any); len(log) < 2 || log[len(log)-1].(map[string]any)["kind"] != "joined" {
			t.Errorf("log %v", log)
		}

		w.Handle([]byte(`{"type":"start","config":{"lease":"demo"}}`))
		if e := p.last("error"); !strings.Contains(e["error"].(string), "already started") {
			t.Errorf("second start: %v", e)
		}

		steps := []struct {
			msg   string
			check func(s map[string]any) bool
		}{
			{`{"type":"pause"}`, func(s map[string]any) bool {
				return s["state"] == "paused" && s["faults"].(map[string]any)["paused"] == true
			}},
			{`{"type":"resume"}`, func(s map[string]any) bool { return s["state"] == "leader" }},
			{`{"type":"partition"}`, func(s map[string]any) bool {
				return s["state"] == "partitioned" && s["faults"].(map[string]any)["partition"] == "hang"
			}},
			{`{"type":"partition","mode":"fail"}`, func(s map[string]any) bool { return s["faults"].(map[string]any)["partition"] == "fail" }},
			{`{"type":"heal"}`, func(s map[string]any) bool { return s["state"] == "leader" }},
			// No delay named: the first one past this tab's 10 s renew deadline, capped at 10 s.
			{`{"type":"slow"}`, func(s map[string]any) bool { return s["faults"].(map[string]any)["latencyMs"] == float64(10000) }},
			{`{"type":"slow","latencyMs":0}`, func(s map[string]any) bool { return s["faults"].(map[string]any)["latencyMs"] == float64(0) }},
			{`{"type":"clockOffset","seconds":5}`, func(s map[string]any) bool {
				return s["faults"].(map[string]any)["clockOffsetMs"] == float64(5000) && len(s["activeFaults"].([]any)) == 1
			}},
			{`{"type":"clockOffset","seconds":0}`, func(s map[string]any) bool { return s["faults"].(map[string]any)["clockOffsetMs"] == float64(0) }},
			{`{"type":"release"}`, func(s map[string]any) bool {
				return s["state"] == "stopped" && s["stopReason"] == "released" && s["holder"] == ""
			}},
			{`{"type":"rejoin"}`, func(s map[string]any) bool { return s["state"] == "leader" && s["transitions"] == float64(1) }},
			{`{"type":"crash"}`, func(s map[string]any) bool { return s["state"] == "stopped" && s["stopReason"] == "crashed" }},
			{`{"type":"snapshot"}`, func(s map[string]any) bool { return s["state"] == "stopped" }},
		}
		for _, st := range steps {
			w.Handle([]byte(st.msg))
			synctest.Wait()
			if s := p.snapshot(); !st.check(s) {
				t.Errorf("after %s: state %v faults %v", st.msg, s["state"], s["faults"])
			}
		}
		for _, bad := range []string{`{"type":"partition","mode":"sideways"}`, `{"type":"clockOffset"}`, `{"type":"fly"}`} {
			n := p.count()
			w.Handle([]byte(bad))
			if e := p.last("error"); e == nil || p.count() == n {
				t.Errorf("%s: no error", bad)
			}
		}
	})
}

// TestWorkerCoordinatedSnapshot: in coordinated mode the snapshot tells the mode, the versions
// and the strategy the LeaseCandidate declares, which the page reports to the dashboard.
func TestWorkerCoordinatedSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newLeaseServer(time.Now)
		p := &page{}
		w := candidate.NewWorker(candidate.WorkerOptions{Post: p.post, BaseURL: "http://leaselab.test", Transport: srv.transport()})
		defer w.Close()
		w.Handle([]byte(`{"type":"start","config":{"lease":"demo","identity":"tab-1","coordinated":true,"binaryVersion":"1.36.0","emulationVersion":"1.35.0"}}`))
		synctest.Wait()
		s := p.snapshot()
		if s == nil {
			t.Fatalf("no snapshot; error %v", p.last("error"))
		}
		if s["coordinated"] != true || s["binaryVersion"] != "1.36.0" || s["emulationVersion"] != "1.35.0" ||
			s["strategy"] != candidate.StrategyOldestEmulationVersion || s["preferredHolder"] != "" {
			t.Errorf("coordinated %v, binary %q, emulation %q, strategy %q, preferredHolder %q",
				s["coordinated"], s["binaryVersion"], s["emulationVersion"], s["strategy"], s["preferredHolder"])
		}
		lc := srv.candidateObject("tab-1")
		if lc == nil {
			t.Fatal("no LeaseCandidate")
		}
		if got := lc["spec"].(map[string]any)["strategy"]; got != s["strategy"] {
			t.Errorf("the LeaseCandidate declares strategy %v, the snapshot says %v", got, s["strategy"])
		}
	})
}
