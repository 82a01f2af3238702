package apiserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/apiserver"
)

// The expected bodies below are the responses of a real kube-apiserver v1.36.3 to the same
// requests, byte for byte (reference/samples/*.http), with uids, times and resourceVersions
// replaced by "X" where they vary.

// TestErrorBodies sends the requests of the recorded error samples and expects the same status
// code, Content-Type and body.
func TestErrorBodies(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("sample-lease", "holder-a"))
	conflictRV := a.MustCreate(t, leasesPath, leaseJSON("sample-conflict", "holder-a"))
	a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/sample-conflict", `{"spec":{"holderIdentity":"holder-b"}}`,
		"Content-Type", "application/merge-patch+json")
	deleteRV := a.MustCreate(t, leasesPath, leaseJSON("sample-delete", "holder-a"))

	asJSON := []string{"Content-Type", "application/json"}
	tests := []struct {
		name         string
		method, path string
		body         string
		header       []string
		code         int
		want         string
	}{{
		name:   "lease-get-unknown-resource-404",
		method: http.MethodGet, path: "/apis/coordination.k8s.io/v1/namespaces/default/leasez",
		code: 404,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}` + "\n",
	}, {
		name:   "lease-get-notfound-404",
		method: http.MethodGet, path: leasesPath + "/does-not-exist",
		code: 404,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"does-not-exist\" not found","reason":"NotFound","details":{"name":"does-not-exist","group":"coordination.k8s.io","kind":"leases"},"code":404}` + "\n",
	}, {
		name:   "lease-get-in-missing-namespace-404",
		method: http.MethodGet, path: "/apis/coordination.k8s.io/v1/namespaces/no-such-namespace/leases/sample-lease",
		code: 404,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"sample-lease\" not found","reason":"NotFound","details":{"name":"sample-lease","group":"coordination.k8s.io","kind":"leases"},"code":404}` + "\n",
	}, {
		name:   "lease-method-not-allowed-405",
		method: http.MethodPost, path: leasesPath + "/sample-lease", body: leaseJSON("sample-lease", "holder-a"), header: asJSON,
		code: 405,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}` + "\n",
	}, {
		// The Status of a failed negotiation cannot be negotiated either: indented JSON.
		name:   "lease-get-unsupported-accept-406",
		method: http.MethodGet, path: leasesPath + "/sample-lease", header: []string{"Accept", "text/html"},
		code: 406,
		want: "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"406: Not Acceptable\\n\\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf\",\n  \"reason\": \"NotAcceptable\",\n  \"details\": {},\n  \"code\": 406\n}",
	}, {
		name:   "lease-create-unsupported-content-type-415",
		method: http.MethodPost, path: leasesPath, body: "hello", header: []string{"Content-Type", "text/plain"},
		code: 415,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf","reason":"UnsupportedMediaType","code":415}` + "\n",
	}, {
		name:   "lease-patch-plain-json-content-type-415",
		method: http.MethodPatch, path: leasesPath + "/sample-conflict", body: `{"spec":{"leaseDurationSeconds":0}}`, header: asJSON,
		code: 415,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{},"code":415}` + "\n",
	}, {
		name:   "lease-create-malformed-json-400",
		method: http.MethodPost, path: leasesPath, body: `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"sample-x"`, header: asJSON,
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the object provided is unrecognized (must be of type Lease): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"apiVersion\":\"coordination.k8 ...)","reason":"BadRequest","code":400}` + "\n",
	}, {
		name:   "lease-create-namespace-mismatch-400",
		method: http.MethodPost, path: "/apis/coordination.k8s.io/v1/namespaces/no-such-namespace/leases", body: leaseJSON("sample-lease", "holder-a"), header: asJSON,
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the namespace of the provided object does not match the namespace sent on the request","reason":"BadRequest","code":400}` + "\n",
	}, {
		name:   "lease-update-name-mismatch-400",
		method: http.MethodPut, path: leasesPath + "/sample-lease", body: leaseJSON("sample-other", "holder-a"), header: asJSON,
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the name of the object (sample-other) does not match the name on the URL (sample-lease)","reason":"BadRequest","code":400}` + "\n",
	}, {
		name:   "lease-create-already-exists-409",
		method: http.MethodPost, path: leasesPath, body: leaseJSON("sample-lease", "holder-a"), header: asJSON,
		code: 409,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"sample-lease\" already exists","reason":"AlreadyExists","details":{"name":"sample-lease","group":"coordination.k8s.io","kind":"leases"},"code":409}` + "\n",
	}, {
		name:   "lease-update-stale-resourceversion-409",
		method: http.MethodPut, path: leasesPath + "/sample-conflict",
		body:   `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"sample-conflict","namespace":"default","resourceVersion":"` + conflictRV + `"},"spec":{"holderIdentity":"holder-c"}}`,
		header: asJSON,
		code:   409,
		want:   `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on leases.coordination.k8s.io \"sample-conflict\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"sample-conflict","group":"coordination.k8s.io","kind":"leases"},"code":409}` + "\n",
	}, {
		name:   "lease-patch-stale-resourceversion-409",
		method: http.MethodPatch, path: leasesPath + "/sample-conflict",
		body:   `{"metadata":{"resourceVersion":"` + conflictRV + `"},"spec":{"holderIdentity":"holder-x"}}`,
		header: []string{"Content-Type", "application/merge-patch+json"},
		code:   409,
		want:   `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on leases.coordination.k8s.io \"sample-conflict\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"sample-conflict","group":"coordination.k8s.io","kind":"leases"},"code":409}` + "\n",
	}, {
		name:   "lease-update-no-resourceversion-422",
		method: http.MethodPut, path: leasesPath + "/sample-conflict",
		body:   `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"sample-conflict","namespace":"default"},"spec":{"holderIdentity":"holder-d"}}`,
		header: asJSON,
		code:   422,
		want:   `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"sample-conflict\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update","reason":"Invalid","details":{"name":"sample-conflict","group":"coordination.k8s.io","kind":"leases","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: 0: must be specified for an update","field":"metadata.resourceVersion"}]},"code":422}` + "\n",
	}, {
		name:   "lease-create-invalid-422",
		method: http.MethodPost, path: leasesPath,
		body:   `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"Bad_Name"},"spec":{"holderIdentity":"x","leaseDurationSeconds":0,"leaseTransitions":-1}}`,
		header: asJSON,
		code:   422,
		want:   `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Lease.coordination.k8s.io \"Bad_Name\" is invalid: [metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]","reason":"Invalid","details":{"name":"Bad_Name","group":"coordination.k8s.io","kind":"Lease","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')","field":"metadata.name"},{"reason":"FieldValueInvalid","message":"Invalid value: 0: must be greater than 0","field":"spec.leaseDurationSeconds"},{"reason":"FieldValueInvalid","message":"Invalid value: -1: must be greater than or equal to 0","field":"spec.leaseTransitions"}]},"code":422}` + "\n",
	}, {
		name:   "lease-patch-merge-invalid-422",
		method: http.MethodPatch, path: leasesPath + "/sample-conflict", body: `{"spec":{"leaseDurationSeconds":0}}`,
		header: []string{"Content-Type", "application/merge-patch+json"},
		code:   422,
		want:   `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Lease.coordination.k8s.io \"sample-conflict\" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0","reason":"Invalid","details":{"name":"sample-conflict","group":"coordination.k8s.io","kind":"Lease","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: 0: must be greater than 0","field":"spec.leaseDurationSeconds"}]},"code":422}` + "\n",
	}, {
		name:   "create with metadata.resourceVersion: 500 with an empty reason",
		method: http.MethodPost, path: leasesPath,
		body:   `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"with-rv","resourceVersion":"5"},"spec":{}}`,
		header: asJSON,
		code:   500,
		want:   `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"resourceVersion should not be set on objects to be created","code":500}` + "\n",
	}, {
		name:   "apply without fieldManager",
		method: http.MethodPatch, path: leasesPath + "/sample-ssa", body: "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: sample-ssa\n",
		header: []string{"Content-Type", "application/apply-patch+yaml"},
		code:   422,
		want:   `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"PatchOptions","causes":[{"reason":"FieldValueRequired","message":"Required value: is required for apply patch","field":"fieldManager"}]},"code":422}` + "\n",
	}, {
		name:   "force on a merge patch",
		method: http.MethodPatch, path: leasesPath + "/sample-conflict?force=true", body: `{"spec":{"holderIdentity":"x"}}`,
		header: []string{"Content-Type", "application/merge-patch+json"},
		code:   422,
		want:   `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"PatchOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: may not be specified for non-apply patch","field":"force"}]},"code":422}` + "\n",
	}, {
		name:   "lease-patch-jsonpatch-test-failed-422",
		method: http.MethodPatch, path: leasesPath + "/sample-conflict",
		body:   `[{"op":"test","path":"/metadata/resourceVersion","value":"1"},{"op":"replace","path":"/spec/holderIdentity","value":"x"}]`,
		header: []string{"Content-Type", "application/json-patch+json"},
		code:   422,
		want:   `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{},"code":422}` + "\n",
	}, {
		name:   "lease-patch-notfound-404",
		method: http.MethodPatch, path: leasesPath + "/does-not-exist", body: `{"spec":{"holderIdentity":"x"}}`,
		header: []string{"Content-Type", "application/merge-patch+json"},
		code:   404,
		want:   `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"does-not-exist\" not found","reason":"NotFound","details":{"name":"does-not-exist","group":"coordination.k8s.io","kind":"leases"},"code":404}` + "\n",
	}, {
		name:   "lease-delete-precondition-409",
		method: http.MethodDelete, path: leasesPath + "/sample-delete",
		body: `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"1"}}`, header: asJSON,
		code: 409,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on Lease.coordination.k8s.io \"sample-delete\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (` + deleteRV + `). The object might have been modified","reason":"Conflict","details":{"name":"sample-delete","group":"coordination.k8s.io","kind":"Lease"},"code":409}` + "\n",
	}, {
		name:   "delete uid precondition",
		method: http.MethodDelete, path: leasesPath + "/sample-delete",
		body: `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"00000000-0000-0000-0000-000000000000"}}`, header: asJSON,
		code: 409,
	}, {
		name:   "lease-delete-notfound-404",
		method: http.MethodDelete, path: leasesPath + "/does-not-exist",
		code: 404,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"does-not-exist\" not found","reason":"NotFound","details":{"name":"does-not-exist","group":"coordination.k8s.io","kind":"leases"},"code":404}` + "\n",
	}, {
		name:   "lease-watch-invalid-resourceversion-500",
		method: http.MethodGet, path: leasesPath + "?watch=true&resourceVersion=abc",
		code: 500,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax","code":500}` + "\n",
	}, {
		name:   "lease-list-fieldselector-unsupported-400",
		method: http.MethodGet, path: leasesPath + "?fieldSelector=spec.holderIdentity%3Dholder-a",
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"\"spec.holderIdentity\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"","reason":"BadRequest","code":400}` + "\n",
	}, {
		name:   "lease-list-limit1-continue-bad-400",
		method: http.MethodGet, path: leasesPath + "?limit=1&continue=not-a-token",
		code: 400,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid continue token: continue key is not valid: invalid character '\\u009e' looking for beginning of value","reason":"BadRequest","code":400}` + "\n",
	}, {
		// A Status the client's only acceptable type (a Table) cannot carry: indented JSON.
		name:   "error with a Table-only Accept",
		method: http.MethodGet, path: leasesPath + "/does-not-exist", header: []string{"Accept", tableAccept},
		code: 404,
		want: "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"leases.coordination.k8s.io \\\"does-not-exist\\\" not found\",\n  \"reason\": \"NotFound\",\n  \"details\": {\n    \"name\": \"does-not-exist\",\n    \"group\": \"coordination.k8s.io\",\n    \"kind\": \"leases\"\n  },\n  \"code\": 404\n}",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := a.Do(t, tt.method, tt.path, tt.body, tt.header...)
			if tt.want == "" {
				WantCode(t, r, tt.code)
				return
			}
			WantBody(t, r, tt.code, tt.want)
		})
	}

	t.Run("delete uid precondition message", func(t *testing.T) {
		r := a.Do(t, http.MethodDelete, leasesPath+"/sample-delete",
			`{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"00000000-0000-0000-0000-000000000000"}}`, asJSON...)
		st := decodeStatus(t, r.Body)
		if !strings.HasPrefix(st.Message, `Operation cannot be fulfilled on Lease.coordination.k8s.io "sample-delete": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record (`) ||
			!strings.HasSuffix(st.Message, "). The object might have been deleted and then recreated") {
			t.Errorf("message %q", st.Message)
		}
	})

	t.Run("lease-delete-200", func(t *testing.T) {
		r := a.Do(t, http.MethodDelete, leasesPath+"/sample-delete", "")
		WantCode(t, r, http.StatusOK)
		want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"sample-delete","group":"coordination.k8s.io","kind":"leases","uid":"X"}}` + "\n"
		if got := normalize(r.Body); got != want {
			t.Errorf("body:\n%s\nwant:\n%s", got, want)
		}
		a.MustDo(t, http.StatusNotFound, http.MethodGet, leasesPath+"/sample-delete", "")
	})
}

// TestRequestTooLarge sends a body over the 3 MiB limit.
func TestRequestTooLarge(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	big := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"big","annotations":{"a":"` +
		strings.Repeat("x", 3<<20) + `"}},"spec":{}}`
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}` + "\n"
	WantBody(t, a.Do(t, http.MethodPost, leasesPath, big, "Content-Type", "application/json"), http.StatusRequestEntityTooLarge, want)
	// Without a Content-Length the limit still holds.
	r := a.DoReader(t, http.MethodPost, leasesPath, struct{ *strings.Reader }{strings.NewReader(big)}, "Content-Type", "application/json")
	WantBody(t, r, http.StatusRequestEntityTooLarge, want)
}

// TestCreateResponse compares a create with the recorded one (lease-create-201) and the
// Warning, fieldValidation and dryRun behaviour of create.
func TestCreateResponse(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	asJSON := []string{"Content-Type", "application/json"}

	t.Run("lease-create-201", func(t *testing.T) {
		r := a.Do(t, http.MethodPost, leasesPath, leaseJSON("sample-lease", "holder-a"), asJSON...)
		WantCode(t, r, http.StatusCreated)
		want := `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"sample-lease","namespace":"default","uid":"X","resourceVersion":"X","creationTimestamp":"X","labels":{"app":"peer-sample"},"managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:acquireTime":{},"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:leaseTransitions":{},"f:renewTime":{}}}}]},"spec":{"holderIdentity":"holder-a","leaseDurationSeconds":15,"acquireTime":"2026-01-02T03:04:05.000000Z","renewTime":"2026-01-02T03:04:05.000000Z","leaseTransitions":0}}` + "\n"
		if got := normalize(r.Body); got != want {
			t.Errorf("body:\n%s\nwant:\n%s", got, want)
		}
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Cache-Control") != "no-cache, private" {
			t.Errorf("headers %v", r.Header)
		}
		if objectRV(t, r.Body) == "" {
			t.Error("no resourceVersion")
		}
		// The GET returns the same bytes.
		g := a.Do(t, http.MethodGet, leasesPath+"/sample-lease", "")
		WantCode(t, g, http.StatusOK)
		if !bytes.Equal(g.Body, r.Body) {
			t.Errorf("get:\n%s\ncreate:\n%s", g.Body, r.Body)
		}
	})

	unknown := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":%q},"spec":{"holderIdentity":"x","foo":1}}`
	t.Run("fieldValidation=Strict", func(t *testing.T) {
		r := a.Do(t, http.MethodPost, leasesPath+"?fieldValidation=Strict", fmt.Sprintf(unknown, "strict"), asJSON...)
		WantBody(t, r, http.StatusBadRequest, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Lease in version \"v1\" cannot be handled as a Lease: strict decoding error: unknown field \"spec.foo\"","reason":"BadRequest","code":400}`+"\n")
		if w := r.Header.Values("Warning"); len(w) != 0 {
			t.Errorf("Warning %q on a strict failure", w)
		}
	})
	for _, param := range []string{"", "?fieldValidation=Warn"} {
		t.Run("fieldValidation"+param, func(t *testing.T) {
			name := "warn" + strings.ToLower(strings.TrimPrefix(param, "?fieldValidation="))
			r := a.Do(t, http.MethodPost, leasesPath+param, fmt.Sprintf(unknown, name), asJSON...)
			WantCode(t, r, http.StatusCreated)
			if got, want := r.Header.Values("Warning"), []string{`299 - "unknown field \"spec.foo\""`}; !equalStrings(got, want) {
				t.Errorf("Warning %q, want %q", got, want)
			}
			if bytes.Contains(r.Body, []byte(`"foo"`)) {
				t.Errorf("unknown field kept: %s", r.Body)
			}
		})
	}
	t.Run("fieldValidation=Ignore", func(t *testing.T) {
		r := a.Do(t, http.MethodPost, leasesPath+"?fieldValidation=Ignore", fmt.Sprintf(unknown, "ignore"), asJSON...)
		WantCode(t, r, http.StatusCreated)
		if w := r.Header.Values("Warning"); len(w) != 0 {
			t.Errorf("Warning %q with Ignore", w)
		}
	})
	t.Run("fieldValidation=foo", func(t *testing.T) {
		r := a.Do(t, http.MethodPost, leasesPath+"?fieldValidation=foo", fmt.Sprintf(unknown, "foo"), asJSON...)
		WantCode(t, r, http.StatusUnprocessableEntity)
		st := decodeStatus(t, r.Body)
		if st.Reason != metav1.StatusReasonInvalid || st.Details == nil || st.Details.Kind != "CreateOptions" || st.Details.Group != "meta.k8s.io" ||
			len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "fieldValidation" {
			t.Errorf("status %+v", st)
		}
	})
	t.Run("duplicate field warns", func(t *testing.T) {
		body := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"dup"},"spec":{"holderIdentity":"a","holderIdentity":"b"}}`
		r := a.Do(t, http.MethodPost, leasesPath, body, asJSON...)
		WantCode(t, r, http.StatusCreated)
		if got, want := r.Header.Values("Warning"), []string{`299 - "duplicate field \"spec.holderIdentity\""`}; !equalStrings(got, want) {
			t.Errorf("Warning %q, want %q", got, want)
		}
	})
}

