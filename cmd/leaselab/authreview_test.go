package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubectlAuth: kubectl auth can-i and kubectl auth whoami answer from the workshop's token
// rules: a participant writes in its own namespace and the arena, reads everywhere, writes
// nowhere else; the instructor may do everything; on a server without tokens everyone is
// anonymous and allowed.
func TestKubectlAuth(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leaselab.db")
	w := mustStartWorkshop(t, 1, db, nil)
	kubeconfigOf := func(user string) string {
		var out, errOut bytes.Buffer
		if err := runKubeconfig(context.Background(), []string{"--server", w.URL, "--db", db, "--token", w.tokens[user]}, &out, &errOut); err != nil {
			t.Fatal(err, errOut.String())
		}
		path := filepath.Join(t.TempDir(), user+".kubeconfig")
		if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	participant, instructor := kubeconfigOf("participant-01"), kubeconfigOf("instructor")
	for _, tc := range []struct {
		kubeconfig string
		args       []string
		want       string
	}{
		{participant, []string{"create", "leases", "-n", "participant-01"}, "yes"},
		{participant, []string{"update", "leases", "-n", "arena"}, "yes"},
		{participant, []string{"list", "leases", "-A"}, "yes"},
		{participant, []string{"watch", "leasecandidates.coordination.k8s.io", "-n", "default"}, "yes"},
		{instructor, []string{"delete", "leases", "-n", "participant-01"}, "yes"},
		{instructor, []string{"create", "namespaces"}, "yes"},
	} {
		out, errOut, _ := kubectlWith(t, tc.kubeconfig, append([]string{"auth", "can-i"}, tc.args...)...)
		if strings.TrimSpace(out) != tc.want {
			t.Errorf("%s: kubectl auth can-i %s: %q %q, want %s", filepath.Base(tc.kubeconfig), strings.Join(tc.args, " "), out, errOut, tc.want)
		}
	}
	// A "no" ends kubectl with exit 1, which in this process would end the test: the review
	// kubectl sends is sent here by client-go.
	c := w.client(t, "participant-01")
	for _, ns := range []string{"default", "participant-02"} {
		review, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctxT(t, 10*time.Second), &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: "create", Group: "coordination.k8s.io", Resource: "leases"}},
		}, metav1.CreateOptions{})
		if err != nil || review.Status.Allowed || !strings.Contains(review.Status.Reason, "participants write only in their namespace") {
			t.Errorf("may participant-01 create leases in %s: %+v, %v; want no, with the reason", ns, review, err)
		}
	}
	if out, errOut, err := kubectlWith(t, participant, "auth", "whoami"); err != nil || !strings.Contains(out, "participant-01") || !strings.Contains(out, "system:authenticated") {
		t.Errorf("kubectl auth whoami as a participant: %v\n%s%s", err, out, errOut)
	}

	open := mustStartServer(t, "")
	if out, errOut, err := kubectl(t, open, "auth", "whoami"); err != nil || !strings.Contains(out, "system:anonymous") {
		t.Errorf("kubectl auth whoami without tokens: %v\n%s%s", err, out, errOut)
	}
	if out, errOut, _ := kubectl(t, open, "auth", "can-i", "delete", "leases", "-A"); strings.TrimSpace(out) != "yes" {
		t.Errorf("kubectl auth can-i without tokens: %q %q", out, errOut)
	}
}
