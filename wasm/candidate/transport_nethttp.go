//go:build !js

package candidate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
)

// HTTPTransport carries requests with net/http (native builds only).
type HTTPTransport struct {
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
}

var _ Transport = HTTPTransport{}

// RoundTrip sends req with net/http and reads the whole response body (at
// most maxResponseBytes).
func (t HTTPTransport) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	hreq, err := newHTTPRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	hc := t.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// No answer: say so in the words the browser build uses, keeping the cause.
		return nil, fmt.Errorf("%w (%v)", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	return readHTTPResponse(resp)
}

func newHTTPRequest(ctx context.Context, req *Request) (*http.Request, error) {
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.Method, req.URL, body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	for k, v := range req.Header {
		hreq.Header.Set(k, v)
	}
	return hreq, nil
}

func readHTTPResponse(resp *http.Response) (*Response, error) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	return &Response{StatusCode: resp.StatusCode, Body: data}, nil
}

func defaultTransport() Transport { return HTTPTransport{} }
