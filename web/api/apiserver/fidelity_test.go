package apiserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/apiserver"
)

// The conformance tests of issue 21: requests where leaselab once answered differently from
// kube-apiserver 1.36.3, and the real server's answers (status, Content-Type, body).

const applyPatch = "application/apply-patch+yaml"

// statusBody is a failure Status as the real server writes it, with details (a JSON object)
// when details is not empty.
func statusBody(code, reason, message, details string) string {
	msg, _ := json.Marshal(message)
	b := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":` + string(msg)
	if reason != "" {
		b += `,"reason":"` + reason + `"`
	}
	if details != "" {
		b += `,"details":` + details
	}
	return b + `,"code":` + code + "}\n"
}

// TestApplyResourceVersionPrecondition: a resourceVersion in an applied configuration is a
// precondition, as for a PUT (issue 21, item 3).
func TestApplyResourceVersionPrecondition(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	stale := a.MustCreate(t, leasesPath, leaseJSON("applied", "holder-a"))
	cur := a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/applied", `{"spec":{"holderIdentity":"holder-b"}}`, "Content-Type", mergePatch)

	cfg := func(rv string) string {
		return `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"applied","resourceVersion":"` + rv + `"},"spec":{"holderIdentity":"holder-c"}}`
	}
	r := a.Do(t, http.MethodPatch, leasesPath+"/applied?fieldManager=applier&force=true", cfg(stale), "Content-Type", applyPatch)
	WantBody(t, r, http.StatusConflict, statusBody("409", "Conflict",
		`Operation cannot be fulfilled on leases.coordination.k8s.io "applied": the object has been modified; please apply your changes to the latest version and try again`,
		`{"name":"applied","group":"coordination.k8s.io","kind":"leases"}`))
	// The current resourceVersion is met, and the apply writes.
	a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/applied?fieldManager=applier&force=true", cfg(cur), "Content-Type", applyPatch)
}

// TestNoImplicitNamespaces: with NoImplicitNamespaces a create in a missing namespace is the
// real server's 404, by POST, by a PUT or an apply that creates, dry run or not; the namespaces
// every cluster has exist from the start (issue 21, item 4).
func TestNoImplicitNamespaces(t *testing.T) {
	t.Parallel()
	a := MustStartAPIWith(t, sqlite.Options{}, apiserver.Options{NoImplicitNamespaces: true})
	const missing = "/apis/coordination.k8s.io/v1/namespaces/no-such-namespace/leases"
	want := statusBody("404", "NotFound", `namespaces "no-such-namespace" not found`, `{"name":"no-such-namespace","kind":"namespaces"}`)
	body := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"sample-nsless"},"spec":{"holderIdentity":"x"}}`
	WantBody(t, a.Do(t, http.MethodPost, missing, body, "Content-Type", "application/json"), http.StatusNotFound, want)
	WantBody(t, a.Do(t, http.MethodPost, missing+"?dryRun=All", body, "Content-Type", "application/json"), http.StatusNotFound, want)
	WantBody(t, a.Do(t, http.MethodPut, missing+"/sample-nsless", body, "Content-Type", "application/json"), http.StatusNotFound, want)
	WantBody(t, a.Do(t, http.MethodPatch, missing+"/sample-nsless?fieldManager=m", body, "Content-Type", applyPatch), http.StatusNotFound, want)
	// Admission runs before validation: an invalid lease in a missing namespace is a 404 too.
	WantBody(t, a.Do(t, http.MethodPost, missing, `{"metadata":{"name":"x"},"spec":{"leaseDurationSeconds":-1}}`, "Content-Type", "application/json"), http.StatusNotFound, want)
	a.MustDo(t, http.StatusNotFound, http.MethodGet, "/api/v1/namespaces/no-such-namespace", "")

	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		a.MustDo(t, http.StatusOK, http.MethodGet, "/api/v1/namespaces/"+ns, "")
	}
	a.MustCreate(t, leasesPath, leaseJSON("in-default", "holder-a"))
	a.MustCreate(t, "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"made"}}`)
	a.MustCreate(t, "/apis/coordination.k8s.io/v1/namespaces/made/leases", leaseWithLabel("in-made", "app", "x"))

	// The default keeps leaselab's own rule: the namespace is made on first write.
	b := MustStartAPI(t, sqlite.Options{})
	b.MustCreate(t, missing, body)
	b.MustDo(t, http.StatusOK, http.MethodGet, "/api/v1/namespaces/no-such-namespace", "")
}

