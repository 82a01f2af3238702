// Package inprocess lets code inside the server call the server as any client does, without a
// network: Transport is an http.RoundTripper that serves each request with the server's whole
// handler chain (request info, panics, limits, authentication, authorization, the API) in this
// process, and streams the response back, so that client-go watches and informers work through
// it.
//
// A request made through a Transport carries a trusted identity instead of a token: the user
// the Transport was made for (As), or the signed-in user of the request being served when the
// server calls itself while serving one. It is a context value, which cannot arrive over the
// network: outside clients cannot claim it.
package inprocess

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	"k8s.io/client-go/rest"

	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/api/request"
)

// ErrUpgrade is the error of a request that asks to switch protocols (a WebSocket): an
// in-process response has no connection to hand over.
var ErrUpgrade = errors.New("inprocess: protocol upgrades (WebSocket) are not supported in process")

// Transport serves requests with a handler in this process. It is safe for concurrent use.
type Transport struct {
	handler http.Handler
	user    *auth.User
}

var _ http.RoundTripper = (*Transport)(nil)

// New returns a Transport that serves requests with h, the server's handler chain. Its
// requests carry the identity of the request being served, if any (see As).
func New(h http.Handler) *Transport { return &Transport{handler: h} }

// As returns a Transport whose requests are made as u, trusted by the server's authentication
// without a token.
func (t *Transport) As(u auth.User) *Transport { return &Transport{handler: t.handler, user: &u} }

// Host is the host name of in-process requests in RESTConfig.
const Host = "leaselab.in-process"

// RESTConfig is a client-go configuration whose requests go through t, with userAgent (which
// also names the field manager of writes without one).
func (t *Transport) RESTConfig(userAgent string) *rest.Config {
	return &rest.Config{Host: "http://" + Host, UserAgent: userAgent, Transport: t, QPS: -1}
}

// RoundTrip serves req. It returns once the response's header is written: at once for a
// response the handler completes, at its first flush for a stream (a watch), whose body then
// delivers what each flush makes visible and ends when the handler returns, when the body is
// closed, or when req's context is done. A request that asks for a protocol upgrade fails with
// ErrUpgrade.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Upgrade") != "" {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, ErrUpgrade
	}
	ctx := request.WithInProcess(req.Context())
	if t.user != nil {
		ctx = auth.WithUser(ctx, *t.user)
	}
	sreq := serverRequest(ctx, req)
	w := newResponseWriter(req, sreq.Method == http.MethodHead)
	go t.serve(w, sreq)
	select {
	case <-w.ready:
		if w.err != nil {
			return nil, w.err
		}
		if _, stream := w.resp.Body.(*body); stream {
			// A stream ends for its reader with the request's context, as over a network,
			// even should the handler not notice.
			context.AfterFunc(ctx, func() { w.pr.CloseWithError(ctx.Err()) })
		}
		return w.resp, nil
	case <-ctx.Done():
		w.abandon(ctx.Err())
		return nil, ctx.Err()
	}
}

// serve runs the handler and completes the response. A panic that got past the handler chain
// (http.ErrAbortHandler) fails the request, as a server drops the connection: with a reset
// connection (syscall.ECONNRESET), which client-go counts as such and retries its reads after.
func (t *Transport) serve(w *responseWriter, sreq *http.Request) {
	defer func() {
		if sreq.Body != nil {
			sreq.Body.Close()
		}
	}()
	defer func() {
		v := recover()
		if v == nil {
			w.finish(nil)
			return
		}
		err := fmt.Errorf("inprocess: the handler panicked: %v", v)
		if v == http.ErrAbortHandler {
			err = fmt.Errorf("inprocess: the handler aborted the response: %w", syscall.ECONNRESET)
		}
		w.finish(err)
	}()
	t.handler.ServeHTTP(w, sreq)
}

// serverRequest turns a client's request into the request a server's handler receives.
func serverRequest(ctx context.Context, req *http.Request) *http.Request {
	sreq := req.Clone(ctx)
	sreq.RequestURI = req.URL.RequestURI()
	sreq.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	sreq.RemoteAddr = "in-process"
	sreq.GetBody = nil
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	if sreq.Body != http.NoBody && sreq.ContentLength == 0 {
		sreq.ContentLength = -1 // a client's 0 with a body means unknown
	}
	if _, ok := sreq.Header["User-Agent"]; !ok {
		sreq.Header.Set("User-Agent", "Go-http-client/1.1") // as net/http's Transport sends
	}
	if sreq.ContentLength > 0 && sreq.Header.Get("Content-Length") == "" {
		sreq.Header.Set("Content-Length", fmt.Sprint(sreq.ContentLength))
	}
	sreq.Header.Del("Connection")
	if strings.EqualFold(sreq.Header.Get("Transfer-Encoding"), "chunked") {
		sreq.Header.Del("Transfer-Encoding")
	}
	return sreq
}
