package kinds_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/leaselab/leaselab/web/api/kinds"
)

const dnsLabelMsg = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`

func TestNamespacePrepareForCreate(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "namespaces")
	tests := []struct {
		name           string
		finalizers     []corev1.FinalizerName
		wantFinalizers []corev1.FinalizerName
	}{
		{name: "none", wantFinalizers: []corev1.FinalizerName{"kubernetes"}},
		{name: "other", finalizers: []corev1.FinalizerName{"example.com/x"}, wantFinalizers: []corev1.FinalizerName{"example.com/x", "kubernetes"}},
		{name: "already", finalizers: []corev1.FinalizerName{"kubernetes", "example.com/x"}, wantFinalizers: []corev1.FinalizerName{"kubernetes", "example.com/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := &corev1.Namespace{
				ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{corev1.LabelMetadataName: "spoofed", "x": "y"}},
				Spec:       corev1.NamespaceSpec{Finalizers: tt.finalizers},
				Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating},
			}
			k.PrepareForCreate(ns)
			if ns.Status.Phase != corev1.NamespaceActive || len(ns.Status.Conditions) != 0 {
				t.Errorf("status = %+v, want phase Active only", ns.Status)
			}
			if !reflect.DeepEqual(ns.Spec.Finalizers, tt.wantFinalizers) {
				t.Errorf("finalizers = %v, want %v", ns.Spec.Finalizers, tt.wantFinalizers)
			}
			if want := map[string]string{corev1.LabelMetadataName: "team-a", "x": "y"}; !reflect.DeepEqual(ns.Labels, want) {
				t.Errorf("labels = %v, want %v", ns.Labels, want)
			}
			checkErrs(t, k.Validate(ns), nil)
		})
	}
}

func TestNamespacePrepareForUpdate(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "namespaces")
	old := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", ResourceVersion: "4", Labels: map[string]string{corev1.LabelMetadataName: "team-a"}},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
	ns := old.DeepCopy()
	ns.Labels = map[string]string{"team": "a"}
	ns.Spec.Finalizers = nil
	ns.Status.Phase = corev1.NamespaceTerminating
	k.PrepareForUpdate(ns, old)
	if !reflect.DeepEqual(ns.Spec, old.Spec) || !reflect.DeepEqual(ns.Status, old.Status) {
		t.Errorf("spec/status = %+v %+v, want the stored ones", ns.Spec, ns.Status)
	}
	if want := map[string]string{corev1.LabelMetadataName: "team-a", "team": "a"}; !reflect.DeepEqual(ns.Labels, want) {
		t.Errorf("labels = %v, want %v", ns.Labels, want)
	}
	checkErrs(t, k.ValidateUpdate(ns, old), nil)
	if k.AllowCreateOnUpdate || !k.AllowUnconditionalUpdate || k.Namespaced {
		t.Errorf("AllowCreateOnUpdate=%v AllowUnconditionalUpdate=%v Namespaced=%v, want false true false",
			k.AllowCreateOnUpdate, k.AllowUnconditionalUpdate, k.Namespaced)
	}
}

func TestNamespaceValidate(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "namespaces")
	tests := []struct {
		name   string
		mutate func(*corev1.Namespace)
		want   []fieldErr
	}{
		{name: "valid"},
		{name: "upper case", mutate: func(ns *corev1.Namespace) { ns.Name = "Team" }, want: []fieldErr{
			{"metadata.name", field.ErrorTypeInvalid, `Invalid value: "Team": ` + dnsLabelMsg},
		}},
		{name: "dot is not a label", mutate: func(ns *corev1.Namespace) { ns.Name = "team.a" }, want: []fieldErr{
			{"metadata.name", field.ErrorTypeInvalid, `Invalid value: "team.a": must not contain dots`},
		}},
		{name: "too long", mutate: func(ns *corev1.Namespace) { ns.Name = strings.Repeat("a", 64) }, want: []fieldErr{
			{"metadata.name", field.ErrorTypeInvalid, `Invalid value: "` + strings.Repeat("a", 64) + `": must be no more than 63 characters`},
		}},
		{name: "namespace on a namespace", mutate: func(ns *corev1.Namespace) { ns.Namespace = "default" }, want: []fieldErr{
			{"metadata.namespace", field.ErrorTypeForbidden, "Forbidden: not allowed on this type"},
		}},
		{name: "unqualified spec finalizer", mutate: func(ns *corev1.Namespace) { ns.Spec.Finalizers = []corev1.FinalizerName{"kubernetes", "mine"} }, want: []fieldErr{
			{"spec.finalizers", field.ErrorTypeInvalid, `Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified`},
		}},
		{name: "unqualified metadata finalizer", mutate: func(ns *corev1.Namespace) { ns.Finalizers = []string{"orphan", "mine"} }, want: []fieldErr{
			{"metadata.finalizers[1]", field.ErrorTypeInvalid, `Invalid value: "mine": name is neither a standard finalizer name nor is it fully qualified`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
			if tt.mutate != nil {
				tt.mutate(ns)
			}
			checkErrs(t, k.Validate(ns), tt.want)
		})
	}
}

func newEvent(mutate func(*corev1.Event)) *corev1.Event {
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "demo.17a2b3c4d5e6f708", Namespace: "team-a"},
		InvolvedObject: corev1.ObjectReference{Kind: "Lease", Namespace: "team-a", Name: "demo", APIVersion: "coordination.k8s.io/v1"},
		Reason:         "LeaderElection",
		Message:        "node-a became leader",
		Source:         corev1.EventSource{Component: "leaselab"},
		Type:           corev1.EventTypeNormal,
		Count:          1,
	}
	if mutate != nil {
		mutate(ev)
	}
	return ev
}

func TestEventValidate(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "events")
	newStyle := func(ev *corev1.Event) {
		ev.EventTime = metav1.NewMicroTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
		ev.ReportingController = "leaselab.dev/controller"
		ev.ReportingInstance = "leaselab-1"
		ev.Action = "Elect"
	}
	tests := []struct {
		name   string
		mutate func(*corev1.Event)
		want   []fieldErr
	}{
		{name: "legacy event"},
		{name: "legacy event: any name and type", mutate: func(ev *corev1.Event) { ev.Name, ev.Type = "Odd_Name", "Custom" }},
		{name: "legacy event: involved namespace mismatch", mutate: func(ev *corev1.Event) { ev.InvolvedObject.Namespace = "other" }, want: []fieldErr{
			{"involvedObject.namespace", field.ErrorTypeInvalid, `Invalid value: "other": does not match event.namespace`},
		}},
		{name: "legacy event: cluster object outside default", mutate: func(ev *corev1.Event) { ev.InvolvedObject.Namespace = "" }, want: []fieldErr{
			{"involvedObject.namespace", field.ErrorTypeInvalid, `Invalid value: "": does not match event.namespace`},
		}},
		{name: "legacy event: cluster object in default", mutate: func(ev *corev1.Event) { ev.Namespace, ev.InvolvedObject.Namespace = "default", "" }},
		{name: "new event", mutate: newStyle},
		{name: "new event: nothing reported", mutate: func(ev *corev1.Event) {
			ev.EventTime = metav1.NewMicroTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
			ev.Reason = ""
		}, want: []fieldErr{
			{"reportingController", field.ErrorTypeRequired, "Required value"},
			{"reportingController", field.ErrorTypeInvalid, `Invalid value: "": name part must be non-empty`},
			{"reportingController", field.ErrorTypeInvalid, `Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
			{"reportingInstance", field.ErrorTypeRequired, "Required value"},
			{"action", field.ErrorTypeRequired, "Required value"},
			{"reason", field.ErrorTypeRequired, "Required value"},
		}},
		{name: "new event: long fields", mutate: func(ev *corev1.Event) {
			newStyle(ev)
			ev.Action = strings.Repeat("a", 129)
			ev.Message = strings.Repeat("m", 1025)
		}, want: []fieldErr{
			{"action", field.ErrorTypeInvalid, `Invalid value: "": can have at most 128 characters`},
			{"message", field.ErrorTypeInvalid, `Invalid value: "": can have at most 1024 characters`},
		}},
		{name: "name with a slash", mutate: func(ev *corev1.Event) { ev.Name = "a/b" }, want: []fieldErr{
			{"metadata.name", field.ErrorTypeInvalid, `Invalid value: "a/b": may not contain '/'`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, k.Validate(newEvent(tt.mutate)), tt.want)
		})
	}
}

func TestEventValidateUpdate(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "events")
	old := newEvent(func(ev *corev1.Event) { ev.ResourceVersion = "9" })
	ev := old.DeepCopy()
	ev.Count = 2
	ev.LastTimestamp = metav1.Now()
	checkErrs(t, k.ValidateUpdate(ev, old), nil)

	ev.InvolvedObject.Namespace = "other"
	checkErrs(t, k.ValidateUpdate(ev, old), []fieldErr{
		{"involvedObject.namespace", field.ErrorTypeInvalid, `Invalid value: "other": does not match event.namespace`},
	})
	if !k.AllowCreateOnUpdate || !k.AllowUnconditionalUpdate || !k.Namespaced {
		t.Errorf("AllowCreateOnUpdate=%v AllowUnconditionalUpdate=%v Namespaced=%v, want all true",
			k.AllowCreateOnUpdate, k.AllowUnconditionalUpdate, k.Namespaced)
	}
}
