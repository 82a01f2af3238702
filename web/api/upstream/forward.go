package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/status"
)

// Forwarder sends the API requests leaselab forwards to the cluster, with the kubeconfig's
// credentials, and answers every other API path 404. It runs after leaselab's own
// authentication and authorization: what a participant may do is decided before the cluster
// sees the request, which carries the kubeconfig's identity and nothing of the participant's.
type Forwarder struct {
	log     *slog.Logger
	cluster Cluster
	base    *url.URL
	rt      http.RoundTripper
	// ctx is the forwarder's lifetime: bridged WebSocket watches end with it (Close).
	ctx    context.Context
	cancel context.CancelFunc
	// mirror, once started, says whether the cluster serves LeaseCandidates: when it does not,
	// their paths are answered 404 here with the reason, as the cluster would answer them
	// without it. Nil in tests.
	mirror *Mirror
}

// New returns the forwarder of the API requests to cluster and the mirror of its objects into
// st: one cluster seen both ways. The forwarder answers the LeaseCandidates' paths itself when
// the mirror found that the cluster does not serve them (Mirror.CandidatesUnserved), so the
// mirror is started (Start) before the forwarder serves. It fails when the kubeconfig's
// credentials cannot be loaded (a client certificate file that is missing, say).
func New(logger *slog.Logger, cluster Cluster, st store.Interface) (*Forwarder, *Mirror, error) {
	if logger == nil {
		logger = slog.Default()
	}
	f, err := newForwarder(logger, cluster)
	if err != nil {
		return nil, nil, err
	}
	m, err := newMirror(logger, cluster, st)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	f.mirror = m
	return f, m, nil
}

// candidatesUnserved is why the cluster serves no LeaseCandidates, "" when it does.
func (f *Forwarder) candidatesUnserved() string {
	if f.mirror == nil {
		return ""
	}
	return f.mirror.CandidatesUnserved()
}

// candidatesPath says whether a request is for coordination.k8s.io/v1beta1, the version of
// LeaseCandidates leaselab's candidates use, or its discovery.
func candidatesPath(r *http.Request, ri request.Info) bool {
	if ri.IsResourceRequest {
		return ri.Group == "coordination.k8s.io" && ri.Version == "v1beta1"
	}
	return r.URL.Path == "/apis/coordination.k8s.io/v1beta1" || r.URL.Path == "/openapi/v3/apis/coordination.k8s.io/v1beta1"
}

// newForwarder returns a Forwarder to cluster, which lives until Close. It fails when the
// kubeconfig's credentials cannot be loaded.
func newForwarder(logger *slog.Logger, cluster Cluster) (*Forwarder, error) {
	base, err := cluster.baseURL()
	if err != nil {
		return nil, err
	}
	rt, err := rest.TransportFor(cluster.REST)
	if err != nil {
		return nil, fmt.Errorf("upstream credentials: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Forwarder{log: logger, cluster: cluster, base: base, rt: rt, ctx: ctx, cancel: cancel}, nil
}

// Close ends the WebSocket watches the forwarder bridges; it does not wait for them, which end
// as their next read or write fails. The server closes it as it shuts down.
func (f *Forwarder) Close() { f.cancel() }

// apiPath says whether a path belongs to the Kubernetes API.
func apiPath(p string) bool {
	return p == "/api" || p == "/apis" || p == "/version" || p == "/openapi" ||
		strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/apis/") ||
		strings.HasPrefix(p, "/version/") || strings.HasPrefix(p, "/openapi/")
}

// Middleware forwards the API requests that are not the screens' reads of the mirror
// (MirrorPrefix); it passes every other request on.
func (f *Forwarder) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if mirrorRead(r.Context()) || !apiPath(r.URL.Path) {
			return next(c)
		}
		ri := request.InfoOf(r)
		if err := f.admit(r, ri); err != nil {
			status.Write(c.Response(), r, err, status.Filter)
			return nil
		}
		if ri.Verb == "watch" && isWebSocketUpgrade(r) {
			f.bridgeWatch(c.Response(), r)
			return nil
		}
		f.forward(c.Response(), r, ri)
		return nil
	}
}

// forwardedGroups are the resources forwarded, by API group.
var forwardedGroups = map[string][]string{
	"coordination.k8s.io": {"leases", "leasecandidates"},
	"":                    {"namespaces", "events"},
	"events.k8s.io":       {"events"},
}

// discoveryPath says whether a non-resource path is discovery or OpenAPI that kubectl and
// client-go need for the forwarded resources.
func discoveryPath(p string) bool {
	switch p {
	case "/version", "/api", "/api/v1", "/apis", "/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1":
		return true
	}
	for _, prefix := range []string{"/apis/", "/openapi/v3/apis/"} {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		group, version, _ := strings.Cut(rest, "/")
		if _, ok := forwardedGroups[group]; ok && group != "" && !strings.Contains(version, "/") {
			return true
		}
	}
	return false
}

