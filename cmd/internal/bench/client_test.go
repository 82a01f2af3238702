package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

// TestLeaseClient checks the load generator's lease client against client-go's typed client,
// through net/http's Transport and over a connection of its own: the same object read, a PUT
// that writes, and the errors client-go's callers test for.
func TestLeaseClient(t *testing.T) {
	ts := mustStartServer(t)
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			testLeaseClient(t, ts, direct)
		})
	}
}

func testLeaseClient(t *testing.T, ts *testServer, direct bool) {
	ctx := context.Background()
	name := fmt.Sprintf("l-%v", direct)
	typed := ts.Client.CoordinationV1().Leases("bench")
	if _, err := typed.Create(ctx, newLease(name, "a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := newLeaseClient(ts.Config, "bench", direct)
	if err != nil {
		t.Fatal(err)
	}
	c = c.session()
	if (c.conn != nil) != direct {
		t.Fatalf("session with a direct connection: %v, want %v", c.conn != nil, direct)
	}
	got, err := c.get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	want, err := typed.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(got, want) {
		t.Fatalf("get: %+v, client-go read %+v", got, want)
	}

	stale := got.DeepCopy()
	got.Spec.HolderIdentity = ptr.To("b")
	upd, err := c.update(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	if *upd.Spec.HolderIdentity != "b" || upd.ResourceVersion == got.ResourceVersion {
		t.Errorf("update returned %+v", upd)
	}
	if _, err := c.update(ctx, stale); !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v, want a conflict", err)
	}
	if _, err := c.get(ctx, "missing"); !apierrors.IsNotFound(err) {
		t.Errorf("get missing: %v, want not found", err)
	}
}

// TestScanWatchEvent checks the watch workload's field scan against a JSON watch event of a
// lease with managedFields, which also name renewTime.
func TestScanWatchEvent(t *testing.T) {
	renew := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC))
	l := newLease("l", "a")
	l.ResourceVersion = "42"
	l.Spec.RenewTime = &renew
	l.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:renewTime":{}}}`)}}}
	obj, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := json.Marshal(metav1.WatchEvent{Type: "MODIFIED", Object: runtime.RawExtension{Raw: obj}})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := scanWatchEvent(msg)
	if err != nil {
		t.Fatal(err)
	}
	if ev.revision != 42 || !ev.renewTime.Equal(renew.Time) {
		t.Errorf("scanned %+v from %s", ev, msg)
	}
	if _, err := scanWatchEvent([]byte(`{"type":"ERROR","object":{"kind":"Status","code":410}}`)); err == nil {
		t.Error("an ERROR event scanned without an error")
	}
}

// TestScanWatchFrame checks the watch workload's protobuf scan against a frame encoded the
// way the server encodes it, for a lease with managedFields, with and without a renewTime.
func TestScanWatchFrame(t *testing.T) {
	renew := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC))
	ser := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	frame := func(typ watch.EventType, l *coordinationv1.Lease) []byte {
		t.Helper()
		l.SetGroupVersionKind(leaseGVK)
		var raw bytes.Buffer
		if err := ser.Encode(l, &raw); err != nil {
			t.Fatal(err)
		}
		ev := metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: raw.Bytes()}}
		b, err := ev.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	l := newLease("l", "a")
	l.ResourceVersion = "42"
	l.Spec.RenewTime = &renew
	l.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:renewTime":{}}}`)}}}
	ev, err := scanWatchFrame(frame(watch.Modified, l))
	if err != nil {
		t.Fatal(err)
	}
	if ev.revision != 42 || !ev.renewTime.Equal(renew.Time) {
		t.Errorf("scanned %+v, want revision 42 and renewTime %v", ev, renew.Time)
	}

	l.Spec.RenewTime = nil
	l.ResourceVersion = "7"
	if ev, err := scanWatchFrame(frame(watch.Added, l)); err != nil || ev.revision != 7 || !ev.renewTime.IsZero() {
		t.Errorf("without renewTime: %+v, %v", ev, err)
	}

	bad := frame(watch.Modified, l)
	for name, f := range map[string][]byte{
		"error event": func() []byte {
			b, _ := (&metav1.WatchEvent{Type: string(watch.Error), Object: runtime.RawExtension{Raw: []byte("k8s\x00")}}).Marshal()
			return b
		}(),
		"truncated": bad[:len(bad)-3],
		"json":      []byte(`{"type":"MODIFIED","object":{}}`),
	} {
		if ev, err := scanWatchFrame(f); err == nil {
			t.Errorf("%s: scanned %+v without an error", name, ev)
		}
	}
}
