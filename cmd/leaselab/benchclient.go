package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"google.golang.org/protobuf/encoding/protowire"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/watch"
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

// leaseClient makes the two requests of client-go's LeaseLock, GET and PUT of one Lease, on the
// same wire as client-go's typed client (protobuf bodies in the runtime.Unknown envelope, the
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

// directConn is one worker's HTTP/1.1 connection to a plain-HTTP server: the request is
// written and the response read on the worker's goroutine, where net/http's Transport hands
// each request to a writing and a reading goroutine of the connection; with the load generator
// on the server's cores, those hand-offs are most of its CPU per request. The wire is the same.
// directGrace is how long a direct exchange may outlast its context's deadline.
const directGrace = 5 * time.Second

type directConn struct {
	addr      string
	userAgent string
	conn      net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
}

// roundTrip sends req on the connection, dialling it first if needed, and reads the response
// head. The caller reads the whole body, then calls done.
func (d *directConn) roundTrip(req *http.Request) (*http.Response, error) {
	if d.conn == nil {
		conn, err := (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext(req.Context(), "tcp", d.addr)
		if err != nil {
			return nil, err
		}
		d.conn, d.br, d.bw = conn, bufio.NewReader(conn), bufio.NewWriter(conn)
	}
	// A dead server cannot hold the worker past its context's deadline by more than the grace
	// that lets an exchange in flight at the deadline finish (and be discarded by the caller).
	deadline, ok := req.Context().Deadline()
	if ok {
		deadline = deadline.Add(directGrace)
	}
	d.conn.SetDeadline(deadline)
	if d.userAgent != "" {
		req.Header.Set("User-Agent", d.userAgent)
	}
	err := req.Write(d.bw)
	if err == nil {
		err = d.bw.Flush()
	}
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(d.br, req)
	}
	if err != nil {
		d.close()
		return nil, err
	}
	return resp, nil
}

// done keeps the connection for the next request unless the exchange failed or the server
// closes it.
func (d *directConn) done(resp *http.Response, err error) {
	if err != nil || resp.Close {
		d.close()
	}
}

func (d *directConn) close() {
	if d.conn != nil {
		d.conn.Close()
		d.conn = nil
	}
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

// watchedLease is what the watch workload needs of an event: which write it carries and when
// that write started.
type watchedLease struct {
	revision  int64 // the resourceVersion
	renewTime time.Time
}

func (b *benchRun) watchURL(fromRV string) string {
	q := url.Values{"watch": {"1"}, "resourceVersion": {fromRV}}
	return strings.TrimRight(b.rest.Host, "/") + "/apis/coordination.k8s.io/v1/namespaces/" + b.cfg.namespace + "/leases?" + q.Encode()
}

// watchHTTP follows the namespace over chunked HTTP as client-go's watch does (protobuf frames,
// each a length and a metav1.WatchEvent). The receipt time is taken when a frame has arrived,
// before it is decoded, so that the latency is the server's and the network's, not the time
// this process takes to decode a thousand streams.
func (b *benchRun) watchHTTP(ctx context.Context, fromRV string, ready chan<- struct{}, on func(watchedLease, time.Time)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.watchURL(fromRV), nil)
	if err != nil {
		ready <- struct{}{}
		return err
	}
	req.Header.Set("Accept", mediaProtobuf+";stream=watch")
	resp, err := b.leases.hc.Do(req)
	ready <- struct{}{}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("watch: %s", resp.Status)
	}
	r := bufio.NewReader(resp.Body)
	var frame []byte
	var size [4]byte
	for {
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return err
		}
		frame = slices.Grow(frame[:0], int(binary.BigEndian.Uint32(size[:])))[:binary.BigEndian.Uint32(size[:])]
		if _, err := io.ReadFull(r, frame); err != nil {
			return err
		}
		at := time.Now()
		w, err := scanWatchFrame(frame)
		if err != nil {
			return err
		}
		on(w, at)
	}
}

// protobufMagic starts every object in Kubernetes' protobuf encoding, before the
// runtime.Unknown envelope.
var protobufMagic = []byte("k8s\x00")

