//go:build !js

package candidate_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
)

func coordConfig(id, binary, emulation string) candidate.Config {
	cfg := testConfig(id)
	cfg.Coordinated, cfg.BinaryVersion, cfg.EmulationVersion = true, binary, emulation
	return cfg
}

// mutate changes a stored object as another client (the server's controller) would.
func (s *leaseServer) mutate(t testing.TB, key string, f func(obj, spec map[string]any)) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[key]
	if !ok {
		t.Fatalf("no object %s", key)
	}
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	f(obj, spec)
	s.putLocked(key, obj)
}

func (s *leaseServer) candidateObject(name string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[candidateKey(testNS, name)]
	if !ok {
		return nil
	}
	b, _ := json.Marshal(obj)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

func micro(t time.Time) string { return t.UTC().Format(candidate.RFC3339Micro) }

// assign writes the Lease as the controller does when it picks holder: no acquireTime, no
// transitions, the strategy.
func assign(t testing.TB, s *sim, holder string) {
	t.Helper()
	s.srv.put(t, testNS, testLease, `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1",
		"metadata":{"name":"demo","namespace":"default"},
		"spec":{"holderIdentity":"`+holder+`","leaseDurationSeconds":10,"renewTime":"`+micro(s.clock.Now())+`",
		"strategy":"OldestEmulationVersion","futureField":"kept"}}`)
}

func TestCoordinatedConfigValidation(t *testing.T) {
	cases := []struct {
		binary, emulation string
		want              []string
	}{
		{"", "", []string{"binaryVersion is required in coordinated mode"}},
		{"1.36", "", []string{`binaryVersion ("1.36") must be a version MAJOR.MINOR.PATCH`}},
		{"v1.36.0", "1.36.0", []string{`binaryVersion ("v1.36.0")`}},
		{"1.36.0", "1.36.0-beta.0", []string{`emulationVersion ("1.36.0-beta.0")`}},
		{"1.36.0", "01.35.0", []string{`emulationVersion ("01.35.0")`}},
		{"1.35.0", "1.36.0", []string{"emulationVersion (1.36.0) must not be newer than binaryVersion (1.35.0)"}},
	}
	for _, tc := range cases {
		q := url.Values{"lease": {"demo"}, "coordinated": {"1"}, "binaryVersion": {tc.binary}, "emulationVersion": {tc.emulation}}
		p, err := candidate.ParamsFromQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Config()
		var ce *candidate.ConfigError
		if !errors.As(err, &ce) || len(ce.Problems) != len(tc.want) {
			t.Errorf("%s/%s: err = %v, want %d problems", tc.binary, tc.emulation, err, len(tc.want))
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s/%s: %q does not say %q", tc.binary, tc.emulation, err, w)
			}
		}
	}
	// Valid: emulation defaults to binary; versions are ignored unless coordinated.
	p, _ := candidate.ParamsFromQuery(url.Values{"lease": {"demo"}, "coordinated": {"1"}, "binaryVersion": {"1.36.0"}})
	cfg, err := p.Config()
	if err != nil || !cfg.Coordinated || cfg.EmulationVersion != "1.36.0" {
		t.Errorf("cfg = %+v, err = %v", cfg, err)
	}
	p, _ = candidate.ParamsFromQuery(url.Values{"lease": {"demo"}, "binaryVersion": {"bad"}})
	if _, err := p.Config(); err != nil {
		t.Errorf("not coordinated: %v", err)
	}
	if _, err := candidate.ParamsFromQuery(url.Values{"lease": {"demo"}, "coordinated": {"yes"}}); err == nil ||
		!strings.Contains(err.Error(), "coordinated must be true or false") {
		t.Errorf("coordinated=yes: %v", err)
	}
}

