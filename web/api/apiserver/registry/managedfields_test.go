package registry

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/leaselab/leaselab/web/api/kinds"
)

// leaseFieldManager returns the server's field manager for Lease v1 and the check of known
// apiVersions the fast path uses.
func leaseFieldManager(t testing.TB) (*managedfields.FieldManager, func(string) bool) {
	t.Helper()
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	gv := schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}
	ks := New(slog.New(slog.DiscardHandler), reg, nil, Options{}).For(reg.Lookup(gv.Group, gv.Version, "leases"))
	return ks.FieldManager(gv), ks.ServesAPIVersion
}

// leaseScalars is the Lease kind's typed comparison.
func leaseScalars() scalarsDiff {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	return reg.Lookup("coordination.k8s.io", "v1", "leases").ChangedScalars
}

// roundTrip gives a lease as the store gives it back: through its JSON, so that times have
// the precision they are stored with.
func roundTrip(t testing.TB, l *coordinationv1.Lease) *coordinationv1.Lease {
	t.Helper()
	b, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var out coordinationv1.Lease
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

var testManagers = []string{"kube-scheduler", "kubelet", "leaselab-bench", "kubectl-edit", ""}

// mutateLease changes a copy of l the way some client might: mostly a renewal, sometimes
// other fields, labels and annotations set, changed or removed, managedFields sent back,
// omitted or forged.
func mutateLease(r *rand.Rand, l *coordinationv1.Lease, now time.Time) *coordinationv1.Lease {
	n := l.DeepCopy()
	for range 1 + r.IntN(2) {
		switch r.IntN(16) {
		case 0, 1, 2, 3, 4:
			n.Spec.RenewTime = ptr.To(metav1.NewMicroTime(now.Add(time.Duration(r.IntN(1e6)) * time.Microsecond)))
		case 5:
			n.Spec.HolderIdentity = ptr.To(fmt.Sprintf("holder-%d", r.IntN(3)))
		case 6:
			n.Spec.HolderIdentity = nil
		case 7:
			n.Spec.LeaseTransitions = ptr.To(int32(r.IntN(3)))
		case 8:
			n.Spec.AcquireTime = nil
		case 9:
			if n.Labels == nil {
				n.Labels = map[string]string{}
			}
			n.Labels[fmt.Sprintf("l%d", r.IntN(3))] = fmt.Sprintf("v%d", r.IntN(2))
		case 10:
			delete(n.Labels, fmt.Sprintf("l%d", r.IntN(3)))
		case 11:
			if n.Annotations == nil {
				n.Annotations = map[string]string{}
			}
			n.Annotations["a"] = fmt.Sprintf("%d", r.IntN(2))
		case 12:
			n.Spec.LeaseDurationSeconds = ptr.To(int32(10 + r.IntN(2)))
		case 13:
			// no change
		case 14:
			n.Finalizers = append(n.Finalizers, fmt.Sprintf("example.com/f%d", r.IntN(2)))
		case 15:
			n.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: fmt.Sprintf("n%d", r.IntN(2)), UID: "n"}}
		}
	}
	switch r.IntN(10) {
	case 0:
		n.ManagedFields = nil
	case 1:
		n.ManagedFields = []metav1.ManagedFieldsEntry{}
	case 2:
		if len(n.ManagedFields) > 0 {
			n.ManagedFields[0].Manager = "forged"
		}
	}
	return n
}

