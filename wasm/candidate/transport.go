package candidate

import (
	"context"
	"errors"
)

// ErrUnreachable is a request that got no answer at all: the server is down, restarting or
// out of reach. The browser's own wording for it ("Failed to fetch", "NetworkError when
// attempting to fetch resource", "Load failed") says nothing to a reader of the decision log.
var ErrUnreachable = errors.New("the server could not be reached")

// Request is one HTTP request as the candidate sends it. The package does not
// use net/http in the browser build: it would triple the download.
type Request struct {
	Method string
	// URL is absolute, e.g. "http://127.0.0.1:8080/apis/...".
	URL    string
	Header map[string]string
	Body   []byte
}

// Response is a complete HTTP response.
type Response struct {
	StatusCode int
	Body       []byte
}

// Transport carries requests: fetch in the browser (FetchTransport), net/http
// natively (HTTPTransport), or an in-process handler in tests
// (candidatetest.HandlerTransport). Network wraps one to inject faults.
type Transport interface {
	// RoundTrip sends req and returns the whole response. A non-2xx status is
	// a Response, not an error; errors are for requests that got no answer.
	// It returns ctx's error once ctx is done.
	RoundTrip(ctx context.Context, req *Request) (*Response, error)
}

// TransportFunc adapts a function to Transport.
type TransportFunc func(ctx context.Context, req *Request) (*Response, error)

// RoundTrip calls f.
func (f TransportFunc) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	return f(ctx, req)
}
