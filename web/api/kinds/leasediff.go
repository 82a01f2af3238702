package kinds

import (
	"reflect"
	"slices"
	"sort"
	"time"
	"unicode/utf8"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// leaseChangedScalars is the Lease's ChangedScalars: the registry's comparison of two objects'
// JSON, done on the typed Leases. A renewal changes spec.renewTime and nothing else, and
// marshalling both Leases to find that out was a twentieth of the server's CPU per renewal.
//
// It answers only where the JSON is known to agree: two values it calls equal have the same
// JSON, and a value it calls changed has a different JSON value of the same type under the same
// key. Anything else (a key on one side only, a null on one side, metadata a manager cannot
// own, a string that is not UTF-8, a time the JSON encoder would not write as it is) gives ok
// false, and the registry compares the JSON.
func leaseChangedScalars(old, obj runtime.Object) (paths []fieldpath.Path, ok bool) {
	a, ok1 := old.(*coordinationv1.Lease)
	b, ok2 := obj.(*coordinationv1.Lease)
	if !ok1 || !ok2 || a.TypeMeta != b.TypeMeta || !sameUnownedMetadata(&a.ObjectMeta, &b.ObjectMeta) {
		return nil, false
	}
	d := scalarDiff{}
	d.stringMap([]string{"metadata", "labels"}, a.Labels, b.Labels)
	d.stringMap([]string{"metadata", "annotations"}, a.Annotations, b.Annotations)
	sa, sb := &a.Spec, &b.Spec
	diffPtr(&d, "holderIdentity", sa.HolderIdentity, sb.HolderIdentity, d.string)
	diffPtr(&d, "leaseDurationSeconds", sa.LeaseDurationSeconds, sb.LeaseDurationSeconds, d.number)
	diffPtr(&d, "acquireTime", sa.AcquireTime, sb.AcquireTime, d.microTime)
	diffPtr(&d, "renewTime", sa.RenewTime, sb.RenewTime, d.microTime)
	diffPtr(&d, "leaseTransitions", sa.LeaseTransitions, sb.LeaseTransitions, d.number)
	diffPtr(&d, "strategy", sa.Strategy, sb.Strategy, func(p []string, x, y *coordinationv1.CoordinatedLeaseStrategy) {
		d.string(p, (*string)(x), (*string)(y))
	})
	diffPtr(&d, "preferredHolder", sa.PreferredHolder, sb.PreferredHolder, d.string)
	if d.unsure {
		return nil, false
	}
	return d.changed, true
}

// leaseSpecFieldNames are the LeaseSpec fields leaseChangedScalars compares, in order; a test
// fails when k8s.io/api adds one.
var leaseSpecFieldNames = []string{"HolderIdentity", "LeaseDurationSeconds", "AcquireTime", "RenewTime", "LeaseTransitions", "Strategy", "PreferredHolder"}

// scalarDiff collects the paths of changed scalar values; unsure is set at the first
// difference the JSON comparison would not call a changed scalar.
type scalarDiff struct {
	changed []fieldpath.Path
	unsure  bool
}

func (d *scalarDiff) add(path []string) {
	p := make(fieldpath.Path, len(path))
	for i := range path {
		p[i] = fieldpath.PathElement{FieldName: &path[i]}
	}
	d.changed = append(d.changed, p)
}

// diffPtr compares two optional fields of the spec (omitted from the JSON when nil).
func diffPtr[T any](d *scalarDiff, name string, x, y *T, values func(path []string, x, y *T)) {
	switch {
	case x == nil && y == nil:
	case x == nil || y == nil:
		d.unsure = true // a key on one side only
	default:
		values([]string{"spec", name}, x, y)
	}
}

func (d *scalarDiff) string(path []string, x, y *string) {
	if *x == *y {
		return
	}
	if !utf8.ValidString(*x) || !utf8.ValidString(*y) {
		d.unsure = true // the encoder replaces what is not UTF-8: two strings may write alike
		return
	}
	d.add(path)
}

// number compares two numbers: the JSON writes equal ones alike and different ones apart.
func (d *scalarDiff) number(path []string, x, y *int32) {
	if *x != *y {
		d.add(path)
	}
}

// microTime compares two times as the JSON writes them: UTC to the microsecond, null for the
// zero time.
func (d *scalarDiff) microTime(path []string, x, y *metav1.MicroTime) {
	if x.IsZero() || y.IsZero() || !plainYear(x.Time) || !plainYear(y.Time) {
		if x.IsZero() != y.IsZero() || !x.IsZero() {
			d.unsure = true
		}
		return
	}
	if !x.Truncate(time.Microsecond).Equal(y.Truncate(time.Microsecond)) {
		d.add(path)
	}
}

// stringMap compares labels or annotations: the same keys, values that may differ.
func (d *scalarDiff) stringMap(path []string, x, y map[string]string) {
	if len(x) != len(y) {
		d.unsure = true
		return
	}
	var keys []string
	for k, vx := range x {
		vy, ok := y[k]
		if !ok {
			d.unsure = true
			return
		}
		if vx != vy {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys) // as the JSON writes a map's keys
	for _, k := range keys {
		vx, vy := x[k], y[k]
		if !utf8.ValidString(k) {
			d.unsure = true
			return
		}
		d.string(append(path[:len(path):len(path)], k), &vx, &vy)
	}
}

// plainYear says whether the JSON encoder writes t as RFC 3339 says: a four-digit year.
func plainYear(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1 && y <= 9999
}

// sameUnownedMetadata says whether two ObjectMetas write the same JSON in every field but
// labels, annotations (which leaseChangedScalars compares) and managedFields (which the
// comparison leaves out). The registry has copied the stored metadata onto the update by now,
// so these are equal in any update the fast path takes.
func sameUnownedMetadata(a, b *metav1.ObjectMeta) bool {
	return a.Name == b.Name && a.GenerateName == b.GenerateName && a.Namespace == b.Namespace &&
		a.SelfLink == b.SelfLink && a.UID == b.UID && a.ResourceVersion == b.ResourceVersion &&
		a.Generation == b.Generation && sameSecond(a.CreationTimestamp, b.CreationTimestamp) &&
		(a.DeletionTimestamp == nil) == (b.DeletionTimestamp == nil) &&
		(a.DeletionTimestamp == nil || sameSecond(*a.DeletionTimestamp, *b.DeletionTimestamp)) &&
		(a.DeletionGracePeriodSeconds == nil) == (b.DeletionGracePeriodSeconds == nil) &&
		(a.DeletionGracePeriodSeconds == nil || *a.DeletionGracePeriodSeconds == *b.DeletionGracePeriodSeconds) &&
		(len(a.OwnerReferences) == 0 && len(b.OwnerReferences) == 0 || reflect.DeepEqual(a.OwnerReferences, b.OwnerReferences)) &&
		(len(a.Finalizers) == 0 && len(b.Finalizers) == 0 || slices.Equal(a.Finalizers, b.Finalizers))
}

// objectMetaFieldNames are the ObjectMeta fields sameUnownedMetadata and leaseChangedScalars
// account for; a test fails when apimachinery adds one.
var objectMetaFieldNames = []string{"Name", "GenerateName", "Namespace", "SelfLink", "UID", "ResourceVersion", "Generation",
	"CreationTimestamp", "DeletionTimestamp", "DeletionGracePeriodSeconds", "Labels", "Annotations", "OwnerReferences",
	"Finalizers", "ManagedFields"}

// sameSecond says whether two metav1.Times write the same JSON: RFC 3339 to the second, null
// for the zero time.
func sameSecond(a, b metav1.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() && b.IsZero()
	}
	return a.Unix() == b.Unix()
}
