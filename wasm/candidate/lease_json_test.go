//go:build !js

package candidate_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// k8sSerializer is the API server's JSON serializer for coordination/v1.
func k8sSerializer(t *testing.T) *kjson.Serializer {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{})
}

func k8sEncode(t *testing.T, l *coordinationv1.Lease) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := k8sSerializer(t).Encode(l, &buf); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(buf.Bytes())
}

func k8sDecode(t *testing.T, data []byte) *coordinationv1.Lease {
	t.Helper()
	var out coordinationv1.Lease
	if _, _, err := k8sSerializer(t).Decode(data, nil, &out); err != nil {
		t.Fatalf("k8s decode %s: %v", data, err)
	}
	return &out
}

// fullK8sLease sets every Lease field and most of ObjectMeta's.
func fullK8sLease() *coordinationv1.Lease {
	acquire := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.FixedZone("CET", 3600))
	renew := time.Date(2025, 1, 2, 3, 4, 15, 999999999, time.UTC)
	strategy := coordinationv1.OldestEmulationVersion
	return &coordinationv1.Lease{
		TypeMeta: metav1.TypeMeta{Kind: "Lease", APIVersion: "coordination.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "demo", GenerateName: "de", Namespace: "default", SelfLink: "/x",
			UID: types.UID("3f1c-uid"), ResourceVersion: "42", Generation: 3,
			CreationTimestamp:          metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)),
			DeletionTimestamp:          ptr.To(metav1.NewTime(time.Date(2025, 1, 3, 0, 0, 0, 0, time.UTC))),
			DeletionGracePeriodSeconds: ptr.To[int64](30),
			Labels:                     map[string]string{"app": "demo", "<html>": "&"},
			Annotations:                map[string]string{"note": "keep me"},
			OwnerReferences:            []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u", Controller: ptr.To(true)}},
			Finalizers:                 []string{"example.com/f"},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "coordination.k8s.io/v1",
				Time: ptr.To(metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))), FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:holderIdentity":{}}}`)},
			}},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("node-a_1234"),
			LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime:          &metav1.MicroTime{Time: acquire},
			RenewTime:            &metav1.MicroTime{Time: renew},
			LeaseTransitions:     ptr.To[int32](7),
			Strategy:             &strategy,
			PreferredHolder:      ptr.To("node-b"),
		},
	}
}

func TestLeaseJSONFromK8sRoundTripsByteForByte(t *testing.T) {
	k := fullK8sLease()
	want := k8sEncode(t, k)

	var l candidate.Lease
	if err := json.Unmarshal(want, &l); err != nil {
		t.Fatal(err)
	}
	// Field for field.
	m := l.Metadata
	if l.Kind != "Lease" || l.APIVersion != "coordination.k8s.io/v1" || m.Name != "demo" || m.GenerateName != "de" ||
		m.Namespace != "default" || m.UID != "3f1c-uid" || m.ResourceVersion != "42" ||
		!reflect.DeepEqual(m.Labels, k.Labels) || !reflect.DeepEqual(m.Annotations, k.Annotations) {
		t.Errorf("metadata decoded as %+v", l)
	}
	s := l.Spec
	if *s.HolderIdentity != *k.Spec.HolderIdentity || *s.LeaseDurationSeconds != 15 || *s.LeaseTransitions != 7 ||
		*s.Strategy != string(*k.Spec.Strategy) || *s.PreferredHolder != "node-b" {
		t.Errorf("spec decoded as %+v", s)
	}
	for name, pair := range map[string][2]time.Time{
		"acquireTime": {s.AcquireTime.Time, k.Spec.AcquireTime.Truncate(time.Microsecond)},
		"renewTime":   {s.RenewTime.Time, k.Spec.RenewTime.Truncate(time.Microsecond)},
	} {
		if !pair[0].Equal(pair[1]) {
			t.Errorf("%s = %s, want %s", name, pair[0], pair[1])
		}
	}
	for _, key := range []string{"selfLink", "generation", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "ownerReferences", "finalizers", "managedFields"} {
		if _, ok := m.Unknown[key]; !ok {
			t.Errorf("metadata.%s not kept", key)
		}
	}

	got, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("re-encoded differs from k8s.io/api:\n got %s\nwant %s", got, want)
	}
}

