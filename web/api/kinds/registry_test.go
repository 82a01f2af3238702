package kinds_test

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"

	"github.com/leaselab/leaselab/web/api/kinds"
)

func TestKinds(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	var got []string
	for _, k := range reg.Kinds() {
		got = append(got, k.StorageResource())
		if want := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}; !slices.Equal(k.Verbs, want) {
			t.Errorf("%s verbs = %v, want %v", k.Resource, k.Verbs, want)
		}
		if !k.Serves(k.StorageVersion) {
			t.Errorf("%s does not serve its storage version %s", k.Resource, k.StorageVersion)
		}
		if k.PrepareForCreate == nil || k.PrepareForUpdate == nil || k.Validate == nil || k.ValidateUpdate == nil ||
			k.TableCells == nil || k.FieldSet == nil || len(k.TableColumns) == 0 {
			t.Errorf("%s has an unset hook", k.Resource)
		}
		if reg.ByStorageResource(k.StorageResource()) != k {
			t.Errorf("ByStorageResource(%s) is not the kind", k.StorageResource())
		}
	}
	want := []string{"leases.coordination.k8s.io", "leasecandidates.coordination.k8s.io", "namespaces", "events"}
	if !slices.Equal(got, want) {
		t.Errorf("kinds = %v, want %v", got, want)
	}
	if reg.ByStorageResource("leases") != nil {
		t.Errorf("ByStorageResource(leases) found a kind; storage names are group-qualified")
	}
}

func TestLookup(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	served := []struct {
		group, version, resource, kind string
	}{
		{"coordination.k8s.io", "v1", "leases", "Lease"},
		{"coordination.k8s.io", "v1beta1", "leasecandidates", "LeaseCandidate"},
		{"coordination.k8s.io", "v1alpha2", "leasecandidates", "LeaseCandidate"},
		{"coordination.k8s.io", "v1alpha1", "leasecandidates", "LeaseCandidate"},
		{"", "v1", "namespaces", "Namespace"},
		{"", "v1", "events", "Event"},
	}
	for _, s := range served {
		k := reg.Lookup(s.group, s.version, s.resource)
		if k == nil || k.Kind != s.kind {
			t.Errorf("Lookup(%q, %q, %q) = %v, want %s", s.group, s.version, s.resource, k, s.kind)
		}
	}
	notServed := []struct{ group, version, resource string }{
		{"coordination.k8s.io", "v1beta1", "leases"},
		{"coordination.k8s.io", "v1", "leasecandidates"},
		{"coordination.k8s.io", "v1alpha3", "leasecandidates"},
		{"", "v1", "leases"},
		{"coordination.k8s.io", "v1", "events"},
		{"events.k8s.io", "v1", "events"},
		{"", "v1", "pods"},
	}
	for _, s := range notServed {
		if k := reg.Lookup(s.group, s.version, s.resource); k != nil {
			t.Errorf("Lookup(%q, %q, %q) = %s, want nil", s.group, s.version, s.resource, k.Kind)
		}
	}
}

func TestSchemeKnowsServedTypesOnly(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	for _, k := range reg.Kinds() {
		for _, v := range k.Versions {
			gv := schema.GroupVersion{Group: k.Group, Version: v}
			for _, kind := range []string{k.Kind, k.ListKind, "DeleteOptions", "WatchEvent"} {
				if !reg.Scheme.Recognizes(gv.WithKind(kind)) {
					t.Errorf("scheme does not recognize %s", gv.WithKind(kind))
				}
			}
		}
	}
	for _, gvk := range []schema.GroupVersionKind{
		metav1.SchemeGroupVersion.WithKind("Table"),
		metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata"),
		metav1.SchemeGroupVersion.WithKind("PartialObjectMetadataList"),
		metav1.SchemeGroupVersion.WithKind("DeleteOptions"),
		{Version: "v1", Kind: "Status"},
	} {
		if !reg.Scheme.Recognizes(gvk) {
			t.Errorf("scheme does not recognize %s", gvk)
		}
	}
	for _, gvk := range []schema.GroupVersionKind{
		coordinationv1beta1.SchemeGroupVersion.WithKind("Lease"),
		coordinationv1.SchemeGroupVersion.WithKind("LeaseCandidate"),
		corev1.SchemeGroupVersion.WithKind("Pod"),
	} {
		if reg.Scheme.Recognizes(gvk) {
			t.Errorf("scheme recognizes unserved %s", gvk)
		}
	}
}

