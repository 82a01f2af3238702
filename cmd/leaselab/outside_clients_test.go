package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/web/api/auth"
)

// The official Python and JavaScript clients talk to leaselab as a workshop participant's
// programs do: over HTTPS with the participant's kubeconfig. Each runs a script of
// testdata/clients that creates, reads, replaces, patches, lists, watches and deletes leases
// and prints what every step saw; the test checks that and reads back with client-go what the
// script left. `make test-deps` installs the clients (Debian's python3-kubernetes, and
// @kubernetes/client-node from the npm registry at the version package-lock.json pins).

// clientStep is what a script saw of one step: an object's fields, or the error's Status.
type clientStep struct {
	RV          string `json:"rv"`
	UID         string `json:"uid"`
	Holder      string `json:"holder"`
	Transitions int    `json:"transitions"`
	Duration    int    `json:"duration"`
	Lease       string `json:"lease"`
	RenewTime   string `json:"renewTime"`
	Sent        string `json:"sent"`
	Code        int    `json:"code"`
	Reason      string `json:"reason"`
	Kind        string `json:"kind"`
}

// clientRun is a script's output (encoding/json matches its camel-case keys).
type clientRun struct {
	Created, Replaced, Stale, Patched, JSONPatched, OtherNamespace, Kept, AfterDelete, Candidate clientStep

	Listed struct {
		Names []string
		RV    string
	}
	Watched []struct {
		Type, RV, Holder string
	}
}

// runClientScript runs the command with a participant's kubeconfig of a fresh workshop and
// returns the workshop, the participant's namespace and what the script printed.
func runClientScript(t *testing.T, name string, args ...string) (*workshop, string, clientRun) {
	t.Helper()
	w := mustStartWorkshop(t, 2, "", nil)
	ns, other := auth.ParticipantName(1, 2), auth.ParticipantName(2, 2)
	kc, err := auth.Kubeconfig(w.URL, ns, w.tokens[ns], "leaselab", w.access.CAData)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctxT(t, 2*time.Minute), name, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+path, "NAMESPACE="+ns, "OTHER_NAMESPACE="+other)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstdout: %s\nstderr: %s", name, args, err, stdout.String(), stderr.String())
	}
	var run clientRun
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		t.Fatalf("%s printed %q: %v\nstderr: %s", name, stdout.String(), err, stderr.String())
	}
	t.Logf("%s: %s", name, stdout.String())
	return w, ns, run
}