// scanWatchFrame reads the revision and renewTime of the Lease in a protobuf watch event
// without decoding the rest (managedFields are most of a Lease): a WatchEvent{1 type, 2 object:
// RawExtension{1 raw}} whose raw is the "k8s\x00" magic and a runtime.Unknown{1 typeMeta{2 kind},
// 2 raw: Lease{1 metadata{6 resourceVersion}, 2 spec{4 renewTime{1 seconds, 2 nanos}}}}.
func scanWatchFrame(frame []byte) (watchedLease, error) {
	var (
		err  error
		path []byte // the message being read, for errors
	)
	field := func(msg []byte, num protowire.Number) []byte {
		if err != nil {
			return nil
		}
		var v []byte
		v, err = protoField(msg, num)
		path = msg
		return v
	}
	typ := field(frame, 1)
	raw := field(field(frame, 2), 1)
	if err == nil && string(typ) == string(watch.Error) {
		return watchedLease{}, fmt.Errorf("watch error event")
	}
	if err == nil && !bytes.HasPrefix(raw, protobufMagic) {
		return watchedLease{}, fmt.Errorf("watch event object is not protobuf")
	}
	obj := raw[min(len(raw), len(protobufMagic)):]
	kind := field(field(obj, 1), 2)
	lease := field(obj, 2)
	rv := field(field(lease, 1), 6)
	renew := field(field(lease, 2), 4)
	if err != nil {
		return watchedLease{}, fmt.Errorf("watch event: %w in % .40x", err, path)
	}
	if string(kind) != leaseGVK.Kind {
		return watchedLease{}, fmt.Errorf("watch event of a %q", kind)
	}
	rev, perr := strconv.ParseInt(string(rv), 10, 64)
	if perr != nil {
		return watchedLease{}, fmt.Errorf("resourceVersion %q: %w", rv, perr)
	}
	w := watchedLease{revision: rev}
	if renew != nil {
		var secs, nanos uint64
		for len(renew) > 0 {
			num, typ, n := protowire.ConsumeTag(renew)
			if n < 0 || typ != protowire.VarintType {
				return watchedLease{}, fmt.Errorf("renewTime: field %d of type %d", num, typ)
			}
			v, m := protowire.ConsumeVarint(renew[n:])
			if m < 0 {
				return watchedLease{}, fmt.Errorf("renewTime: %w", protowire.ParseError(m))
			}
			switch num {
			case 1:
				secs = v
			case 2:
				nanos = v
			}
			renew = renew[n+m:]
		}
		w.renewTime = time.Unix(int64(secs), int64(int32(nanos)))
	}
	return w, nil
}

// protoField returns the last value of the length-delimited field num of a protobuf message
// (nil when absent), skipping every other field.
func protoField(msg []byte, num protowire.Number) ([]byte, error) {
	var found []byte
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		msg = msg[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(msg)
			if l < 0 {
				return nil, protowire.ParseError(l)
			}
			found = v
			msg = msg[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, msg)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		msg = msg[l:]
	}
	return found, nil
}

// watchWebSocket follows the namespace over a WebSocket upgrade of the same watch URL (JSON, one
// event per message, as browsers use it), timing each message on receipt.
func (b *benchRun) watchWebSocket(ctx context.Context, fromRV string, ready chan<- struct{}, on func(watchedLease, time.Time)) error {
	u := b.watchURL(fromRV)
	u = "ws" + strings.TrimPrefix(u, "http")
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: b.leases.hc})
	ready <- struct{}{}
	if err != nil {
		return err
	}
	defer c.CloseNow()
	// Reads run without a context, which would cost a timer per message; closing the
	// connection ends them.
	stop := context.AfterFunc(ctx, func() { c.CloseNow() })
	defer stop()
	c.SetReadLimit(1 << 20)
	var msg bytes.Buffer
	for {
		_, r, err := c.Reader(context.Background())
		if err != nil {
			return err
		}
		msg.Reset()
		if _, err := msg.ReadFrom(r); err != nil {
			return err
		}
		at := time.Now()
		ev, err := scanWatchEvent(msg.Bytes())
		if err != nil {
			return err
		}
		on(ev, at)
	}
}

// scanWatchEvent reads the resourceVersion and renewTime of a JSON watch event of one of the
// workload's leases by scanning for the two fields instead of decoding the whole event: each
// occurs once in such a lease (managedFields name renewTime only as "f:renewTime"), and a full
// decode of every event of a thousand streams would make this process, not the server, the
// bottleneck.
func scanWatchEvent(msg []byte) (watchedLease, error) {
	typ, ok := jsonString(msg, "type")
	if !ok || typ == string(watch.Error) {
		return watchedLease{}, fmt.Errorf("watch event: %.200s", msg)
	}
	var ev watchedLease
	rv, ok := jsonString(msg, "resourceVersion")
	if !ok {
		return watchedLease{}, fmt.Errorf("watch event without a resourceVersion: %.200s", msg)
	}
	rev, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return watchedLease{}, fmt.Errorf("resourceVersion %q: %w", rv, err)
	}
	ev.revision = rev
	if rt, ok := jsonString(msg, "renewTime"); ok {
		t, err := time.Parse(metav1.RFC3339Micro, rt)
		if err != nil {
			return watchedLease{}, fmt.Errorf("renewTime %q: %w", rt, err)
		}
		ev.renewTime = t
	}
	return ev, nil
}

// jsonString returns the value of the first "key":"value" pair in compact JSON, for values
// without escapes.
func jsonString(msg []byte, key string) (string, bool) {
	pat := `"` + key + `":"`
	i := bytes.Index(msg, []byte(pat))
	if i < 0 {
		return "", false
	}
	v := msg[i+len(pat):]
	end := bytes.IndexByte(v, '"')
	if end < 0 || bytes.IndexByte(v[:end], '\\') >= 0 {
		return "", false
	}
	return string(v[:end]), true
}
