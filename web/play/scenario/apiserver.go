package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// apiServer is a run's own way to the API server, in the run's namespace: the run's requests,
// not a member's, so no fault of a member's touches them.
type apiServer struct {
	ctx       context.Context
	transport http.RoundTripper
	baseURL   string
	namespace string
}

// call makes one request and returns the status code and the body.
func (a apiServer) call(method, path, body string) (int, string, error) {
	return call(a.ctx, a.transport, a.baseURL, method, path, body)
}

// ensureNamespace creates the run's namespace, labelled with its scenario, when it is missing.
func (a apiServer) ensureNamespace(scenario string) error {
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"labels":{"leaselab.dev/scenario":%q}}}`, a.namespace, scenario)
	code, msg, err := a.call(http.MethodPost, "/api/v1/namespaces", body)
	if err != nil {
		return fmt.Errorf("create namespace %s: %w", a.namespace, err)
	}
	if code != http.StatusCreated && code != http.StatusOK && code != http.StatusConflict {
		return fmt.Errorf("create namespace %s: %d %s", a.namespace, code, msg)
	}
	return nil
}

// getLease reads the Lease called name; nil when there is none.
func (a apiServer) getLease(name string) (*coordinationv1.Lease, error) {
	code, body, err := a.call(http.MethodGet, leasePath(a.namespace, name), "")
	if err != nil {
		return nil, err
	}
	switch code {
	case http.StatusNotFound:
		return nil, nil
	case http.StatusOK:
	default:
		return nil, fmt.Errorf("get lease: %d %s", code, body)
	}
	var l coordinationv1.Lease
	if err := json.Unmarshal([]byte(body), &l); err != nil {
		return nil, fmt.Errorf("decode lease: %w", err)
	}
	return &l, nil
}
