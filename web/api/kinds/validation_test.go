package kinds_test

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/leaselab/leaselab/web/api/kinds"
)

// TestUpdateMetadataRulesAsComposed checks the update validation of the kinds that check
// metadata twice against apimachinery's metadata rules composed as the real server runs them:
// the generic registry's (ValidateObjectMetaAccessor, ValidateObjectMetaAccessorUpdate), then
// the kind's own, which for these kinds include ValidateObjectMetaUpdate. The kinds compute
// the update rules once and report them twice; the errors must be the same, in the same order.
func TestUpdateMetadataRulesAsComposed(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	validName := func(string, bool) []string { return nil }
	deleting := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	mutations := []struct {
		name   string
		mutate func(m, old *metav1.ObjectMeta)
	}{
		{"none", func(m, old *metav1.ObjectMeta) {}},
		{"invalid label", func(m, old *metav1.ObjectMeta) { m.Labels = map[string]string{"bad key!": "v"} }},
		{"invalid annotation", func(m, old *metav1.ObjectMeta) { m.Annotations = map[string]string{"/x": "v"} }},
		{"uid and namespace changed", func(m, old *metav1.ObjectMeta) { m.UID = "other"; m.Namespace = "elsewhere" }},
		{"no resourceVersion", func(m, old *metav1.ObjectMeta) { m.ResourceVersion = "" }},
		{"generation decremented", func(m, old *metav1.ObjectMeta) { old.Generation = 5; m.Generation = 4 }},
		{"owner reference without kind", func(m, old *metav1.ObjectMeta) {
			m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Name: "o", UID: "u"}}
		}},
		{"managed fields without operation", func(m, old *metav1.ObjectMeta) {
			m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", APIVersion: "v1", FieldsType: "FieldsV1"}}
		}},
		{"finalizer added while deleting", func(m, old *metav1.ObjectMeta) {
			old.DeletionTimestamp, m.DeletionTimestamp = &deleting, &deleting
			m.Finalizers = []string{"example.com/new"}
		}},
		{"everything at once", func(m, old *metav1.ObjectMeta) {
			m.Labels = map[string]string{"bad key!": "v"}
			m.UID, m.ResourceVersion = "other", ""
			m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", APIVersion: "v1", FieldsType: "nope", Operation: "Apply"}}
		}},
	}
	objects := []struct {
		resource   string
		namespaced bool
		new        func() (obj runtime.Object, m *metav1.ObjectMeta)
		// ownRules are the kind's own metadata rules in the real server, as apimachinery's.
		ownRules func(m, old *metav1.ObjectMeta) field.ErrorList
	}{
		{"leases.coordination.k8s.io", true, func() (runtime.Object, *metav1.ObjectMeta) {
			l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: new("a")}}
			return l, &l.ObjectMeta
		}, metaUpdate},
		{"leasecandidates.coordination.k8s.io", true, func() (runtime.Object, *metav1.ObjectMeta) {
			lc := &coordinationv1beta1.LeaseCandidate{Spec: coordinationv1beta1.LeaseCandidateSpec{
				LeaseName: "demo", BinaryVersion: "1.36.0", EmulationVersion: "1.36.0",
				Strategy: coordinationv1.OldestEmulationVersion,
			}}
			return lc, &lc.ObjectMeta
		}, metaUpdate},
		{"namespaces", false, func() (runtime.Object, *metav1.ObjectMeta) {
			ns := &corev1.Namespace{}
			return ns, &ns.ObjectMeta
		}, func(m, old *metav1.ObjectMeta) field.ErrorList {
			errs := apivalidation.ValidateObjectMeta(m, false, apivalidation.ValidateNamespaceName, field.NewPath("metadata"))
			return append(errs, metaUpdate(m, old)...)
		}},
	}
	for _, o := range objects {
		k := MustKind(t, reg, o.resource)
		for _, mu := range mutations {
			t.Run(o.resource+"/"+mu.name, func(t *testing.T) {
				old, oldMeta := o.new()
				*oldMeta = metav1.ObjectMeta{Name: "demo", UID: "uid-1", ResourceVersion: "7",
					Labels: map[string]string{"app": "demo"}}
				if o.namespaced {
					oldMeta.Namespace = "default"
				}
				obj := old.DeepCopyObject()
				m := objectMeta(t, obj)
				mu.mutate(m, oldMeta)

				want := apivalidation.ValidateObjectMetaAccessor(m, o.namespaced, validName, field.NewPath("metadata"))
				want = append(want, apivalidation.ValidateObjectMetaAccessorUpdate(m, oldMeta, field.NewPath("metadata"))...)
				want = append(want, o.ownRules(m, oldMeta)...)
				got := k.ValidateUpdate(obj, old)
				if mu.name != "none" && len(want) == 0 {
					t.Fatal("the mutation breaks no rule: it tests nothing")
				}
				checkErrs(t, got, asFieldErrs(want))
			})
		}
	}
}

func metaUpdate(m, old *metav1.ObjectMeta) field.ErrorList {
	return apivalidation.ValidateObjectMetaUpdate(m, old, field.NewPath("metadata"))
}

// objectMeta returns the ObjectMeta inside one of the test's objects.
func objectMeta(t *testing.T, obj runtime.Object) *metav1.ObjectMeta {
	t.Helper()
	switch o := obj.(type) {
	case *coordinationv1.Lease:
		return &o.ObjectMeta
	case *coordinationv1beta1.LeaseCandidate:
		return &o.ObjectMeta
	case *corev1.Namespace:
		return &o.ObjectMeta
	}
	t.Fatalf("no metadata in %T", obj)
	return nil
}

func asFieldErrs(errs field.ErrorList) []fieldErr {
	out := make([]fieldErr, 0, len(errs))
	for _, e := range errs {
		out = append(out, fieldErr{Field: e.Field, Type: e.Type, Body: e.ErrorBody()})
	}
	return out
}

// BenchmarkLeaseValidateUpdate is the validation of one renewal: a Lease with a label and
// client-go's managed fields entry, its renewTime moved on.
func BenchmarkLeaseValidateUpdate(b *testing.B) {
	k := MustKind(b, kinds.NewRegistry(kinds.DefaultOptions()), "leases.coordination.k8s.io")
	at := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	old := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "elector-1", Namespace: "leaselab-bench", UID: "uid-1", ResourceVersion: "7",
			Labels: map[string]string{"app.kubernetes.io/created-by": "leaselab-bench"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "bench", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "coordination.k8s.io/v1", FieldsType: "FieldsV1", Time: &metav1.Time{Time: at.Time},
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/created-by":{}}},"f:spec":{"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:renewTime":{}}}`)}}},
		},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: new("elector-1"), LeaseDurationSeconds: new(int32(15)), RenewTime: &at},
	}
	obj := old.DeepCopy()
	obj.Spec.RenewTime = &metav1.MicroTime{Time: at.Add(time.Second)}
	for b.Loop() {
		if errs := k.ValidateUpdate(obj, old); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
