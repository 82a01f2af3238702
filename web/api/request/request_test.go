package request

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestParse(t *testing.T) {
	const leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
	for _, tc := range []struct {
		method, target string
		want           Info
	}{
		{http.MethodGet, leases + "?watch=yes", Info{Verb: "watch", Group: "coordination.k8s.io", Version: "v1", Namespace: "default", Resource: "leases"}},
		{http.MethodGet, leases + "?watch=", Info{Verb: "watch", Group: "coordination.k8s.io", Version: "v1", Namespace: "default", Resource: "leases"}},
		{http.MethodGet, leases + "?watch=FALSE", Info{Verb: "list", Group: "coordination.k8s.io", Version: "v1", Namespace: "default", Resource: "leases"}},
		{http.MethodGet, leases + "?watch=0", Info{Verb: "list", Group: "coordination.k8s.io", Version: "v1", Namespace: "default", Resource: "leases"}},
		{http.MethodGet, leases + "/a?watch=true", Info{Verb: "get", Group: "coordination.k8s.io", Version: "v1", Namespace: "default", Resource: "leases", Name: "a"}},
		{http.MethodHead, leases + "/a", Info{Verb: "get", Group: "coordination.k8s.io", Version: "v1", Namespace: "default", Resource: "leases", Name: "a"}},
		{http.MethodDelete, leases, Info{Verb: "deletecollection", Group: "coordination.k8s.io", Version: "v1", Namespace: "default", Resource: "leases"}},
		{http.MethodDelete, leases + "/a", Info{Verb: "delete", Group: "coordination.k8s.io", Version: "v1", Namespace: "default", Resource: "leases", Name: "a"}},
		{http.MethodPost, "/api/v1/namespaces", Info{Verb: "create", Version: "v1", Resource: "namespaces"}},
		{http.MethodPut, "/api/v1/namespaces/x", Info{Verb: "update", Version: "v1", Resource: "namespaces", Name: "x"}},
		{http.MethodPatch, leases + "/a/status", Info{Verb: "patch", Group: "coordination.k8s.io", Version: "v1", Namespace: "default", Resource: "leases", Name: "a", Subresource: "status"}},
		{http.MethodGet, "/apis/coordination.k8s.io/v1/watch/namespaces/default/leases/a", Info{Verb: "watch", Group: "coordination.k8s.io", Version: "v1", Namespace: "default", Resource: "leases", Name: "a", LegacyWatch: true}},
		{http.MethodOptions, leases, Info{Verb: "", Group: "coordination.k8s.io", Version: "v1", Namespace: "default", Resource: "leases"}},
	} {
		got := Parse(httptest.NewRequest(tc.method, tc.target, nil))
		tc.want.IsResourceRequest = true
		tc.want.Path = got.Path
		if got != tc.want {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tc.method, tc.target, got, tc.want)
		}
	}
	for _, target := range []string{"/", "/healthz", "/api", "/api/v1", "/apis/coordination.k8s.io", "/apis/coordination.k8s.io/v1", "/apis/coordination.k8s.io/v1/watch", "/openapi/v2"} {
		got := Parse(httptest.NewRequest(http.MethodPost, target, nil))
		if want := (Info{Path: target, Verb: "post"}); got != want {
			t.Errorf("POST %s: %+v, want %+v", target, got, want)
		}
	}
}

func TestContext(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces", nil)
	if _, ok := InfoFrom(r.Context()); ok {
		t.Fatal("a fresh request carries an Info")
	}
	if got := InfoOf(r); got.Resource != "namespaces" || got.Verb != "list" {
		t.Errorf("InfoOf without the middleware: %+v", got)
	}
	set := Info{IsResourceRequest: true, Resource: "set by the front door"}
	if got := InfoOf(r.WithContext(WithInfo(r.Context(), set))); got != set {
		t.Errorf("InfoOf parsed again: %+v", got)
	}
	if InProcess(context.Background()) || !InProcess(WithInProcess(context.Background())) {
		t.Error("InProcess does not follow WithInProcess")
	}
}