// TestSameOwnerUpdateMatchesFieldManager runs many random updates on leases with managedFields
// from random update histories through the full field manager and through the fast path, and
// requires the same managedFields whenever the fast path answers.
func TestSameOwnerUpdateMatchesFieldManager(t *testing.T) {
	fm, known := leaseFieldManager(t)
	r := rand.New(rand.NewPCG(1, 2))
	fast, total := 0, 0
	for obj := range 150 {
		now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		created := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("l%d", obj), Namespace: "default", UID: "u", ResourceVersion: "1",
				CreationTimestamp: metav1.NewTime(now.Truncate(time.Second))},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), LeaseDurationSeconds: ptr.To[int32](10),
				AcquireTime: ptr.To(metav1.NewMicroTime(now)), RenewTime: ptr.To(metav1.NewMicroTime(now)), LeaseTransitions: ptr.To[int32](0)},
		}
		if r.IntN(3) == 0 {
			created.Labels = map[string]string{"l0": "v"}
		}
		cur := roundTrip(t, fm.UpdateNoErrors(&coordinationv1.Lease{}, created, testManagers[r.IntN(len(testManagers))]).(*coordinationv1.Lease))
		for range 30 {
			manager := testManagers[r.IntN(len(testManagers))]
			if r.IntN(3) > 0 {
				manager = testManagers[obj%len(testManagers)] // mostly one renewing holder
			}
			next := mutateLease(r, cur, now)
			total++

			slow := fm.UpdateNoErrors(cur.DeepCopy(), next.DeepCopy(), manager).(*coordinationv1.Lease)
			// The fast path's clock reads what the field manager's did for this manager, so
			// that the entries (ordered by time) are comparable.
			id := manager
			if id == "" {
				id = "unknown"
			}
			stamp := time.Now()
			for _, e := range slow.ManagedFields {
				if e.Manager == id && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Time != nil {
					stamp = e.Time.Time
				}
			}
			// With the Lease's typed comparison or with the JSON one, alternately.
			typed := leaseScalars()
			if total%2 == 0 {
				typed = nil
			}
			got, changed, ok := sameOwnerUpdate(cur.DeepCopy(), next.DeepCopy(), "coordination.k8s.io/v1", known, typed, manager, func() time.Time { return stamp })
			if ok {
				fast++
				gotLease := got.(*coordinationv1.Lease)
				// A change it reports lets the update skip its no-op check: it must be one.
				if changed && unchanged(gotLease.DeepCopy(), cur.DeepCopy()) {
					t.Fatalf("fast path reported a change for a no-op update:\nold: %s\nnew: %s", mustJSON(cur), mustJSON(next))
				}
				if !reflect.DeepEqual(gotLease.ManagedFields, slow.ManagedFields) {
					t.Fatalf("managedFields differ for manager %q\nold:  %s\nnew:  %s\nfast: %s\nslow: %s",
						manager, mustJSON(cur.ManagedFields), mustJSON(next), mustJSON(gotLease.ManagedFields), mustJSON(slow.ManagedFields))
				}
				if !reflect.DeepEqual(gotLease, slow) {
					t.Fatalf("objects differ:\nfast: %s\nslow: %s", mustJSON(gotLease), mustJSON(slow))
				}
			}
			now = now.Add(time.Duration(1+r.IntN(3)) * time.Second)
			cur = roundTrip(t, slow)
		}
	}
	t.Logf("fast path answered %d of %d updates", fast, total)
	if fast < total/20 {
		t.Errorf("fast path answered only %d of %d updates: the test no longer exercises it", fast, total)
	}
}

