package apiserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/store/sqlite"
)

// TestImmutableMetadata: a write may not change metadata the server owns. Only a PUT carries
// its uid as a storage precondition (409); a patch that changes the uid, and any write that
// sets deletion metadata, fails the update validation (422); a changed creationTimestamp is
// silently reset and an empty uid filled in.
func TestImmutableMetadata(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	asJSON := []string{"Content-Type", "application/json"}
	merge := []string{"Content-Type", "application/merge-patch+json"}
	a.MustCreate(t, leasesPath, leaseJSON("im", "holder-a"))
	g := a.Do(t, http.MethodGet, leasesPath+"/im", "")
	WantCode(t, g, http.StatusOK)
	stored, uid := string(g.Body), uidOf(t, g.Body)

	invalid := func(field, value string) string {
		return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Lease.coordination.k8s.io \"im\" is invalid: ` + field + `: Invalid value: ` + value + `: field is immutable",` +
			`"reason":"Invalid","details":{"name":"im","group":"coordination.k8s.io","kind":"Lease","causes":[` +
			// The generic and the Lease update validation both check metadata, as on the real server.
			`{"reason":"FieldValueInvalid","message":"Invalid value: ` + value + `: field is immutable","field":"` + field + `"},` +
			`{"reason":"FieldValueInvalid","message":"Invalid value: ` + value + `: field is immutable","field":"` + field + `"}]},"code":422}` + "\n"
	}
	uidInvalid := invalid("metadata.uid", `\"abc\"`)
	for _, tc := range []struct {
		name   string
		method string
		body   string
		header []string
		want   string
	}{
		{"merge patch of the uid", http.MethodPatch, `{"metadata":{"uid":"abc"}}`, merge, uidInvalid},
		{"JSON patch of the uid", http.MethodPatch, `[{"op":"replace","path":"/metadata/uid","value":"abc"}]`,
			[]string{"Content-Type", "application/json-patch+json"}, uidInvalid},
		{"strategic merge patch of the uid", http.MethodPatch, `{"metadata":{"uid":"abc"}}`,
			[]string{"Content-Type", "application/strategic-merge-patch+json"}, uidInvalid},
		{"apply of the uid", http.MethodPatch, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"im","uid":"abc"}}`,
			[]string{"Content-Type", "application/apply-patch+yaml"}, uidInvalid},
		{"merge patch of deletionTimestamp", http.MethodPatch, `{"metadata":{"deletionTimestamp":"2026-01-02T03:04:05Z"}}`, merge,
			invalid("metadata.deletionTimestamp", `\"2026-01-02T03:04:05Z\"`)},
		{"merge patch of deletionGracePeriodSeconds", http.MethodPatch, `{"metadata":{"deletionGracePeriodSeconds":30}}`, merge,
			invalid("metadata.deletionGracePeriodSeconds", `30`)},
		{"PUT of deletionTimestamp", http.MethodPut,
			strings.Replace(stored, `"creationTimestamp"`, `"deletionTimestamp":"2026-01-02T03:04:05Z","creationTimestamp"`, 1), asJSON,
			invalid("metadata.deletionTimestamp", `\"2026-01-02T03:04:05Z\"`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := leasesPath + "/im"
			if tc.header[1] == "application/apply-patch+yaml" {
				path += "?fieldManager=m"
			}
			WantBody(t, a.Do(t, tc.method, path, tc.body, tc.header...), http.StatusUnprocessableEntity, tc.want)
		})
	}

	t.Run("PUT of the uid is a precondition", func(t *testing.T) {
		body := strings.Replace(stored, uid, "abc", 1)
		WantBody(t, a.Do(t, http.MethodPut, leasesPath+"/im", body, asJSON...), http.StatusConflict,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on leases.coordination.k8s.io \"im\": StorageError: invalid object, Code: 4, Key: /registry/leases/default/im, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: abc, UID in object meta: `+uid+`","reason":"Conflict","details":{"name":"im","group":"coordination.k8s.io","kind":"leases"},"code":409}`+"\n")
	})
	t.Run("creationTimestamp is reset, an empty uid filled in", func(t *testing.T) {
		r := a.Do(t, http.MethodPatch, leasesPath+"/im", `{"metadata":{"creationTimestamp":"2001-01-01T00:00:00Z","uid":null},"spec":{"holderIdentity":"holder-b"}}`, merge...)
		WantCode(t, r, http.StatusOK)
		if uidOf(t, r.Body) != uid || strings.Contains(string(r.Body), "2001-01-01") {
			t.Errorf("patched lease lost its uid or creationTimestamp: %s", r.Body)
		}
	})
	t.Run("PUT that creates, with a uid", func(t *testing.T) {
		body := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"pc1","uid":"11111111-1111-1111-1111-111111111111"},"spec":{}}`
		WantBody(t, a.Do(t, http.MethodPut, leasesPath+"/pc1", body, asJSON...), http.StatusConflict,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on leases.coordination.k8s.io \"pc1\": StorageError: invalid object, Code: 4, Key: /registry/leases/default/pc1, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 11111111-1111-1111-1111-111111111111, UID in object meta: ","reason":"Conflict","details":{"name":"pc1","group":"coordination.k8s.io","kind":"leases"},"code":409}`+"\n")
		a.MustDo(t, http.StatusNotFound, http.MethodGet, leasesPath+"/pc1", "")
	})
	t.Run("apply that creates, with a uid", func(t *testing.T) {
		body := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"pc2","uid":"abc"}}`
		WantBody(t, a.Do(t, http.MethodPatch, leasesPath+"/pc2?fieldManager=m", body, "Content-Type", "application/apply-patch+yaml"), http.StatusConflict,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on leases.coordination.k8s.io \"pc2\": uid mismatch: the provided object specified uid abc, and no existing object was found","reason":"Conflict","details":{"name":"pc2","group":"coordination.k8s.io","kind":"leases"},"code":409}`+"\n")
		a.MustDo(t, http.StatusNotFound, http.MethodGet, leasesPath+"/pc2", "")
	})
}

// TestMethodNotAllowed: a method the real server has no route for on a path it serves is a 405
// (lease-method-not-allowed-405), checked before the Content-Type and the body: PUT and PATCH
// on a collection, anything but GET on the list across namespaces and the legacy watch paths.
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}` + "\n"
	for _, k := range a.Reg.Kinds() {
		if !k.Namespaced {
			continue
		}
		for _, v := range k.Versions {
			prefix := "/apis/" + k.Group + "/" + v
			if k.Group == "" {
				prefix = "/api/" + v
			}
			collection := prefix + "/namespaces/default/" + k.Resource
			all := prefix + "/" + k.Resource
			for _, tc := range []struct{ method, path string }{
				{http.MethodPut, collection},
				{http.MethodPatch, collection},
				{http.MethodPost, all},
				{http.MethodDelete, all},
				{http.MethodPut, all},
				{http.MethodPatch, all},
				{http.MethodPost, collection + "/x"},
				{http.MethodPost, prefix + "/watch/namespaces/default/" + k.Resource},
				{http.MethodDelete, prefix + "/watch/namespaces/default/" + k.Resource + "/x"},
				{http.MethodPatch, prefix + "/watch/" + k.Resource},
			} {
				for _, ct := range []string{"application/merge-patch+json", "text/plain"} {
					t.Run(tc.method+" "+tc.path+" "+ct, func(t *testing.T) {
						WantBody(t, a.Do(t, tc.method, tc.path, `{"metadata":{"name":"x"}}`, "Content-Type", ct), http.StatusMethodNotAllowed, want)
					})
				}
			}
		}
	}
	// The same paths still serve what they have a route for.
	a.MustDo(t, http.StatusOK, http.MethodGet, "/apis/coordination.k8s.io/v1/leases", "")
	a.MustDo(t, http.StatusOK, http.MethodDelete, leasesPath, "")
	a.MustDo(t, http.StatusNotFound, http.MethodGet, "/apis/coordination.k8s.io/v1/leases/x", "")
}

// TestNameAndNamespaceChecks: a PUT or patch checks the namespace of the object before its
// name, and words a missing name as the real handlers' checkName does.
func TestNameAndNamespaceChecks(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	rv := a.MustCreate(t, leasesPath, leaseJSON("t1", "holder-a"))
	asJSON := []string{"Content-Type", "application/json"}
	merge := []string{"Content-Type", "application/merge-patch+json"}
	const (
		noName      = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the name of the object (t1 based on URL) was undeterminable: name must be provided","reason":"BadRequest","code":400}` + "\n"
		otherNS     = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the namespace of the provided object does not match the namespace sent on the request","reason":"BadRequest","code":400}` + "\n"
		putTemplate = `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":%q,"namespace":%q,"resourceVersion":%q},"spec":{}}`
	)
	for _, tc := range []struct {
		name, method, body string
		header             []string
		want               string
	}{
		{"PUT without a name", http.MethodPut, fmt.Sprintf(putTemplate, "", "default", rv), asJSON, noName},
		{"merge patch removing the name", http.MethodPatch, `{"metadata":{"name":null}}`, merge, noName},
		{"PUT to another namespace", http.MethodPut, fmt.Sprintf(putTemplate, "t1", "zz", rv), asJSON, otherNS},
		{"PUT to another namespace and name", http.MethodPut, fmt.Sprintf(putTemplate, "t2", "zz", rv), asJSON, otherNS},
		{"merge patch to another namespace", http.MethodPatch, `{"metadata":{"namespace":"zz"}}`, merge, otherNS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			WantBody(t, a.Do(t, tc.method, leasesPath+"/t1", tc.body, tc.header...), http.StatusBadRequest, tc.want)
		})
	}
}

// TestApplyUnknownField: server-side apply of a field the schema does not declare fails in the
// field manager with a plain error, which the real server sends as a 500 without a reason.
func TestApplyUnknownField(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	body := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"fv1"},"spec":{"zzz":1}}`
	r := a.Do(t, http.MethodPatch, leasesPath+"/fv1?fieldManager=m", body, "Content-Type", "application/apply-patch+yaml")
	WantBody(t, r, http.StatusInternalServerError, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"failed to create typed patch object (/fv1; coordination.k8s.io/v1, Kind=Lease): .spec.zzz: field not declared in schema","code":500}`+"\n")
	a.MustDo(t, http.StatusNotFound, http.MethodGet, leasesPath+"/fv1", "")
}