// TestDryRun checks that dryRun=All runs a write without storing it.
func TestDryRun(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	asJSON := []string{"Content-Type", "application/json"}
	rv := a.MustCreate(t, leasesPath, leaseJSON("kept", "holder-a"))

	t.Run("lease-create-dryrun-201", func(t *testing.T) {
		r := a.Do(t, http.MethodPost, leasesPath+"?dryRun=All", leaseJSON("sample-dryrun", "holder-a"), asJSON...)
		WantCode(t, r, http.StatusCreated)
		want := `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"sample-dryrun","namespace":"default","uid":"X","creationTimestamp":"X","labels":{"app":"peer-sample"},"managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:acquireTime":{},"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:leaseTransitions":{},"f:renewTime":{}}}}]},"spec":{"holderIdentity":"holder-a","leaseDurationSeconds":15,"acquireTime":"2026-01-02T03:04:05.000000Z","renewTime":"2026-01-02T03:04:05.000000Z","leaseTransitions":0}}` + "\n"
		if got := normalize(r.Body); got != want {
			t.Errorf("body:\n%s\nwant:\n%s", got, want)
		}
		a.MustDo(t, http.StatusNotFound, http.MethodGet, leasesPath+"/sample-dryrun", "")
	})
	t.Run("create of an existing name", func(t *testing.T) {
		a.MustDo(t, http.StatusConflict, http.MethodPost, leasesPath+"?dryRun=All", leaseJSON("kept", "holder-a"), asJSON...)
	})
	t.Run("update keeps the old resourceVersion", func(t *testing.T) {
		body := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kept","resourceVersion":"` + rv + `"},"spec":{"holderIdentity":"dry"}}`
		r := a.Do(t, http.MethodPut, leasesPath+"/kept?dryRun=All", body, asJSON...)
		WantCode(t, r, http.StatusOK)
		if got := objectRV(t, r.Body); got != rv {
			t.Errorf("dry-run update resourceVersion %q, want the old %q", got, rv)
		}
		if !bytes.Contains(r.Body, []byte(`"holderIdentity":"dry"`)) {
			t.Errorf("dry-run update did not apply: %s", r.Body)
		}
		g := a.Do(t, http.MethodGet, leasesPath+"/kept", "")
		if objectRV(t, g.Body) != rv || !bytes.Contains(g.Body, []byte(`"holderIdentity":"holder-a"`)) {
			t.Errorf("dry-run update was stored: %s", g.Body)
		}
	})
	t.Run("patch", func(t *testing.T) {
		r := a.Do(t, http.MethodPatch, leasesPath+"/kept?dryRun=All", `{"spec":{"holderIdentity":"dry"}}`, "Content-Type", "application/merge-patch+json")
		WantCode(t, r, http.StatusOK)
		if got := objectRV(t, r.Body); got != rv {
			t.Errorf("dry-run patch resourceVersion %q, want %q", got, rv)
		}
	})
	t.Run("delete", func(t *testing.T) {
		r := a.Do(t, http.MethodDelete, leasesPath+"/kept?dryRun=All", "")
		WantCode(t, r, http.StatusOK)
		if st := decodeStatus(t, r.Body); st.Status != metav1.StatusSuccess {
			t.Errorf("status %+v", st)
		}
		if got := a.MustDo(t, http.StatusOK, http.MethodGet, leasesPath+"/kept", ""); got != rv {
			t.Errorf("after a dry-run delete resourceVersion %q, want %q", got, rv)
		}
		// A dry-run delete still checks preconditions.
		a.MustDo(t, http.StatusConflict, http.MethodDelete, leasesPath+"/kept?dryRun=All",
			`{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"1"}}`, asJSON...)
	})
	t.Run("dryRun=foo", func(t *testing.T) {
		r := a.Do(t, http.MethodPost, leasesPath+"?dryRun=foo", leaseJSON("foo", "holder-a"), asJSON...)
		WantBody(t, r, http.StatusUnprocessableEntity, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"foo\"]: supported values: \"All\"","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"CreateOptions","causes":[{"reason":"FieldValueNotSupported","message":"Unsupported value: [\"foo\"]: supported values: \"All\"","field":"dryRun"}]},"code":422}`+"\n")
	})
}

// TestUpdate checks PUT: create on a missing name, no-op updates, uid preconditions.
func TestUpdate(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	asJSON := []string{"Content-Type", "application/json"}

	t.Run("PUT to a missing name creates", func(t *testing.T) {
		// A resourceVersion in the body is ignored when the PUT creates.
		body := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"put","resourceVersion":"12345"},"spec":{"holderIdentity":"a"}}`
		r := a.Do(t, http.MethodPut, leasesPath+"/put", body, asJSON...)
		WantCode(t, r, http.StatusCreated)
		if rv := objectRV(t, r.Body); rv == "" || rv == "12345" {
			t.Errorf("resourceVersion %q", rv)
		}
		a.MustDo(t, http.StatusOK, http.MethodGet, leasesPath+"/put", "")
	})
	t.Run("no-op PUT keeps the resourceVersion", func(t *testing.T) {
		g := a.Do(t, http.MethodGet, leasesPath+"/put", "")
		WantCode(t, g, http.StatusOK)
		rv := objectRV(t, g.Body)
		r := a.Do(t, http.MethodPut, leasesPath+"/put", string(g.Body), asJSON...)
		WantCode(t, r, http.StatusOK)
		if got := objectRV(t, r.Body); got != rv {
			t.Errorf("no-op update moved the resourceVersion from %s to %s", rv, got)
		}
		if !bytes.Equal(r.Body, g.Body) {
			t.Errorf("no-op update answered\n%s\nnot the stored\n%s", r.Body, g.Body)
		}
		// A real change moves it.
		changed := strings.Replace(string(g.Body), `"holderIdentity":"a"`, `"holderIdentity":"b"`, 1)
		if got := a.MustDo(t, http.StatusOK, http.MethodPut, leasesPath+"/put", changed, asJSON...); got == rv {
			t.Errorf("update kept resourceVersion %s", got)
		}
	})
	t.Run("uid mismatch", func(t *testing.T) {
		g := a.Do(t, http.MethodGet, leasesPath+"/put", "")
		uid := uidOf(t, g.Body)
		body := strings.Replace(string(g.Body), uid, "00000000-0000-0000-0000-000000000000", 1)
		r := a.Do(t, http.MethodPut, leasesPath+"/put", body, asJSON...)
		WantBody(t, r, http.StatusConflict, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on leases.coordination.k8s.io \"put\": StorageError: invalid object, Code: 4, Key: /registry/leases/default/put, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: `+uid+`","reason":"Conflict","details":{"name":"put","group":"coordination.k8s.io","kind":"leases"},"code":409}`+"\n")
	})
	t.Run("lease-update-200", func(t *testing.T) {
		g := a.Do(t, http.MethodGet, leasesPath+"/put", "")
		body := strings.Replace(string(g.Body), `"holderIdentity":"b"`, `"holderIdentity":"holder-b"`, 1)
		r := a.Do(t, http.MethodPut, leasesPath+"/put", body, asJSON...)
		WantCode(t, r, http.StatusOK)
		want := `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"put","namespace":"default","uid":"X","resourceVersion":"X","creationTimestamp":"X","managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:holderIdentity":{}}}}]},"spec":{"holderIdentity":"holder-b"}}` + "\n"
		if got := normalize(r.Body); got != want {
			t.Errorf("body:\n%s\nwant:\n%s", got, want)
		}
	})
}

func uidOf(tb testing.TB, b []byte) string {
	tb.Helper()
	var o metav1.PartialObjectMetadata
	if err := json.Unmarshal(b, &o); err != nil || o.UID == "" {
		tb.Fatalf("no uid in %s: %v", b, err)
	}
	return string(o.UID)
}

// TestContentNegotiation covers YAML and protobuf bodies, pretty printing and Content-Type.
func TestContentNegotiation(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("sample-lease", "holder-a"))

	t.Run("YAML request and response", func(t *testing.T) {
		body := "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: yaml\n  labels:\n    app: peer-sample\nspec:\n  holderIdentity: holder-y\n  leaseDurationSeconds: 15\n"
		r := a.Do(t, http.MethodPost, leasesPath, body, "Content-Type", "application/yaml", "Accept", "application/yaml")
		WantCode(t, r, http.StatusCreated)
		if ct := r.Header.Get("Content-Type"); ct != "application/yaml" {
			t.Errorf("Content-Type %q", ct)
		}
		want := "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  creationTimestamp: X\n  labels:\n    app: peer-sample\n  managedFields:\n  - apiVersion: coordination.k8s.io/v1\n    fieldsType: FieldsV1\n    fieldsV1:\n      f:metadata:\n        f:labels:\n          .: {}\n          f:app: {}\n      f:spec:\n        f:holderIdentity: {}\n        f:leaseDurationSeconds: {}\n    manager: peer-samples\n    operation: Update\n    time: X\n  name: yaml\n  namespace: default\n  resourceVersion: X\n  uid: X\nspec:\n  holderIdentity: holder-y\n  leaseDurationSeconds: 15\n"
		if got := normalizeYAML(r.Body); got != want {
			t.Errorf("body:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("lease-get-yaml-200", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath+"/sample-lease", "", "Accept", "application/yaml")
		WantCode(t, r, http.StatusOK)
		want := "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  creationTimestamp: X\n  labels:\n    app: peer-sample\n  managedFields:\n  - apiVersion: coordination.k8s.io/v1\n    fieldsType: FieldsV1\n    fieldsV1:\n      f:metadata:\n        f:labels:\n          .: {}\n          f:app: {}\n      f:spec:\n        f:acquireTime: {}\n        f:holderIdentity: {}\n        f:leaseDurationSeconds: {}\n        f:leaseTransitions: {}\n        f:renewTime: {}\n    manager: peer-samples\n    operation: Update\n    time: X\n  name: sample-lease\n  namespace: default\n  resourceVersion: X\n  uid: X\nspec:\n  acquireTime: \"2026-01-02T03:04:05.000000Z\"\n  holderIdentity: holder-a\n  leaseDurationSeconds: 15\n  leaseTransitions: 0\n  renewTime: \"2026-01-02T03:04:05.000000Z\"\n"
		if ct := r.Header.Get("Content-Type"); ct != "application/yaml" {
			t.Errorf("Content-Type %q", ct)
		}
		if got := normalizeYAML(r.Body); got != want {
			t.Errorf("body:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("YAML error", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath+"/missing", "", "Accept", "application/yaml")
		WantCode(t, r, http.StatusNotFound)
		if ct := r.Header.Get("Content-Type"); ct != "application/yaml" || !bytes.HasPrefix(r.Body, []byte("apiVersion: v1\ncode: 404\n")) {
			t.Errorf("Content-Type %q body:\n%s", ct, r.Body)
		}
	})

	info, ok := runtime.SerializerInfoForMediaType(a.Reg.Codecs.SupportedMediaTypes(), "application/vnd.kubernetes.protobuf")
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	t.Run("lease-get-protobuf-200", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath+"/sample-lease", "", "Accept", "application/vnd.kubernetes.protobuf")
		WantCode(t, r, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "application/vnd.kubernetes.protobuf" {
			t.Errorf("Content-Type %q", ct)
		}
		if !bytes.HasPrefix(r.Body, []byte("k8s\x00")) {
			t.Fatalf("no protobuf magic: %q", r.Body[:min(len(r.Body), 16)])
		}
		obj, _, err := a.Reg.Codecs.UniversalDeserializer().Decode(r.Body, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		l, ok := obj.(*coordinationv1.Lease)
		if !ok || l.Name != "sample-lease" || ptr.Deref(l.Spec.HolderIdentity, "") != "holder-a" || l.ResourceVersion == "" {
			t.Errorf("decoded %#v", obj)
		}
	})
	t.Run("protobuf POST", func(t *testing.T) {
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "proto"},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("holder-p"), LeaseDurationSeconds: ptr.To[int32](10)},
		}
		var buf bytes.Buffer
		if err := a.Reg.Codecs.EncoderForVersion(info.Serializer, coordinationv1.SchemeGroupVersion).Encode(l, &buf); err != nil {
			t.Fatal(err)
		}
		// client-go's typed clients send protobuf and accept protobuf or JSON.
		r := a.DoReader(t, http.MethodPost, leasesPath, &buf, "Content-Type", "application/vnd.kubernetes.protobuf",
			"Accept", "application/vnd.kubernetes.protobuf,application/json")
		WantCode(t, r, http.StatusCreated)
		obj, _, err := a.Reg.Codecs.UniversalDeserializer().Decode(r.Body, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := obj.(*coordinationv1.Lease); !ok || got.Namespace != "default" || ptr.Deref(got.Spec.HolderIdentity, "") != "holder-p" {
			t.Errorf("created %#v", obj)
		}
		g := a.Do(t, http.MethodGet, leasesPath+"/proto", "")
		if !bytes.Contains(g.Body, []byte(`"holderIdentity":"holder-p","leaseDurationSeconds":10`)) {
			t.Errorf("stored %s", g.Body)
		}
	})

	compact := a.Do(t, http.MethodGet, leasesPath+"/sample-lease", "")
	WantCode(t, compact, http.StatusOK)
	t.Run("compact JSON ends with a newline", func(t *testing.T) {
		if !bytes.HasSuffix(compact.Body, []byte("}\n")) || bytes.Count(compact.Body, []byte("\n")) != 1 {
			t.Errorf("body %q", compact.Body)
		}
	})
	wantPretty := prettyJSON(t, compact.Body)
	for _, tt := range []struct {
		name   string
		query  string
		ua     string
		pretty bool
	}{
		{name: "lease-get-curl-user-agent-pretty", ua: "curl/8.5.0", pretty: true},
		{name: "Wget", ua: "Wget/1.21", pretty: true},
		{name: "browser", ua: "Mozilla/5.0 (X11; Linux x86_64)", pretty: true},
		{name: "pretty=true", query: "?pretty=true", ua: sampleUA, pretty: true},
		{name: "pretty=1", query: "?pretty=1", ua: sampleUA, pretty: true},
		{name: "pretty=false wins over curl", query: "?pretty=false", ua: "curl/8.5.0"},
		{name: "empty pretty falls back to the User-Agent", query: "?pretty=", ua: "curl/8.5.0", pretty: true},
		{name: "kubectl", ua: "kubectl/v1.36.3 (linux/amd64) kubernetes/abcdef"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := a.Do(t, http.MethodGet, leasesPath+"/sample-lease"+tt.query, "", "User-Agent", tt.ua)
			WantCode(t, r, http.StatusOK)
			want := string(compact.Body)
			if tt.pretty {
				want = wantPretty
			}
			if string(r.Body) != want {
				t.Errorf("body:\n%s\nwant:\n%s", r.Body, want)
			}
		})
	}
	t.Run("pretty error", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath+"/missing", "", "User-Agent", "curl/8.5.0")
		WantBody(t, r, http.StatusNotFound, "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"leases.coordination.k8s.io \\\"missing\\\" not found\",\n  \"reason\": \"NotFound\",\n  \"details\": {\n    \"name\": \"missing\",\n    \"group\": \"coordination.k8s.io\",\n    \"kind\": \"leases\"\n  },\n  \"code\": 404\n}")
	})
	t.Run("Accept */*", func(t *testing.T) {
		for _, accept := range []string{"*/*", "text/html, */*;q=0.1", "text/html, application/json;q=0.5"} {
			r := a.Do(t, http.MethodGet, leasesPath+"/sample-lease", "", "Accept", accept)
			WantCode(t, r, http.StatusOK)
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Accept %q: Content-Type %q", accept, ct)
			}
		}
	})
	t.Run("Accept application/* stops at the router", func(t *testing.T) {
		// The router matches media types exactly; the Status itself can then be JSON.
		r := a.Do(t, http.MethodGet, leasesPath, "", "Accept", "application/*")
		WantBody(t, r, http.StatusNotAcceptable, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch","reason":"NotAcceptable","details":{},"code":406}`+"\n")
	})
	t.Run("Accept pretty=1", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath+"/sample-lease", "", "Accept", "application/json;pretty=1")
		WantBody(t, r, http.StatusOK, wantPretty)
	})
	t.Run("not acceptable after routing", func(t *testing.T) {
		// application/json passes the router; the unknown conversion fails the handler's own
		// negotiation, which words its 406 differently.
		r := a.Do(t, http.MethodGet, leasesPath+"/sample-lease", "", "Accept", "application/json;as=Foo;v=v1;g=meta.k8s.io")
		WantBody(t, r, http.StatusNotAcceptable, "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf\",\n  \"reason\": \"NotAcceptable\",\n  \"code\": 406\n}")
	})
}

