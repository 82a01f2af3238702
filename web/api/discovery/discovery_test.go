package discovery

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/yaml"

	"github.com/leaselab/leaselab/web/api/kinds"
)

// What client-go and kubectl send for /api and /apis.
const clientGoAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

const aggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// Bodies recorded from kube-apiserver v1.36.3 (reference samples), byte for byte.
var realServerBodies = map[string]string{
	"/apis/coordination.k8s.io":          `{"kind":"APIGroup","apiVersion":"v1","name":"coordination.k8s.io","versions":[{"groupVersion":"coordination.k8s.io/v1","version":"v1"},{"groupVersion":"coordination.k8s.io/v1beta1","version":"v1beta1"},{"groupVersion":"coordination.k8s.io/v1alpha2","version":"v1alpha2"}],"preferredVersion":{"groupVersion":"coordination.k8s.io/v1","version":"v1"}}`,
	"/apis/coordination.k8s.io/v1":       `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"coordination.k8s.io/v1","resources":[{"name":"leases","singularName":"lease","namespaced":true,"kind":"Lease","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"gqkMMb/YqFM="}]}`,
	"/apis/coordination.k8s.io/v1beta1":  `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"coordination.k8s.io/v1beta1","resources":[{"name":"leasecandidates","singularName":"leasecandidate","namespaced":true,"kind":"LeaseCandidate","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"lvME0iHWE20="}]}`,
	"/apis/coordination.k8s.io/v1alpha2": `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"coordination.k8s.io/v1alpha2","resources":[{"name":"leasecandidates","singularName":"leasecandidate","namespaced":true,"kind":"LeaseCandidate","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"storageVersionHash":"lvME0iHWE20="}]}`,
	// The coordination.k8s.io entry of the real /apis (the only group served here).
	"/apis": `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"coordination.k8s.io","versions":[{"groupVersion":"coordination.k8s.io/v1","version":"v1"},{"groupVersion":"coordination.k8s.io/v1beta1","version":"v1beta1"},{"groupVersion":"coordination.k8s.io/v1alpha2","version":"v1alpha2"}],"preferredVersion":{"groupVersion":"coordination.k8s.io/v1","version":"v1"}}]}`,
	// The real /api/v1 reduced to namespaces and events (storage version hashes computed
	// as the real server does).
	"/api/v1": `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"events","singularName":"event","namespaced":true,"kind":"Event","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["ev"],"storageVersionHash":"r2yiGXH7wu8="},{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["create","delete","get","list","patch","update","watch"],"shortNames":["ns"],"storageVersionHash":"Q3oi5N2YM8M="}]}`,
}

// The coordination.k8s.io item of the real aggregated /apis, and the namespaces and events
// entries of the real aggregated /api.
const (
	realAggregatedAPIs = `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[{"metadata":{"name":"coordination.k8s.io"},"versions":[{"version":"v1","resources":[{"resource":"leases","responseKind":{"group":"","version":"","kind":"Lease"},"scope":"Namespaced","singularResource":"lease","verbs":["create","delete","deletecollection","get","list","patch","update","watch"]}],"freshness":"Current"},{"version":"v1beta1","resources":[{"resource":"leasecandidates","responseKind":{"group":"","version":"","kind":"LeaseCandidate"},"scope":"Namespaced","singularResource":"leasecandidate","verbs":["create","delete","deletecollection","get","list","patch","update","watch"]}],"freshness":"Current"},{"version":"v1alpha2","resources":[{"resource":"leasecandidates","responseKind":{"group":"","version":"","kind":"LeaseCandidate"},"scope":"Namespaced","singularResource":"leasecandidate","verbs":["create","delete","deletecollection","get","list","patch","update","watch"]}],"freshness":"Current"}]}]}`
	realAggregatedAPI  = `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[{"metadata":{},"versions":[{"version":"v1","resources":[{"resource":"events","responseKind":{"group":"","version":"","kind":"Event"},"scope":"Namespaced","singularResource":"event","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["ev"]},{"resource":"namespaces","responseKind":{"group":"","version":"","kind":"Namespace"},"scope":"Cluster","singularResource":"namespace","verbs":["create","delete","get","list","patch","update","watch"],"shortNames":["ns"]}],"freshness":"Current"}]}]}`
)