func TestLeaseJSONFromCandidateMatchesK8s(t *testing.T) {
	now := time.Date(2025, 6, 7, 8, 9, 10, 987654321, time.FixedZone("X", -7*3600))
	cases := map[string]struct {
		ours candidate.LeaseSpec
		k8s  coordinationv1.LeaseSpec
	}{
		"empty": {},
		"zero values are written, not omitted": {
			ours: candidate.LeaseSpec{HolderIdentity: ptr.To(""), LeaseDurationSeconds: ptr.To[int32](0), LeaseTransitions: ptr.To[int32](0),
				AcquireTime: &candidate.MicroTime{}, RenewTime: &candidate.MicroTime{}},
			k8s: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(""), LeaseDurationSeconds: ptr.To[int32](0), LeaseTransitions: ptr.To[int32](0),
				AcquireTime: &metav1.MicroTime{}, RenewTime: &metav1.MicroTime{}},
		},
		"what the elector writes": {
			ours: candidate.LeaseSpec{HolderIdentity: ptr.To("tab-1"), LeaseDurationSeconds: ptr.To[int32](10), LeaseTransitions: ptr.To[int32](4),
				AcquireTime: &candidate.MicroTime{Time: now}, RenewTime: &candidate.MicroTime{Time: now.Add(time.Second)}},
			k8s: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("tab-1"), LeaseDurationSeconds: ptr.To[int32](10), LeaseTransitions: ptr.To[int32](4),
				AcquireTime: &metav1.MicroTime{Time: now}, RenewTime: &metav1.MicroTime{Time: now.Add(time.Second)}},
		},
		"coordinated fields": {
			ours: candidate.LeaseSpec{Strategy: ptr.To("OldestEmulationVersion"), PreferredHolder: ptr.To("b")},
			k8s:  coordinationv1.LeaseSpec{Strategy: ptr.To(coordinationv1.OldestEmulationVersion), PreferredHolder: ptr.To("b")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ours := candidate.Lease{Kind: "Lease", APIVersion: "coordination.k8s.io/v1",
				Metadata: candidate.ObjectMeta{Name: "demo", Namespace: "default", ResourceVersion: "9", UID: "u",
					Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
				Spec: tc.ours}
			k := coordinationv1.Lease{TypeMeta: metav1.TypeMeta{Kind: "Lease", APIVersion: "coordination.k8s.io/v1"},
				ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default", ResourceVersion: "9", UID: "u",
					Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}},
				Spec: tc.k8s}
			got, err := json.Marshal(ours)
			if err != nil {
				t.Fatal(err)
			}
			if want := k8sEncode(t, &k); !bytes.Equal(got, want) {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
			// And the API server's decoder reads it back to the same values.
			dec := k8sDecode(t, got)
			if dec.Name != "demo" || dec.ResourceVersion != "9" || !reflect.DeepEqual(dec.Labels, k.Labels) {
				t.Errorf("decoded metadata %+v", dec.ObjectMeta)
			}
			if !apiEqualSpec(dec.Spec, k.Spec) {
				t.Errorf("decoded spec %+v, want %+v", dec.Spec, k.Spec)
			}
		})
	}
}

// apiEqualSpec compares specs as the API sees them: times at microsecond
// precision, and a zero MicroTime (sent as null) equal to none.
func apiEqualSpec(a, b coordinationv1.LeaseSpec) bool {
	norm := func(s coordinationv1.LeaseSpec) coordinationv1.LeaseSpec {
		for _, p := range []**metav1.MicroTime{&s.AcquireTime, &s.RenewTime} {
			if *p != nil && (*p).IsZero() {
				*p = nil
			} else if *p != nil {
				*p = &metav1.MicroTime{Time: (*p).Truncate(time.Microsecond).UTC()}
			}
		}
		return s
	}
	a, b = norm(a), norm(b)
	eqTime := func(x, y *metav1.MicroTime) bool {
		return (x == nil) == (y == nil) && (x == nil || x.Equal(y))
	}
	return reflect.DeepEqual(a.HolderIdentity, b.HolderIdentity) && reflect.DeepEqual(a.LeaseDurationSeconds, b.LeaseDurationSeconds) &&
		reflect.DeepEqual(a.LeaseTransitions, b.LeaseTransitions) && reflect.DeepEqual(a.Strategy, b.Strategy) &&
		reflect.DeepEqual(a.PreferredHolder, b.PreferredHolder) && eqTime(a.AcquireTime, b.AcquireTime) && eqTime(a.RenewTime, b.RenewTime)
}