func TestConvertLeaseCandidateRoundTrip(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	filler := randfill.NewWithSeed(1).NilChance(0.2).NumElements(0, 3)
	for i := 0; i < 50; i++ {
		in := &coordinationv1alpha2.LeaseCandidate{}
		filler.Fill(in)
		in.TypeMeta = metav1.TypeMeta{}
		original := in.DeepCopy()

		beta, err := reg.Convert(in, coordinationv1beta1.SchemeGroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		b := beta.(*coordinationv1beta1.LeaseCandidate)
		if b.APIVersion != "coordination.k8s.io/v1beta1" || b.Kind != "LeaseCandidate" {
			t.Errorf("converted TypeMeta = %+v", b.TypeMeta)
		}
		if b.Spec.LeaseName != in.Spec.LeaseName || b.Name != in.Name || !reflect.DeepEqual(b.Labels, in.Labels) {
			t.Errorf("v1beta1 copy differs: %+v", b)
		}

		back, err := reg.Convert(b, coordinationv1alpha2.SchemeGroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		out := back.(*coordinationv1alpha2.LeaseCandidate)
		out.TypeMeta = metav1.TypeMeta{}
		if !apiequality.Semantic.DeepEqual(out, original) {
			t.Fatalf("round trip differs:\nin:  %+v\nout: %+v", original, out)
		}
		if !apiequality.Semantic.DeepEqual(in, original) {
			t.Fatalf("Convert modified its input")
		}
	}
}

func TestConvertLists(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	list := &coordinationv1beta1.LeaseCandidateList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "tok"},
		Items: []coordinationv1beta1.LeaseCandidate{
			{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: "l", BinaryVersion: "1.36.0"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: "l", Strategy: coordinationv1.OldestEmulationVersion}},
		},
	}
	got, err := reg.Convert(list, coordinationv1alpha2.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	alpha := got.(*coordinationv1alpha2.LeaseCandidateList)
	if alpha.Kind != "LeaseCandidateList" || alpha.ResourceVersion != "42" || alpha.Continue != "tok" || len(alpha.Items) != 2 ||
		alpha.Items[0].Name != "a" || alpha.Items[0].Spec.BinaryVersion != "1.36.0" || alpha.Items[1].Spec.Strategy != coordinationv1.OldestEmulationVersion {
		t.Errorf("converted list = %+v", alpha)
	}

	empty, err := reg.Convert(&coordinationv1alpha2.LeaseCandidateList{}, coordinationv1beta1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	if items := empty.(*coordinationv1beta1.LeaseCandidateList).Items; items != nil {
		t.Errorf("empty list items = %#v, want nil", items)
	}
}

func TestConvertRejectsUnservedVersions(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	tests := []struct {
		name string
		obj  runtime.Object
		gv   schema.GroupVersion
	}{
		{"lease to v1beta1", lease, coordinationv1beta1.SchemeGroupVersion},
		{"lease to core", lease, corev1.SchemeGroupVersion},
		{"namespace to coordination", &corev1.Namespace{}, coordinationv1.SchemeGroupVersion},
		{"candidate to v1alpha3", &coordinationv1beta1.LeaseCandidate{}, schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1alpha3"}},
		{"unserved type", &corev1.Pod{}, corev1.SchemeGroupVersion},
		{"v1beta1 lease type", &coordinationv1beta1.Lease{}, coordinationv1.SchemeGroupVersion},
	}
	for _, tt := range tests {
		if _, err := reg.Convert(tt.obj, tt.gv); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}

	same, err := reg.Convert(lease, coordinationv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	if same == runtime.Object(lease) || same.(*coordinationv1.Lease).Kind != "Lease" || lease.Kind != "" {
		t.Errorf("same-version Convert must return a typed copy and leave the input alone")
	}
}

func testLease() *coordinationv1.Lease {
	at := metav1.NewMicroTime(time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC))
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: "demo", Namespace: "default", UID: "3f1c", ResourceVersion: "42",
			CreationTimestamp: metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)),
			Labels:            map[string]string{"app": "x"},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("node-a_1234"),
			LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime:          &at,
			RenewTime:            &at,
			LeaseTransitions:     ptr.To[int32](0),
			Strategy:             ptr.To(coordinationv1.OldestEmulationVersion),
			PreferredHolder:      ptr.To(""),
		},
	}
}