// TestHeadNotAllowed: the real server has no HEAD routes (issue 21, item 5).
func TestHeadNotAllowed(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("headed", "holder-a"))
	for _, path := range []string{leasesPath, leasesPath + "/headed", "/apis/coordination.k8s.io/v1/leases", candidatesPath, "/api/v1/namespaces/default"} {
		if r := a.Do(t, http.MethodHead, path, ""); r.Code != http.StatusMethodNotAllowed {
			t.Errorf("HEAD %s: %d, want 405", path, r.Code)
		}
	}
}

// TestWatchParameterOnNamedObject: ?watch=true on an object's path is a get; only the
// collection and the /watch/ paths watch (issue 21, item 6).
func TestWatchParameterOnNamedObject(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("named", "holder-a"))
	get := a.Do(t, http.MethodGet, leasesPath+"/named", "")
	r := a.Do(t, http.MethodGet, leasesPath+"/named?watch=true", "")
	WantBody(t, r, http.StatusOK, string(get.Body))
	if len(r.Header.Values("Transfer-Encoding")) > 0 || r.Header.Get("Content-Length") == "" {
		t.Errorf("a get is not streamed: headers %v", r.Header)
	}
	r = a.Do(t, http.MethodGet, leasesPath+"/missing?watch=1", "")
	WantCode(t, r, http.StatusNotFound)
}

// TestPartialObjectMetadataConversions: a list asked for as one PartialObjectMetadata, or an
// object as a list, is a 406 with the real server's words; the items of a
// PartialObjectMetadataList carry apiVersion and kind (issue 21, item 7).
func TestPartialObjectMetadataConversions(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("meta", "holder-a"))
	a.MustCreate(t, candidatesPath, candidateJSON)
	pom := "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	pomList := "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

	WantBody(t, a.Do(t, http.MethodGet, leasesPath, "", "Accept", pom), http.StatusNotAcceptable,
		negotiationFailure(t, 406, metav1.StatusReasonNotAcceptable, "you requested PartialObjectMetadata, but the requested object is a list (*coordination.LeaseList)"))
	WantBody(t, a.Do(t, http.MethodGet, "/api/v1/namespaces", "", "Accept", pom), http.StatusNotAcceptable,
		negotiationFailure(t, 406, metav1.StatusReasonNotAcceptable, "you requested PartialObjectMetadata, but the requested object is a list (*core.NamespaceList)"))
	WantBody(t, a.Do(t, http.MethodGet, candidatesPath+"/sample-candidate", "", "Accept", pomList), http.StatusNotAcceptable,
		negotiationFailure(t, 406, metav1.StatusReasonNotAcceptable, "you requested PartialObjectMetadataList, but the requested object is not a list (*coordination.LeaseCandidate)"))

	for _, v := range []string{"v1", "v1beta1"} {
		r := a.Do(t, http.MethodGet, leasesPath, "", "Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v="+v)
		WantCode(t, r, http.StatusOK)
		var list struct {
			Items []struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			} `json:"items"`
		}
		if err := json.Unmarshal(r.Body, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].APIVersion != "meta.k8s.io/"+v || list.Items[0].Kind != "PartialObjectMetadata" {
			t.Errorf("%s items %+v, want apiVersion and kind on each:\n%s", v, list.Items, r.Body)
		}
	}
}