func TestLegacyDiscoveryMatchesRealServer(t *testing.T) {
	ts := MustServer(t)
	for p, want := range realServerBodies {
		for _, accept := range []string{"application/json", "", clientGoAccept[strings.LastIndex(clientGoAccept, ",")+1:]} {
			resp, body := ts.get(t, p, "Accept", accept)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s (Accept %q): status %d: %s", p, accept, resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("GET %s: Content-Type %q", p, ct)
			}
			if got := string(body); got != want+"\n" {
				t.Errorf("GET %s:\n got %s\nwant %s", p, got, want)
			}
		}
		// The trailing-slash form the OpenAPI documents use works too.
		if resp, _ := ts.get(t, p+"/"); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s/: status %d", p, resp.StatusCode)
		}
	}
}

func TestAPIVersions(t *testing.T) {
	ts := MustServer(t)
	resp, body := ts.get(t, "/api", "Accept", "application/json")
	want := `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"` + ts.host() + `"}]}` + "\n"
	if resp.StatusCode != http.StatusOK || string(body) != want {
		t.Fatalf("GET /api: %d\n got %s\nwant %s", resp.StatusCode, body, want)
	}
}

func TestVersion(t *testing.T) {
	ts := MustServer(t)
	resp, body := ts.get(t, "/version")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /version: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var got version.Info
	if err := json.Unmarshal(body, &got); err != nil || got != testVersion {
		t.Fatalf("GET /version: %+v, %v", got, err)
	}
	if !bytes.HasPrefix(body, []byte("{\n  \"major\": \"1\",\n")) {
		t.Errorf("GET /version is not indented like the real server's: %s", body)
	}
}

func TestAggregatedDiscovery(t *testing.T) {
	ts := MustServer(t)
	for p, want := range map[string]string{"/apis": realAggregatedAPIs, "/api": realAggregatedAPI} {
		resp, body := ts.get(t, p, "Accept", clientGoAccept)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d: %s", p, resp.StatusCode, body)
		}
		if got := string(body); got != want+"\n" {
			t.Errorf("GET %s:\n got %s\nwant %s", p, got, want)
		}
		h := resp.Header
		if h.Get("Content-Type") != aggregatedContentType || h.Get("Vary") != "Accept" || h.Get("Cache-Control") != "public" {
			t.Errorf("GET %s: headers %v", p, h)
		}
		etag := h.Get("ETag")
		if len(etag) != 130 || etag[0] != '"' || strings.ToUpper(etag) != etag {
			t.Fatalf("GET %s: ETag %q is not a quoted upper-case SHA-512", p, etag)
		}
		for _, inm := range []string{etag, `"other", ` + etag, "W/" + etag, "*"} {
			resp, body := ts.get(t, p, "Accept", clientGoAccept, "If-None-Match", inm)
			if resp.StatusCode != http.StatusNotModified || len(body) != 0 || resp.Header.Get("ETag") != etag {
				t.Errorf("GET %s If-None-Match %s: %d %v %q", p, inm, resp.StatusCode, resp.Header, body)
			}
		}
		if resp, _ := ts.get(t, p, "Accept", clientGoAccept, "If-None-Match", `"stale"`); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with a stale ETag: %d", p, resp.StatusCode)
		}
		// The legacy document carries no ETag and is not answered with 304.
		if resp, _ := ts.get(t, p, "Accept", "application/json", "If-None-Match", etag); resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != "" {
			t.Errorf("GET %s legacy: %d %v", p, resp.StatusCode, resp.Header)
		}
	}
}

