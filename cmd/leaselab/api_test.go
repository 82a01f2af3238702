package main

import (
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coordinationapply "k8s.io/client-go/applyconfigurations/coordination/v1"
	"k8s.io/utils/ptr"
)

func newLease(name, holder string, labels map[string]string) *coordinationv1.Lease {
	now := metav1.NewMicroTime(time.Now())
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(holder),
			LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime:          &now,
			RenewTime:            &now,
			LeaseTransitions:     ptr.To[int32](0),
		},
	}
}

// TestTypedClientLeases drives the Lease API with client-go's typed client and its default
// settings, which send protobuf bodies.
func TestTypedClientLeases(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, time.Minute)
	leases := ts.Client.CoordinationV1().Leases("default")

	created, err := leases.Create(ctx, newLease("demo", "a", map[string]string{"app": "x"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
		t.Fatalf("server-set metadata missing: %+v", created.ObjectMeta)
	}
	if len(created.ManagedFields) != 1 || created.ManagedFields[0].Manager != "leaselab-test" || created.ManagedFields[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("managedFields = %+v, want one Update entry by leaselab-test", created.ManagedFields)
	}
	if _, err := leases.Create(ctx, newLease("demo", "a", nil), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: got %v, want AlreadyExists", err)
	}

	got, err := leases.Get(ctx, "demo", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if *got.Spec.HolderIdentity != "a" || got.ResourceVersion != created.ResourceVersion {
		t.Errorf("get = %+v", got)
	}
	if _, err := leases.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get missing: got %v, want NotFound", err)
	}

	// An update with the current resourceVersion wins; the same stale one then conflicts.
	upd := got.DeepCopy()
	upd.Spec.HolderIdentity = ptr.To("b")
	updated, err := leases.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if updated.ResourceVersion == got.ResourceVersion {
		t.Errorf("resourceVersion did not change on update")
	}
	stale := got.DeepCopy()
	stale.Spec.HolderIdentity = ptr.To("c")
	if _, err := leases.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale update: got %v, want Conflict", err)
	}
	noRV := updated.DeepCopy()
	noRV.ResourceVersion = ""
	if _, err := leases.Update(ctx, noRV, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("update without resourceVersion: got %v, want Invalid", err)
	}

	// Validation: 422 with causes.
	bad := newLease("bad", "a", nil)
	bad.Spec.LeaseDurationSeconds = ptr.To[int32](0)
	bad.Spec.PreferredHolder = ptr.To("x")
	_, err = leases.Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("invalid create: got %v, want Invalid", err)
	}
	st := err.(apierrors.APIStatus).Status()
	if st.Details == nil || len(st.Details.Causes) != 2 {
		t.Errorf("causes = %+v, want two", st.Details)
	}

	// dryRun creates nothing.
	dry, err := leases.Create(ctx, newLease("dry", "a", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || dry.UID == "" || dry.ResourceVersion != "" {
		t.Errorf("dry-run create = %+v, %v", dry.ObjectMeta, err)
	}
	if _, err := leases.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run object was stored: %v", err)
	}

	// generateName.
	gen := newLease("", "a", nil)
	gen.GenerateName = "gen-"
	g, err := leases.Create(ctx, gen, metav1.CreateOptions{})
	if err != nil || len(g.Name) != len("gen-")+5 {
		t.Errorf("generateName create = %q, %v", g.GetName(), err)
	}

	// Delete with a stale resourceVersion precondition conflicts; without, it deletes.
	err = leases.Delete(ctx, "demo", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To(got.ResourceVersion)}})
	if !apierrors.IsConflict(err) {
		t.Errorf("delete with stale precondition: got %v, want Conflict", err)
	}
	if err := leases.Delete(ctx, "demo", metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete: %v", err)
	}
	if err := leases.Delete(ctx, "demo", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("second delete: got %v, want NotFound", err)
	}
}