// prettyJSON is what the real server sends for a pretty request: the compact encoding
// indented by two spaces, without a trailing newline.
func prettyJSON(tb testing.TB, compact []byte) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSuffix(compact, []byte("\n")), "", "  "); err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestNamespaces checks that writing in an unknown namespace creates it (leaselab's choice;
// the real server answers 404), that deleting a namespace deletes what is in it, and the
// namespace list.
func TestNamespaces(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	const teamLeases = "/apis/coordination.k8s.io/v1/namespaces/team-a/leases"

	t.Run("lease-list-in-missing-namespace-200", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, teamLeases, "")
		WantCode(t, r, http.StatusOK)
		want := `{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","metadata":{"resourceVersion":"X"},"items":[]}` + "\n"
		if got := normalize(r.Body); got != want {
			t.Errorf("body:\n%s\nwant:\n%s", got, want)
		}
	})
	a.MustDo(t, http.StatusNotFound, http.MethodGet, "/api/v1/namespaces/team-a", "")
	a.MustCreate(t, teamLeases, leaseWithLabel("one", "app", "x"))
	a.MustCreate(t, teamLeases, leaseWithLabel("two", "app", "x"))
	a.MustCreate(t, leasesPath, leaseWithLabel("other", "app", "x"))

	t.Run("created with its first lease", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, "/api/v1/namespaces/team-a", "")
		WantCode(t, r, http.StatusOK)
		want := `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"team-a","uid":"X","resourceVersion":"X","creationTimestamp":"X","labels":{"kubernetes.io/metadata.name":"team-a"}},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}` + "\n"
		if got := normalize(r.Body); got != want {
			t.Errorf("body:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("list", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, "/api/v1/namespaces", "")
		WantCode(t, r, http.StatusOK)
		var list struct {
			Kind, APIVersion string
			Items            []metav1.PartialObjectMetadata
		}
		if err := json.Unmarshal(r.Body, &list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, it := range list.Items {
			names = append(names, it.Name)
		}
		if list.Kind != "NamespaceList" || list.APIVersion != "v1" || !equalStrings(names, []string{"default", "team-a"}) {
			t.Errorf("list %s %s %q", list.Kind, list.APIVersion, names)
		}
	})
	t.Run("delete removes its leases", func(t *testing.T) {
		r := a.Do(t, http.MethodDelete, "/api/v1/namespaces/team-a", "")
		WantCode(t, r, http.StatusOK)
		if !bytes.Contains(r.Body, []byte(`"kind":"Namespace"`)) || !bytes.Contains(r.Body, []byte(`"phase":"Terminating"`)) {
			t.Errorf("delete answered %s", r.Body)
		}
		a.MustDo(t, http.StatusNotFound, http.MethodGet, "/api/v1/namespaces/team-a", "")
		a.MustDo(t, http.StatusNotFound, http.MethodGet, teamLeases+"/one", "")
		l := a.Do(t, http.MethodGet, "/apis/coordination.k8s.io/v1/leases", "")
		if bytes.Contains(l.Body, []byte(`"namespace":"team-a"`)) || !bytes.Contains(l.Body, []byte(`"name":"other"`)) {
			t.Errorf("leases after the namespace delete: %s", l.Body)
		}
		// Writing there again brings the namespace back.
		a.MustCreate(t, teamLeases, leaseWithLabel("three", "app", "x"))
		a.MustDo(t, http.StatusOK, http.MethodGet, "/api/v1/namespaces/team-a", "")
	})
	t.Run("namespaced path for a cluster-scoped kind", func(t *testing.T) {
		a.MustDo(t, http.StatusNotFound, http.MethodGet, "/api/v1/namespaces/default/namespaces/x", "")
	})
}