func TestCodecsRoundTrip(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML, runtime.ContentTypeProtobuf} {
		t.Run(mediaType, func(t *testing.T) {
			info, ok := runtime.SerializerInfoForMediaType(reg.Codecs.SupportedMediaTypes(), mediaType)
			if !ok {
				t.Fatalf("no serializer for %s", mediaType)
			}
			if info.StrictSerializer == nil {
				t.Fatalf("no strict serializer for %s", mediaType)
			}
			in := testLease()
			var buf bytes.Buffer
			if err := reg.Codecs.EncoderForVersion(info.Serializer, coordinationv1.SchemeGroupVersion).Encode(in, &buf); err != nil {
				t.Fatal(err)
			}
			data := buf.Bytes()
			switch mediaType {
			case runtime.ContentTypeProtobuf:
				if !bytes.HasPrefix(data, []byte("k8s\x00")) {
					t.Errorf("protobuf body starts with %q, want the k8s envelope", data[:min(4, len(data))])
				}
			case runtime.ContentTypeJSON:
				want := `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"demo","namespace":"default","uid":"3f1c","resourceVersion":"42","creationTimestamp":"2025-01-02T03:04:05Z","labels":{"app":"x"}},"spec":{"holderIdentity":"node-a_1234","leaseDurationSeconds":15,"acquireTime":"2025-01-02T03:04:05.123456Z","renewTime":"2025-01-02T03:04:05.123456Z","leaseTransitions":0,"strategy":"OldestEmulationVersion","preferredHolder":""}}`
				if got := strings.TrimSpace(string(data)); got != want {
					t.Errorf("JSON:\ngot:  %s\nwant: %s", got, want)
				}
			}

			for _, dec := range []runtime.Decoder{info.Serializer, info.StrictSerializer, reg.Codecs.UniversalDeserializer()} {
				obj, gvk, err := dec.Decode(data, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if *gvk != coordinationv1.SchemeGroupVersion.WithKind("Lease") {
					t.Errorf("decoded kind %s", gvk)
				}
				out := obj.(*coordinationv1.Lease)
				want := testLease()
				want.TypeMeta = metav1.TypeMeta{Kind: "Lease", APIVersion: "coordination.k8s.io/v1"}
				if mediaType == runtime.ContentTypeProtobuf {
					// Protobuf carries no TypeMeta inside the object; the envelope has it.
					out.TypeMeta = want.TypeMeta
				}
				if !apiequality.Semantic.DeepEqual(out, want) {
					t.Errorf("round trip:\ngot:  %+v\nwant: %+v", out, want)
				}
			}
		})
	}
}