func TestDiscoveryNegotiation(t *testing.T) {
	ts := MustServer(t)
	for _, tc := range []struct {
		path, accept string
		status       int
		contentType  string
	}{
		{"/apis", aggregatedContentType, 200, aggregatedContentType},
		{"/apis", "application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io", 200, aggregatedContentType},
		{"/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer," + clientGoAccept, 200, aggregatedContentType},
		// v2beta1 is no longer served: the next clause wins, or nothing.
		{"/apis", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", 200, "application/json"},
		{"/apis", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", 406, "application/json"},
		// Quality values order the clauses.
		{"/apis", "application/json;q=0.5," + aggregatedContentType, 200, aggregatedContentType},
		{"/apis", aggregatedContentType + ";q=0.1,application/json", 200, "application/json"},
		{"/apis", aggregatedContentType + ";q=0,application/json", 200, "application/json"},
		// Group and version documents have no aggregated form.
		{"/apis/coordination.k8s.io/v1", aggregatedContentType, 406, "application/json"},
		{"/apis/coordination.k8s.io/v1", aggregatedContentType + ",application/json", 200, "application/json"},
		{"/apis/coordination.k8s.io", "application/yaml", 200, "application/yaml"},
		{"/api/v1", "application/vnd.kubernetes.protobuf, application/json", 200, "application/vnd.kubernetes.protobuf"},
		{"/apis", "*/*", 200, "application/json"},
		{"/apis", "application/*", 200, "application/json"},
		{"/apis", "text/html", 406, "application/json"},
	} {
		resp, body := ts.get(t, tc.path, "Accept", tc.accept)
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.contentType {
			t.Errorf("GET %s Accept %q: %d %q, want %d %q: %.200s", tc.path, tc.accept, resp.StatusCode, resp.Header.Get("Content-Type"), tc.status, tc.contentType, body)
		}
		if tc.status == 406 {
			var status metav1.Status
			if err := json.Unmarshal(body, &status); err != nil || status.Reason != metav1.StatusReasonNotAcceptable || status.Code != 406 || status.Kind != "Status" {
				t.Errorf("GET %s Accept %q: 406 body %s (%v)", tc.path, tc.accept, body, err)
			}
		}
	}
}

func TestDiscoveryYAMLAndProtobuf(t *testing.T) {
	ts := MustServer(t)
	_, body := ts.get(t, "/apis/coordination.k8s.io/v1", "Accept", "application/yaml")
	var list metav1.APIResourceList
	if err := yaml.Unmarshal(body, &list); err != nil || list.GroupVersion != "coordination.k8s.io/v1" || len(list.APIResources) != 1 {
		t.Errorf("yaml: %+v, %v", list, err)
	}

	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	utilruntime.Must(apidiscoveryv2.AddToScheme(scheme))
	decode := func(p, accept string) runtime.Object {
		t.Helper()
		resp, body := ts.get(t, p, "Accept", accept)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/vnd.kubernetes.protobuf") {
			t.Fatalf("GET %s: %d %v", p, resp.StatusCode, resp.Header)
		}
		obj, _, err := protobuf.NewSerializer(scheme, scheme).Decode(body, nil, nil)
		if err != nil {
			t.Fatalf("GET %s: decode protobuf: %v", p, err)
		}
		return obj
	}
	groups, ok := decode("/apis", "application/vnd.kubernetes.protobuf").(*metav1.APIGroupList)
	if !ok || len(groups.Groups) != 1 || groups.Groups[0].PreferredVersion.Version != "v1" {
		t.Errorf("protobuf /apis: %#v", groups)
	}
	core, ok := decode("/api/v1", "application/vnd.kubernetes.protobuf").(*metav1.APIResourceList)
	if !ok || core.GroupVersion != "v1" || len(core.APIResources) != 2 {
		t.Errorf("protobuf /api/v1: %#v", core)
	}
	agg, ok := decode("/apis", "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").(*apidiscoveryv2.APIGroupDiscoveryList)
	if !ok || len(agg.Items) != 1 || agg.Items[0].Name != "coordination.k8s.io" || len(agg.Items[0].Versions) != 3 {
		t.Errorf("protobuf aggregated /apis: %#v", agg)
	}
}

// checkServerResources checks what client-go made of the server's discovery documents.
func checkServerResources(t *testing.T, dc *discovery.DiscoveryClient) {
	t.Helper()
	groups, resources, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("ServerGroupsAndResources: %v", err)
	}
	preferred := map[string]string{}
	for _, g := range groups {
		preferred[g.Name] = g.PreferredVersion.GroupVersion
	}
	if preferred["coordination.k8s.io"] != "coordination.k8s.io/v1" || preferred[""] != "v1" {
		t.Errorf("preferred versions: %v", preferred)
	}
	type res struct {
		kind       string
		namespaced bool
	}
	got := map[string]res{}
	for _, list := range resources {
		for _, r := range list.APIResources {
			got[list.GroupVersion+"/"+r.Name] = res{r.Kind, r.Namespaced}
			if want := allVerbs; r.Name != "namespaces" && !slices.Equal(r.Verbs, want) {
				t.Errorf("%s/%s verbs %v", list.GroupVersion, r.Name, r.Verbs)
			}
		}
	}
	want := map[string]res{
		"coordination.k8s.io/v1/leases":                {"Lease", true},
		"coordination.k8s.io/v1beta1/leasecandidates":  {"LeaseCandidate", true},
		"coordination.k8s.io/v1alpha2/leasecandidates": {"LeaseCandidate", true},
		"v1/namespaces": {"Namespace", false},
		"v1/events":     {"Event", true},
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %+v, want %+v", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("resources %v", got)
	}
	preferredResources, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatalf("ServerPreferredResources: %v", err)
	}
	for _, list := range preferredResources {
		for _, r := range list.APIResources {
			if r.Name == "leasecandidates" && list.GroupVersion != "coordination.k8s.io/v1beta1" {
				t.Errorf("preferred leasecandidates version %s", list.GroupVersion)
			}
		}
	}
}

