// Package convpair registers the conversions between two versions of a kind, object and list,
// both ways, from the two object conversions: the list conversions only map the items.
package convpair

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// Register adds to s the conversions A <-> B (given by ab and ba) and AList <-> BList, whose
// ListMeta and Items listA and listB give access to. A nil Items list stays nil.
func Register[A, B, AList, BList any](s *runtime.Scheme,
	ab func(*A) B, ba func(*B) A,
	listA func(*AList) (*metav1.ListMeta, *[]A), listB func(*BList) (*metav1.ListMeta, *[]B),
) error {
	fns := []struct {
		a, b any
		fn   conversion.ConversionFunc
	}{
		{(*A)(nil), (*B)(nil), func(a, b any, _ conversion.Scope) error {
			*b.(*B) = ab(a.(*A))
			return nil
		}},
		{(*B)(nil), (*A)(nil), func(a, b any, _ conversion.Scope) error {
			*b.(*A) = ba(a.(*B))
			return nil
		}},
		{(*AList)(nil), (*BList)(nil), func(a, b any, _ conversion.Scope) error {
			inMeta, in := listA(a.(*AList))
			outMeta, out := listB(b.(*BList))
			convertList(inMeta, in, outMeta, out, ab)
			return nil
		}},
		{(*BList)(nil), (*AList)(nil), func(a, b any, _ conversion.Scope) error {
			inMeta, in := listB(a.(*BList))
			outMeta, out := listA(b.(*AList))
			convertList(inMeta, in, outMeta, out, ba)
			return nil
		}},
	}
	for _, f := range fns {
		if err := s.AddConversionFunc(f.a, f.b, f.fn); err != nil {
			return fmt.Errorf("add conversion %T -> %T: %w", f.a, f.b, err)
		}
	}
	return nil
}

func convertList[In, Out any](inMeta *metav1.ListMeta, in *[]In, outMeta *metav1.ListMeta, out *[]Out, convert func(*In) Out) {
	*outMeta = *inMeta
	*out = nil
	if *in == nil {
		return
	}
	*out = make([]Out, len(*in))
	for i := range *in {
		(*out)[i] = convert(&(*in)[i])
	}
}