// TestPatchOrderAndVersions: a merge patch that is not an object is a 400; one that names
// another version of the group changes nothing; an apply that names another object conflicts
// on managed fields before its name is checked (issue 21, item 8).
func TestPatchOrderAndVersions(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("patched", "holder-a"))
	a.MustCreate(t, candidatesPath, candidateJSON)

	r := a.Do(t, http.MethodPatch, leasesPath+"/patched", `[]`, "Content-Type", mergePatch)
	WantBody(t, r, http.StatusBadRequest, statusBody("400", "BadRequest",
		"error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}", ""))

	before := a.Do(t, http.MethodGet, leasesPath+"/patched", "")
	r = a.Do(t, http.MethodPatch, leasesPath+"/patched", `{"apiVersion":"coordination.k8s.io/v1beta1"}`, "Content-Type", mergePatch)
	WantBody(t, r, http.StatusOK, string(before.Body))
	beforeCandidate := a.Do(t, http.MethodGet, candidatesPath+"/sample-candidate", "")
	r = a.Do(t, http.MethodPatch, candidatesPath+"/sample-candidate", `{"apiVersion":"coordination.k8s.io/v1alpha2"}`, "Content-Type", mergePatch)
	WantBody(t, r, http.StatusOK, string(beforeCandidate.Body))

	// holderIdentity belongs to the lease's creator: another manager's apply of another value
	// conflicts, and that comes before the name mismatch.
	r = a.Do(t, http.MethodPatch, leasesPath+"/patched?fieldManager=other",
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"another"},"spec":{"holderIdentity":"holder-z"}}`, "Content-Type", applyPatch)
	WantCode(t, r, http.StatusConflict)
	if st := decodeStatus(t, r.Body); st.Reason != "Conflict" || !strings.Contains(st.Message, "conflict") {
		t.Errorf("want a managed-fields conflict: %s", r.Body)
	}
	r = a.Do(t, http.MethodPatch, leasesPath+"/patched?fieldManager=other&force=true",
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"another"},"spec":{"holderIdentity":"holder-z"}}`, "Content-Type", applyPatch)
	WantBody(t, r, http.StatusBadRequest, statusBody("400", "BadRequest", "the name of the object (another) does not match the name on the URL (patched)", ""))
}

// TestNamespaceManagedFields: a namespace's managedFields claim what the client sent and
// the defaulted name label, not what the server sets after (issue 21, item 9).
func TestNamespaceManagedFields(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	r := a.Do(t, http.MethodPost, "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"claimed"}}`, "Content-Type", "application/json")
	WantCode(t, r, http.StatusCreated)
	wantNormalized(t, r, `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"claimed","uid":"X","resourceVersion":"X","creationTimestamp":"X","labels":{"kubernetes.io/metadata.name":"claimed"},"managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"v1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}}}]},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`+"\n")
}

// wantNormalized fails the test unless r's body is want once uids, times and resourceVersions
// are replaced by "X".
func wantNormalized(tb testing.TB, r response, want string) {
	tb.Helper()
	if got := normalize(r.Body); got != want {
		tb.Errorf("body:\n%s\nwant:\n%s", got, want)
	}
}

// negotiationFailure is the body of a failure the real server writes after its output
// negotiation refused the request's Accept header: indented JSON without a final newline.
func negotiationFailure(tb testing.TB, code int32, reason metav1.StatusReason, message string) string {
	tb.Helper()
	b, err := json.MarshalIndent(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: message, Reason: reason, Code: code,
	}, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// TestRealServerWording: messages kept as the real server words them, since people search the
// web for them (issue 21, item 10).
func TestRealServerWording(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("worded", "holder-a"))
	for _, tc := range []struct {
		name, method, path, body, contentType, want string
	}{{
		name: "apply without apiVersion", method: http.MethodPatch, path: leasesPath + "/worded?fieldManager=m",
		body: `{"kind":"Lease","metadata":{"name":"worded"}}`, contentType: applyPatch,
		want: statusBody("400", "BadRequest", "invalid object type: /, Kind=Lease", ""),
	}, {
		name: "apply of another version", method: http.MethodPatch, path: leasesPath + "/worded?fieldManager=m",
		body: `{"apiVersion":"coordination.k8s.io/v1beta1","kind":"Lease","metadata":{"name":"worded"}}`, contentType: applyPatch,
		want: statusBody("400", "BadRequest", "invalid object type: coordination.k8s.io/v1beta1, Kind=Lease", ""),
	}, {
		name: "create of another version", method: http.MethodPost, path: leasesPath,
		body: `{"apiVersion":"coordination.k8s.io/v1beta1","kind":"Lease","metadata":{"name":"other"}}`, contentType: "application/json",
		want: statusBody("400", "BadRequest", "the API version in the data (coordination.k8s.io/v1beta1) does not match the expected API version (coordination.k8s.io/v1)", ""),
	}, {
		name: "DeleteOptions of another kind", method: http.MethodDelete, path: leasesPath + "/worded",
		body: `{"apiVersion":"meta.k8s.io/v1","kind":"ListOptions"}`, contentType: "application/json",
		want: statusBody("400", "BadRequest", "decoded object cannot be converted to DeleteOptions", ""),
	}, {
		name: "JSON patch that is not a list", method: http.MethodPatch, path: leasesPath + "/worded",
		body: `{}`, contentType: "application/json-patch+json",
		want: statusBody("400", "BadRequest", "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp", ""),
	}, {
		name: "merge patch that is not JSON", method: http.MethodPatch, path: leasesPath + "/worded",
		body: `{"spec":`, contentType: mergePatch,
		want: statusBody("400", "BadRequest", "error decoding patch: unexpected end of JSON input", ""),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.Do(t, tc.method, tc.path, tc.body, "Content-Type", tc.contentType)
			WantBody(t, r, http.StatusBadRequest, tc.want)
		})
	}
	// None of them changed the lease.
	a.MustDo(t, http.StatusOK, http.MethodGet, leasesPath+"/worded", "")
}