// A coordinated candidate declares its LeaseCandidate, never creates the Lease, and never takes
// a free, expired or someone else's lease.
func TestCoordinatedNeverTakesTheLease(t *testing.T) {
	s := newSim(t)
	c := s.add(coordConfig("tab-1", "1.36.0", "1.35.0"))
	s.runFor(30 * time.Second)
	if h, tr := s.srv.holder(testNS, testLease); tr != -1 {
		t.Fatalf("lease created: holder %q", h)
	}
	if !logHas(c, candidate.LogWaiting, "waiting for the server to pick a leader") {
		dumpLog(t, c)
		t.Error("no waiting log")
	}
	lc := s.srv.candidateObject("tab-1")
	if lc == nil {
		t.Fatal("no LeaseCandidate")
	}
	spec := lc["spec"].(map[string]any)
	if spec["leaseName"] != "demo" || spec["binaryVersion"] != "1.36.0" || spec["emulationVersion"] != "1.35.0" ||
		spec["strategy"] != "OldestEmulationVersion" || spec["renewTime"] != micro(epoch) || spec["pingTime"] != nil ||
		lc["kind"] != "LeaseCandidate" || lc["apiVersion"] != "coordination.k8s.io/v1beta1" {
		t.Errorf("LeaseCandidate = %v", lc)
	}

	// A free lease, and one held by someone else that expires: never taken.
	s.srv.put(t, testNS, testLease, `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"demo"},"spec":{"holderIdentity":"","leaseDurationSeconds":1}}`)
	s.runFor(10 * time.Second)
	s.srv.put(t, testNS, testLease, `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"demo"},"spec":{"holderIdentity":"other","leaseDurationSeconds":2}}`)
	s.runFor(30 * time.Second)
	if w := s.srv.allWrites(); len(w) != 0 {
		t.Errorf("lease writes: %+v", w)
	}
	if snap := c.Snapshot(); snap.Role != candidate.RoleFollower || snap.Holder != "other" {
		t.Errorf("snapshot: %s", snap)
	}
}

// Assigned by the server, it renews as client-go's tryCoordinatedRenew: acquireTime,
// leaseTransitions and strategy copied, preferredHolder cleared; unknown fields kept. When the
// server names a preferredHolder, it stops renewing and leadership ends at the renew deadline.
func TestCoordinatedRenewsWhenAssignedAndStepsDown(t *testing.T) {
	s := newSim(t)
	s.atMostOneLeader()
	c := s.add(coordConfig("tab-1", "1.36.0", "1.36.0"))
	s.runFor(3 * time.Second)
	assign(t, s, "tab-1")
	s.runUntilTrue(5*time.Second, "leading", func() bool { return c.Snapshot().Role == candidate.RoleLeader })
	if !logHas(c, candidate.LogAcquired, "the server picked me") {
		dumpLog(t, c)
		t.Error("no acquired log")
	}
	s.runFor(10 * time.Second)
	spec := s.srv.object(testNS, testLease)["spec"].(map[string]any)
	if spec["holderIdentity"] != "tab-1" || spec["acquireTime"] != nil || spec["leaseTransitions"] != 0.0 ||
		spec["strategy"] != "OldestEmulationVersion" || spec["futureField"] != "kept" || spec["preferredHolder"] != nil {
		t.Errorf("spec after renewals = %v", spec)
	}

	// The server prefers tab-2.
	s.srv.mutate(t, testNS+"/"+testLease, func(_, spec map[string]any) { spec["preferredHolder"] = "tab-2" })
	before := len(s.srv.allWrites())
	asked := s.clock.Now()
	s.runUntilTrue(10*time.Second, "stepped down", func() bool { return c.Snapshot().Role != candidate.RoleLeader })
	if !logHas(c, candidate.LogWaiting, "the server prefers tab-2: stepping down at my renew deadline") {
		dumpLog(t, c)
		t.Error("no step-down log")
	}
	if d := s.clock.Now().Sub(asked); d > candidate.DefaultRenewDeadline+candidate.DefaultRetryPeriod+time.Second {
		t.Errorf("stepped down after %s", d)
	}
	if w := s.srv.allWrites(); len(w) != before {
		t.Errorf("renewed after preferredHolder: %+v", w[before:])
	}
	// Started over, it does not take the lease back while preferredHolder is set.
	s.runFor(30 * time.Second)
	if c.Snapshot().Role == candidate.RoleLeader {
		t.Error("leads again")
	}
}