// errNotForwarded is the 404 of a path leaselab does not forward, as kube-apiserver words
// an unknown path, with what is forwarded.
func errNotForwarded() error {
	return status.New(http.StatusNotFound, metav1.StatusReasonNotFound,
		"the server could not find the requested resource (leaselab in front of a cluster forwards only Leases, LeaseCandidates, Namespaces, Events and their discovery)", nil)
}

// admit decides whether a request is forwarded: a path on the allow-list, within --namespaces.
// It returns the Status error to answer instead.
func (f *Forwarder) admit(r *http.Request, ri request.Info) error {
	if why := f.candidatesUnserved(); why != "" && candidatesPath(r, ri) {
		return status.New(http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource: "+why, nil)
	}
	if !ri.IsResourceRequest {
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && discoveryPath(r.URL.Path) {
			return nil
		}
		return errNotForwarded()
	}
	resources, ok := forwardedGroups[ri.Group]
	if !ok || ri.Subresource != "" || !contains(resources, ri.Resource) {
		return errNotForwarded()
	}
	if len(f.cluster.Namespaces) == 0 {
		return nil
	}
	gr := schema.GroupResource{Group: ri.Group, Resource: ri.Resource}
	if ri.Group == "" && ri.Resource == "namespaces" {
		switch {
		case ri.Name != "" && !f.cluster.allows(ri.Name):
			return apierrors.NewForbidden(gr, ri.Name, fmt.Errorf("leaselab forwards only the namespaces %s (--namespaces)", f.cluster.namespaceList()))
		case ri.Name == "" && ri.Verb != "list" && ri.Verb != "watch":
			return apierrors.NewForbidden(gr, "", fmt.Errorf("leaselab forwards only the namespaces %s (--namespaces): it does not %s namespaces", f.cluster.namespaceList(), ri.Verb))
		}
		return nil
	}
	if ri.Namespace == "" {
		return apierrors.NewForbidden(gr, ri.Name, fmt.Errorf("leaselab forwards only the namespaces %s (--namespaces): %s %s in one of them", f.cluster.namespaceList(), ri.Verb, ri.Resource))
	}
	if !f.cluster.allows(ri.Namespace) {
		return apierrors.NewForbidden(gr, ri.Name, fmt.Errorf("leaselab forwards only the namespaces %s (--namespaces), not %q", f.cluster.namespaceList(), ri.Namespace))
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// forwardedHeaders are the request headers the cluster gets; everything else stays here: the
// participant's Authorization and cookies, impersonation, hop-by-hop headers.
var forwardedHeaders = []string{"Accept", "Content-Type", "User-Agent"}

// upstreamRequest is r addressed to the cluster, with the forwarded headers only.
func (f *Forwarder) upstreamRequest(ctx context.Context, r *http.Request, body bool) (*http.Request, error) {
	u := *f.base
	u.Path = f.base.Path + r.URL.Path
	u.RawPath = ""
	if r.URL.RawPath != "" {
		u.RawPath = f.base.EscapedPath() + r.URL.RawPath
	}
	u.RawQuery = r.URL.RawQuery
	var b io.Reader
	if body && r.Body != nil && r.ContentLength != 0 {
		b = r.Body
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, u.String(), b)
	if err != nil {
		return nil, err
	}
	if b != nil {
		out.ContentLength = r.ContentLength
	}
	for _, h := range forwardedHeaders {
		if v := r.Header.Values(h); len(v) > 0 {
			out.Header[h] = v
		}
	}
	if _, ok := r.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = []string{""}
	}
	return out, nil
}

// hopHeaders are response headers that belong to one connection, or that the server must not
// pass on from the cluster.
var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Set-Cookie": true,
	"Content-Length": true,
}

// forward sends r to the cluster and streams the answer back, flushing as it comes (watches).
func (f *Forwarder) forward(w http.ResponseWriter, r *http.Request, ri request.Info) {
	out, err := f.upstreamRequest(r.Context(), r, true)
	if err != nil {
		status.Write(w, r, status.Internal(err.Error()), status.Filter)
		return
	}
	resp, err := f.rt.RoundTrip(out)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client left
		}
		status.Write(w, r, f.unreachable(err), status.Filter)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		status.Write(w, r, f.refused(resp.StatusCode, ri, resp.Header.Get("Content-Type"), b), status.Filter)
		return
	}
	for k, v := range resp.Header {
		if !hopHeaders[http.CanonicalHeaderKey(k)] {
			w.Header()[k] = v
		}
	}
	if resp.ContentLength >= 0 {
		w.Header().Set("Content-Length", fmt.Sprint(resp.ContentLength))
	}
	w.WriteHeader(resp.StatusCode)
	if r.Method == http.MethodHead {
		return
	}
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil && resp.ContentLength < 0 {
				flusher.Flush()
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && r.Context().Err() == nil {
				f.log.Debug("upstream answer cut", slog.String("path", r.URL.Path), slog.Any("error", err))
			}
			return
		}
	}
}