// deleting is the part of an object's metadata a deletion changes.
type deleting struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name                       string   `json:"name"`
		ResourceVersion            string   `json:"resourceVersion"`
		DeletionTimestamp          *string  `json:"deletionTimestamp"`
		DeletionGracePeriodSeconds *int64   `json:"deletionGracePeriodSeconds"`
		Finalizers                 []string `json:"finalizers"`
	} `json:"metadata"`
	Spec struct {
		Finalizers []string `json:"finalizers"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

func decodeDeleting(tb testing.TB, b []byte) deleting {
	tb.Helper()
	var d deleting
	if err := json.Unmarshal(b, &d); err != nil {
		tb.Fatalf("decode %s: %v", b, err)
	}
	return d
}

// wantMarked fails the test unless r is a 200 with the object kind, marked as being deleted
// and kept for its finalizers.
func wantMarked(tb testing.TB, r response, kind string, finalizers ...string) deleting {
	tb.Helper()
	WantCode(tb, r, http.StatusOK)
	d := decodeDeleting(tb, r.Body)
	if d.Kind != kind || d.Metadata.DeletionTimestamp == nil || d.Metadata.DeletionGracePeriodSeconds == nil || *d.Metadata.DeletionGracePeriodSeconds != 0 ||
		strings.Join(d.Metadata.Finalizers, ",") != strings.Join(finalizers, ",") {
		tb.Fatalf("want a %s being deleted, with deletionGracePeriodSeconds 0 and finalizers %q:\n%s", kind, finalizers, r.Body)
	}
	return d
}

// TestFinalizers: an object with finalizers is kept by a delete, marked as being deleted,
// and removed when an update takes its last finalizer away (issue 21, item 1).
func TestFinalizers(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	kept := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kept","finalizers":["example.com/keep"]},"spec":{"holderIdentity":"h"}}`
	rv := a.MustCreate(t, leasesPath, kept)
	w := a.MustWatch(t, leasesPath+"?watch=true&resourceVersion="+rv)

	first := wantMarked(t, a.Do(t, http.MethodDelete, leasesPath+"/kept", ""), "Lease", "example.com/keep")
	WantEvent(t, w.NextEvent(t), "MODIFIED", "kept", first.Metadata.ResourceVersion)
	got := wantMarked(t, a.Do(t, http.MethodGet, leasesPath+"/kept", ""), "Lease", "example.com/keep")
	if *got.Metadata.DeletionTimestamp != *first.Metadata.DeletionTimestamp {
		t.Errorf("deletionTimestamp %s, then %s", *first.Metadata.DeletionTimestamp, *got.Metadata.DeletionTimestamp)
	}
	patched := a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/kept", `{"metadata":{"labels":{"still":"here"}}}`, "Content-Type", mergePatch)
	WantEvent(t, w.NextEvent(t), "MODIFIED", "kept", patched)
	// A second delete changes nothing and answers with the object.
	again := wantMarked(t, a.Do(t, http.MethodDelete, leasesPath+"/kept", ""), "Lease", "example.com/keep")
	if again.Metadata.ResourceVersion != patched || *again.Metadata.DeletionTimestamp != *first.Metadata.DeletionTimestamp {
		t.Errorf("second delete wrote: %+v", again.Metadata)
	}
	// A dry run of the delete of a kept object answers as the delete would.
	wantMarked(t, a.Do(t, http.MethodDelete, leasesPath+"/kept?dryRun=All", ""), "Lease", "example.com/keep")

	// The real server checks the metadata twice (the registry's common fields, then the
	// kind's own update validation): the cause appears twice, the message once.
	r := a.Do(t, http.MethodPatch, leasesPath+"/kept", `{"metadata":{"finalizers":["example.com/keep","example.com/other"]}}`, "Content-Type", mergePatch)
	cause := `{"reason":"FieldValueForbidden","message":"Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/other\"}","field":"metadata.finalizers"}`
	WantBody(t, r, http.StatusUnprocessableEntity, statusBody("422", "Invalid",
		`Lease.coordination.k8s.io "kept" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/other"}`,
		`{"name":"kept","group":"coordination.k8s.io","kind":"Lease","causes":[`+cause+`,`+cause+`]}`))
	r = a.Do(t, http.MethodPost, leasesPath, kept, "Content-Type", "application/json")
	WantBody(t, r, http.StatusConflict, statusBody("409", "AlreadyExists",
		`object is being deleted: leases.coordination.k8s.io "kept" already exists`, `{"name":"kept","group":"coordination.k8s.io","kind":"leases"}`))

	// Taking the last finalizer away removes it; the update answers with the object.
	r = a.Do(t, http.MethodPatch, leasesPath+"/kept", `{"metadata":{"finalizers":null}}`, "Content-Type", mergePatch)
	WantCode(t, r, http.StatusOK)
	if d := decodeDeleting(t, r.Body); d.Metadata.Name != "kept" || len(d.Metadata.Finalizers) != 0 {
		t.Errorf("update that removed the object answered %s", r.Body)
	}
	WantEvent(t, w.NextEvent(t), "DELETED", "kept", "")
	a.MustDo(t, http.StatusNotFound, http.MethodGet, leasesPath+"/kept", "")

	// Without finalizers, a delete still removes at once and answers with a Status.
	a.MustCreate(t, leasesPath, leaseWithLabel("plain", "app", "x"))
	r = a.Do(t, http.MethodDelete, leasesPath+"/plain", "")
	WantCode(t, r, http.StatusOK)
	if st := decodeStatus(t, r.Body); st.Status != "Success" {
		t.Errorf("delete of an object without finalizers: %s", r.Body)
	}
}

