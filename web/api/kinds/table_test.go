package kinds_test

import (
	"reflect"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/web/api/kinds"
)

// Column descriptions as a real 1.36 server sends them (lease-get-table-200.http,
// leasecandidate-list-table-200.http).
const (
	nameDescription      = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
	holderDescription    = "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field."
	ageDescription       = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
	leaseNameDescription = "LeaseName is the name of the lease for which this candidate is contending. This field is immutable."
)

func TestTableColumns(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	type col struct {
		Name, Format string
		Priority     int32
	}
	tests := []struct {
		resource string
		want     []col
	}{
		{"leases.coordination.k8s.io", []col{{"Name", "name", 0}, {"Holder", "", 0}, {"Age", "", 0}}},
		{"leasecandidates.coordination.k8s.io", []col{{"Name", "name", 0}, {"LeaseName", "", 0}, {"BinaryVersion", "", 0}, {"EmulationVersion", "", 0}, {"Age", "", 0}}},
		{"namespaces", []col{{"Name", "name", 0}, {"Status", "", 0}, {"Age", "", 0}}},
		{"events", []col{
			{"Last Seen", "", 0}, {"Type", "", 0}, {"Reason", "", 0}, {"Object", "", 0}, {"Subobject", "", 1},
			{"Source", "", 1}, {"Message", "", 0}, {"First Seen", "", 1}, {"Count", "", 1}, {"Name", "name", 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			k := MustKind(t, reg, tt.resource)
			var got []col
			for _, c := range k.TableColumns {
				if c.Type != "string" {
					t.Errorf("column %s type %q, want string", c.Name, c.Type)
				}
				if c.Description == "" && c.Name != "BinaryVersion" && c.Name != "EmulationVersion" {
					t.Errorf("column %s has no description", c.Name)
				}
				got = append(got, col{c.Name, c.Format, c.Priority})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("columns:\ngot:  %v\nwant: %v", got, tt.want)
			}
		})
	}

	lease := MustKind(t, reg, "leases.coordination.k8s.io").TableColumns
	lc := MustKind(t, reg, "leasecandidates.coordination.k8s.io").TableColumns
	for _, c := range []struct {
		got, want string
	}{
		{lease[0].Description, nameDescription},
		{lease[1].Description, holderDescription},
		{lease[2].Description, ageDescription},
		{lc[1].Description, leaseNameDescription},
		{lc[2].Description, ""},
		{lc[3].Description, ""},
		{MustKind(t, reg, "namespaces").TableColumns[1].Description, "The status of the namespace"},
	} {
		if c.got != c.want {
			t.Errorf("description:\ngot:  %q\nwant: %q", c.got, c.want)
		}
	}
}

func TestTableCells(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	now := time.Date(2026, 11, 22, 1, 51, 4, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	microAgo := func(d time.Duration) metav1.MicroTime { return metav1.NewMicroTime(now.Add(-d)) }
	meta := func(name string, d time.Duration) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(d)}
	}
	event := func(mutate func(*corev1.Event)) *corev1.Event {
		ev := &corev1.Event{
			ObjectMeta:     meta("demo.1", time.Hour),
			InvolvedObject: corev1.ObjectReference{Kind: "Lease", Name: "demo", FieldPath: "spec.holderIdentity"},
			Reason:         "LeaderElection",
			Message:        "  node-a became leader\n",
			Type:           "Normal",
			Source:         corev1.EventSource{Component: "leaselab", Host: "host-1"},
			FirstTimestamp: ago(10 * time.Minute),
			LastTimestamp:  ago(30 * time.Second),
			Count:          3,
		}
		if mutate != nil {
			mutate(ev)
		}
		return ev
	}
	tests := []struct {
		name     string
		resource string
		obj      runtime.Object
		want     []any
	}{
		{"lease sample", "leases.coordination.k8s.io",
			&coordinationv1.Lease{ObjectMeta: meta("sample-lease", 3*time.Second), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("holder-a")}},
			[]any{"sample-lease", "holder-a", "3s"}},
		{"lease without holder or timestamp", "leases.coordination.k8s.io",
			&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "x"}},
			[]any{"x", "", "<unknown>"}},
		{"leasecandidate sample", "leasecandidates.coordination.k8s.io",
			&coordinationv1beta1.LeaseCandidate{ObjectMeta: meta("sample-candidate", 0), Spec: coordinationv1beta1.LeaseCandidateSpec{
				LeaseName: "sample-component", BinaryVersion: "1.36.0", EmulationVersion: "1.36.0"}},
			[]any{"sample-candidate", "sample-component", "1.36.0", "1.36.0", "0s"}},
		{"namespace", "namespaces",
			&corev1.Namespace{ObjectMeta: meta("team-a", 50*time.Hour), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
			[]any{"team-a", "Active", "2d2h"}},
		{"legacy event", "events", event(nil),
			[]any{"30s", "Normal", "LeaderElection", "lease/demo", "spec.holderIdentity", "leaselab, host-1", "node-a became leader", "10m", int64(3), "demo.1"}},
		{"last seen falls back to first seen", "events", event(func(ev *corev1.Event) { ev.LastTimestamp = metav1.Time{} }),
			[]any{"10m", "Normal", "LeaderElection", "lease/demo", "spec.holderIdentity", "leaselab, host-1", "node-a became leader", "10m", int64(3), "demo.1"}},
		{"new event: eventTime, reporting fields, count 1", "events", event(func(ev *corev1.Event) {
			ev.FirstTimestamp, ev.LastTimestamp, ev.Count = metav1.Time{}, metav1.Time{}, 0
			ev.EventTime = microAgo(95 * time.Second)
			ev.Source = corev1.EventSource{}
			ev.ReportingController, ev.ReportingInstance = "leaselab.dev/elector", "elector-1"
			ev.InvolvedObject.Name = ""
		}), []any{"95s", "Normal", "LeaderElection", "lease", "spec.holderIdentity", "leaselab.dev/elector, elector-1", "node-a became leader", "95s", int64(1), "demo.1"}},
		{"series", "events", event(func(ev *corev1.Event) {
			ev.Series = &corev1.EventSeries{Count: 7, LastObservedTime: microAgo(5*time.Minute + 30*time.Second)}
			ev.Source.Host = ""
		}), []any{"5m30s", "Normal", "LeaderElection", "lease/demo", "spec.holderIdentity", "leaselab", "node-a became leader", "10m", int64(7), "demo.1"}},
		{"no timestamps at all", "events", event(func(ev *corev1.Event) { ev.FirstTimestamp, ev.LastTimestamp = metav1.Time{}, metav1.Time{} }),
			[]any{"<unknown>", "Normal", "LeaderElection", "lease/demo", "spec.holderIdentity", "leaselab, host-1", "node-a became leader", "<unknown>", int64(3), "demo.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := MustKind(t, reg, tt.resource)
			got := k.TableCells(tt.obj, now)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("cells:\ngot:  %#v\nwant: %#v", got, tt.want)
			}
			if len(got) != len(k.TableColumns) {
				t.Errorf("%d cells for %d columns", len(got), len(k.TableColumns))
			}
		})
	}
}

func TestTableAge(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "leases.coordination.k8s.io")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		age  time.Duration
		want string
	}{
		{-3 * time.Second, "<invalid>"},
		{-time.Second, "0s"},
		{0, "0s"},
		{119 * time.Second, "119s"},
		{2 * time.Minute, "2m"},
		{5*time.Minute + 7*time.Second, "5m7s"},
		{10*time.Minute + 7*time.Second, "10m"},
		{179 * time.Minute, "179m"},
		{3*time.Hour + 20*time.Minute, "3h20m"},
		{8 * time.Hour, "8h"},
		{47 * time.Hour, "47h"},
		{3*24*time.Hour + 5*time.Hour, "3d5h"},
		{30 * 24 * time.Hour, "30d"},
		{3*365*24*time.Hour + 24*time.Hour, "3y1d"},
		{9 * 365 * 24 * time.Hour, "9y"},
	}
	for _, tt := range tests {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: metav1.NewTime(now.Add(-tt.age))}}
		if got := k.TableCells(lease, now)[2]; got != tt.want {
			t.Errorf("age %v = %v, want %s", tt.age, got, tt.want)
		}
	}
}