// TestListSelectorsPagination lists more leases than the page size, with selectors, and
// deletes a selection with deletecollection.
func TestListSelectorsPagination(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, time.Minute)
	leases := ts.Client.CoordinationV1().Leases("pages")
	const n = 25
	for i := 0; i < n; i++ {
		team := "red"
		if i%2 == 1 {
			team = "blue"
		}
		if _, err := leases.Create(ctx, newLease(fmt.Sprintf("lease-%02d", i), "h", map[string]string{"team": team}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Another namespace must not leak into a namespaced list.
	if _, err := ts.Client.CoordinationV1().Leases("other").Create(ctx, newLease("lease-00", "h", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var names []string
	opts := metav1.ListOptions{Limit: 10}
	pages := 0
	var firstRV string
	for {
		l, err := leases.List(ctx, opts)
		if err != nil {
			t.Fatalf("list page %d: %v", pages, err)
		}
		pages++
		if firstRV == "" {
			firstRV = l.ResourceVersion
			// A write between pages must not show up in later pages: they read one revision.
			if _, err := leases.Create(ctx, newLease("lease-99", "h", nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		} else if l.ResourceVersion != firstRV {
			t.Errorf("page %d resourceVersion %s, want %s", pages, l.ResourceVersion, firstRV)
		}
		for _, it := range l.Items {
			names = append(names, it.Name)
		}
		if l.Continue == "" {
			break
		}
		if l.RemainingItemCount == nil {
			t.Errorf("page %d: remainingItemCount missing", pages)
		}
		opts.Continue = l.Continue
	}
	if pages != 3 || len(names) != n {
		t.Fatalf("got %d items in %d pages, want %d in 3: %v", len(names), pages, n, names)
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("not sorted: %v", names)
		}
	}

	blue, err := leases.List(ctx, metav1.ListOptions{LabelSelector: "team=blue"})
	if err != nil || len(blue.Items) != 12 {
		t.Fatalf("label selector: %d items, %v", len(blue.Items), err)
	}
	one, err := leases.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=lease-07"})
	if err != nil || len(one.Items) != 1 || one.Items[0].Name != "lease-07" {
		t.Fatalf("field selector: %+v, %v", one.Items, err)
	}
	if _, err := leases.List(ctx, metav1.ListOptions{FieldSelector: "spec.holderIdentity=h"}); !apierrors.IsBadRequest(err) {
		t.Errorf("unsupported field selector: got %v, want BadRequest", err)
	}
	if _, err := leases.List(ctx, metav1.ListOptions{Limit: 1, Continue: "not-a-token"}); !apierrors.IsBadRequest(err) {
		t.Errorf("bad continue: got %v, want BadRequest", err)
	}
	all, err := ts.Client.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{})
	if err != nil || len(all.Items) != n+2 {
		t.Fatalf("all namespaces: %d items, %v", len(all.Items), err)
	}

	if err := leases.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "team=red"}); err != nil {
		t.Fatalf("deletecollection: %v", err)
	}
	left, err := leases.List(ctx, metav1.ListOptions{})
	if err != nil || len(left.Items) != 12+1 {
		t.Fatalf("after deletecollection: %d items, %v", len(left.Items), err)
	}
	for _, it := range left.Items {
		if it.Labels["team"] == "red" {
			t.Errorf("%s survived deletecollection", it.Name)
		}
	}
}

// TestPatchTypes applies every patch type through the typed client.
func TestPatchTypes(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, time.Minute)
	leases := ts.Client.CoordinationV1().Leases("default")
	if _, err := leases.Create(ctx, newLease("p", "a", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	holder := func() string {
		l, err := leases.Get(ctx, "p", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return *l.Spec.HolderIdentity
	}

	if _, err := leases.Patch(ctx, "p", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/holderIdentity","value":"json"}]`), metav1.PatchOptions{}); err != nil || holder() != "json" {
		t.Errorf("json patch: %v", err)
	}
	if _, err := leases.Patch(ctx, "p", types.JSONPatchType, []byte(`[{"op":"test","path":"/spec/holderIdentity","value":"nope"}]`), metav1.PatchOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("failed json patch test: got %v, want Invalid", err)
	}
	if _, err := leases.Patch(ctx, "p", types.MergePatchType, []byte(`{"spec":{"holderIdentity":"merge"}}`), metav1.PatchOptions{}); err != nil || holder() != "merge" {
		t.Errorf("merge patch: %v", err)
	}
	if _, err := leases.Patch(ctx, "p", types.MergePatchType, []byte(`{"spec":{"leaseDurationSeconds":0}}`), metav1.PatchOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("invalid merge patch: got %v, want Invalid", err)
	}
	if _, err := leases.Patch(ctx, "p", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"1"},"spec":{"holderIdentity":"x"}}`), metav1.PatchOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("merge patch with stale resourceVersion: got %v, want Conflict", err)
	}
	if _, err := leases.Patch(ctx, "p", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"k":"v"}},"spec":{"holderIdentity":"strategic"}}`), metav1.PatchOptions{}); err != nil || holder() != "strategic" {
		t.Errorf("strategic merge patch: %v", err)
	}
	if _, err := leases.Patch(ctx, "missing", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("patch missing: got %v, want NotFound", err)
	}

	// Server-side apply: creates, records the manager, conflicts with another manager's field
	// unless forced.
	cfg := coordinationapply.Lease("applied", "default").WithSpec(coordinationapply.LeaseSpec().WithHolderIdentity("alice").WithLeaseDurationSeconds(30))
	applied, err := leases.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatalf("apply create: %v", err)
	}
	if len(applied.ManagedFields) != 1 || applied.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply || applied.ManagedFields[0].Manager != "alice" {
		t.Errorf("managedFields after apply = %+v", applied.ManagedFields)
	}
	bob := coordinationapply.Lease("applied", "default").WithSpec(coordinationapply.LeaseSpec().WithHolderIdentity("bob"))
	_, err = leases.Apply(ctx, bob, metav1.ApplyOptions{FieldManager: "bob"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("conflicting apply: got %v, want Conflict", err)
	}
	forced, err := leases.Apply(ctx, bob, metav1.ApplyOptions{FieldManager: "bob", Force: true})
	if err != nil || *forced.Spec.HolderIdentity != "bob" || *forced.Spec.LeaseDurationSeconds != 30 {
		t.Fatalf("forced apply = %+v, %v", forced, err)
	}
}

// TestLeaseCandidates covers the LeaseCandidate API in v1beta1 and the same objects through
// v1alpha2.
func TestLeaseCandidates(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, time.Minute)
	cands := ts.Client.CoordinationV1beta1().LeaseCandidates("kube-system")
	now := metav1.NewMicroTime(time.Now())
	c := &coordinationv1beta1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a_1234"},
		Spec: coordinationv1beta1.LeaseCandidateSpec{
			LeaseName:        "kube-scheduler",
			RenewTime:        &now,
			BinaryVersion:    "1.36.0",
			EmulationVersion: "1.35.0",
			Strategy:         coordinationv1.OldestEmulationVersion,
		},
	}
	created, err := cands.Create(ctx, c, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	bad := c.DeepCopy()
	bad.Name = "bad"
	bad.Spec.BinaryVersion = "v1.36"
	if _, err := cands.Create(ctx, bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("bad binaryVersion: got %v, want Invalid", err)
	}
	moved := created.DeepCopy()
	moved.Spec.LeaseName = "elsewhere"
	if _, err := cands.Update(ctx, moved, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("leaseName change: got %v, want Invalid (immutable)", err)
	}

	alpha, err := ts.Client.CoordinationV1alpha2().LeaseCandidates("kube-system").Get(ctx, "node-a_1234", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get through v1alpha2: %v", err)
	}
	if alpha.Spec.LeaseName != "kube-scheduler" || alpha.Spec.BinaryVersion != "1.36.0" || alpha.ResourceVersion != created.ResourceVersion {
		t.Errorf("v1alpha2 view = %+v", alpha)
	}
	upd := alpha.DeepCopy()
	upd.Spec.EmulationVersion = "1.36.0"
	if _, err := ts.Client.CoordinationV1alpha2().LeaseCandidates("kube-system").Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update through v1alpha2: %v", err)
	}
	back, err := cands.Get(ctx, "node-a_1234", metav1.GetOptions{})
	if err != nil || back.Spec.EmulationVersion != "1.36.0" {
		t.Fatalf("v1beta1 after v1alpha2 update = %+v, %v", back, err)
	}
	recorded := false
	for _, mf := range back.ManagedFields {
		recorded = recorded || mf.APIVersion == coordinationv1alpha2.SchemeGroupVersion.String()
	}
	if !recorded {
		t.Errorf("managedFields = %+v, want the v1alpha2 update recorded", back.ManagedFields)
	}
	list, err := cands.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if _, err := cands.Patch(ctx, "node-a_1234", types.MergePatchType, []byte(`{"spec":{"leaseName":"x"}}`), metav1.PatchOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("leaseName patch: got %v, want Invalid", err)
	}
	if err := cands.Delete(ctx, "node-a_1234", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

// TestNamespacesAndEvents covers what kubectl and event recorders touch in core v1.
func TestNamespacesAndEvents(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, time.Minute)
	// Writing in a namespace creates it.
	if _, err := ts.Client.CoordinationV1().Leases("team-a").Create(ctx, newLease("x", "h", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := ts.Client.CoreV1().Namespaces().Get(ctx, "team-a", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != "Active" {
		t.Fatalf("namespace = %+v, %v", ns, err)
	}
	ev, err := ts.Client.CoreV1().Events("team-a").Create(ctx, leaseEvent("team-a", "x"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create event: %v", err)
	}
	evs, err := ts.Client.CoreV1().Events("team-a").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=x,involvedObject.kind=Lease"})
	if err != nil || len(evs.Items) != 1 || evs.Items[0].Name != ev.Name {
		t.Fatalf("list events = %+v, %v", evs, err)
	}
	// Deleting the namespace deletes what is in it.
	if err := ts.Client.CoreV1().Namespaces().Delete(ctx, "team-a", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete namespace: %v", err)
	}
	if _, err := ts.Client.CoordinationV1().Leases("team-a").Get(ctx, "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("lease survived its namespace: %v", err)
	}
	if _, err := ts.Client.CoreV1().Namespaces().Get(ctx, "team-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace still there: %v", err)
	}
	// And it comes back when used again.
	if _, err := ts.Client.CoordinationV1().Leases("team-a").Create(ctx, newLease("x", "h", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Client.CoreV1().Namespaces().Get(ctx, "team-a", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace not re-created: %v", err)
	}
}
