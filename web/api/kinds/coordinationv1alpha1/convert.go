package coordinationv1alpha1

import (
	"encoding/json"
	"maps"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/leaselab/leaselab/web/api/kinds/convpair"
)

// PreferredStrategiesAnnotation holds, on a LeaseCandidate written through v1alpha1, its whole
// preferredStrategies list as a JSON array of strings: the stored v1beta1 object has room for the
// first entry only, in spec.strategy. Its presence also tells that the candidate speaks
// v1alpha1, whose validation and strategy rules then apply. It counts only while it parses and
// its first entry (or "" for an empty list) is spec.strategy: a client of a newer version that
// changes the strategy thereby makes the candidate a v1beta1 one again.
const PreferredStrategiesAnnotation = "leaselab.dev/v1alpha1-preferred-strategies"

// PreferredStrategies returns the preferredStrategies of a stored candidate as v1alpha1 shows
// them, and whether the candidate was written through v1alpha1: the annotation's list while it
// counts, otherwise [spec.strategy] (nil when the strategy is empty).
func PreferredStrategies(lc *coordinationv1beta1.LeaseCandidate) ([]coordinationv1.CoordinatedLeaseStrategy, bool) {
	if v, ok := lc.Annotations[PreferredStrategiesAnnotation]; ok {
		var list []coordinationv1.CoordinatedLeaseStrategy
		if err := json.Unmarshal([]byte(v), &list); err == nil {
			var first coordinationv1.CoordinatedLeaseStrategy
			if len(list) > 0 {
				first = list[0]
			} else {
				list = nil
			}
			if first == lc.Spec.Strategy {
				return list, true
			}
		}
	}
	if lc.Spec.Strategy == "" {
		return nil, false
	}
	return []coordinationv1.CoordinatedLeaseStrategy{lc.Spec.Strategy}, false
}

// ToV1beta1 converts a v1alpha1 candidate to the stored shape: spec.strategy is the first
// preferred strategy and the annotation keeps the whole list. The result shares no map with in;
// pointers are shared. TypeMeta is left for the caller.
func ToV1beta1(in *LeaseCandidate) coordinationv1beta1.LeaseCandidate {
	out := coordinationv1beta1.LeaseCandidate{
		ObjectMeta: in.ObjectMeta,
		Spec: coordinationv1beta1.LeaseCandidateSpec{
			LeaseName:        in.Spec.LeaseName,
			PingTime:         in.Spec.PingTime,
			RenewTime:        in.Spec.RenewTime,
			BinaryVersion:    in.Spec.BinaryVersion,
			EmulationVersion: in.Spec.EmulationVersion,
		},
	}
	list := in.Spec.PreferredStrategies
	if len(list) > 0 {
		out.Spec.Strategy = list[0]
	} else {
		list = []coordinationv1.CoordinatedLeaseStrategy{}
	}
	b, _ := json.Marshal(list) // a list of strings always encodes
	out.Annotations = maps.Clone(in.Annotations)
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[PreferredStrategiesAnnotation] = string(b)
	return out
}

// FromV1beta1 converts a stored candidate to v1alpha1: the preferred strategies come from
// PreferredStrategies and the annotation is not shown. Like ToV1beta1, it shares no map with in.
func FromV1beta1(in *coordinationv1beta1.LeaseCandidate) LeaseCandidate {
	list, _ := PreferredStrategies(in)
	out := LeaseCandidate{
		ObjectMeta: in.ObjectMeta,
		Spec: LeaseCandidateSpec{
			LeaseName:           in.Spec.LeaseName,
			PingTime:            in.Spec.PingTime,
			RenewTime:           in.Spec.RenewTime,
			BinaryVersion:       in.Spec.BinaryVersion,
			EmulationVersion:    in.Spec.EmulationVersion,
			PreferredStrategies: list,
		},
	}
	out.Annotations = maps.Clone(in.Annotations)
	delete(out.Annotations, PreferredStrategiesAnnotation)
	if len(out.Annotations) == 0 {
		out.Annotations = nil
	}
	return out
}

// RegisterConversions adds the conversions between v1alpha1 and the other served
// LeaseCandidate versions (v1beta1, the stored one, and v1alpha2, whose schema is v1beta1's).
func RegisterConversions(s *runtime.Scheme) error {
	toAlpha2 := func(in *LeaseCandidate) coordinationv1alpha2.LeaseCandidate {
		b := ToV1beta1(in)
		return coordinationv1alpha2.LeaseCandidate{ObjectMeta: b.ObjectMeta, Spec: coordinationv1alpha2.LeaseCandidateSpec(b.Spec)}
	}
	fromAlpha2 := func(in *coordinationv1alpha2.LeaseCandidate) LeaseCandidate {
		return FromV1beta1(&coordinationv1beta1.LeaseCandidate{ObjectMeta: in.ObjectMeta, Spec: coordinationv1beta1.LeaseCandidateSpec(in.Spec)})
	}
	listOf := func(l *LeaseCandidateList) (*metav1.ListMeta, *[]LeaseCandidate) { return &l.ListMeta, &l.Items }

	if err := convpair.Register(s, ToV1beta1, FromV1beta1, listOf,
		func(l *coordinationv1beta1.LeaseCandidateList) (*metav1.ListMeta, *[]coordinationv1beta1.LeaseCandidate) {
			return &l.ListMeta, &l.Items
		}); err != nil {
		return err
	}
	return convpair.Register(s, toAlpha2, fromAlpha2, listOf,
		func(l *coordinationv1alpha2.LeaseCandidateList) (*metav1.ListMeta, *[]coordinationv1alpha2.LeaseCandidate) {
			return &l.ListMeta, &l.Items
		})
}
