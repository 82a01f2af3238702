//go:build !js

package candidate_test

// This file is a test fixture: a minimal in-memory stand-in for the Lease
// (and v1beta1 LeaseCandidate) endpoints of a Kubernetes API server (GET 200/404, POST 201/409
// AlreadyExists, PUT 200/409 Conflict/422, resourceVersion as a global
// counter). Integration tests against the real leaselab server live with the
// server.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/candidate/candidatetest"
)

var leaseResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

// write is one successful write the fixture applied.
type write struct {
	At       time.Time // fixture clock
	Verb     string    // POST or PUT
	RV       int64
	Holder   string
	Duration int64
	Renew    string // spec.renewTime as written
	Body     []byte // the request body
}

// leaseServer is the fixture.
type leaseServer struct {
	now func() time.Time

	mu      sync.Mutex
	rev     int64
	objects map[string]map[string]any // "ns/name" -> object
	writes  []write
	// beforePut, when set, runs (with mu held) before a PUT is checked; it
	// may change the stored object to simulate a concurrent writer.
	beforePut func(s *leaseServer, key string, body map[string]any)
}

func newLeaseServer(now func() time.Time) *leaseServer {
	return &leaseServer{now: now, objects: map[string]map[string]any{}}
}

func (s *leaseServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}", s.get)
	mux.HandleFunc("POST /apis/coordination.k8s.io/v1/namespaces/{ns}/leases", s.create)
	mux.HandleFunc("PUT /apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}", s.update)
	mux.HandleFunc("GET /apis/coordination.k8s.io/v1beta1/namespaces/{ns}/leasecandidates/{name}", s.get)
	mux.HandleFunc("POST /apis/coordination.k8s.io/v1beta1/namespaces/{ns}/leasecandidates", s.create)
	mux.HandleFunc("PUT /apis/coordination.k8s.io/v1beta1/namespaces/{ns}/leasecandidates/{name}", s.update)
	return mux
}

func (s *leaseServer) transport() candidate.Transport {
	return candidatetest.HandlerTransport{Handler: s.handler()}
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
}

func writeObject(w http.ResponseWriter, code int, obj map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(obj)
}

// candidateKey is where a LeaseCandidate is stored in objects.
func candidateKey(ns, name string) string { return "leasecandidates:" + ns + "/" + name }

var candidateResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leasecandidates"}

// kindOf tells from the request path which resource is asked for: its kind,
// apiVersion, key prefix and GroupResource.
func kindOf(r *http.Request) (kind, apiVersion, prefix string, gr schema.GroupResource) {
	if bytes.Contains([]byte(r.URL.Path), []byte("/leasecandidates")) {
		return "LeaseCandidate", "coordination.k8s.io/v1beta1", "leasecandidates:", candidateResource
	}
	return "Lease", "coordination.k8s.io/v1", "", leaseResource
}

func (s *leaseServer) get(w http.ResponseWriter, r *http.Request) {
	_, _, prefix, gr := kindOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[prefix+r.PathValue("ns")+"/"+r.PathValue("name")]
	if !ok {
		writeStatus(w, apierrors.NewNotFound(gr, r.PathValue("name")))
		return
	}
	writeObject(w, http.StatusOK, obj)
}

// decodeBody reads a Lease body, checking the fields the real server would
// refuse: bad MicroTimes, wrong kind.
func decodeBody(r *http.Request) (map[string]any, []byte, *apierrors.StatusError) {
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(r.Body)
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, nil, apierrors.NewBadRequest("decode: " + err.Error())
	}
	if kind, apiVersion, _, _ := kindOf(r); obj["kind"] != kind || obj["apiVersion"] != apiVersion {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("kind %v apiVersion %v", obj["kind"], obj["apiVersion"]))
	}
	spec, _ := obj["spec"].(map[string]any)
	for _, k := range []string{"acquireTime", "renewTime", "pingTime"} {
		if v, ok := spec[k].(string); ok {
			if _, err := time.Parse(candidate.RFC3339Micro, v); err != nil {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("spec.%s: %v", k, err))
			}
		}
	}
	return obj, buf.Bytes(), nil
}

func meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

