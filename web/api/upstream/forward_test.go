package upstream

import (
	"net/http"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/leaselab/leaselab/web/api/request"
)

// TestAdmit: the allow-list and --namespaces decide what reaches the cluster.
func TestAdmit(t *testing.T) {
	all := &Forwarder{cluster: Cluster{REST: &rest.Config{Host: "https://cluster.example"}}}
	some := &Forwarder{cluster: Cluster{REST: &rest.Config{Host: "https://cluster.example"}, Namespaces: []string{"kube-system", "demo"}}}
	for _, tc := range []struct {
		method, path string
		f            *Forwarder
		want         int // 0: forwarded
	}{
		{"GET", "/version", all, 0},
		{"GET", "/apis", all, 0},
		{"GET", "/apis/coordination.k8s.io/v1", all, 0},
		{"GET", "/openapi/v3/apis/coordination.k8s.io/v1", all, 0},
		{"GET", "/apis/apps/v1", all, 404},
		{"GET", "/openapi/v3/apis/apps/v1", all, 404},
		{"POST", "/apis", all, 404},
		{"GET", "/apis/coordination.k8s.io/v1/leases", all, 0},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/x/leases/y", all, 0},
		{"POST", "/apis/coordination.k8s.io/v1beta1/namespaces/x/leasecandidates", all, 0},
		{"GET", "/apis/coordination.k8s.io/v1/watch/namespaces/x/leases", all, 0},
		{"GET", "/api/v1/namespaces/x/events", all, 0},
		{"GET", "/apis/events.k8s.io/v1/namespaces/x/events", all, 0},
		{"GET", "/api/v1/namespaces/x", all, 0},
		{"GET", "/api/v1/pods", all, 404},
		{"GET", "/api/v1/namespaces/x/secrets", all, 404},
		{"PUT", "/api/v1/namespaces/x/finalize", all, 404},
		{"GET", "/apis/apps/v1/namespaces/x/deployments", all, 404},
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/demo/leases", some, 0},
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/other/leases", some, 403},
		{"GET", "/apis/coordination.k8s.io/v1/leases", some, 403},
		{"GET", "/api/v1/namespaces", some, 0},
		{"GET", "/api/v1/namespaces/demo", some, 0},
		{"GET", "/api/v1/namespaces/other", some, 403},
		{"POST", "/api/v1/namespaces", some, 403},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		err := tc.f.admit(r, request.Parse(r))
		code := 0
		if se, ok := err.(apierrors.APIStatus); ok {
			code = int(se.Status().Code)
		} else if err != nil {
			code = http.StatusInternalServerError
		}
		if code != tc.want {
			t.Errorf("%s %s (namespaces %v): %d %v, want %d", tc.method, tc.path, tc.f.cluster.Namespaces, code, err, tc.want)
		}
	}
}
