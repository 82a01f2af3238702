package discovery

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/cmd"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// kubectlFatal carries a fatal kubectl error out of the command, which would otherwise
// exit the process.
type kubectlFatal struct {
	msg  string
	code int
}

// runKubectl runs kubectl's own command in-process against ts with a fresh cache
// directory and returns what it printed.
func runKubectl(t *testing.T, ts *testServer, args ...string) (stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: leaselab
  cluster:
    server: %s
contexts:
- name: leaselab
  context:
    cluster: leaselab
    user: leaselab
    namespace: default
current-context: leaselab
users:
- name: leaselab
  user: {}
`, ts.URL)
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	kubectl := cmd.NewKubectlCommand(cmd.KubectlOptions{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		IOStreams:   streams,
	})
	kubectl.SetArgs(append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache")}, args...))
	kubectl.SetOut(&out)
	kubectl.SetErr(&errOut)

	cmdutil.BehaviorOnFatal(func(msg string, code int) { panic(kubectlFatal{msg, code}) })
	defer cmdutil.DefaultBehaviorOnFatal()
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(kubectlFatal)
			if !ok {
				panic(r)
			}
			t.Fatalf("kubectl %s: exit %d: %s\nstderr: %s", strings.Join(args, " "), f.code, f.msg, errOut.String())
		}
	}()
	if err := kubectl.Execute(); err != nil {
		t.Fatalf("kubectl %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String()
}

func TestKubectlAPIResources(t *testing.T) {
	ts := MustServer(t)
	out, _ := runKubectl(t, ts, "api-resources")
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		fields := strings.Fields(line)
		rows[fields[0]] = strings.Join(fields[1:], " ")
	}
	for name, want := range map[string]string{
		"leases":          "coordination.k8s.io/v1 true Lease",
		"leasecandidates": "coordination.k8s.io/v1beta1 true LeaseCandidate",
		"namespaces":      "ns v1 false Namespace",
		"events":          "ev v1 true Event",
	} {
		if rows[name] != want {
			t.Errorf("api-resources %s: %q, want %q\n%s", name, rows[name], want, out)
		}
	}
	if len(rows) != 4 {
		t.Errorf("api-resources lists %d resources:\n%s", len(rows), out)
	}
}

func TestKubectlExplain(t *testing.T) {
	ts := MustServer(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"explain", "leases.spec.holderIdentity"}, []string{
			`(?m)^GROUP:\s+coordination.k8s.io$`, `(?m)^KIND:\s+Lease$`, `(?m)^VERSION:\s+v1$`,
			`(?m)^FIELD: holderIdentity <string>$`,
			`holderIdentity contains the identity of the holder of a current lease`,
		}},
		{[]string{"explain", "leasecandidates", "--api-version=coordination.k8s.io/v1beta1"}, []string{
			`(?m)^KIND:\s+LeaseCandidate$`, `(?m)^VERSION:\s+v1beta1$`,
			`LeaseCandidate defines a candidate for a Lease object`,
			`(?m)^  spec\s+<LeaseCandidateSpec> -required-$`,
		}},
		{[]string{"explain", "leasecandidates.spec", "--api-version=coordination.k8s.io/v1alpha2"}, []string{
			`(?m)^VERSION:\s+v1alpha2$`, `(?m)^  leaseName\s+<string> -required-$`, `(?m)^  strategy\s+<string> -required-$`,
		}},
		{[]string{"explain", "namespaces.status.phase"}, []string{`(?m)^FIELD: phase <string>$`, `(?m)^ENUM:$`, `Terminating`}},
		{[]string{"explain", "leases", "--recursive"}, []string{`(?m)^    holderIdentity\s+<string>$`, `(?m)^    managedFields\s+<\[\]ManagedFieldsEntry>$`}},
	} {
		out, _ := runKubectl(t, ts, tc.args...)
		for _, want := range tc.want {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("kubectl %s: output lacks %s:\n%s", strings.Join(tc.args, " "), want, out)
			}
		}
	}
}
