package kinds_test

import (
	"reflect"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/leaselab/leaselab/web/api/kinds"
)

func TestFieldSet(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	tests := []struct {
		resource string
		obj      runtime.Object
		want     fields.Set
	}{
		{"leases.coordination.k8s.io",
			&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default"}},
			fields.Set{"metadata.name": "demo", "metadata.namespace": "default"}},
		{"leasecandidates.coordination.k8s.io",
			&coordinationv1beta1.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}, Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: "demo"}},
			fields.Set{"metadata.name": "c", "metadata.namespace": "default"}},
		{"namespaces",
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
			fields.Set{"metadata.name": "team-a", "status.phase": "Active"}},
		{"events",
			&corev1.Event{
				ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "team-a"},
				InvolvedObject: corev1.ObjectReference{Kind: "Lease", Namespace: "team-a", Name: "demo", UID: "u1",
					APIVersion: "coordination.k8s.io/v1", ResourceVersion: "5", FieldPath: "spec"},
				Reason: "Elected", Type: "Normal", ReportingController: "leaselab.dev/elector",
			},
			fields.Set{
				"metadata.name": "e", "metadata.namespace": "team-a",
				"involvedObject.kind": "Lease", "involvedObject.namespace": "team-a", "involvedObject.name": "demo",
				"involvedObject.uid": "u1", "involvedObject.apiVersion": "coordination.k8s.io/v1",
				"involvedObject.resourceVersion": "5", "involvedObject.fieldPath": "spec",
				"reason": "Elected", "reportingComponent": "leaselab.dev/elector",
				"source": "leaselab.dev/elector", // source.component is empty: the reporting controller stands in
				"type":   "Normal",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			k := MustKind(t, reg, tt.resource)
			got := k.FieldSet(tt.obj)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("field set:\ngot:  %v\nwant: %v", got, tt.want)
			}
			// Every key the set offers must also pass the selector check, and the REST layer's
			// scheme must agree with the kind.
			gvk := k.StorageGVK()
			for key := range got {
				sel := fields.OneTermEqualSelector(key, "x")
				if err := k.CheckFieldSelector(sel); err != nil {
					t.Errorf("CheckFieldSelector(%s): %v", key, err)
				}
				if _, _, err := reg.Scheme.ConvertFieldLabel(gvk, key, "x"); err != nil {
					t.Errorf("Scheme.ConvertFieldLabel(%s): %v", key, err)
				}
			}
		})
	}
}

func TestCheckFieldSelector(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	tests := []struct {
		resource string
		selector string
		wantErr  string
	}{
		{"leases.coordination.k8s.io", "", ""},
		{"leases.coordination.k8s.io", "metadata.name=demo", ""},
		{"leases.coordination.k8s.io", "metadata.name!=demo,metadata.namespace==default", ""},
		{"leases.coordination.k8s.io", "spec.holderIdentity=holder-a", `"spec.holderIdentity" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"leases.coordination.k8s.io", "metadata.name=a,spec.holderIdentity=b", `"spec.holderIdentity" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"leasecandidates.coordination.k8s.io", "metadata.namespace=default", ""},
		{"leasecandidates.coordination.k8s.io", "spec.leaseName=demo", `"spec.leaseName" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"namespaces", "status.phase=Active", ""},
		{"namespaces", "metadata.name=team-a", ""},
		{"namespaces", "metadata.namespace=x", "field label not supported: metadata.namespace"},
		{"namespaces", "name=team-a", "field label not supported: name"},
		{"events", "involvedObject.name=demo,involvedObject.namespace=team-a,involvedObject.kind=Lease,involvedObject.uid=u1", ""},
		{"events", "reason=Elected,type!=Warning,source=leaselab,reportingComponent=x,metadata.name=e", ""},
		{"events", "involvedObject.apiVersion=v1,involvedObject.resourceVersion=1,involvedObject.fieldPath=spec", ""},
		{"events", "message=hello", "field label not supported: message"},
	}
	for _, tt := range tests {
		t.Run(tt.resource+"?"+tt.selector, func(t *testing.T) {
			k := MustKind(t, reg, tt.resource)
			sel, err := fields.ParseSelector(tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			err = k.CheckFieldSelector(sel)
			if got := errString(err); got != tt.wantErr {
				t.Errorf("CheckFieldSelector(%q) = %q, want %q", tt.selector, got, tt.wantErr)
			}
			// The scheme's field-label conversion, which the REST layer may use instead, agrees.
			_, err = sel.Transform(func(label, value string) (string, string, error) {
				return reg.Scheme.ConvertFieldLabel(k.StorageGVK(), label, value)
			})
			if got := errString(err); got != tt.wantErr {
				t.Errorf("scheme conversion of %q = %q, want %q", tt.selector, got, tt.wantErr)
			}
		})
	}
	if err := MustKind(t, reg, "leases.coordination.k8s.io").CheckFieldSelector(nil); err != nil {
		t.Errorf("nil selector: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