// TestFinalizersDeleteCollection: deletecollection marks what has finalizers and removes the
// rest (issue 21, item 1).
func TestFinalizersDeleteCollection(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, `{"metadata":{"name":"k1","labels":{"set":"a"},"finalizers":["example.com/keep"]},"spec":{}}`)
	a.MustCreate(t, leasesPath, `{"metadata":{"name":"k2","labels":{"set":"a"},"finalizers":["example.com/keep","example.com/also"]},"spec":{}}`)
	a.MustCreate(t, leasesPath, `{"metadata":{"name":"gone","labels":{"set":"a"}},"spec":{}}`)
	r := a.Do(t, http.MethodDelete, leasesPath+"?labelSelector=set%3Da", "")
	WantCode(t, r, http.StatusOK)
	if !strings.Contains(string(r.Body), `"kind":"LeaseList"`) {
		t.Errorf("deletecollection answered %s", r.Body)
	}
	wantMarked(t, a.Do(t, http.MethodGet, leasesPath+"/k1", ""), "Lease", "example.com/keep")
	wantMarked(t, a.Do(t, http.MethodGet, leasesPath+"/k2", ""), "Lease", "example.com/keep", "example.com/also")
	a.MustDo(t, http.StatusNotFound, http.MethodGet, leasesPath+"/gone", "")
	// Again: the marked objects stay as they are.
	a.MustDo(t, http.StatusOK, http.MethodDelete, leasesPath+"?labelSelector=set%3Da", "")
	wantMarked(t, a.Do(t, http.MethodGet, leasesPath+"/k1", ""), "Lease", "example.com/keep")
	// JSON patch takes one of two finalizers away: kept; the last: removed.
	a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/k2", `[{"op":"remove","path":"/metadata/finalizers/1"}]`, "Content-Type", "application/json-patch+json")
	wantMarked(t, a.Do(t, http.MethodGet, leasesPath+"/k2", ""), "Lease", "example.com/keep")
	a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/k2", `[{"op":"remove","path":"/metadata/finalizers"}]`, "Content-Type", "application/json-patch+json")
	a.MustDo(t, http.StatusNotFound, http.MethodGet, leasesPath+"/k2", "")
}

