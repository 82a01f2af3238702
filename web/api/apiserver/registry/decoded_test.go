package registry

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/kinds"
)

// TestWrittenObjectIsKeptAsDecoded checks that the copy a write keeps in the cache of decoded
// objects is what decoding the stored change gives: the same JSON, semantically equal, and of
// the same revision. Times carry nanoseconds, as objects built in process (and the field
// manager's timestamps) do.
func TestWrittenObjectIsKeptAsDecoded(t *testing.T) {
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	r := New(logger, reg, db, Options{})
	if err := r.WaitFieldManagers(ctx); err != nil {
		t.Fatal(err)
	}
	gv := schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}
	ks := r.For(reg.Lookup(gv.Group, gv.Version, "leases"))
	wo := WriteOptions{Manager: "elector", GV: gv}

	now := time.Date(2026, 5, 1, 10, 0, 0, 123456789, time.UTC)
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default", Labels: map[string]string{"k": "v"}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("one"),
			LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime:          &metav1.MicroTime{Time: now},
			RenewTime:            &metav1.MicroTime{Time: now},
		},
	}
	created, err := ks.Create(ctx, l, wo, true)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, obj runtime.Object) {
		t.Helper()
		acc, _ := meta.Accessor(obj)
		o, err := db.Get(ctx, ks.key("default", "a"))
		if err != nil {
			t.Fatal(err)
		}
		if got := acc.GetResourceVersion(); got != strconv.FormatInt(o.Revision, 10) {
			t.Fatalf("%s: resourceVersion %s, stored revision %d", what, got, o.Revision)
		}
		cached, ok := r.decoded.Get(decodedKey{Key: o.Key, rev: o.Revision})
		if !ok {
			t.Fatalf("%s: the written object is not in the cache", what)
		}
		decoded, err := r.decodeStored(ks.kind, o)
		if err != nil {
			t.Fatal(err)
		}
		cj, _ := json.Marshal(cached)
		dj, _ := json.Marshal(decoded)
		if string(cj) != string(dj) {
			t.Fatalf("%s: cached\n%s\ndecoded\n%s", what, cj, dj)
		}
		if !apiequality.Semantic.DeepEqual(cached, decoded) {
			t.Fatalf("%s: cached and decoded objects differ", what)
		}
	}
	check("create", created)

	renewed := now.Add(2*time.Second + 987654321)
	updated, _, err := ks.Update(ctx, "default", "a", UpdatedObject{Transform: func(cur runtime.Object) (runtime.Object, error) {
		cur.(*coordinationv1.Lease).Spec.RenewTime = &metav1.MicroTime{Time: renewed}
		return cur, nil
	}}, wo)
	if err != nil {
		t.Fatal(err)
	}
	check("update", updated)
}
