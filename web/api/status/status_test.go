package status

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var allMedia = []string{MediaJSON, MediaYAML, MediaProtobuf}

// TestWrite: each form's bytes and headers, as clients have always received them.
func TestWrite(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "x")
	const notFoundJSON = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"x\" not found","reason":"NotFound","details":{"name":"x","group":"coordination.k8s.io","kind":"leases"},"code":404}`
	for _, tc := range []struct {
		name    string
		form    Form
		err     error
		header  []string // name, value pairs of the request
		method  string
		code    int
		media   string
		body    string
		headers map[string]string // "" : must be absent
	}{
		{name: "api json", form: API(allMedia), err: notFound, code: 404, media: MediaJSON, body: notFoundJSON + "\n",
			headers: map[string]string{"Cache-Control": "no-cache, private", "X-Content-Type-Options": ""}},
		{name: "api yaml", form: API(allMedia), err: notFound, header: []string{"Accept", "application/yaml"}, code: 404, media: MediaYAML,
			body: "apiVersion: v1\ncode: 404\ndetails:\n  group: coordination.k8s.io\n  kind: leases\n  name: x\nkind: Status\nmessage: leases.coordination.k8s.io \"x\" not found\nmetadata: {}\nreason: NotFound\nstatus: Failure\n"},
		{name: "api table only", form: API(allMedia), err: notFound, header: []string{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io"}, code: 404, media: MediaJSON,
			body: "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"leases.coordination.k8s.io \\\"x\\\" not found\",\n  \"reason\": \"NotFound\",\n  \"details\": {\n    \"name\": \"x\",\n    \"group\": \"coordination.k8s.io\",\n    \"kind\": \"leases\"\n  },\n  \"code\": 404\n}"},
		{name: "api without protobuf", form: API([]string{MediaJSON, MediaYAML}), err: notFound, header: []string{"Accept", "application/vnd.kubernetes.protobuf, application/json"}, code: 404, media: MediaJSON, body: notFoundJSON + "\n"},
		{name: "api pretty", form: API(allMedia), err: errors.New("boom"), header: []string{"User-Agent", "curl/8"}, code: 500, media: MediaJSON,
			body: "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"Internal error occurred: boom\",\n  \"reason\": \"InternalError\",\n  \"details\": {\n    \"causes\": [\n      {\n        \"message\": \"boom\"\n      }\n    ]\n  },\n  \"code\": 500\n}"},
		{name: "api head", form: API(allMedia), err: notFound, method: http.MethodHead, code: 404, media: MediaJSON, body: ""},
		{name: "filter", form: Filter, err: apierrors.NewTooManyRequests("slow down", 3), header: []string{"Accept", "application/yaml", "User-Agent", "curl/8"}, code: 429, media: MediaJSON,
			body:    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"slow down","reason":"TooManyRequests","details":{"retryAfterSeconds":3},"code":429}` + "\n",
			headers: map[string]string{"Retry-After": "3", "Cache-Control": "no-cache, private", "X-Content-Type-Options": "nosniff"}},
		{name: "discovery", form: Discovery, err: NotAcceptable(MediaJSON, MediaYAML), header: []string{"Accept", "text/html"}, code: 406, media: MediaJSON,
			body:    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"only the following media types are accepted: application/json, application/yaml","reason":"NotAcceptable","code":406}` + "\n",
			headers: map[string]string{"Cache-Control": "", "X-Content-Type-Options": ""}},
		{name: "recovered", form: Recovered, err: New(500, "InternalError", "Internal error occurred: oops", nil), code: 500, media: MediaJSON,
			body:    `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: oops","reason":"InternalError","code":500}`,
			headers: map[string]string{"Cache-Control": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			r := httptest.NewRequest(method, "/apis/coordination.k8s.io/v1/namespaces/default/leases/x", nil)
			for i := 0; i+1 < len(tc.header); i += 2 {
				r.Header.Set(tc.header[i], tc.header[i+1])
			}
			rec := httptest.NewRecorder()
			if code := Write(rec, r, tc.err, tc.form); code != tc.code || rec.Code != tc.code {
				t.Errorf("code %d, written %d, want %d", code, rec.Code, tc.code)
			}
			if got := rec.Body.String(); got != tc.body {
				t.Errorf("body\n%q\nwant\n%q", got, tc.body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != tc.media {
				t.Errorf("Content-Type %q, want %q", ct, tc.media)
			}
			for k, v := range tc.headers {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestWriteProtobuf: a client that asks for protobuf gets the Status in the Kubernetes
// protobuf envelope.
func TestWriteProtobuf(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/x", nil)
	r.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
	rec := httptest.NewRecorder()
	Write(rec, r, apierrors.NewBadRequest("no"), API(allMedia))
	if ct := rec.Header().Get("Content-Type"); ct != MediaProtobuf || rec.Body.Len() < 4 || rec.Body.String()[:4] != "k8s\x00" {
		t.Errorf("Content-Type %q, body %q", ct, rec.Body.String())
	}
}