// TestSampleWrites replays more recorded writes (validation failures and successes of both
// kinds) and compares the answers byte for byte.
func TestSampleWrites(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	asJSON := []string{"Content-Type", "application/json"}
	merge := []string{"Content-Type", "application/merge-patch+json"}
	a.MustCreate(t, leasesPath, leaseJSON("sample-conflict", "holder-a"))

	tests := []struct {
		name         string
		method, path string
		body         string
		header       []string
		code         int
		want         string // normalized
	}{{
		name:   "lease-create-bad-strategy-422",
		method: http.MethodPost, path: leasesPath, header: asJSON,
		body: `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"sample-cle-bad"},"spec":{"holderIdentity":"a","strategy":"NoSuchStrategy","preferredHolder":"b"}}`,
		code: 422,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Lease.coordination.k8s.io \"sample-cle-bad\" is invalid: spec.strategy.strategy: Unsupported value: \"NoSuchStrategy\": supported values: \"OldestEmulationVersion\"","reason":"Invalid","details":{"name":"sample-cle-bad","group":"coordination.k8s.io","kind":"Lease","causes":[{"reason":"FieldValueNotSupported","message":"Unsupported value: \"NoSuchStrategy\": supported values: \"OldestEmulationVersion\"","field":"spec.strategy.strategy"}]},"code":422}`,
	}, {
		name:   "lease-create-with-strategy-preferredholder-201",
		method: http.MethodPost, path: leasesPath, header: asJSON,
		body: `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"sample-cle"},"spec":{"holderIdentity":"a","leaseDurationSeconds":10,"strategy":"OldestEmulationVersion","preferredHolder":"b"}}`,
		code: 201,
		want: `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"sample-cle","namespace":"default","uid":"X","resourceVersion":"X","creationTimestamp":"X","managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:preferredHolder":{},"f:strategy":{}}}}]},"spec":{"holderIdentity":"a","leaseDurationSeconds":10,"strategy":"OldestEmulationVersion","preferredHolder":"b"}}`,
	}, {
		name:   "lease-patch-merge-200",
		method: http.MethodPatch, path: leasesPath + "/sample-conflict", header: merge,
		body: `{"spec":{"holderIdentity":"holder-merge","renewTime":"2026-01-02T03:05:00.000000Z","leaseTransitions":1}}`,
		code: 200,
		want: `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"sample-conflict","namespace":"default","uid":"X","resourceVersion":"X","creationTimestamp":"X","labels":{"app":"peer-sample"},"managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:acquireTime":{},"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:leaseTransitions":{},"f:renewTime":{}}}}]},"spec":{"holderIdentity":"holder-merge","leaseDurationSeconds":15,"acquireTime":"2026-01-02T03:04:05.000000Z","renewTime":"2026-01-02T03:05:00.000000Z","leaseTransitions":1}}`,
	}, {
		name:   "lease-patch-strategic-200",
		method: http.MethodPatch, path: leasesPath + "/sample-conflict", header: []string{"Content-Type", "application/strategic-merge-patch+json"},
		body: `{"spec":{"holderIdentity":"holder-smp"}}`,
		code: 200,
		want: `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"sample-conflict","namespace":"default","uid":"X","resourceVersion":"X","creationTimestamp":"X","labels":{"app":"peer-sample"},"managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:acquireTime":{},"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:leaseTransitions":{},"f:renewTime":{}}}}]},"spec":{"holderIdentity":"holder-smp","leaseDurationSeconds":15,"acquireTime":"2026-01-02T03:04:05.000000Z","renewTime":"2026-01-02T03:05:00.000000Z","leaseTransitions":1}}`,
	}, {
		name:   "lease-patch-jsonpatch-200",
		method: http.MethodPatch, path: leasesPath + "/sample-conflict", header: []string{"Content-Type", "application/json-patch+json"},
		body: `[{"op":"replace","path":"/spec/holderIdentity","value":"holder-jsonpatch"}]`,
		code: 200,
		want: `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"sample-conflict","namespace":"default","uid":"X","resourceVersion":"X","creationTimestamp":"X","labels":{"app":"peer-sample"},"managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:acquireTime":{},"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:leaseTransitions":{},"f:renewTime":{}}}}]},"spec":{"holderIdentity":"holder-jsonpatch","leaseDurationSeconds":15,"acquireTime":"2026-01-02T03:04:05.000000Z","renewTime":"2026-01-02T03:05:00.000000Z","leaseTransitions":1}}`,
	}, {
		name:   "lease-apply-create-201",
		method: http.MethodPatch, path: leasesPath + "/sample-ssa?fieldManager=peer-samples&force=true", header: []string{"Content-Type", "application/apply-patch+yaml"},
		body: "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: sample-ssa\nspec:\n  holderIdentity: holder-ssa\n  leaseDurationSeconds: 30\n",
		code: 201,
		want: `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"sample-ssa","namespace":"default","uid":"X","resourceVersion":"X","creationTimestamp":"X","managedFields":[{"manager":"peer-samples","operation":"Apply","apiVersion":"coordination.k8s.io/v1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:holderIdentity":{},"f:leaseDurationSeconds":{}}}}]},"spec":{"holderIdentity":"holder-ssa","leaseDurationSeconds":30}}`,
	}, {
		name:   "leasecandidate-create-201",
		method: http.MethodPost, path: candidatesPath, header: asJSON, body: candidateJSON,
		code: 201,
		want: `{"kind":"LeaseCandidate","apiVersion":"coordination.k8s.io/v1beta1","metadata":{"name":"sample-candidate","namespace":"default","uid":"X","resourceVersion":"X","creationTimestamp":"X","managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"coordination.k8s.io/v1beta1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:binaryVersion":{},"f:emulationVersion":{},"f:leaseName":{},"f:pingTime":{},"f:renewTime":{},"f:strategy":{}}}}]},"spec":{"leaseName":"sample-component","pingTime":"2026-01-02T03:04:05.000000Z","renewTime":"2026-01-02T03:04:05.000000Z","binaryVersion":"1.36.0","emulationVersion":"1.36.0","strategy":"OldestEmulationVersion"}}`,
	}, {
		name:   "leasecandidate-create-bad-binaryversion-422",
		method: http.MethodPost, path: candidatesPath, header: asJSON,
		body: `{"apiVersion":"coordination.k8s.io/v1beta1","kind":"LeaseCandidate","metadata":{"name":"sample-candidate-bad"},"spec":{"leaseName":"sample-component","binaryVersion":"not-a-version","emulationVersion":"1.36.0","strategy":"OldestEmulationVersion"}}`,
		code: 422,
		want: "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"LeaseCandidate.coordination.k8s.io \\\"sample-candidate-bad\\\" is invalid: [spec.binaryVersion: Invalid value: \\\"not-a-version\\\": must be a valid semantic version, spec.binaryVersion: Invalid value: \\\"not-a-version\\\": must be greater than or equal to `emulationVersion`]\",\"reason\":\"Invalid\",\"details\":{\"name\":\"sample-candidate-bad\",\"group\":\"coordination.k8s.io\",\"kind\":\"LeaseCandidate\",\"causes\":[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"not-a-version\\\": must be a valid semantic version\",\"field\":\"spec.binaryVersion\"},{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"not-a-version\\\": must be greater than or equal to `emulationVersion`\",\"field\":\"spec.binaryVersion\"}]},\"code\":422}",
	}, {
		name:   "leasecandidate-create-empty-spec-422",
		method: http.MethodPost, path: candidatesPath, header: asJSON,
		body: `{"apiVersion":"coordination.k8s.io/v1beta1","kind":"LeaseCandidate","metadata":{"name":"sample-candidate-empty"},"spec":{}}`,
		code: 422,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"LeaseCandidate.coordination.k8s.io \"sample-candidate-empty\" is invalid: [spec.leaseName: Required value, spec.binaryVersion: Required value, spec.strategy: Required value]","reason":"Invalid","details":{"name":"sample-candidate-empty","group":"coordination.k8s.io","kind":"LeaseCandidate","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.leaseName"},{"reason":"FieldValueRequired","message":"Required value","field":"spec.binaryVersion"},{"reason":"FieldValueRequired","message":"Required value","field":"spec.strategy"}]},"code":422}`,
	}, {
		name:   "leasecandidate-patch-leasename-immutable-422",
		method: http.MethodPatch, path: candidatesPath + "/sample-candidate", header: merge,
		body: `{"spec":{"leaseName":"other-component"}}`,
		code: 422,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"LeaseCandidate.coordination.k8s.io \"sample-candidate\" is invalid: spec.leaseName: Invalid value: \"other-component\": field is immutable","reason":"Invalid","details":{"name":"sample-candidate","group":"coordination.k8s.io","kind":"LeaseCandidate","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"other-component\": field is immutable","field":"spec.leaseName"}]},"code":422}`,
	}, {
		name:   "leasecandidate-delete-200",
		method: http.MethodDelete, path: candidatesPath + "/sample-candidate",
		code: 200,
		want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"sample-candidate","group":"coordination.k8s.io","kind":"leasecandidates","uid":"X"}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := a.Do(t, tt.method, tt.path, tt.body, tt.header...)
			WantCode(t, r, tt.code)
			if got := normalize(r.Body); got != tt.want+"\n" {
				t.Errorf("body:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestDeprecationWarnings: requests to a deprecated version carry the real server's Warning;
// requests to v1 do not.
func TestDeprecationWarnings(t *testing.T) {
	a := MustStartAPI(t, sqlite.Options{})
	for path, want := range map[string]string{
		"/apis/coordination.k8s.io/v1beta1/namespaces/default/leasecandidates":  `299 - "coordination.k8s.io/v1beta1 LeaseCandidate is deprecated in v1.36+, unavailable in v1.39+"`,
		"/apis/coordination.k8s.io/v1alpha2/namespaces/default/leasecandidates": `299 - "coordination.k8s.io/v1alpha2 LeaseCandidate is deprecated in v1.35+, unavailable in v1.38+"`,
		"/apis/coordination.k8s.io/v1/namespaces/default/leases":                "",
	} {
		r := a.Do(t, "GET", path, "")
		if r.Code != 200 || r.Header.Get("Warning") != want {
			t.Errorf("GET %s: %d, Warning %q; want %q", path, r.Code, r.Header.Get("Warning"), want)
		}
	}
}

// TestPatchDecodeErrors: a patch whose result does not decode, or has unknown fields under
// Strict validation, is a 422 on the field "patch" whose value is the patched object (JSON and
// merge patches) or the patch as a map (strategic merge), as the real server reports it.
func TestPatchDecodeErrors(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("patched", "holder-a"))
	merge := []string{"Content-Type", "application/merge-patch+json"}
	for _, tc := range []struct {
		name, query, body string
		header            []string
		value, detail     string
	}{
		{"merge patch, unknown field, Strict", "?fieldValidation=Strict", `{"spec":{"foo":1}}`, merge,
			`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",`, `strict decoding error: unknown field "spec.foo"`},
		{"merge patch, bad time", "", `{"spec":{"renewTime":"yesterday"}}`, merge,
			`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",`, `parsing time`},
		{"strategic merge patch, bad time", "", `{"spec":{"renewTime":"yesterday","leaseTransitions":3}}`, []string{"Content-Type", "application/strategic-merge-patch+json"},
			`map[spec:map[leaseTransitions:3 renewTime:yesterday]]`, `parsing time`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.Do(t, http.MethodPatch, leasesPath+"/patched"+tc.query, tc.body, tc.header...)
			WantCode(t, r, http.StatusUnprocessableEntity)
			st := decodeStatus(t, r.Body)
			if st.Reason != metav1.StatusReasonInvalid || st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "patch" {
				t.Fatalf("status %s", r.Body)
			}
			msg := st.Details.Causes[0].Message
			if !strings.HasPrefix(msg, "Invalid value: ") || !strings.Contains(msg, strings.ReplaceAll(tc.value, `"`, `\"`)) || !strings.Contains(msg, tc.detail) {
				t.Errorf("cause message %q, want the value %s and %q", msg, tc.value, tc.detail)
			}
		})
	}
	// Warn (the default) keeps the patch and says why.
	r := a.Do(t, http.MethodPatch, leasesPath+"/patched", `{"spec":{"foo":1}}`, merge...)
	WantCode(t, r, http.StatusOK)
	if got, want := r.Header.Values("Warning"), []string{`299 - "unknown field \"spec.foo\""`}; !equalStrings(got, want) {
		t.Errorf("Warning %q, want %q", got, want)
	}
}