func (s *leaseServer) create(w http.ResponseWriter, r *http.Request) {
	obj, body, serr := decodeBody(r)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	m := meta(obj)
	name, _ := m["name"].(string)
	if m["namespace"] != nil && m["namespace"] != r.PathValue("ns") {
		writeStatus(w, apierrors.NewBadRequest("namespace mismatch"))
		return
	}
	if m["resourceVersion"] != nil {
		writeStatus(w, apierrors.NewInternalError(fmt.Errorf("resourceVersion should not be set on objects to be created")))
		return
	}
	_, _, prefix, gr := kindOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	key := prefix + r.PathValue("ns") + "/" + name
	if _, ok := s.objects[key]; ok {
		writeStatus(w, apierrors.NewAlreadyExists(gr, name))
		return
	}
	s.rev++
	m["namespace"] = r.PathValue("ns")
	m["uid"] = fmt.Sprintf("uid-%d", s.rev)
	m["resourceVersion"] = strconv.FormatInt(s.rev, 10)
	m["creationTimestamp"] = s.now().UTC().Format(time.RFC3339)
	s.objects[key] = obj
	if prefix == "" {
		s.record("POST", obj, body)
	}
	writeObject(w, http.StatusCreated, obj)
}

func (s *leaseServer) update(w http.ResponseWriter, r *http.Request) {
	obj, body, serr := decodeBody(r)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	name := r.PathValue("name")
	m := meta(obj)
	if m["name"] != name {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%v) does not match the name on the URL (%s)", m["name"], name)))
		return
	}
	_, _, prefix, gr := kindOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	key := prefix + r.PathValue("ns") + "/" + name
	if s.beforePut != nil {
		s.beforePut(s, key, obj)
	}
	old, ok := s.objects[key]
	if !ok {
		writeStatus(w, apierrors.NewNotFound(gr, name))
		return
	}
	rv, _ := m["resourceVersion"].(string)
	if rv == "" {
		writeStatus(w, apierrors.NewInvalid(schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}, name, nil))
		return
	}
	if rv != meta(old)["resourceVersion"] {
		writeStatus(w, apierrors.NewConflict(gr, name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again")))
		return
	}
	s.rev++
	m["uid"] = meta(old)["uid"]
	m["creationTimestamp"] = meta(old)["creationTimestamp"]
	m["resourceVersion"] = strconv.FormatInt(s.rev, 10)
	s.objects[key] = obj
	if prefix == "" {
		s.record("PUT", obj, body)
	}
	writeObject(w, http.StatusOK, obj)
}

// record notes a write; mu is held.
func (s *leaseServer) record(verb string, obj map[string]any, body []byte) {
	spec, _ := obj["spec"].(map[string]any)
	wr := write{At: s.now(), Verb: verb, RV: s.rev, Body: body}
	wr.Holder, _ = spec["holderIdentity"].(string)
	if d, ok := spec["leaseDurationSeconds"].(json.Number); ok {
		wr.Duration, _ = d.Int64()
	}
	wr.Renew, _ = spec["renewTime"].(string)
	s.writes = append(s.writes, wr)
}

// put stores obj (a Lease as JSON) as if another client had written it.
func (s *leaseServer) put(t testing.TB, ns, name, objJSON string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(objJSON)))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("fixture object: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(ns+"/"+name, obj)
}

func (s *leaseServer) putLocked(key string, obj map[string]any) {
	s.rev++
	m := meta(obj)
	if _, ok := m["uid"]; !ok {
		m["uid"] = fmt.Sprintf("uid-%d", s.rev)
	}
	m["resourceVersion"] = strconv.FormatInt(s.rev, 10)
	s.objects[key] = obj
}

// holder returns the stored holderIdentity and leaseTransitions.
func (s *leaseServer) holder(ns, name string) (string, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[ns+"/"+name]
	if !ok {
		return "", -1
	}
	spec, _ := obj["spec"].(map[string]any)
	h, _ := spec["holderIdentity"].(string)
	var tr int64
	if n, ok := spec["leaseTransitions"].(json.Number); ok {
		tr, _ = n.Int64()
	}
	return h, tr
}

func (s *leaseServer) object(ns, name string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := json.Marshal(s.objects[ns+"/"+name])
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

func (s *leaseServer) allWrites() []write {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.writes)
}

// --- candidates and a deterministic driver ---

const (
	testNS    = "default"
	testLease = "demo"
)

func testConfig(id string) candidate.Config {
	return candidate.Config{
		BaseURL:       "http://leaselab.test",
		Namespace:     testNS,
		LeaseName:     testLease,
		Identity:      id,
		LeaseDuration: candidate.DefaultLeaseDuration,
		RenewDeadline: candidate.DefaultRenewDeadline,
		RetryPeriod:   candidate.DefaultRetryPeriod,
	}
}

