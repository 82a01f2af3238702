package kinds_test

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/randfill"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/api/kinds/coordinationv1alpha1"
)

const customStrategy = coordinationv1.CoordinatedLeaseStrategy("example.com/custom")

func newAlpha1Candidate(mutate func(*coordinationv1alpha1.LeaseCandidate)) *coordinationv1alpha1.LeaseCandidate {
	lc := &coordinationv1alpha1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Name: "sample-candidate", Namespace: "default"},
		Spec: coordinationv1alpha1.LeaseCandidateSpec{
			LeaseName:           "sample-component",
			BinaryVersion:       "1.31.1",
			EmulationVersion:    "1.31.0",
			PreferredStrategies: []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion},
		},
	}
	if mutate != nil {
		mutate(lc)
	}
	return lc
}

// stored converts a v1alpha1 candidate to the storage version through the registry, as the API
// server does before it validates.
func stored(tb testing.TB, reg *kinds.Registry, lc *coordinationv1alpha1.LeaseCandidate) *coordinationv1beta1.LeaseCandidate {
	tb.Helper()
	out, err := reg.Convert(lc, coordinationv1beta1.SchemeGroupVersion)
	if err != nil {
		tb.Fatal(err)
	}
	return out.(*coordinationv1beta1.LeaseCandidate)
}

// A candidate written through v1alpha1 is validated by the 1.31 rules, on v1alpha1's field
// paths: preferredStrategies required, each entry a strategy, versions required only for
// OldestEmulationVersion.
func TestLeaseCandidateV1alpha1Validate(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	k := MustKind(t, reg, "leasecandidates.coordination.k8s.io")
	required := "Required value: must be specified when `strategy` is 'OldestEmulationVersion'"
	tests := []struct {
		name   string
		mutate func(*coordinationv1alpha1.LeaseCandidate)
		want   []fieldErr
	}{
		{name: "valid"},
		{name: "two strategies", mutate: func(lc *coordinationv1alpha1.LeaseCandidate) {
			lc.Spec.PreferredStrategies = []coordinationv1.CoordinatedLeaseStrategy{customStrategy, coordinationv1.OldestEmulationVersion}
		}},
		{name: "custom strategy needs no versions", mutate: func(lc *coordinationv1alpha1.LeaseCandidate) {
			lc.Spec.BinaryVersion, lc.Spec.EmulationVersion = "", ""
			lc.Spec.PreferredStrategies = []coordinationv1.CoordinatedLeaseStrategy{customStrategy}
		}},
		{name: "empty spec", mutate: func(lc *coordinationv1alpha1.LeaseCandidate) { lc.Spec = coordinationv1alpha1.LeaseCandidateSpec{} }, want: []fieldErr{
			{"spec.leaseName", field.ErrorTypeRequired, "Required value"},
			{"spec.preferredStrategies", field.ErrorTypeRequired, "Required value"},
		}},
		{name: "oldest emulation version without versions", mutate: func(lc *coordinationv1alpha1.LeaseCandidate) {
			lc.Spec.BinaryVersion, lc.Spec.EmulationVersion = "", ""
			lc.Spec.PreferredStrategies = []coordinationv1.CoordinatedLeaseStrategy{customStrategy, coordinationv1.OldestEmulationVersion}
		}, want: []fieldErr{
			{"spec.binaryVersion", field.ErrorTypeRequired, required},
			{"spec.emulationVersion", field.ErrorTypeRequired, required},
		}},
		{name: "bad entry", mutate: func(lc *coordinationv1alpha1.LeaseCandidate) {
			lc.Spec.PreferredStrategies = []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion, "Newest"}
		}, want: []fieldErr{
			{"spec.preferredStrategies[1].strategy", field.ErrorTypeNotSupported, `Unsupported value: "Newest": supported values: "OldestEmulationVersion"`},
		}},
		{name: "emulation newer than binary", mutate: func(lc *coordinationv1alpha1.LeaseCandidate) { lc.Spec.EmulationVersion = "1.32.0" }, want: []fieldErr{
			{"spec.binaryVersion", field.ErrorTypeInvalid, "Invalid value: \"1.31.1\": must be greater than or equal to `emulationVersion`"},
		}},
		// 1.31 meant to refuse repeated strategies but never did; a repeat changes no decision.
		{name: "repeated strategy", mutate: func(lc *coordinationv1alpha1.LeaseCandidate) {
			lc.Spec.PreferredStrategies = []coordinationv1.CoordinatedLeaseStrategy{customStrategy, customStrategy}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, k.Validate(stored(t, reg, newAlpha1Candidate(tt.mutate))), tt.want)
		})
	}
}