// TestSameOwnerUpdateTakesRenewals checks that a renewal by the manager that owns renewTime is
// answered by the fast path, and an update by another manager is not.
func TestSameOwnerUpdateTakesRenewals(t *testing.T) {
	fm, known := leaseFieldManager(t)
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: "default", UID: "u", ResourceVersion: "1"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), RenewTime: ptr.To(metav1.NewMicroTime(now))},
	}
	old := roundTrip(t, fm.UpdateNoErrors(&coordinationv1.Lease{}, l, "elector").(*coordinationv1.Lease))
	renewed := old.DeepCopy()
	renewed.Spec.RenewTime = ptr.To(metav1.NewMicroTime(now.Add(time.Second)))
	if _, changed, ok := sameOwnerUpdate(old.DeepCopy(), renewed.DeepCopy(), "coordination.k8s.io/v1", known, leaseScalars(), "elector", time.Now); !ok || !changed {
		t.Errorf("renewal by the owner: fast path answered %v, changed %v; want true, true", ok, changed)
	}
	if _, _, ok := sameOwnerUpdate(old.DeepCopy(), renewed.DeepCopy(), "coordination.k8s.io/v1", known, leaseScalars(), "other", time.Now); ok {
		t.Error("update by another manager: fast path answered")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// BenchmarkUpdateManagedFields compares the field manager with the fast path on a renewal.
func BenchmarkUpdateManagedFields(b *testing.B) {
	fm, known := leaseFieldManager(b)
	now := time.Now()
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: "default", UID: "u", ResourceVersion: "1", CreationTimestamp: metav1.NewTime(now.Truncate(time.Second))},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), LeaseDurationSeconds: ptr.To[int32](10),
			AcquireTime: ptr.To(metav1.NewMicroTime(now)), RenewTime: ptr.To(metav1.NewMicroTime(now)), LeaseTransitions: ptr.To[int32](0)},
	}
	old := roundTrip(b, fm.UpdateNoErrors(&coordinationv1.Lease{}, l, "elector").(*coordinationv1.Lease))
	renew := func() *coordinationv1.Lease {
		n := old.DeepCopy()
		n.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now()))
		return n
	}
	b.Run("fieldmanager", func(b *testing.B) {
		for b.Loop() {
			fm.UpdateNoErrors(old, renew(), "elector")
		}
	})
	b.Run("fastpath-json", func(b *testing.B) {
		for b.Loop() {
			updateManagedFields(fm, old, renew(), "coordination.k8s.io/v1", known, nil, "elector")
		}
	})
	b.Run("fastpath-typed", func(b *testing.B) {
		typed := leaseScalars()
		for b.Loop() {
			updateManagedFields(fm, old, renew(), "coordination.k8s.io/v1", known, typed, "elector")
		}
	})
}

// TestLeaseScalarsAgreeWithJSON: whenever the Lease's typed comparison answers, it lists the
// changed fields the comparison of the JSON lists, over random pairs of leases (times that
// differ below the microsecond or the second, fields set on one side, labels added, changed and
// removed, metadata changed, strings that are not UTF-8); and it answers a renewal.
func TestLeaseScalarsAgreeWithJSON(t *testing.T) {
	typed := leaseScalars()
	r := rand.New(rand.NewPCG(3, 4))
	now := time.Date(2026, 11, 27, 9, 0, 0, 123456789, time.UTC)
	answered := 0
	const n = 20000
	for i := range n {
		a := randomLease(r, now)
		b := a.DeepCopy()
		for range 1 + r.IntN(3) {
			mutateForDiff(r, b, now)
		}
		paths, ok := typed(a, b)
		if !ok {
			continue
		}
		answered++
		want, wantOK := changedScalars(a, b)
		if !wantOK || !samePaths(paths, want) {
			t.Fatalf("pair %d: typed %v, JSON %v (ok %v)\na: %s\nb: %s", i, paths, want, wantOK, mustJSON(a), mustJSON(b))
		}
	}
	t.Logf("the typed comparison answered %d of %d pairs", answered, n)
	if answered < n/8 {
		t.Errorf("the typed comparison answered only %d of %d pairs", answered, n)
	}
	renewed := randomLease(r, now)
	renewed.Spec.RenewTime = ptr.To(metav1.NewMicroTime(now))
	next := renewed.DeepCopy()
	next.Spec.RenewTime = ptr.To(metav1.NewMicroTime(now.Add(2 * time.Second)))
	if paths, ok := typed(renewed, next); !ok || len(paths) != 1 || paths[0].String() != ".spec.renewTime" {
		t.Errorf("a renewal: %v %v, want .spec.renewTime", paths, ok)
	}
}

func samePaths(a, b []fieldpath.Path) bool {
	return fieldpath.NewSet(a...).Equals(fieldpath.NewSet(b...)) && len(a) == len(b)
}

