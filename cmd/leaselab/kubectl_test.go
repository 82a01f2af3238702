package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// kubectlMu serializes in-process kubectl runs: kubectl keeps process-wide state (its fatal
// handler, flag defaults).
var kubectlMu sync.Mutex

// kubectlFatal carries a kubectl fatal error out of the command through a panic.
type kubectlFatal struct {
	msg  string
	code int
}

// kubectl runs kubectl's own command in-process against the server with a kubeconfig from
// `leaselab kubeconfig`, and returns its output and error output.
func kubectl(t *testing.T, ts *testServer, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "kubeconfig")
	b, kerr := kubeconfig(ts.URL, "default", "", "leaselab")
	if kerr != nil {
		t.Fatal(kerr)
	}
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return kubectlWith(t, cfgPath, args...)
}

// kubectlWith runs kubectl in-process with a kubeconfig file.
func kubectlWith(t *testing.T, kubeconfigPath string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	kubectlMu.Lock()
	defer kubectlMu.Unlock()
	var out, errOut bytes.Buffer
	cmdutil.BehaviorOnFatal(func(msg string, code int) { panic(kubectlFatal{msg, code}) })
	defer cmdutil.DefaultBehaviorOnFatal()
	full := append([]string{"--kubeconfig", kubeconfigPath, "--cache-dir", filepath.Join(t.TempDir(), "cache")}, args...)
	cmd := kubectlcmd.NewKubectlCommand(kubectlcmd.KubectlOptions{
		Arguments:   append([]string{"kubectl"}, full...),
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		IOStreams:   genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
	})
	cmd.SetArgs(full)
	func() {
		defer func() {
			if r := recover(); r != nil {
				f, ok := r.(kubectlFatal)
				if !ok {
					panic(r)
				}
				err = fmt.Errorf("kubectl exited %d: %s", f.code, f.msg)
			}
		}()
		if e := cmd.Execute(); e != nil {
			err = e
		}
	}()
	return out.String(), errOut.String(), err
}

func mustKubectl(t *testing.T, ts *testServer, args ...string) string {
	t.Helper()
	out, errOut, err := kubectl(t, ts, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// TestKubectl runs the kubectl commands a developer uses against leases.
func TestKubectl(t *testing.T) {
	ts := mustStartServer(t, "")
	manifest := filepath.Join(t.TempDir(), "lease.yaml")
	os.WriteFile(manifest, []byte(`apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: from-kubectl
  labels:
    app: demo
spec:
  holderIdentity: kubectl-user
  leaseDurationSeconds: 15
`), 0o600)

	out := mustKubectl(t, ts, "api-resources", "--api-group=coordination.k8s.io")
	if !strings.Contains(out, "leases") || !strings.Contains(out, "leasecandidates") || !strings.Contains(out, "coordination.k8s.io/v1") {
		t.Errorf("api-resources:\n%s", out)
	}

	out = mustKubectl(t, ts, "apply", "-f", manifest)
	if !strings.Contains(out, "lease.coordination.k8s.io/from-kubectl created") {
		t.Errorf("apply (create):\n%s", out)
	}
	os.WriteFile(manifest, bytes.ReplaceAll(mustRead(t, manifest), []byte("kubectl-user"), []byte("someone-else")), 0o600)
	out = mustKubectl(t, ts, "apply", "-f", manifest)
	if !strings.Contains(out, "configured") {
		t.Errorf("apply (update):\n%s", out)
	}

	out = mustKubectl(t, ts, "get", "leases")
	if !strings.Contains(out, "HOLDER") || !strings.Contains(out, "from-kubectl") || !strings.Contains(out, "someone-else") {
		t.Errorf("get leases (want the Table columns NAME HOLDER AGE):\n%s", out)
	}
	out = mustKubectl(t, ts, "get", "lease", "from-kubectl", "-o", "yaml")
	if !strings.Contains(out, "holderIdentity: someone-else") || !strings.Contains(out, "resourceVersion:") {
		t.Errorf("get -o yaml:\n%s", out)
	}
	out = mustKubectl(t, ts, "describe", "lease", "from-kubectl")
	if !strings.Contains(out, "Holder Identity:") || !strings.Contains(out, "someone-else") {
		t.Errorf("describe:\n%s", out)
	}
	out = mustKubectl(t, ts, "apply", "--server-side", "-f", manifest)
	if !strings.Contains(out, "serverside-applied") {
		t.Errorf("apply --server-side:\n%s", out)
	}
	out = mustKubectl(t, ts, "delete", "lease", "from-kubectl")
	if !strings.Contains(out, `lease.coordination.k8s.io "from-kubectl" deleted`) {
		t.Errorf("delete:\n%s", out)
	}
	if _, _, err := kubectl(t, ts, "get", "lease", "from-kubectl"); err == nil {
		t.Error("get after delete succeeded")
	}
	out = mustKubectl(t, ts, "explain", "leases.spec.holderIdentity")
	if !strings.Contains(out, "holderIdentity") {
		t.Errorf("explain:\n%s", out)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
