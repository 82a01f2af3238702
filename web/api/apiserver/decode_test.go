package apiserver

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/web/api/kinds"
)

// FuzzDecodeJSON holds decodeJSON to the JSON serializer it stands in for: whenever it takes a
// body, the serializer decodes that body, without an error or a warning, as the URL's kind and
// version, into the same object.
func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"a","resourceVersion":"7","labels":{"x":"y"}},"spec":{"holderIdentity":"a","leaseDurationSeconds":10,"renewTime":"2026-01-02T03:04:05.123456Z"}}`,
		`{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"a","managedFields":[{"manager":"m","operation":"Update","apiVersion":"coordination.k8s.io/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:holderIdentity":{}}}}]}}`,
		`{"metadata":{"name":"a"},"spec":{}}`,                                                 // kind and version from the URL
		`{"apiVersion":"coordination.k8s.io/v1","Kind":"Lease","metadata":{"name":"a"}}`,      // a key in another case
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","kind":"Lease"}`,               // a duplicate
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","spec":{"unknown":1}}`,         // an unknown field
		`{"apiVersion":"coordination.k8s.io/v1beta1","kind":"Lease","metadata":{"name":"a"}}`, // another version
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}`,                      // another kind
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","spec":{"leaseDurationSeconds":"10"}}`,
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease"} {}`,
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"a"}`,
		`[]`, `null`, ``,
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	info := jsonSerializer(reg)
	gvk := schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}
	f.Fuzz(func(t *testing.T, body []byte, strict bool) {
		fast, err := reg.Scheme.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if !decodeJSON(body, fast, gvk, strict) {
			return
		}
		dec := info.Serializer
		if strict {
			dec = info.StrictSerializer
		}
		into, _ := reg.Scheme.New(gvk)
		obj, actual, err := dec.Decode(body, &gvk, into)
		if err != nil {
			t.Fatalf("decodeJSON took a body the serializer refuses: %v\n%s", err, body)
		}
		if *actual != gvk {
			t.Fatalf("decodeJSON took a body of %v\n%s", actual, body)
		}
		if !reflect.DeepEqual(obj, fast) {
			t.Fatalf("decoded differently:\nserializer: %#v\ndecodeJSON: %#v", obj, fast)
		}
	})
}

// TestDecodeJSONTakesPlainBodies checks that the seeds a client sends every renewal take the
// fast path, and that those it must leave to the serializer do not.
func TestDecodeJSONTakesPlainBodies(t *testing.T) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	gvk := schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}
	for _, tt := range []struct {
		body   string
		strict bool
		want   bool
	}{
		{`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"a"},"spec":{"holderIdentity":"a"}}`, true, true},
		{`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"a"},"spec":{"holderIdentity":"a"}}`, false, true},
		{`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","spec":{"unknown":1}}`, true, false},
		{`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","spec":{"unknown":1}}`, false, true},
		{`{"metadata":{"name":"a"}}`, true, false},
		{`{"apiVersion":"coordination.k8s.io/v1beta1","kind":"Lease"}`, false, false},
	} {
		into, _ := reg.Scheme.New(gvk)
		if got := decodeJSON([]byte(tt.body), into, gvk, tt.strict); got != tt.want {
			t.Errorf("decodeJSON(%s, strict %v) = %v, want %v", tt.body, tt.strict, got, tt.want)
		}
	}
}

// BenchmarkDecodeRenewalBody decodes a renewal's JSON body (a Lease with client-go's managed
// fields) strictly, through the serializer and through decodeJSON.
func BenchmarkDecodeRenewalBody(b *testing.B) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	info := jsonSerializer(reg)
	gvk := schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}
	body := []byte(`{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"elector-1","namespace":"leaselab-bench","uid":"0b5f5c1e-7f7a-4f7e-9a43-3f0d2b8a1c11","resourceVersion":"1234","creationTimestamp":"2026-11-27T13:40:00Z","labels":{"app.kubernetes.io/created-by":"leaselab-bench"},"managedFields":[{"manager":"leaselab","operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"2026-11-27T13:40:01Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/created-by":{}}},"f:spec":{"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:renewTime":{}}}}]},"spec":{"holderIdentity":"elector-1","leaseDurationSeconds":15,"renewTime":"2026-11-27T13:40:01.123456Z"}}`)
	b.Run("serializer", func(b *testing.B) {
		for b.Loop() {
			into, _ := reg.Scheme.New(gvk)
			if _, _, err := info.StrictSerializer.Decode(body, &gvk, into); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decodeJSON", func(b *testing.B) {
		for b.Loop() {
			into, _ := reg.Scheme.New(gvk)
			if !decodeJSON(body, into, gvk, true) {
				b.Fatal("refused")
			}
		}
	})
}

// jsonSerializer is the registry's JSON serializer.
func jsonSerializer(reg *kinds.Registry) runtime.SerializerInfo {
	for _, i := range reg.Codecs.SupportedMediaTypes() {
		if i.MediaType == runtime.ContentTypeJSON {
			return i
		}
	}
	panic("no JSON serializer")
}