// checkClientRun checks what a script saw against what the API server's contract says, and
// reads back with client-go the lease it kept (prefix-kept, held by holder, renewed at the
// moment it reported sending).
func checkClientRun(t *testing.T, w *workshop, ns string, run clientRun, prefix, holder string) {
	t.Helper()
	rv := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Errorf("resourceVersion %q: %v", s, err)
		}
		return n
	}
	lease := prefix + "-lease"
	c := run.Created
	if c.UID == "" || c.Holder != holder+"-a" {
		t.Errorf("created: %+v", c)
	}
	// The server keeps the microseconds the client sent, and answers with them.
	if sent, got := parseClientTime(t, c.Sent), parseClientTime(t, c.RenewTime); !sent.Equal(got) {
		t.Errorf("created renewTime %s, sent %s", c.RenewTime, c.Sent)
	}
	if !(rv(c.RV) < rv(run.Replaced.RV) && rv(run.Replaced.RV) < rv(run.Patched.RV) && rv(run.Patched.RV) < rv(run.JSONPatched.RV)) {
		t.Errorf("resourceVersions do not grow: created %s, replaced %s, patched %s, JSON-patched %s",
			c.RV, run.Replaced.RV, run.Patched.RV, run.JSONPatched.RV)
	}
	if s := run.Stale; s.Code != 409 || s.Reason != string(metav1.StatusReasonConflict) || s.Kind != "Status" {
		t.Errorf("a replace at a stale resourceVersion: %+v, want a 409 Status with reason Conflict", s)
	}
	if p := run.Patched; p.Holder != holder+"-b" || p.Transitions != 1 {
		t.Errorf("merge patch: %+v", p)
	}
	if p := run.JSONPatched; p.Duration != 20 {
		t.Errorf("JSON patch: %+v", p)
	}
	if n := run.Listed.Names; len(n) != 1 || n[0] != lease || rv(run.Listed.RV) < rv(run.JSONPatched.RV) {
		t.Errorf("list by label: %+v", run.Listed)
	}
	want := []string{run.Replaced.RV, run.Patched.RV, run.JSONPatched.RV}
	if len(run.Watched) != len(want) {
		t.Fatalf("watch from the creation saw %+v, want the %d changes after it", run.Watched, len(want))
	}
	for i, ev := range run.Watched {
		if ev.Type != "MODIFIED" || ev.RV != want[i] {
			t.Errorf("watch event %d: %+v, want MODIFIED at %s", i, ev, want[i])
		}
	}
	if h := run.Watched[len(run.Watched)-1].Holder; h != holder+"-b" {
		t.Errorf("the last watch event names holder %q", h)
	}
	if s := run.OtherNamespace; s.Code != 403 || s.Reason != string(metav1.StatusReasonForbidden) {
		t.Errorf("a write in another participant's namespace: %+v, want 403 Forbidden", s)
	}
	if s := run.AfterDelete; s.Code != 404 || s.Reason != string(metav1.StatusReasonNotFound) {
		t.Errorf("a read after the delete: %+v, want 404 NotFound", s)
	}

	// What the script left, as client-go reads it.
	cs := w.client(t, ns)
	ctx := ctxT(t, 30*time.Second)
	kept, err := cs.CoordinationV1().Leases(ns).Get(ctx, prefix+"-kept", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if kept.Spec.HolderIdentity == nil || *kept.Spec.HolderIdentity != holder+"-kept" ||
		kept.Spec.LeaseDurationSeconds == nil || *kept.Spec.LeaseDurationSeconds != 15 || kept.Labels["client"] != prefix {
		t.Errorf("kept lease as client-go reads it: %+v %+v", kept.ObjectMeta, kept.Spec)
	}
	if sent := parseClientTime(t, run.Kept.RenewTime); kept.Spec.RenewTime == nil || !kept.Spec.RenewTime.Time.Equal(sent) {
		t.Errorf("kept renewTime %v, the script sent %s", kept.Spec.RenewTime, run.Kept.RenewTime)
	}
	if _, err := cs.CoordinationV1().Leases(ns).Get(ctx, lease, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted lease: %v", err)
	}
}

// parseClientTime reads a time as the scripts print it: RFC 3339 with a fraction of a second.
func parseClientTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Errorf("time %q: %v", s, err)
	}
	return tm
}

// pythonWithClient is a Python that imports the official client: Debian's, which `make
// test-deps` installs, or the first python3 on PATH.
func pythonWithClient(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import kubernetes").Run() == nil {
			return path
		}
	}
	t.Fatal("no python3 that imports kubernetes: run `make test-deps` to install Debian's python3-kubernetes")
	return ""
}

// TestPythonClient runs the official Python client (kubernetes, as Debian ships it) against a
// workshop.
func TestPythonClient(t *testing.T) {
	t.Parallel()
	w, ns, run := runClientScript(t, pythonWithClient(t), filepath.Join("testdata", "clients", "lease_client.py"))
	checkClientRun(t, w, ns, run, "python", "py")
}

// TestJavaScriptClient runs the official JavaScript client (@kubernetes/client-node on
// Node.js) against a workshop, with a LeaseCandidate of its v1beta1 API besides.
func TestJavaScriptClient(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("no node on PATH: install Node.js (Debian's nodejs), then run `make test-deps`")
	}
	dir := filepath.Join("testdata", "clients", "js")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@kubernetes", "client-node", "package.json")); err != nil {
		t.Fatalf("@kubernetes/client-node is not installed in %s: run `make test-deps`", dir)
	}
	w, ns, run := runClientScript(t, node, filepath.Join(dir, "lease_client.mjs"))
	checkClientRun(t, w, ns, run, "javascript", "js")
	if c := run.Candidate; c.RV == "" || c.Lease != "javascript-kept" {
		t.Errorf("LeaseCandidate: %+v", c)
	}
	cand, err := w.client(t, ns).CoordinationV1beta1().LeaseCandidates(ns).Get(ctxT(t, 30*time.Second), "javascript-candidate", metav1.GetOptions{})
	if err != nil || cand.Spec.LeaseName != "javascript-kept" || cand.Spec.Strategy != "OldestEmulationVersion" {
		t.Errorf("the LeaseCandidate as client-go reads it: %+v %v", cand, err)
	}
}