// A newer client that changes the strategy of a v1alpha1 candidate makes it a v1beta1 one:
// the stale list is dropped before it is stored, and v1beta1's rules apply.
func TestLeaseCandidateStalePreferredStrategies(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	k := MustKind(t, reg, "leasecandidates.coordination.k8s.io")
	old := stored(t, reg, newAlpha1Candidate(func(lc *coordinationv1alpha1.LeaseCandidate) {
		lc.ResourceVersion = "3"
		lc.Spec.PreferredStrategies = []coordinationv1.CoordinatedLeaseStrategy{customStrategy, coordinationv1.OldestEmulationVersion}
	}))

	same := old.DeepCopy()
	k.PrepareForUpdate(same, old)
	if _, ok := same.Annotations[coordinationv1alpha1.PreferredStrategiesAnnotation]; !ok {
		t.Errorf("an update that keeps the strategy lost the list: %v", same.Annotations)
	}

	changed := old.DeepCopy()
	changed.Spec.Strategy = coordinationv1.OldestEmulationVersion
	k.PrepareForUpdate(changed, old)
	if changed.Annotations != nil {
		t.Errorf("annotations after a strategy change = %v, want none", changed.Annotations)
	}
	checkErrs(t, k.ValidateUpdate(changed, old), nil)
}

// Randomly filled v1alpha1 candidates survive v1alpha1 -> v1beta1 -> v1alpha2 -> v1alpha1
// through the scheme, strategies with commas and odd characters included.
func TestConvertLeaseCandidateV1alpha1RoundTrip(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	filler := randfill.NewWithSeed(2).NilChance(0.2).NumElements(0, 4)
	path := []schema.GroupVersion{
		coordinationv1beta1.SchemeGroupVersion, coordinationv1alpha2.SchemeGroupVersion, coordinationv1alpha1.SchemeGroupVersion,
	}
	for i := 0; i < 100; i++ {
		in := &coordinationv1alpha1.LeaseCandidate{}
		filler.Fill(in)
		in.TypeMeta = metav1.TypeMeta{}
		if len(in.Spec.PreferredStrategies) == 0 {
			in.Spec.PreferredStrategies = nil // an empty list reads back as none
		}
		original := in.DeepCopy()
		var obj runtime.Object = in
		for _, gv := range path {
			var err error
			if obj, err = reg.Convert(obj, gv); err != nil {
				t.Fatal(err)
			}
		}
		out := obj.(*coordinationv1alpha1.LeaseCandidate)
		out.TypeMeta = metav1.TypeMeta{}
		if !apiequality.Semantic.DeepEqual(out, original) {
			t.Fatalf("round trip differs:\nin:  %+v\nout: %+v", original, out)
		}
		if !apiequality.Semantic.DeepEqual(in, original) {
			t.Fatalf("Convert modified its input")
		}
	}
}

// The type converter knows v1alpha1, which client-go does not ship: preferredStrategies is an
// atomic list, so the field manager owns it whole.
func TestTypeConverterKnowsV1alpha1(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	tc, err := reg.TypeConverter()
	if err != nil {
		t.Fatal(err)
	}
	lc := newAlpha1Candidate(func(lc *coordinationv1alpha1.LeaseCandidate) {
		lc.Spec.PreferredStrategies = []coordinationv1.CoordinatedLeaseStrategy{customStrategy, coordinationv1.OldestEmulationVersion}
	})
	lc.SetGroupVersionKind(coordinationv1alpha1.SchemeGroupVersion.WithKind("LeaseCandidate"))
	tv, err := tc.ObjectToTyped(lc)
	if err != nil {
		t.Fatalf("ObjectToTyped: %v", err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	list := fieldpath.MakePathOrDie("spec", "preferredStrategies")
	if !set.Has(list) {
		t.Errorf("field set %s lacks spec.preferredStrategies", set)
	}
	if child := fieldpath.MakePathOrDie("spec", "preferredStrategies", fieldpath.PathElement{Index: ptrInt(0)}); set.Has(child) {
		t.Errorf("field set has list items (%s): the list is not atomic", set)
	}
	if set.Has(fieldpath.MakePathOrDie("spec", "strategy")) {
		t.Errorf("v1alpha1 has no spec.strategy, yet the field set has it: %s", set)
	}
	beta := stored(t, reg, lc)
	beta.SetGroupVersionKind(coordinationv1beta1.SchemeGroupVersion.WithKind("LeaseCandidate"))
	if _, err := tc.ObjectToTyped(beta); err != nil {
		t.Errorf("v1beta1 with the annotation: %v", err)
	}
}

func ptrInt(i int) *int { return &i }
