package coordinationv1alpha1

import (
	"encoding/json"
	"maps"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
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
	alpha2ToBeta1 := func(in *coordinationv1alpha2.LeaseCandidate) *coordinationv1beta1.LeaseCandidate {
		return &coordinationv1beta1.LeaseCandidate{ObjectMeta: in.ObjectMeta, Spec: coordinationv1beta1.LeaseCandidateSpec(in.Spec)}
	}
	beta1ToAlpha2 := func(in coordinationv1beta1.LeaseCandidate) coordinationv1alpha2.LeaseCandidate {
		return coordinationv1alpha2.LeaseCandidate{ObjectMeta: in.ObjectMeta, Spec: coordinationv1alpha2.LeaseCandidateSpec(in.Spec)}
	}
	toAlpha2 := func(in *LeaseCandidate) coordinationv1alpha2.LeaseCandidate { return beta1ToAlpha2(ToV1beta1(in)) }
	fromAlpha2 := func(in *coordinationv1alpha2.LeaseCandidate) LeaseCandidate { return FromV1beta1(alpha2ToBeta1(in)) }

	if err := addPair(s, ToV1beta1, FromV1beta1,
		func(l *coordinationv1beta1.LeaseCandidateList) (*metav1.ListMeta, []coordinationv1beta1.LeaseCandidate) {
			return &l.ListMeta, l.Items
		},
		func(l *coordinationv1beta1.LeaseCandidateList, lm metav1.ListMeta, items []coordinationv1beta1.LeaseCandidate) {
			l.ListMeta, l.Items = lm, items
		}); err != nil {
		return err
	}
	return addPair(s, toAlpha2, fromAlpha2,
		func(l *coordinationv1alpha2.LeaseCandidateList) (*metav1.ListMeta, []coordinationv1alpha2.LeaseCandidate) {
			return &l.ListMeta, l.Items
		},
		func(l *coordinationv1alpha2.LeaseCandidateList, lm metav1.ListMeta, items []coordinationv1alpha2.LeaseCandidate) {
			l.ListMeta, l.Items = lm, items
		})
}

// addPair registers the object and list conversions, both ways, between v1alpha1 and another
// version O (list type L) given the two object conversions and access to L's fields.
func addPair[O any, L any](s *runtime.Scheme,
	to func(*LeaseCandidate) O, from func(*O) LeaseCandidate,
	getList func(*L) (*metav1.ListMeta, []O), setList func(*L, metav1.ListMeta, []O),
) error {
	var (
		objIn   *LeaseCandidate
		objOut  *O
		listIn  *LeaseCandidateList
		listOut *L
	)
	fns := []struct {
		a, b any
		fn   conversion.ConversionFunc
	}{
		{objIn, objOut, func(a, b any, _ conversion.Scope) error {
			*b.(*O) = to(a.(*LeaseCandidate))
			return nil
		}},
		{objOut, objIn, func(a, b any, _ conversion.Scope) error {
			*b.(*LeaseCandidate) = from(a.(*O))
			return nil
		}},
		{listIn, listOut, func(a, b any, _ conversion.Scope) error {
			in := a.(*LeaseCandidateList)
			var items []O
			if in.Items != nil {
				items = make([]O, len(in.Items))
				for i := range in.Items {
					items[i] = to(&in.Items[i])
				}
			}
			setList(b.(*L), in.ListMeta, items)
			return nil
		}},
		{listOut, listIn, func(a, b any, _ conversion.Scope) error {
			lm, in := getList(a.(*L))
			out := b.(*LeaseCandidateList)
			out.ListMeta, out.Items = *lm, nil
			if in != nil {
				out.Items = make([]LeaseCandidate, len(in))
				for i := range in {
					out.Items[i] = from(&in[i])
				}
			}
			return nil
		}},
	}
	for _, f := range fns {
		if err := s.AddConversionFunc(f.a, f.b, f.fn); err != nil {
			return err
		}
	}
	return nil
}