// unreachable is the 503 of a request the cluster did not answer.
func (f *Forwarder) unreachable(err error) error {
	return status.New(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable,
		fmt.Sprintf("the cluster at %s is unreachable: %v (leaselab forwards this request to the cluster of --upstream-kubeconfig)", f.cluster.Server(), unwrapURLError(err)), nil)
}

// unwrapURLError drops the method and URL net/http puts before a transport's error.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// statusCodecs decode the cluster's Status answers, JSON or protobuf.
var statusCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s)
}()

// refused turns the cluster's 401 or 403 into an answer that says who was refused: the
// kubeconfig's identity, not the participant (leaselab already allowed the request), and which
// verb on which resource the identity needs.
func (f *Forwarder) refused(code int, ri request.Info, contentType string, body []byte) error {
	msg := ""
	var details *metav1.StatusDetails
	if obj, _, err := statusCodecs.UniversalDeserializer().Decode(body, nil, nil); err == nil {
		if st, ok := obj.(*metav1.Status); ok {
			msg, details = st.Message, st.Details
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(body))
	}
	if code == http.StatusUnauthorized {
		return status.New(http.StatusUnauthorized, metav1.StatusReasonUnauthorized,
			fmt.Sprintf("the cluster at %s does not accept the credentials of --upstream-kubeconfig (user %q): %s", f.cluster.Server(), f.cluster.User, msg), nil)
	}
	need := ""
	if ri.IsResourceRequest {
		gr := schema.GroupResource{Group: ri.Group, Resource: ri.Resource}
		need = fmt.Sprintf("; it needs the verb %q on the resource %q", ri.Verb, gr.String())
		if ri.Namespace != "" {
			need += fmt.Sprintf(" in the namespace %q", ri.Namespace)
		}
		need += " (see docs/operations.md, RBAC, for leaselab's identity)"
	}
	return status.New(http.StatusForbidden, metav1.StatusReasonForbidden,
		fmt.Sprintf("the cluster at %s refused leaselab's identity (kubeconfig user %q)%s: %s", f.cluster.Server(), f.cluster.User, need, msg), details)
}

func isWebSocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

// wsWriteTimeout bounds each message a bridged watch writes to a browser.
const wsWriteTimeout = 10 * time.Second

// bridgeWatch serves a browser's WebSocket watch from the cluster's chunked watch: one event
// per message, as leaselab's own watches send them. The cluster is asked first, so that its
// refusal is an HTTP answer rather than a socket that opens and closes.
func (f *Forwarder) bridgeWatch(w http.ResponseWriter, r *http.Request) {
	// The stream lives with the server, not with the request, whose connection is hijacked.
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	out, err := f.upstreamRequest(ctx, r, false)
	if err != nil {
		status.Write(w, r, status.Internal(err.Error()), status.Filter)
		return
	}
	out.Method = http.MethodGet
	out.Header.Set("Accept", "application/json")
	resp, err := f.rt.RoundTrip(out)
	if err != nil {
		status.Write(w, r, f.unreachable(err), status.Filter)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
			status.Write(w, r, f.refused(resp.StatusCode, request.InfoOf(r), resp.Header.Get("Content-Type"), b), status.Filter)
			return
		}
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		w.Write(b)
		return
	}
	var protocols []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			if p = strings.TrimSpace(p); p != "" && !strings.HasPrefix(p, "base64url.bearer.authorization.k8s.io.") {
				protocols = append(protocols, p)
			}
		}
	}
	// Browsers always send Origin; Accept checks that it is this server.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled, Subprotocols: protocols})
	if err != nil {
		f.log.Debug("websocket refused", slog.String("path", r.URL.Path), slog.Any("error", err))
		return
	}
	conn.SetReadLimit(64 << 10)
	// Anything the browser sends is dropped; reading notices it closing.
	readCtx := conn.CloseRead(ctx)
	go func() {
		<-readCtx.Done()
		cancel()
	}()
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for {
		var ev json.RawMessage
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() == nil && !errors.Is(err, io.EOF) {
				f.log.Debug("upstream watch ended", slog.String("path", r.URL.Path), slog.Any("error", err))
			}
			conn.Close(websocket.StatusNormalClosure, "")
			return
		}
		wctx, wcancel := context.WithTimeout(ctx, wsWriteTimeout)
		err := conn.Write(wctx, websocket.MessageText, ev)
		wcancel()
		if err != nil {
			conn.CloseNow()
			return
		}
	}
}