// A ping (pingTime after renewTime) is answered within one retry period, keeping unknown fields;
// without pings the LeaseCandidate is renewed every 5 minutes.
func TestCoordinatedAnswersPings(t *testing.T) {
	s := newSim(t)
	c := s.add(coordConfig("tab-1", "1.36.0", "1.35.0"))
	key := candidateKey(testNS, "tab-1")
	s.runFor(10 * time.Second)
	ping := s.clock.Now()
	s.srv.mutate(t, key, func(obj, spec map[string]any) {
		spec["pingTime"] = micro(ping)
		spec["futureField"] = "kept"
		obj["status"] = map[string]any{"x": "y"}
	})
	s.runFor(candidate.DefaultRetryPeriod)
	lc := s.srv.candidateObject("tab-1")
	spec := lc["spec"].(map[string]any)
	renew, _ := time.Parse(candidate.RFC3339Micro, spec["renewTime"].(string))
	if renew.Before(ping) || spec["futureField"] != "kept" || lc["status"] == nil {
		t.Errorf("after ping: %v", lc)
	}
	if !logHas(c, candidate.LogPinged, "pinged by the server: answering") {
		dumpLog(t, c)
		t.Error("no ping log")
	}
	// No ping: renewed 5 minutes after the last renewal, not before.
	s.runFor(candidate.CandidateRenewInterval - 10*time.Second)
	spec = s.srv.candidateObject("tab-1")["spec"].(map[string]any)
	if spec["renewTime"] != micro(renew) {
		t.Errorf("renewed early: %v", spec["renewTime"])
	}
	s.runFor(20 * time.Second)
	spec = s.srv.candidateObject("tab-1")["spec"].(map[string]any)
	if spec["renewTime"] == micro(renew) {
		t.Error("not renewed after 5 minutes")
	}
	if b, _ := json.Marshal(c.Snapshot()); !strings.Contains(string(b), `"coordinated":true,"binaryVersion":"1.36.0","emulationVersion":"1.35.0","strategy":"OldestEmulationVersion","preferredHolder":""`) {
		t.Errorf("snapshot JSON: %s", b)
	}
}

// Faults keep working in coordinated mode: a hanging partition cuts the leader off at its renew
// deadline (the LeaseCandidate keeper's hung look does not stall it), and after healing it
// answers pings again; a crashed candidate answers nothing.
func TestRunCoordinatedFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t)
		a := r.start(coordConfig("tab-a", "1.36.0", "1.35.0"))
		time.Sleep(time.Second)
		r.srv.put(t, testNS, testLease, `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1",
			"metadata":{"name":"demo","namespace":"default"},
			"spec":{"holderIdentity":"tab-a","leaseDurationSeconds":10,"renewTime":"`+micro(time.Now())+`","strategy":"OldestEmulationVersion"}}`)
		time.Sleep(5 * time.Second)
		if a.Snapshot().State != candidate.StateLeader {
			dumpLog(t, a)
			t.Fatalf("a: %v", a.Snapshot())
		}

		a.Partition(candidate.PartitionHang)
		time.Sleep(candidate.DefaultRetryPeriod + candidate.DefaultRenewDeadline + 100*time.Millisecond)
		if snap := a.Snapshot(); snap.Role == candidate.RoleLeader || snap.State != candidate.StatePartitioned {
			dumpLog(t, a)
			t.Fatalf("a should have stopped leading at its renew deadline: %v", snap)
		}

		a.Heal()
		time.Sleep(5 * time.Second)
		key := candidateKey(testNS, "tab-a")
		ping := time.Now()
		r.srv.mutate(t, key, func(_, spec map[string]any) { spec["pingTime"] = micro(ping) })
		time.Sleep(candidate.DefaultRetryPeriod + 100*time.Millisecond)
		renew, _ := time.Parse(candidate.RFC3339Micro, r.srv.candidateObject("tab-a")["spec"].(map[string]any)["renewTime"].(string))
		if renew.Before(ping) {
			dumpLog(t, a)
			t.Fatalf("ping not answered after heal: renewTime %s, pingTime %s", renew, ping)
		}

		a.Crash()
		time.Sleep(time.Second)
		ping = time.Now()
		r.srv.mutate(t, key, func(_, spec map[string]any) { spec["pingTime"] = micro(ping) })
		time.Sleep(10 * time.Second)
		renew, _ = time.Parse(candidate.RFC3339Micro, r.srv.candidateObject("tab-a")["spec"].(map[string]any)["renewTime"].(string))
		if !renew.Before(ping) {
			t.Errorf("a crashed candidate answered a ping")
		}
	})
}
