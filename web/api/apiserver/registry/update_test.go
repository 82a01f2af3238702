package registry_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/apiserver/registry"
	"github.com/leaselab/leaselab/web/api/kinds"
)

var leaseGV = schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}

// MustLeases returns the registry of Leases over a new store.
func MustLeases(tb testing.TB) *registry.Store {
	tb.Helper()
	logger := slog.New(slog.DiscardHandler)
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	r := registry.New(logger, reg, db, registry.Options{})
	if err := r.WaitFieldManagers(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return r.For(reg.Lookup(leaseGV.Group, leaseGV.Version, "leases"))
}

func lease(name, holder string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder)},
	}
}

func holder(obj runtime.Object) string { return *obj.(*coordinationv1.Lease).Spec.HolderIdentity }

// setHolder is the transform of a write that pins no resourceVersion. Before its first
// attempt returns, another writer changes the lease: the first attempt loses the race.
func setHolder(t *testing.T, ks *registry.Store, to string, calls *int) func(runtime.Object) (runtime.Object, error) {
	return func(cur runtime.Object) (runtime.Object, error) {
		*calls++
		if cur == nil {
			return nil, apierrors.NewNotFound(schema.GroupResource{}, "")
		}
		if *calls == 1 {
			wo := registry.WriteOptions{Manager: "other", GV: leaseGV}
			race := registry.UpdatedObject{Transform: func(cur runtime.Object) (runtime.Object, error) {
				cur.(*coordinationv1.Lease).Spec.HolderIdentity = ptr.To("racer")
				return cur, nil
			}}
			if _, _, err := ks.Update(context.Background(), "default", "l", race, wo); err != nil {
				t.Fatalf("racing update: %v", err)
			}
		}
		l := cur.(*coordinationv1.Lease)
		l.Spec.HolderIdentity = ptr.To(to)
		return l, nil
	}
}

// TestUpdateRetries: an update that may retry runs its transform again against the object the
// other writer stored; one that may not answers the Conflict of the lost race.
func TestUpdateRetries(t *testing.T) {
	ctx := context.Background()
	wo := registry.WriteOptions{Manager: "test", GV: leaseGV}
	for _, retry := range []bool{true, false} {
		ks := MustLeases(t)
		if _, err := ks.Create(ctx, lease("l", "a"), wo, true); err != nil {
			t.Fatal(err)
		}
		calls := 0
		got, created, err := ks.Update(ctx, "default", "l", registry.UpdatedObject{Transform: setHolder(t, ks, "b", &calls), Retry: retry}, wo)
		if !retry {
			if !apierrors.IsConflict(err) || calls != 1 {
				t.Errorf("without retry: err %v after %d attempts, want a Conflict after 1", err, calls)
			}
			continue
		}
		if err != nil || created || calls != 2 || holder(got) != "b" {
			t.Fatalf("with retry: %v, created %v, %d attempts, holder %q; want holder b after 2 attempts", err, created, calls, holder(got))
		}
		stored, err := ks.Get(ctx, "default", "l", &metav1.GetOptions{})
		if err != nil || holder(stored) != "b" {
			t.Errorf("stored holder %v, %v; want b", stored, err)
		}
	}
}

// TestUpdateMissing: a missing name is created only when the update allows it, and a uid
// precondition is checked first against the empty object it reads as.
func TestUpdateMissing(t *testing.T) {
	ctx := context.Background()
	ks := MustLeases(t)
	wo := registry.WriteOptions{Manager: "test", GV: leaseGV}
	create := func(cur runtime.Object) (runtime.Object, error) {
		if cur != nil {
			t.Fatalf("transform got %v for a missing name", cur)
		}
		return lease("new", "a"), nil
	}
	if _, _, err := ks.Update(ctx, "default", "new", registry.UpdatedObject{UID: "x", Transform: create, ForceAllowCreate: true}, wo); !apierrors.IsConflict(err) {
		t.Errorf("uid precondition on a missing name: %v, want a Conflict", err)
	}
	got, created, err := ks.Update(ctx, "default", "new", registry.UpdatedObject{Transform: create, ForceAllowCreate: true}, wo)
	if err != nil || !created || holder(got) != "a" {
		t.Fatalf("create on update: %v, created %v", err, created)
	}
}
