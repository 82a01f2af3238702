package kinds

import (
	"reflect"
	"slices"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLeaseDiffKnowsEveryField: the typed comparison of Leases accounts for every field of
// LeaseSpec and ObjectMeta. A field that k8s.io/api or apimachinery adds would be missed by
// it, and the field manager's fast path would then take a change of that field for none.
func TestLeaseDiffKnowsEveryField(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		want []string
	}{
		{reflect.TypeFor[coordinationv1.LeaseSpec](), leaseSpecFieldNames},
		{reflect.TypeFor[metav1.ObjectMeta](), objectMetaFieldNames},
		{reflect.TypeFor[coordinationv1.Lease](), []string{"TypeMeta", "ObjectMeta", "Spec"}},
	} {
		var got []string
		for f := range c.typ.Fields() {
			got = append(got, f.Name)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s has the fields %v; the comparison knows %v", c.typ, got, c.want)
		}
	}
}