// randomLease is a lease with a random choice of its fields set.
func randomLease(r *rand.Rand, now time.Time) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l", Namespace: "default", UID: "u", ResourceVersion: "7",
		CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
	if r.IntN(2) == 0 {
		l.TypeMeta = metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"}
	}
	if r.IntN(2) == 0 {
		l.Labels = map[string]string{"a": "1", "b": "2"}
	}
	if r.IntN(3) == 0 {
		l.Annotations = map[string]string{"note": "x"}
	}
	s := &l.Spec
	if r.IntN(4) > 0 {
		s.HolderIdentity = ptr.To("alice")
	}
	if r.IntN(4) > 0 {
		s.LeaseDurationSeconds = ptr.To[int32](10)
	}
	if r.IntN(4) > 0 {
		s.AcquireTime = ptr.To(metav1.NewMicroTime(now))
	}
	if r.IntN(4) > 0 {
		s.RenewTime = ptr.To(metav1.NewMicroTime(now))
	}
	if r.IntN(4) > 0 {
		s.LeaseTransitions = ptr.To[int32](2)
	}
	if r.IntN(4) == 0 {
		s.Strategy = ptr.To(coordinationv1.OldestEmulationVersion)
		s.PreferredHolder = ptr.To("bob")
	}
	return l
}

// mutateForDiff changes one thing of l, often in ways the JSON hides.
func mutateForDiff(r *rand.Rand, l *coordinationv1.Lease, now time.Time) {
	s := &l.Spec
	times := []time.Duration{0, 300 * time.Nanosecond, 999 * time.Nanosecond, time.Microsecond, time.Millisecond, time.Second}
	switch r.IntN(22) {
	case 0, 1, 2:
		s.RenewTime = ptr.To(metav1.NewMicroTime(now.Add(times[r.IntN(len(times))])))
	case 3:
		s.AcquireTime = ptr.To(metav1.NewMicroTime(now.Add(times[r.IntN(len(times))])))
	case 4:
		s.RenewTime = ptr.To(metav1.MicroTime{}) // null
	case 5:
		s.RenewTime = nil
	case 6:
		s.HolderIdentity = ptr.To([]string{"alice", "bob", "", "\xff", "\xfe"}[r.IntN(5)])
	case 7:
		s.HolderIdentity = nil
	case 8:
		s.LeaseDurationSeconds = ptr.To(int32(r.IntN(3) + 9))
	case 9:
		s.LeaseTransitions = ptr.To(int32(r.IntN(4)))
	case 10:
		s.PreferredHolder = ptr.To([]string{"bob", "carol"}[r.IntN(2)])
	case 11:
		s.Strategy = ptr.To(coordinationv1.CoordinatedLeaseStrategy([]string{"OldestEmulationVersion", "Other"}[r.IntN(2)]))
	case 12:
		if l.Labels == nil {
			l.Labels = map[string]string{}
		}
		l.Labels[[]string{"a", "b", "c"}[r.IntN(3)]] = []string{"1", "2", "3", "\xff"}[r.IntN(4)]
	case 13:
		delete(l.Labels, []string{"a", "b"}[r.IntN(2)])
	case 14:
		l.Annotations = map[string]string{"note": []string{"x", "y"}[r.IntN(2)]}
	case 15:
		l.ResourceVersion = []string{"7", "8"}[r.IntN(2)]
	case 16:
		l.CreationTimestamp = metav1.NewTime(l.CreationTimestamp.Add(times[r.IntN(len(times))]))
	case 17:
		l.Finalizers = []string{"f"}
	case 18:
		l.Labels = map[string]string{}
	case 19:
		l.TypeMeta = metav1.TypeMeta{}
	case 20:
		s.AcquireTime = ptr.To(metav1.NewMicroTime(time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)))
	case 21:
		l.DeletionGracePeriodSeconds = ptr.To[int64](int64(r.IntN(2)))
	}
}
