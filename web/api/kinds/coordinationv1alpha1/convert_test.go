package coordinationv1alpha1_test

import (
	"reflect"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/web/api/kinds/coordinationv1alpha1"
)

const (
	oldest = coordinationv1.OldestEmulationVersion
	custom = coordinationv1.CoordinatedLeaseStrategy("example.com/custom")
	other  = coordinationv1.CoordinatedLeaseStrategy("example.com/other")
)

func alpha1(annotations map[string]string, strategies ...coordinationv1.CoordinatedLeaseStrategy) *coordinationv1alpha1.LeaseCandidate {
	ping := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	return &coordinationv1alpha1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Name: "cand", Namespace: "ns", Annotations: annotations, ResourceVersion: "7"},
		Spec: coordinationv1alpha1.LeaseCandidateSpec{
			LeaseName: "lease", PingTime: &ping, BinaryVersion: "1.31.1", EmulationVersion: "1.31.0",
			PreferredStrategies: strategies,
		},
	}
}

// Every v1alpha1 candidate survives the trip through the stored v1beta1 shape unchanged, its
// own annotations included, and the stored spec.strategy is the first preference.
func TestRoundTripV1alpha1(t *testing.T) {
	for name, in := range map[string]*coordinationv1alpha1.LeaseCandidate{
		"empty list":          alpha1(nil),
		"one strategy":        alpha1(nil, oldest),
		"two strategies":      alpha1(nil, custom, oldest),
		"three, annotated":    alpha1(map[string]string{"team": "a"}, other, custom, oldest),
		"repeated strategies": alpha1(nil, custom, custom),
	} {
		t.Run(name, func(t *testing.T) {
			before := in.DeepCopy()
			stored := coordinationv1alpha1.ToV1beta1(in)
			if !reflect.DeepEqual(in, before) {
				t.Fatalf("ToV1beta1 changed its input: %+v", in)
			}
			var first coordinationv1.CoordinatedLeaseStrategy
			if len(in.Spec.PreferredStrategies) > 0 {
				first = in.Spec.PreferredStrategies[0]
			}
			if stored.Spec.Strategy != first {
				t.Errorf("stored strategy = %q, want %q", stored.Spec.Strategy, first)
			}
			if _, ok := stored.Annotations[coordinationv1alpha1.PreferredStrategiesAnnotation]; !ok {
				t.Errorf("stored object has no %s annotation: %v", coordinationv1alpha1.PreferredStrategiesAnnotation, stored.Annotations)
			}
			back := coordinationv1alpha1.FromV1beta1(&stored)
			if !reflect.DeepEqual(&back, in) {
				t.Errorf("round trip:\n got %+v\nwant %+v", back, *in)
			}
		})
	}
}

// A v1beta1 candidate reads through v1alpha1 as the one-entry list of its strategy, and comes
// back with the same spec.
func TestRoundTripV1beta1(t *testing.T) {
	in := &coordinationv1beta1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Name: "cand", Annotations: map[string]string{"team": "b"}},
		Spec:       coordinationv1beta1.LeaseCandidateSpec{LeaseName: "lease", BinaryVersion: "1.36.0", EmulationVersion: "1.35.0", Strategy: custom},
	}
	a := coordinationv1alpha1.FromV1beta1(in)
	if want := []coordinationv1.CoordinatedLeaseStrategy{custom}; !reflect.DeepEqual(a.Spec.PreferredStrategies, want) {
		t.Errorf("preferredStrategies = %v, want %v", a.Spec.PreferredStrategies, want)
	}
	back := coordinationv1alpha1.ToV1beta1(&a)
	if !reflect.DeepEqual(back.Spec, in.Spec) {
		t.Errorf("spec after the round trip = %+v, want %+v", back.Spec, in.Spec)
	}
	if back.Annotations["team"] != "b" {
		t.Errorf("annotations = %v", back.Annotations)
	}
}

func TestPreferredStrategies(t *testing.T) {
	const key = coordinationv1alpha1.PreferredStrategiesAnnotation
	for _, tc := range []struct {
		name       string
		annotation *string
		strategy   coordinationv1.CoordinatedLeaseStrategy
		want       []coordinationv1.CoordinatedLeaseStrategy
		wantAlpha1 bool
	}{
		{"v1beta1", nil, oldest, []coordinationv1.CoordinatedLeaseStrategy{oldest}, false},
		{"v1beta1 without strategy", nil, "", nil, false},
		{"v1alpha1 list", ptr(`["example.com/custom","OldestEmulationVersion"]`), custom, []coordinationv1.CoordinatedLeaseStrategy{custom, oldest}, true},
		{"v1alpha1 empty list", ptr(`[]`), "", nil, true},
		{"strategy with a comma", ptr(`["a,b"]`), "a,b", []coordinationv1.CoordinatedLeaseStrategy{"a,b"}, true},
		// A newer client changed the strategy: the old list no longer counts.
		{"stale list", ptr(`["example.com/custom","OldestEmulationVersion"]`), oldest, []coordinationv1.CoordinatedLeaseStrategy{oldest}, false},
		{"stale empty list", ptr(`[]`), oldest, []coordinationv1.CoordinatedLeaseStrategy{oldest}, false},
		{"not JSON", ptr(`example.com/custom`), custom, []coordinationv1.CoordinatedLeaseStrategy{custom}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lc := &coordinationv1beta1.LeaseCandidate{Spec: coordinationv1beta1.LeaseCandidateSpec{Strategy: tc.strategy}}
			if tc.annotation != nil {
				lc.Annotations = map[string]string{key: *tc.annotation}
			}
			got, alpha := coordinationv1alpha1.PreferredStrategies(lc)
			if !reflect.DeepEqual(got, tc.want) || alpha != tc.wantAlpha1 {
				t.Errorf("PreferredStrategies = %v, %v; want %v, %v", got, alpha, tc.want, tc.wantAlpha1)
			}
		})
	}
}

func TestDeepCopy(t *testing.T) {
	in := &coordinationv1alpha1.LeaseCandidateList{Items: []coordinationv1alpha1.LeaseCandidate{*alpha1(map[string]string{"a": "b"}, custom, oldest)}}
	out := in.DeepCopyObject().(*coordinationv1alpha1.LeaseCandidateList)
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("copy differs: %+v", out)
	}
	out.Items[0].Spec.PreferredStrategies[0] = other
	out.Items[0].Spec.PingTime.Time = time.Time{}
	out.Items[0].Annotations["a"] = "changed"
	if in.Items[0].Spec.PreferredStrategies[0] != custom || in.Items[0].Spec.PingTime.IsZero() || in.Items[0].Annotations["a"] != "b" {
		t.Errorf("the copy shares memory with the original: %+v", in.Items[0])
	}
}

func ptr(s string) *string { return &s }