func TestMicroTimeMatchesMetav1(t *testing.T) {
	for _, tm := range []time.Time{
		{},
		time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC),
		time.Date(2025, 1, 2, 3, 4, 5, 999999999, time.FixedZone("", 2*3600)),
		time.Date(1999, 12, 31, 23, 59, 59, 1000, time.Local),
	} {
		got, err := json.Marshal(candidate.MicroTime{Time: tm})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(metav1.MicroTime{Time: tm})
		if !bytes.Equal(got, want) {
			t.Errorf("marshal %s: got %s, want %s", tm, got, want)
		}
	}
	for _, in := range []string{
		`null`, `"2025-01-02T03:04:05.123456Z"`, `"2025-01-02T03:04:05.123456+02:00"`,
		`"2025-01-02T03:04:05Z"`, `"2025-01-02T03:04:05.123Z"`, `"2025-01-02T03:04:05.123456789Z"`, `12`, `""`,
	} {
		var ours candidate.MicroTime
		var theirs metav1.MicroTime
		errOurs := json.Unmarshal([]byte(in), &ours)
		errTheirs := json.Unmarshal([]byte(in), &theirs)
		if (errOurs == nil) != (errTheirs == nil) {
			t.Errorf("unmarshal %s: our error %v, metav1's %v", in, errOurs, errTheirs)
			continue
		}
		if errOurs == nil && !ours.Equal(theirs.Time) {
			t.Errorf("unmarshal %s: %s, metav1 %s", in, ours.Time, theirs.Time)
		}
	}
}

func TestUnknownFieldsSurviveReadModifyWrite(t *testing.T) {
	in := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","status":{"future":[1,{"a":null}]},
		"metadata":{"zeta":"last","name":"demo","namespace":"default","resourceVersion":"5","uid":"u1",
			"creationTimestamp":"2025-01-02T03:04:05Z","generation":2,"annotations":{"x":"y"},
			"managedFields":[{"manager":"m","operation":"Apply","apiVersion":"coordination.k8s.io/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},
		"spec":{"holderIdentity":"old","HolderIdentity":"case matters","leaseDurationSeconds":10,"futureField":{"deep":[true,false]},
			"renewTime":"2025-01-02T03:04:05.000001Z","leaseTransitions":1}}`
	var l candidate.Lease
	if err := json.Unmarshal([]byte(in), &l); err != nil {
		t.Fatal(err)
	}
	// Modify what the elector modifies.
	l.Spec.HolderIdentity = ptr.To("new")
	l.Spec.LeaseTransitions = ptr.To[int32](2)
	l.Metadata.ResourceVersion = "6"
	out, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}

	var before, after map[string]any
	_ = json.Unmarshal([]byte(in), &before)
	_ = json.Unmarshal(out, &after)
	before["spec"].(map[string]any)["holderIdentity"] = "new"
	before["spec"].(map[string]any)["leaseTransitions"] = float64(2)
	before["metadata"].(map[string]any)["resourceVersion"] = "6"
	if !reflect.DeepEqual(before, after) {
		t.Errorf("read-modify-write changed more than it set:\n in  %s\n out %s", in, out)
	}
	if l.Spec.Unknown["HolderIdentity"] == nil {
		t.Error("keys are case-sensitive, as in Kubernetes: HolderIdentity is an unknown field")
	}
	// The API server's decoder accepts what we wrote and keeps its own fields.
	k := k8sDecode(t, out)
	if *k.Spec.HolderIdentity != "new" || len(k.ManagedFields) != 1 || k.Generation != 2 || k.Annotations["x"] != "y" {
		t.Errorf("k8s decoded %+v", k)
	}
}

func TestStatusDecodesMetav1Status(t *testing.T) {
	for _, serr := range []*apierrors.StatusError{
		apierrors.NewConflict(coordinationv1.Resource("leases"), "demo", errTest("the object has been modified")),
		apierrors.NewAlreadyExists(coordinationv1.Resource("leases"), "demo"),
		apierrors.NewNotFound(coordinationv1.Resource("leases"), "demo"),
	} {
		st := serr.Status()
		st.Kind, st.APIVersion = "Status", "v1"
		b, _ := json.Marshal(st)
		var ours candidate.Status
		if err := json.Unmarshal(b, &ours); err != nil {
			t.Fatal(err)
		}
		if ours.Kind != "Status" || ours.Code != st.Code || ours.Reason != string(st.Reason) || ours.Message != st.Message ||
			ours.Status != st.Status || ours.Details == nil || ours.Details.Name != "demo" || ours.Details.Kind != st.Details.Kind ||
			ours.Details.Group != st.Details.Group {
			t.Errorf("decoded %+v from %s", ours, b)
		}
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }
