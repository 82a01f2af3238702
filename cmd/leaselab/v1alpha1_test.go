package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/leaselab/leaselab/web/api/kinds/coordinationv1alpha1"
)

var leaseCandidatesV1alpha1 = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1alpha1", Resource: "leasecandidates"}

func preferredOf(tb testing.TB, u *unstructured.Unstructured) []string {
	tb.Helper()
	list, _, err := unstructured.NestedStringSlice(u.Object, "spec", "preferredStrategies")
	if err != nil {
		tb.Fatalf("spec.preferredStrategies: %v", err)
	}
	return list
}

// LeaseCandidate v1alpha1, as Kubernetes 1.31 served it, through client-go's dynamic client:
// the same stored objects as v1beta1 and v1alpha2, its ordered list kept across versions,
// watchable, server-side appliable, JSON only.
func TestLeaseCandidateV1alpha1(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, 30*time.Second)
	cfg := rest.CopyConfig(ts.Config)
	dyn := dynamic.NewForConfigOrDie(cfg)
	alpha := dyn.Resource(leaseCandidatesV1alpha1).Namespace("default")
	beta := ts.Client.CoordinationV1beta1().LeaseCandidates("default")

	w, err := alpha.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	in := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1alpha1", "kind": "LeaseCandidate",
		"metadata": map[string]any{"name": "old-apiserver"},
		"spec": map[string]any{
			"leaseName": "kube-scheduler", "binaryVersion": "1.31.2", "emulationVersion": "1.31.0",
			"preferredStrategies": []any{"example.com/custom", "OldestEmulationVersion"},
		},
	}}
	created, err := alpha.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through v1alpha1: %v", err)
	}
	if got := preferredOf(t, created); !slices.Equal(got, []string{"example.com/custom", "OldestEmulationVersion"}) {
		t.Errorf("created preferredStrategies = %v", got)
	}
	if _, ok := created.GetAnnotations()[coordinationv1alpha1.PreferredStrategiesAnnotation]; ok {
		t.Errorf("v1alpha1 shows the storage annotation: %v", created.GetAnnotations())
	}

	select {
	case ev := <-w.ResultChan():
		u, ok := ev.Object.(*unstructured.Unstructured)
		if ev.Type != watch.Added || !ok || u.GetAPIVersion() != "coordination.k8s.io/v1alpha1" || len(preferredOf(t, u)) != 2 {
			t.Errorf("watch event = %s %#v", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}

	// The newer versions read the first preference as the strategy.
	b, err := beta.Get(ctx, "old-apiserver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Spec.Strategy != "example.com/custom" || b.Spec.BinaryVersion != "1.31.2" {
		t.Errorf("v1beta1 spec = %+v", b.Spec)
	}
	a2, err := ts.Client.CoordinationV1alpha2().LeaseCandidates("default").Get(ctx, "old-apiserver", metav1.GetOptions{})
	if err != nil || a2.Spec.Strategy != "example.com/custom" {
		t.Errorf("v1alpha2: %v, %+v", err, a2)
	}

	// A v1beta1 client renewing the candidate (get, modify, update) keeps the list.
	b.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	if _, err := beta.Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("v1beta1 update: %v", err)
	}
	got, err := alpha.Get(ctx, "old-apiserver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if list := preferredOf(t, got); !slices.Equal(list, []string{"example.com/custom", "OldestEmulationVersion"}) {
		t.Errorf("after a v1beta1 renewal preferredStrategies = %v", list)
	}
	if _, ok, _ := unstructured.NestedString(got.Object, "spec", "renewTime"); !ok {
		t.Errorf("v1alpha1 lost the renewTime: %v", got.Object["spec"])
	}

	// One that changes the strategy makes it a one-strategy candidate.
	b, _ = beta.Get(ctx, "old-apiserver", metav1.GetOptions{})
	b.Spec.Strategy = coordinationv1.OldestEmulationVersion
	if b, err = beta.Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("v1beta1 strategy change: %v", err)
	}
	if _, ok := b.Annotations[coordinationv1alpha1.PreferredStrategiesAnnotation]; ok {
		t.Errorf("stale list kept after the strategy changed: %v", b.Annotations)
	}
	got, _ = alpha.Get(ctx, "old-apiserver", metav1.GetOptions{})
	if list := preferredOf(t, got); !slices.Equal(list, []string{"OldestEmulationVersion"}) {
		t.Errorf("after a v1beta1 strategy change preferredStrategies = %v", list)
	}

	// Server-side apply through v1alpha1 owns the list as one field (atomic), and a merge patch
	// replaces it whole.
	apply := in.DeepCopy()
	apply.SetName("applied")
	applied, err := alpha.Apply(ctx, "applied", apply, metav1.ApplyOptions{FieldManager: "candidate"})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	mf := applied.GetManagedFields()
	if len(mf) != 1 || mf[0].APIVersion != "coordination.k8s.io/v1alpha1" || !strings.Contains(string(mf[0].FieldsV1.Raw), `"f:preferredStrategies":{}`) {
		t.Errorf("managedFields = %+v", mf)
	}
	patched, err := alpha.Patch(ctx, "applied", types.MergePatchType, []byte(`{"spec":{"preferredStrategies":["OldestEmulationVersion"]}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	if list := preferredOf(t, patched); !slices.Equal(list, []string{"OldestEmulationVersion"}) {
		t.Errorf("patched preferredStrategies = %v", list)
	}

	// Bad input is refused on v1alpha1's paths, and changes nothing.
	bad := in.DeepCopy()
	bad.SetName("bad")
	unstructured.SetNestedStringSlice(bad.Object, []string{"OldestEmulationVersion", "Newest"}, "spec", "preferredStrategies")
	_, err = alpha.Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.preferredStrategies[1].strategy: Unsupported value: "Newest"`) {
		t.Errorf("bad strategy: %v", err)
	}
	unstructured.RemoveNestedField(bad.Object, "spec", "preferredStrategies")
	_, err = alpha.Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.preferredStrategies: Required value") {
		t.Errorf("no strategies: %v", err)
	}
	if _, err := beta.Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("refused candidate stored: %v", err)
	}

	// No protobuf for v1alpha1: 406 and 415, while JSON is picked when offered beside it.
	url := ts.URL + "/apis/coordination.k8s.io/v1alpha1/namespaces/default/leasecandidates/applied"
	for _, tc := range []struct {
		method, accept, contentType string
		want                        int
	}{
		{http.MethodGet, "application/vnd.kubernetes.protobuf", "", http.StatusNotAcceptable},
		{http.MethodGet, "application/vnd.kubernetes.protobuf,application/json", "", http.StatusOK},
		{http.MethodPut, "", "application/vnd.kubernetes.protobuf", http.StatusUnsupportedMediaType},
	} {
		req, _ := http.NewRequestWithContext(ctx, tc.method, url, strings.NewReader("k8s\x00"))
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s Accept=%q Content-Type=%q: %d, want %d: %s", tc.method, tc.accept, tc.contentType, resp.StatusCode, tc.want, body)
		}
		if tc.want == http.StatusOK && resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", resp.Header.Get("Content-Type"))
		}
	}
}

// kubectl lists, reads and explains LeaseCandidate v1alpha1.
func TestKubectlLeaseCandidateV1alpha1(t *testing.T) {
	ts := mustStartServer(t, "")
	manifest := filepath.Join(t.TempDir(), "candidate.yaml")
	os.WriteFile(manifest, []byte(`apiVersion: coordination.k8s.io/v1alpha1
kind: LeaseCandidate
metadata:
  name: from-kubectl
spec:
  leaseName: kube-controller-manager
  binaryVersion: 1.31.0
  emulationVersion: 1.31.0
  preferredStrategies: [OldestEmulationVersion]
`), 0o600)
	out := mustKubectl(t, ts, "apply", "--server-side", "-f", manifest)
	if !strings.Contains(out, "leasecandidate.coordination.k8s.io/from-kubectl serverside-applied") {
		t.Errorf("apply --server-side:\n%s", out)
	}
	out = mustKubectl(t, ts, "get", "leasecandidates.v1alpha1.coordination.k8s.io", "from-kubectl", "-o", "yaml")
	if !strings.Contains(out, "apiVersion: coordination.k8s.io/v1alpha1") || !strings.Contains(out, "- OldestEmulationVersion") {
		t.Errorf("get -o yaml:\n%s", out)
	}
	out = mustKubectl(t, ts, "get", "leasecandidates.v1beta1.coordination.k8s.io", "from-kubectl", "-o", "yaml")
	if !strings.Contains(out, "strategy: OldestEmulationVersion") {
		t.Errorf("get v1beta1 -o yaml:\n%s", out)
	}
	out = mustKubectl(t, ts, "explain", "leasecandidates.spec.preferredStrategies", "--api-version=coordination.k8s.io/v1alpha1")
	if !strings.Contains(out, "preferredStrategies") || !strings.Contains(out, "<[]string>") {
		t.Errorf("explain:\n%s", out)
	}
	var lc coordinationv1beta1.LeaseCandidate
	if err := ts.Client.CoordinationV1beta1().RESTClient().Get().AbsPath("/apis/coordination.k8s.io/v1beta1/namespaces/default/leasecandidates/from-kubectl").Do(context.Background()).Into(&lc); err != nil {
		t.Fatal(err)
	}
	if lc.Spec.LeaseName != "kube-controller-manager" {
		t.Errorf("stored candidate = %+v", lc.Spec)
	}
}
