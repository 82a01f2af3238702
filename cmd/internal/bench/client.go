package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

const (
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
	// acceptLease is what client-go's typed clients send: protobuf, JSON as the fallback.
	acceptLease = mediaProtobuf + ", application/json"
)

// leaseGVK is written into every Lease the client sends, as client-go's encoder does.
var leaseGVK = coordinationv1.SchemeGroupVersion.WithKind("Lease")

// leaseClient makes the two requests of client-go's LeaseLock, GET and PUT of one Lease, and
// the watches of the watch workload, on the same wire as client-go's typed client (protobuf bodies in the runtime.Unknown envelope, the
// rest.Config's transport, credentials and User-Agent), without the typed client's generic
// request machinery: the load generator's CPU per renewal is then a small share of the
// machine it shares with the server.
type leaseClient struct {
	hc    *http.Client
	base  string // URL of the namespace's leases collection
	codec *protobuf.Serializer
	// direct, when set, makes each session keep its own plain-HTTP connection (directConn).
	direct    bool
	addr      string // host:port of a direct connection
	userAgent string
	conn      *directConn // of a session
}

// bufs holds request and response buffers.
var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// newLeaseClient returns a client of the leases of namespace. direct lets sessions use their own
// plain-HTTP connections; it is for a local server without TLS or credentials.
func newLeaseClient(cfg *rest.Config, namespace string, direct bool) (*leaseClient, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	host := strings.TrimRight(cfg.Host, "/")
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, err
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &leaseClient{
		addr:      addr,
		hc:        hc,
		base:      host + strings.TrimRight(cfg.APIPath, "/") + "/apis/coordination.k8s.io/v1/namespaces/" + url.PathEscape(namespace) + "/leases/",
		codec:     protobuf.NewSerializer(scheme.Scheme, scheme.Scheme),
		direct:    direct && strings.HasPrefix(host, "http://"),
		userAgent: cfg.UserAgent,
	}, nil
}

// session returns the client for one worker goroutine: with direct set, it has a connection
// of its own. Each worker, like each elector, then makes its requests one after the other on
// one connection.
func (c *leaseClient) session() *leaseClient {
	if !c.direct {
		return c
	}
	s := *c
	s.conn = &directConn{addr: c.addr, userAgent: c.userAgent}
	return &s
}

// get reads a Lease.
func (c *leaseClient) get(ctx context.Context, name string) (*coordinationv1.Lease, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+url.PathEscape(name), nil)
	if err != nil {
		return nil, err
	}
	return c.do(req, name)
}

// update writes l back with its resourceVersion as the precondition; a stale one is a 409.
func (c *leaseClient) update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	buf := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(buf)
	buf.Reset()
	l.TypeMeta = metav1.TypeMeta{APIVersion: leaseGVK.GroupVersion().String(), Kind: leaseGVK.Kind}
	err := c.codec.Encode(l, buf)
	l.TypeMeta = metav1.TypeMeta{}
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.base+url.PathEscape(l.Name), bytes.NewReader(buf.Bytes()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", mediaProtobuf)
	return c.do(req, l.Name)
}

// do sends req and decodes the Lease of a 2xx answer, or turns the Status of any other into
// the *apierrors.StatusError client-go would return.
func (c *leaseClient) do(req *http.Request, name string) (*coordinationv1.Lease, error) {
	req.Header.Set("Accept", acceptLease)
	var resp *http.Response
	var err error
	if c.conn != nil {
		resp, err = c.conn.roundTrip(req)
	} else {
		resp, err = c.hc.Do(req)
	}
	if err != nil {
		return nil, err
	}
	buf := bufs.Get().(*bytes.Buffer)
	defer bufs.Put(buf)
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if c.conn != nil {
		c.conn.done(resp, err)
	}
	if err != nil {
		return nil, err
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.statusError(resp.StatusCode, media, buf.Bytes(), req.Method, name)
	}
	l := &coordinationv1.Lease{}
	switch media {
	case mediaProtobuf:
		if _, _, err := c.codec.Decode(buf.Bytes(), &leaseGVK, l); err != nil {
			return nil, err
		}
	case "application/json":
		if err := json.Unmarshal(buf.Bytes(), l); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s %s: unexpected content type %q", req.Method, req.URL.Path, media)
	}
	l.TypeMeta = metav1.TypeMeta{} // as client-go's typed client returns it
	return l, nil
}

// statusError decodes the metav1.Status of a failed request as client-go does, falling back to
// a generic error for the status code when the body is not one.
func (c *leaseClient) statusError(code int, media string, body []byte, verb, name string) error {
	st := &metav1.Status{}
	var err error
	switch media {
	case mediaProtobuf:
		_, _, err = c.codec.Decode(body, nil, st)
	default:
		err = json.Unmarshal(body, st)
	}
	if err == nil && st.Kind == "Status" || err == nil && st.Code != 0 {
		return &apierrors.StatusError{ErrStatus: *st}
	}
	return apierrors.NewGenericServerResponse(code, verb, coordinationv1.Resource("leases"), name, string(body), 0, true)
}