// TestFinalizersLeaseCandidate: the same lifecycle for LeaseCandidates, with a PUT that
// takes the finalizer away (issue 21, item 1).
func TestFinalizersLeaseCandidate(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	body := strings.Replace(candidateJSON, `"name":"sample-candidate"`, `"name":"sample-candidate","finalizers":["example.com/keep"]`, 1)
	a.MustCreate(t, candidatesPath, body)
	d := wantMarked(t, a.Do(t, http.MethodDelete, candidatesPath+"/sample-candidate", ""), "LeaseCandidate", "example.com/keep")
	wantMarked(t, a.Do(t, http.MethodGet, "/apis/coordination.k8s.io/v1alpha2/namespaces/default/leasecandidates/sample-candidate", ""), "LeaseCandidate", "example.com/keep")
	put := strings.Replace(candidateJSON, `"name":"sample-candidate"`, `"name":"sample-candidate","resourceVersion":"`+d.Metadata.ResourceVersion+`"`, 1)
	a.MustDo(t, http.StatusOK, http.MethodPut, candidatesPath+"/sample-candidate", put, "Content-Type", "application/json")
	a.MustDo(t, http.StatusNotFound, http.MethodGet, candidatesPath+"/sample-candidate", "")
}

// TestNamespaceFinalizers: a namespace being deleted is Terminating and takes no new objects;
// its content goes, objects with finalizers once they lose them; the namespace then loses its
// "kubernetes" finalizer and goes once its own finalizers are gone (issue 21, items 1 and 4).
func TestNamespaceFinalizers(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	const nsPath = "/api/v1/namespaces/doomed"
	const doomed = "/apis/coordination.k8s.io/v1/namespaces/doomed/leases"
	a.MustCreate(t, "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"doomed","finalizers":["example.com/keep"]}}`)
	a.MustCreate(t, doomed, leaseWithLabel("plain", "app", "x"))
	a.MustCreate(t, doomed, `{"metadata":{"name":"held","finalizers":["example.com/keep"]},"spec":{}}`)

	r := a.Do(t, http.MethodDelete, nsPath, "")
	WantCode(t, r, http.StatusOK)
	if d := decodeDeleting(t, r.Body); d.Kind != "Namespace" || d.Metadata.DeletionTimestamp == nil || d.Status.Phase != "Terminating" || strings.Join(d.Spec.Finalizers, ",") != "kubernetes" {
		t.Errorf("delete answered %s", r.Body)
	}
	a.MustDo(t, http.StatusNotFound, http.MethodGet, doomed+"/plain", "")
	wantMarked(t, a.Do(t, http.MethodGet, doomed+"/held", ""), "Lease", "example.com/keep")
	if d := decodeDeleting(t, a.Do(t, http.MethodGet, nsPath, "").Body); d.Status.Phase != "Terminating" || len(d.Spec.Finalizers) != 1 {
		t.Errorf("namespace with content left: %+v", d)
	}
	r = a.Do(t, http.MethodPost, doomed, leaseWithLabel("late", "app", "x"), "Content-Type", "application/json")
	WantBody(t, r, http.StatusForbidden, statusBody("403", "Forbidden",
		`leases.coordination.k8s.io "late" is forbidden: unable to create new content in namespace doomed because it is being terminated`,
		`{"name":"late","group":"coordination.k8s.io","kind":"leases","causes":[{"reason":"NamespaceTerminating","message":"namespace doomed is being terminated","field":"metadata.namespace"}]}`))

	// The last object goes: the namespace is finalized, and kept for its own finalizer.
	a.MustDo(t, http.StatusOK, http.MethodPatch, doomed+"/held", `{"metadata":{"finalizers":null}}`, "Content-Type", mergePatch)
	a.MustDo(t, http.StatusNotFound, http.MethodGet, doomed+"/held", "")
	ns := wantMarked(t, a.Do(t, http.MethodGet, nsPath, ""), "Namespace", "example.com/keep")
	if len(ns.Spec.Finalizers) != 0 || ns.Status.Phase != "Terminating" {
		t.Errorf("finalized namespace: %+v", ns)
	}
	a.MustDo(t, http.StatusOK, http.MethodPatch, nsPath, `{"metadata":{"finalizers":null}}`, "Content-Type", mergePatch)
	a.MustDo(t, http.StatusNotFound, http.MethodGet, nsPath, "")
}

// uidOfPath returns the uid of the object at path.
func (a *testAPI) uidOfPath(tb testing.TB, path string) string {
	tb.Helper()
	r := a.Do(tb, http.MethodGet, path, "")
	WantCode(tb, r, http.StatusOK)
	return uidOf(tb, r.Body)
}

// waitCode waits up to five seconds for a GET of path to answer code: the garbage collector
// works after the API's answer, as in a cluster.
func (a *testAPI) waitCode(tb testing.TB, path string, code int) response {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := a.Do(tb, http.MethodGet, path, "")
		if r.Code == code {
			return r
		}
		if time.Now().After(deadline) {
			tb.Fatalf("GET %s: %d, want %d: %s", path, r.Code, code, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ownedLease is a lease with one owner reference.
func ownedLease(name, ownerAPIVersion, ownerKind, ownerName, ownerUID string, block bool, finalizers ...string) string {
	fins, _ := json.Marshal(finalizers)
	return `{"metadata":{"name":"` + name + `","finalizers":` + string(fins) + `,"ownerReferences":[{"apiVersion":"` + ownerAPIVersion + `","kind":"` + ownerKind +
		`","name":"` + ownerName + `","uid":"` + ownerUID + `","blockOwnerDeletion":` + map[bool]string{true: "true", false: "false"}[block] + `}]},"spec":{}}`
}

// gcFamily makes a LeaseCandidate owning the lease "child", which owns the lease "grandchild".
func gcFamily(tb testing.TB, a *testAPI, childFinalizers ...string) (ownerUID string) {
	tb.Helper()
	a.MustCreate(tb, candidatesPath, candidateJSON)
	ownerUID = a.uidOfPath(tb, candidatesPath+"/sample-candidate")
	a.MustCreate(tb, leasesPath, ownedLease("child", "coordination.k8s.io/v1beta1", "LeaseCandidate", "sample-candidate", ownerUID, true, childFinalizers...))
	childUID := a.uidOfPath(tb, leasesPath+"/child")
	a.MustCreate(tb, leasesPath, ownedLease("grandchild", "coordination.k8s.io/v1", "Lease", "child", childUID, true))
	return ownerUID
}

// TestPropagationBackground: a delete without a policy removes the owner at once and its
// dependents after, all the way down (issue 21, item 2).
func TestPropagationBackground(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	gcFamily(t, a)
	r := a.Do(t, http.MethodDelete, candidatesPath+"/sample-candidate", `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}`, "Content-Type", "application/json")
	WantCode(t, r, http.StatusOK)
	if st := decodeStatus(t, r.Body); st.Status != "Success" {
		t.Fatalf("background delete answered %s", r.Body)
	}
	a.waitCode(t, leasesPath+"/child", http.StatusNotFound)
	a.waitCode(t, leasesPath+"/grandchild", http.StatusNotFound)

	// An object whose owner does not exist is collected too.
	a.MustCreate(t, leasesPath, ownedLease("dangling", "coordination.k8s.io/v1", "Lease", "ghost", "00000000-0000-0000-0000-000000000000", false))
	a.waitCode(t, leasesPath+"/dangling", http.StatusNotFound)
}

// TestPropagationForeground: propagationPolicy=Foreground answers with the owner marked and
// carrying the foregroundDeletion finalizer; its dependents go first, and a dependent that
// blocks its owner's deletion and is kept by a finalizer keeps the owner too (issue 21, item 2).
func TestPropagationForeground(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	gcFamily(t, a, "example.com/keep")
	r := a.Do(t, http.MethodDelete, candidatesPath+"/sample-candidate?propagationPolicy=Foreground", "")
	wantMarked(t, r, "LeaseCandidate", "foregroundDeletion")
	// The child, which has a dependent, went in the foreground too: once the grandchild is
	// gone, it loses its foregroundDeletion finalizer and waits for its own.
	a.waitCode(t, leasesPath+"/grandchild", http.StatusNotFound)
	wantMarked(t, a.waitCode(t, leasesPath+"/child", http.StatusOK), "Lease", "example.com/keep")
	wantMarked(t, a.Do(t, http.MethodGet, candidatesPath+"/sample-candidate", ""), "LeaseCandidate", "foregroundDeletion")

	// The child's own finalizer goes: the child, then the owner, go.
	a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/child", `[{"op":"remove","path":"/metadata/finalizers/0"}]`, "Content-Type", "application/json-patch+json")
	a.waitCode(t, leasesPath+"/child", http.StatusNotFound)
	a.waitCode(t, candidatesPath+"/sample-candidate", http.StatusNotFound)
}

// TestPropagationOrphan: propagationPolicy=Orphan, and the older orphanDependents=true, answer
// with the owner marked and carrying the orphan finalizer; the dependents stay, without their
// reference to it, and the owner goes (issue 21, item 2).
func TestPropagationOrphan(t *testing.T) {
	t.Parallel()
	for _, query := range []string{"?propagationPolicy=Orphan", "?orphanDependents=true"} {
		t.Run(query, func(t *testing.T) {
			a := MustStartAPI(t, sqlite.Options{})
			gcFamily(t, a)
			wantMarked(t, a.Do(t, http.MethodDelete, candidatesPath+"/sample-candidate"+query, ""), "LeaseCandidate", "orphan")
			a.waitCode(t, candidatesPath+"/sample-candidate", http.StatusNotFound)
			child := a.waitCode(t, leasesPath+"/child", http.StatusOK)
			if strings.Contains(string(child.Body), "ownerReferences") {
				t.Errorf("orphaned child keeps its owner: %s", child.Body)
			}
			a.MustDo(t, http.StatusOK, http.MethodGet, leasesPath+"/grandchild", "")
		})
	}
	// orphanDependents=false on an object kept for its finalizers: 202, as the real handler.
	b := MustStartAPI(t, sqlite.Options{})
	b.MustCreate(t, leasesPath, `{"metadata":{"name":"old-client","finalizers":["example.com/keep"]},"spec":{}}`)
	r := b.Do(t, http.MethodDelete, leasesPath+"/old-client?orphanDependents=false", "")
	WantCode(t, r, http.StatusAccepted)
	if d := decodeDeleting(t, r.Body); d.Kind != "Lease" || d.Metadata.DeletionTimestamp == nil {
		t.Errorf("202 answered %s", r.Body)
	}
	// A dry run of a foreground delete answers as the delete would and changes nothing.
	b.MustCreate(t, leasesPath, leaseWithLabel("dry", "app", "x"))
	wantMarked(t, b.Do(t, http.MethodDelete, leasesPath+"/dry?propagationPolicy=Foreground&dryRun=All", ""), "Lease", "foregroundDeletion")
	if d := decodeDeleting(t, b.Do(t, http.MethodGet, leasesPath+"/dry", "").Body); d.Metadata.DeletionTimestamp != nil || len(d.Metadata.Finalizers) != 0 {
		t.Errorf("dry run wrote: %+v", d.Metadata)
	}

	// Both at once are refused, as the real server's validation does.
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseWithLabel("both", "app", "x"))
	a.MustDo(t, http.StatusUnprocessableEntity, http.MethodDelete, leasesPath+"/both?orphanDependents=true&propagationPolicy=Orphan", "")
}
