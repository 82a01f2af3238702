package candidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// maxResponseBytes bounds what the client reads from one response.
const maxResponseBytes = 1 << 20

// Client speaks the Lease subset of the Kubernetes REST API:
// GET, POST and PUT on /apis/coordination.k8s.io/v1/namespaces/{ns}/leases.
type Client struct {
	// BaseURL is the server's scheme and host, e.g. "http://127.0.0.1:8080";
	// in the browser, the page's origin.
	BaseURL string
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token string
	// Transport carries the requests; nil means the platform's default
	// (fetch in the browser, net/http natively).
	Transport Transport
	// Identity, when set, is sent as X-Leaselab-Candidate: the server's stage draws the
	// requests of a candidate that reports them itself (with those that never arrive) once.
	Identity string
}

// APIError is a response with a status code other than the one expected.
// Status is decoded from a metav1.Status body; for other bodies (a plain
// "404 page not found") it is filled from the status code.
type APIError struct {
	StatusCode int
	Status     Status
}

func (e *APIError) Error() string {
	if e.Status.Message != "" {
		return e.Status.Message
	}
	return fmt.Sprintf("server answered %d", e.StatusCode)
}

// Reason returns the Status reason, or the one client-go infers from the code.
func (e *APIError) Reason() string {
	if e.Status.Reason != "" {
		return e.Status.Reason
	}
	switch e.StatusCode {
	case 404:
		return ReasonNotFound
	case 409:
		return ReasonConflict
	}
	return ""
}

// IsNotFound reports whether err is a 404 NotFound API error.
func IsNotFound(err error) bool { return reasonOf(err) == ReasonNotFound }

// IsConflict reports whether err is a 409 Conflict (stale resourceVersion).
func IsConflict(err error) bool { return reasonOf(err) == ReasonConflict }

// IsAlreadyExists reports whether err is a 409 AlreadyExists (create lost).
func IsAlreadyExists(err error) bool { return reasonOf(err) == ReasonAlreadyExists }

func reasonOf(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Reason()
	}
	return ""
}

// LeasePath returns the REST path of a Lease, or of the collection when name
// is empty.
func LeasePath(namespace, name string) string {
	p := "/apis/coordination.k8s.io/v1/namespaces/" + url.PathEscape(namespace) + "/leases"
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// GetLease reads a Lease. It returns an *APIError (IsNotFound) when the Lease
// does not exist, or the transport's error.
func (c *Client) GetLease(ctx context.Context, namespace, name string) (*Lease, error) {
	var out Lease
	if err := c.do(ctx, "GET", LeasePath(namespace, name), nil, 200, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateLease creates l in its namespace and returns the stored object. It
// returns an *APIError (IsAlreadyExists) when the name is taken.
func (c *Client) CreateLease(ctx context.Context, l *Lease) (*Lease, error) {
	var out Lease
	if err := c.do(ctx, "POST", LeasePath(l.Metadata.Namespace, ""), l, 201, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateLease replaces l, guarded by its metadata.resourceVersion, and returns
// the stored object. It returns an *APIError (IsConflict) when the
// resourceVersion is stale.
func (c *Client) UpdateLease(ctx context.Context, l *Lease) (*Lease, error) {
	var out Lease
	if err := c.do(ctx, "PUT", LeasePath(l.Metadata.Namespace, l.Metadata.Name), l, 200, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (c *Client) do(ctx context.Context, method, path string, body any, want int, out any) error {
	req := &Request{
		Method: method,
		URL:    strings.TrimSuffix(c.BaseURL, "/") + path,
		Header: map[string]string{"Accept": "application/json"},
	}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		req.Body = b
		req.Header["Content-Type"] = "application/json"
	}
	if c.Token != "" {
		req.Header["Authorization"] = "Bearer " + c.Token
	}
	if c.Identity != "" {
		req.Header["X-Leaselab-Candidate"] = url.QueryEscape(c.Identity)
	}
	t := c.Transport
	if t == nil {
		t = defaultTransport()
	}
	resp, err := t.RoundTrip(ctx, req)
	if err != nil {
		return unwrapURLError(err)
	}
	if resp.StatusCode != want {
		ae := &APIError{StatusCode: resp.StatusCode}
		var st Status
		if json.Unmarshal(resp.Body, &st) == nil && st.Kind == "Status" {
			ae.Status = st
		} else {
			ae.Status.Message = strings.TrimSpace(string(resp.Body))
			if len(ae.Status.Message) > 200 {
				ae.Status.Message = ae.Status.Message[:200]
			}
		}
		return ae
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}

// unwrapURLError drops net/http's `Get "url": ` prefix so that the decision
// log says what went wrong, not which URL was asked.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