// TestJSONPatchCopyLimit: copy operations that double a value again and again stop at the real
// server's 3 MiB limit on what copies add (see TestApplyJSONPatchCopyLimit), and the answer is
// its 422, which does not carry the library's message.
func TestJSONPatchCopyLimit(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("doubled", "holder-a"))
	r := a.Do(t, http.MethodPatch, leasesPath+"/doubled", apiserver.DoublingJSONPatch(24), "Content-Type", "application/json-patch+json")
	WantBody(t, r, http.StatusUnprocessableEntity, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{},"code":422}`+"\n")
}

// TestEtcdRequestTooLarge: an object over what etcd takes in one request (--max-request-bytes,
// 1.5 MiB by default) is refused as kube-apiserver refuses it, with the etcd client's error as
// a 500 without a reason (k8s.io/apiserver pkg/endpoints/handlers/responsewriters/status.go
// ErrorToAPIStatus); over the etcd client's 2 MiB send limit, with gRPC's error. Bodies up to
// 3 MiB pass the body limit, dry runs never reach etcd, and a refused write changes nothing.
func TestEtcdRequestTooLarge(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	tooLarge := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request is too large","code":500}` + "\n"
	holder := func(n int) string { return strings.Repeat("h", n) }
	post := func(path, body string) response {
		return a.Do(t, http.MethodPost, path, body, "Content-Type", "application/json")
	}

	WantBody(t, post(leasesPath, leaseJSON("big", holder(1600000))), http.StatusInternalServerError, tooLarge)
	r := post(leasesPath, leaseJSON("bigger", holder(2500000)))
	WantCode(t, r, http.StatusInternalServerError)
	if !regexp.MustCompile(`^\{"kind":"Status","apiVersion":"v1","metadata":\{\},"status":"Failure","message":"rpc error: code = ResourceExhausted desc = trying to send message larger than max \(2500\d\d\d vs\. 2097152\)","code":500\}\n$`).Match(r.Body) {
		t.Errorf("over the client's send limit: %s", r.Body)
	}
	WantCode(t, a.Do(t, http.MethodPost, leasesPath+"?dryRun=All", leaseJSON("big", holder(1600000)), "Content-Type", "application/json"), http.StatusCreated)

	rv := a.MustCreate(t, leasesPath, leaseJSON("fits", holder(1400000)))
	put := strings.Replace(leaseJSON("fits", holder(1600000)), `"namespace":"default"`, `"namespace":"default","resourceVersion":"`+rv+`"`, 1)
	WantBody(t, a.Do(t, http.MethodPut, leasesPath+"/fits", put, "Content-Type", "application/json"), http.StatusInternalServerError, tooLarge)
	WantBody(t, a.Do(t, http.MethodPatch, leasesPath+"/fits", `{"spec":{"holderIdentity":"`+holder(1600000)+`"}}`, "Content-Type", mergePatch), http.StatusInternalServerError, tooLarge)
	if got := a.MustDo(t, http.StatusOK, http.MethodGet, leasesPath+"/fits", ""); got != rv {
		t.Errorf("after the refused writes: resourceVersion %s, want %s", got, rv)
	}

	// A LeaseCandidate has no free-form field that large but an owner reference's name.
	candidate := `{"apiVersion":"coordination.k8s.io/v1beta1","kind":"LeaseCandidate","metadata":{"name":"big","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"` +
		holder(1600000) + `","uid":"6a4b0d3e-1c53-4f0e-9d8c-9d4e1c1f2a11"}]},"spec":{"leaseName":"l","binaryVersion":"1.36.0","emulationVersion":"1.36.0","strategy":"OldestEmulationVersion"}}`
	WantBody(t, post(candidatesPath, candidate), http.StatusInternalServerError, tooLarge)
}

// TestEtcdTooLargeDropsManagedFields: a write over etcd's limit is tried again without
// managedFields, as kube-apiserver's create handler does: the largest Lease that can be
// created is stored without them, and one a little smaller keeps them.
func TestEtcdTooLargeDropsManagedFields(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	create := func(n int) response {
		r := a.Do(t, http.MethodPost, leasesPath, leaseJSON("edge", strings.Repeat("h", n)), "Content-Type", "application/json")
		if r.Code == http.StatusCreated {
			a.MustDo(t, http.StatusOK, http.MethodDelete, leasesPath+"/edge", "")
		}
		return r
	}
	lo, hi := 1500000, 1600000 // created, refused
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if create(mid).Code == http.StatusCreated {
			lo = mid
		} else {
			hi = mid
		}
	}
	if r := create(lo); bytes.Contains(r.Body, []byte(`"managedFields"`)) {
		t.Errorf("the largest Lease etcd takes (holderIdentity of %d bytes) kept its managedFields", lo)
	}
	if r := create(lo - 1000); !bytes.Contains(r.Body, []byte(`"managedFields"`)) {
		t.Errorf("a Lease 1000 bytes under etcd's limit lost its managedFields: %.300s", r.Body)
	}
}