func newCandidate(t testing.TB, cfg candidate.Config, clock candidate.Clock, tr candidate.Transport, seed uint64) *candidate.Candidate {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 42))
	var mu sync.Mutex
	c, err := candidate.New(cfg, candidate.Options{
		Clock:     clock,
		Transport: tr,
		Rand: func() float64 {
			mu.Lock()
			defer mu.Unlock()
			return r.Float64()
		},
	})
	if err != nil {
		t.Fatalf("new candidate %s: %v", cfg.Identity, err)
	}
	return c
}

var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// sim steps candidates in time order on a ManualClock, one at a time, so
// every run is the same. A paused candidate is not stepped.
type sim struct {
	t     *testing.T
	ctx   context.Context
	clock *candidatetest.ManualClock
	srv   *leaseServer
	cands []*candidate.Candidate
	next  []time.Time
	// check, when set, runs after every step.
	check func()
}

func newSim(t *testing.T) *sim {
	clock := candidatetest.NewManualClock(epoch)
	return &sim{t: t, ctx: t.Context(), clock: clock, srv: newLeaseServer(clock.Now)}
}

func (s *sim) add(cfg candidate.Config) *candidate.Candidate {
	return s.addWith(cfg, s.srv.transport())
}

func (s *sim) addWith(cfg candidate.Config, tr candidate.Transport) *candidate.Candidate {
	c := newCandidate(s.t, cfg, s.clock, tr, uint64(len(s.cands)+1))
	s.cands = append(s.cands, c)
	s.next = append(s.next, c.Next())
	return c
}

func (s *sim) index(c *candidate.Candidate) int {
	i := slices.Index(s.cands, c)
	if i < 0 {
		s.t.Fatalf("unknown candidate %s", c.Identity())
	}
	return i
}

// poke makes c due now (after a command).
func (s *sim) poke(c *candidate.Candidate) { s.next[s.index(c)] = s.clock.Now() }

// runFor steps every due candidate until d has passed.
func (s *sim) runFor(d time.Duration) {
	s.runUntil(s.clock.Now().Add(d))
}

func (s *sim) runUntil(end time.Time) {
	s.t.Helper()
	for steps := 0; ; steps++ {
		if steps > 100000 {
			s.t.Fatal("sim: too many steps")
		}
		i := -1
		for j, n := range s.next {
			if n.IsZero() || s.cands[j].Snapshot().Faults.Paused {
				continue
			}
			if i < 0 || n.Before(s.next[i]) {
				i = j
			}
		}
		if i < 0 || s.next[i].After(end) {
			break
		}
		if s.next[i].After(s.clock.Now()) {
			s.clock.Set(s.next[i])
		}
		s.next[i] = s.cands[i].Step(s.ctx)
		if s.check != nil {
			s.check()
		}
	}
	if end.After(s.clock.Now()) {
		s.clock.Set(end)
	}
}

// runUntilTrue steps until cond holds, failing after limit.
func (s *sim) runUntilTrue(limit time.Duration, what string, cond func() bool) {
	s.t.Helper()
	end := s.clock.Now().Add(limit)
	for !cond() {
		if !s.clock.Now().Before(end) {
			s.t.Fatalf("after %s: still not %s", limit, what)
		}
		s.runFor(100 * time.Millisecond)
	}
}

func (s *sim) leaders() []string {
	var out []string
	for _, c := range s.cands {
		if c.Snapshot().Role == candidate.RoleLeader {
			out = append(out, c.Identity())
		}
	}
	return out
}

func (s *sim) leader() *candidate.Candidate {
	for _, c := range s.cands {
		if c.Snapshot().Role == candidate.RoleLeader {
			return c
		}
	}
	return nil
}

// atMostOneLeader installs the safety check.
func (s *sim) atMostOneLeader() {
	s.check = func() {
		if l := s.leaders(); len(l) > 1 {
			s.t.Fatalf("at %s: two leaders at once: %v", s.clock.Now().Sub(epoch), l)
		}
	}
}

func logHas(c *candidate.Candidate, kind candidate.LogKind, substr string) bool {
	for _, e := range c.Snapshot().Log {
		if e.Kind == kind && bytes.Contains([]byte(e.Text), []byte(substr)) {
			return true
		}
	}
	return false
}

func dumpLog(t testing.TB, c *candidate.Candidate) {
	t.Helper()
	s := c.Snapshot()
	t.Logf("log of %s:", c.Identity())
	for i := len(s.Log) - 1; i >= 0; i-- {
		e := s.Log[i]
		t.Logf("  %s %-9s %s (x%d)", e.At.Sub(epoch), e.Kind, e.Text, e.Count)
	}
}