func TestStrictDecoding(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	info, _ := runtime.SerializerInfoForMediaType(reg.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	body := []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"demo","name":"demo2"},"spec":{"holderIdentity":"a","HolderIdentity":"b","bogus":1}}`)

	obj, _, err := info.Serializer.Decode(body, nil, nil)
	if err != nil {
		t.Fatalf("lenient decode: %v", err)
	}
	if got := ptr.Deref(obj.(*coordinationv1.Lease).Spec.HolderIdentity, ""); got != "a" {
		t.Errorf("holderIdentity = %q; keys are case-sensitive", got)
	}

	obj, _, err = info.StrictSerializer.Decode(body, nil, nil)
	if !runtime.IsStrictDecodingError(err) {
		t.Fatalf("strict decode error = %v, want a strict decoding error", err)
	}
	if obj == nil {
		t.Fatal("strict decode returned no object with its strict error")
	}
	se, _ := runtime.AsStrictDecodingError(err)
	want := []string{`duplicate field "metadata.name"`, `unknown field "spec.HolderIdentity"`, `unknown field "spec.bogus"`}
	var got []string
	for _, e := range se.Errors() {
		got = append(got, e.Error())
	}
	if !slices.Equal(got, want) {
		t.Errorf("strict errors = %q, want %q", got, want)
	}
}

func TestEncodeTableAndStatus(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	info, _ := runtime.SerializerInfoForMediaType(reg.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	enc := reg.Codecs.EncoderForVersion(info.Serializer, metav1.SchemeGroupVersion)
	table := &metav1.Table{
		ListMeta:          metav1.ListMeta{ResourceVersion: "208"},
		ColumnDefinitions: MustKind(t, reg, "leases.coordination.k8s.io").TableColumns[:1],
		Rows: []metav1.TableRow{{
			Cells: []any{"sample-lease"},
			// Embedded objects are written as they are: their TypeMeta must be set by the caller.
			Object: runtime.RawExtension{Object: &metav1.PartialObjectMetadata{
				TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"},
				ObjectMeta: metav1.ObjectMeta{Name: "sample-lease", Namespace: "default"},
			}},
		}},
	}
	var buf bytes.Buffer
	if err := enc.Encode(table, &buf); err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"208"},"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"` + nameDescription + `","priority":0}],"rows":[{"cells":["sample-lease"],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"sample-lease","namespace":"default"}}}]}`
	if got := strings.TrimSpace(buf.String()); got != want {
		t.Errorf("table:\ngot:  %s\nwant: %s", got, want)
	}

	buf.Reset()
	status := &metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound}
	if err := reg.Codecs.EncoderForVersion(info.Serializer, coordinationv1.SchemeGroupVersion).Encode(status, &buf); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.HasPrefix(got, `{"kind":"Status","apiVersion":"v1",`) {
		t.Errorf("status = %s", got)
	}
}

func TestDecodeDeleteOptions(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	for _, apiVersion := range []string{"v1", "meta.k8s.io/v1", "coordination.k8s.io/v1", "coordination.k8s.io/v1beta1"} {
		body := []byte(`{"kind":"DeleteOptions","apiVersion":"` + apiVersion + `","propagationPolicy":"Background"}`)
		obj, _, err := reg.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			t.Errorf("%s: %v", apiVersion, err)
			continue
		}
		if opts, ok := obj.(*metav1.DeleteOptions); !ok || opts.PropagationPolicy == nil || *opts.PropagationPolicy != metav1.DeletePropagationBackground {
			t.Errorf("%s: decoded %#v", apiVersion, obj)
		}
	}
}

func TestDecodeAlphaCandidateAndStore(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	body := []byte(`{"apiVersion":"coordination.k8s.io/v1alpha2","kind":"LeaseCandidate","metadata":{"name":"c","namespace":"default"},"spec":{"leaseName":"l","binaryVersion":"1.36.0","emulationVersion":"1.36.0","strategy":"OldestEmulationVersion","renewTime":"2025-01-02T03:04:05.123456Z"}}`)
	obj, _, err := reg.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := reg.ForObject(obj)
	if k == nil || k.Resource != "leasecandidates" {
		t.Fatalf("ForObject = %v", k)
	}
	stored, err := reg.Convert(obj, k.StorageGVK().GroupVersion())
	if err != nil {
		t.Fatal(err)
	}
	checkErrs(t, k.Validate(stored), nil)
	if got := stored.(*coordinationv1beta1.LeaseCandidate).Spec.RenewTime.UTC().Format(metav1.RFC3339Micro); got != "2025-01-02T03:04:05.123456Z" {
		t.Errorf("renewTime = %s", got)
	}
}

func TestParameterCodecDecodesListOptions(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	values := map[string][]string{
		"fieldSelector": {"metadata.name=demo"}, "labelSelector": {"app=x"}, "limit": {"500"},
		"watch": {"1"}, "sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"},
	}
	var opts metav1.ListOptions
	if err := runtime.NewParameterCodec(reg.Scheme).DecodeParameters(values, coordinationv1.SchemeGroupVersion, &opts); err != nil {
		t.Fatal(err)
	}
	if opts.FieldSelector != "metadata.name=demo" || opts.LabelSelector != "app=x" || opts.Limit != 500 || !opts.Watch ||
		!ptr.Deref(opts.SendInitialEvents, false) || opts.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
		t.Errorf("decoded %+v", opts)
	}
}