func TestClientGoAggregatedDiscovery(t *testing.T) {
	ts := MustServer(t)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	checkServerResources(t, dc)
	// Aggregated discovery answered everything: no group version documents were fetched.
	for _, p := range []string{"/api/v1", "/apis/coordination.k8s.io/v1"} {
		if n := len(ts.acceptsFor(p)); n != 0 {
			t.Errorf("%s fetched %d times", p, n)
		}
	}
	if a := ts.acceptsFor("/apis"); len(a) == 0 || !strings.HasPrefix(a[0], aggregatedContentType) {
		t.Errorf("/apis Accept %q", a)
	}
}

func TestClientGoLegacyDiscovery(t *testing.T) {
	ts := MustServer(t)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	dc.UseLegacyDiscovery = true
	checkServerResources(t, dc)
	for _, p := range []string{"/api", "/apis", "/api/v1", "/apis/coordination.k8s.io/v1", "/apis/coordination.k8s.io/v1beta1", "/apis/coordination.k8s.io/v1alpha2"} {
		a := ts.acceptsFor(p)
		if len(a) == 0 || strings.Contains(a[0], "apidiscovery") {
			t.Errorf("%s: Accept %q", p, a)
		}
	}
}

func TestNewRejectsInconsistentKinds(t *testing.T) {
	ks := testKinds()
	dup := *ks[1]
	dup.Versions = []string{"v1alpha2"}
	for name, ks := range map[string][]*kinds.Kind{
		"served twice": append(testKinds(), &dup),
		"no versions":  {{Group: "x", Resource: "xs", Kind: "X"}},
		"unknown type": {{Group: "example.com", Resource: "widgets", Singular: "widget", Kind: "Widget", Versions: []string{"v1"}, Verbs: allVerbs}},
	} {
		if _, err := New(ks, testScheme(), nil, testVersion); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

// The OpenAPI documents are built after New returns; when they cannot be, the discovery
// documents are still served and every OpenAPI request gets a 500 Status saying why.
func TestOpenAPIBuildFailure(t *testing.T) {
	h, err := New(testKinds(), testScheme(), func() (*smdschema.Schema, error) {
		return nil, errors.New("no schema today")
	}, testVersion)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e := echo.New()
	h.Register(e)
	get := func(p string) (int, string) {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		return rec.Code, rec.Body.String()
	}
	if code, _ := get("/apis/coordination.k8s.io/v1"); code != http.StatusOK {
		t.Errorf("discovery: %d", code)
	}
	for _, p := range []string{"/openapi/v2", "/openapi/v3", "/openapi/v3/apis/coordination.k8s.io/v1"} {
		code, body := get(p)
		var st metav1.Status
		if code != http.StatusInternalServerError || json.Unmarshal([]byte(body), &st) != nil ||
			st.Reason != metav1.StatusReasonInternalError || !strings.Contains(st.Message, "no schema today") {
			t.Errorf("%s: %d %s", p, code, body)
		}
	}
}
