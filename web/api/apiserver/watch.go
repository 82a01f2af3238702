package apiserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/leaselab/leaselab/web/api/apiserver/registry"
	"github.com/leaselab/leaselab/web/api/status"
)

// minRequestTimeout is the real server's default; a watch without timeoutSeconds lasts a random
// time between one and two of these, so that clients reconnect spread out.
const minRequestTimeout = 30 * time.Minute

// initialEventsEnd is the annotation on the bookmark that ends the initial events of a
// watch-list request.
const initialEventsEnd = "k8s.io/initial-events-end"

// wsWriteTimeout bounds every WebSocket write so that a stuck browser cannot hold a watch.
const wsWriteTimeout = 10 * time.Second

// eventSink is where a watch writes its frames: a chunked HTTP response or a WebSocket.
type eventSink interface {
	// send writes one encoded event frame and makes it visible to the client.
	send(frame []byte) error
	// queue writes a frame that a later flush (or send) makes visible: frames of events that
	// arrive together then reach the client in one write.
	queue(frame []byte) error
	flush()
}

type httpSink struct {
	w  io.Writer
	fl http.Flusher
}

func (h *httpSink) send(frame []byte) error {
	if err := h.queue(frame); err != nil {
		return err
	}
	h.flush()
	return nil
}

func (h *httpSink) queue(frame []byte) error {
	_, err := h.w.Write(frame)
	return err
}

func (h *httpSink) flush() { h.fl.Flush() }

type wsSink struct {
	c      *websocket.Conn
	binary bool
	// writing is when the write in progress began (unix nanoseconds), 0 between writes. A
	// watchdog that wakes four times per wsWriteTimeout closes the connection when a write is
	// older than that: two atomic stores per message cost less than arming and stopping a
	// timer, or than a context with a deadline, which the WebSocket library would also watch.
	writing atomic.Int64
	// watchdog is read by its own callback, on the timer's goroutine: atomic, as nothing
	// orders that read after the store in newWSSink.
	watchdog atomic.Pointer[time.Timer]
	closed   atomic.Bool
}

func newWSSink(c *websocket.Conn, binary bool) *wsSink {
	s := &wsSink{c: c, binary: binary}
	s.watchdog.Store(time.AfterFunc(wsWriteTimeout/4, s.check))
	return s
}

// check closes a connection whose write is stuck; else it looks again later.
func (s *wsSink) check() {
	if s.closed.Load() {
		return
	}
	if began := s.writing.Load(); began != 0 && time.Since(time.Unix(0, began)) >= wsWriteTimeout {
		s.c.CloseNow()
		return
	}
	if t := s.watchdog.Load(); t != nil {
		t.Reset(wsWriteTimeout / 4)
	}
}

// close stops the watchdog and ends the connection with a normal closure.
func (s *wsSink) close() {
	s.closed.Store(true)
	if t := s.watchdog.Load(); t != nil {
		t.Stop()
	}
	s.c.Close(websocket.StatusNormalClosure, "")
}

func (s *wsSink) send(frame []byte) error {
	typ := websocket.MessageText
	if s.binary {
		typ = websocket.MessageBinary
	}
	s.writing.Store(time.Now().UnixNano())
	defer s.writing.Store(0)
	return s.c.Write(context.Background(), typ, frame)
}

// queue sends at once: every WebSocket message is its own frame.
func (s *wsSink) queue(frame []byte) error { return s.send(frame) }

func (s *wsSink) flush() {}

// watchServer writes the events of one watch request, as the real server's WatchServer: it
// loops over the registry's watch and encodes each event in the negotiated format and version.
type watchServer struct {
	q       *request
	out     output
	headers bool // table columns still to be sent
	// frame is the key of a shared frame of this watch but for the change's revision and
	// type, built once rather than for every event.
	frame frameKey
}

func (q *request) watch() error {
	opts, err := q.listOptions()
	if err != nil {
		return err
	}
	if q.ri.Name != "" {
		// A watch on one object is a watch with a metadata.name field selector.
		if v, found := opts.FieldSelector.RequiresExactMatch("metadata.name"); found && v != q.ri.Name {
			return apierrors.NewBadRequest("fieldSelector metadata.name doesn't match requested name")
		}
		opts.FieldSelector = fields.AndSelectors(opts.FieldSelector, fields.OneTermEqualSelector("metadata.name", q.ri.Name))
	}
	out, err := q.negotiateWatch()
	if err != nil {
		return err
	}
	timeout := watchTimeout(opts.TimeoutSeconds)
	// The stream ends with the server, the client, or the timeout. A timeout that has already
	// passed still opens the watch (the store is asked under the request's context), and the
	// stream ends as soon as it is open.
	ctx, cancel := context.WithCancel(q.r.Context())
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(q.r.Context(), timeout)
	}
	defer cancel()
	stop := context.AfterFunc(q.s.opts.Context, cancel)
	defer stop()

	w, err := q.objects.Watch(ctx, q.ri.Namespace, opts)
	if err != nil {
		return err
	}
	defer w.Stop()
	// From here on the request is accepted: errors travel as ERROR events.
	sink, done, err := q.openSink(cancel, out)
	if errors.Is(err, errAnswered) {
		return nil
	}
	if err != nil {
		return err
	}
	defer done()
	if timeout < 0 {
		return nil
	}
	ws := &watchServer{q: q, out: out, headers: true,
		frame: frameKey{resource: q.kind.StorageResource(), media: out.info.MediaType, gv: q.gv}}
	ws.serve(sink, w)
	return nil
}

// watchTimeout is how long a watch lasts, as the real server's handleWatch decides it: 0 or no
// timeoutSeconds is a random time between one and two minRequestTimeouts, so that clients
// reconnect spread out; a negative one is not refused, and the watch ends as soon as it opens.
func watchTimeout(seconds *int64) time.Duration {
	if seconds == nil || *seconds == 0 {
		return time.Duration(float64(minRequestTimeout) * (1 + rand.Float64()))
	}
	return time.Duration(*seconds) * time.Second
}

// negotiateWatch picks the format of a watch's events: a stream format, and of the
// conversions only Table and PartialObjectMetadata.
func (q *request) negotiateWatch() (output, error) {
	out, err := q.negotiateOutput(true)
	if err != nil {
		return output{}, err
	}
	if out.as == asPartialObjectMetadataList {
		out.as = asPartialObjectMetadata
	}
	if out.as != asObject && out.as != asTable && out.as != asPartialObjectMetadata {
		return output{}, apierrors.NewBadRequest("unsupported watch conversion " + out.as)
	}
	if out.info.StreamSerializer == nil {
		// YAML has no stream form; the real server does not look further down the Accept list.
		return output{}, status.NotAcceptable(mediaJSON+";stream=watch", mediaProtobuf+";stream=watch")
	}
	return out, nil
}

// serve writes every event of w until it ends or the client is gone. Events that are ready
// together are written before one flush: one write to the connection for all of them.
func (ws *watchServer) serve(sink eventSink, w registry.Watcher) {
	w.Serve(func(ev registry.Event, more bool) error {
		if err := ws.send(sink, ev); err != nil {
			return err
		}
		if !more {
			sink.flush()
		}
		return nil
	})
}

// send writes one event.
func (ws *watchServer) send(sink eventSink, ev registry.Event) error {
	switch ev.Type {
	case watch.Bookmark:
		return ws.sendBookmark(sink, ev.Revision, ev.InitialEnd)
	case watch.Error:
		return ws.write(sink, watch.Error, status.From(ev.Err), schema.GroupVersion{Version: "v1"})
	}
	if ev.Shared() && ws.out.as == asObject {
		return ws.sendShared(sink, ev)
	}
	obj, err := ws.q.objects.EventObject(ev)
	if err != nil {
		return err
	}
	return ws.sendObject(sink, ev.Type, obj)
}

// sendShared writes a change as it is stored: without selectors or conversions a frame depends
// only on the change, the format and the version, and one encoding serves every such watcher.
func (ws *watchServer) sendShared(sink eventSink, ev registry.Event) error {
	q := ws.q
	key := ws.frame
	key.rev, key.typ = ev.Revision, ev.Type
	frame, ok := q.s.frames.Get(key)
	if !ok {
		// Two watchers may encode the same frame at once; the first one stored wins. The
		// decoded object is kept: the writer's next GET of it is usually still to come.
		obj, err := q.objects.EventObject(ev)
		if err != nil {
			return err
		}
		v, err := q.toVersion(obj)
		if err != nil {
			return err
		}
		if frame, err = ws.encodeFrame(ev.Type, v, q.gv); err != nil {
			return err
		}
		frame = q.s.frames.Add(key, frame)
	}
	return sink.queue(frame)
}

// errAnswered says that the client already has its answer: nothing more is to be written.
var errAnswered = errors.New("response already written")

// openSink starts the response: a WebSocket when the client asked for an upgrade, else a
// chunked HTTP response whose header is flushed at once. cancel ends the watch; a WebSocket
// calls it when the client closes. A refused WebSocket handshake returns
// errAnswered (websocket.Accept has written the 403 or 400 itself) or, for more than one offered
// subprotocol, a 400 the caller writes.
func (q *request) openSink(cancel context.CancelFunc, out output) (eventSink, func(), error) {
	if isWebSocketUpgrade(q.r) {
		protocols := offeredSubprotocols(q.r)
		if len(protocols) > 1 {
			// The real server echoes the one subprotocol offered and cannot choose among several.
			return nil, nil, apierrors.NewBadRequest("websocket: more than one subprotocol offered")
		}
		c, err := websocket.Accept(q.w, q.r, &websocket.AcceptOptions{
			// Browsers always send Origin; it must be this server. Non-browser clients send none.
			CompressionMode: websocket.CompressionDisabled,
			Subprotocols:    protocols,
		})
		if err != nil {
			q.s.log.Debug("websocket refused", slog.String("path", q.r.URL.Path), slog.Any("error", err))
			return nil, nil, errAnswered
		}
		c.SetReadLimit(64 << 10)
		// Anything the client sends is read and dropped, as the real server does; the reader also
		// notices the client closing or going away, and that ends the watch. It reads under the
		// server's lifetime, not the watch's timeout, so that a timeout ends the socket with a
		// close frame (done) rather than by dropping the connection.
		go func() {
			defer cancel()
			for {
				_, r, err := c.Reader(q.s.opts.Context)
				if err != nil {
					return
				}
				if _, err := io.Copy(io.Discard, r); err != nil {
					return
				}
			}
		}()
		sink := newWSSink(c, !out.info.EncodesAsText)
		return sink, sink.close, nil
	}
	fl, ok := q.w.(http.Flusher)
	if !ok {
		return nil, nil, registry.InternalError("streaming is not supported by this connection")
	}
	ct := out.info.MediaType
	if out.info.StreamSerializer != nil && !out.info.EncodesAsText {
		ct += ";stream=watch"
	}
	h := q.w.Header()
	h.Set("Content-Type", ct)
	h.Set("Cache-Control", "no-cache, private")
	h.Set("Transfer-Encoding", "chunked")
	q.w.WriteHeader(http.StatusOK)
	fl.Flush()
	return newHTTPSink(q.w, fl), func() {}, nil
}

// newHTTPSink writes to the connection's own response writer under the middleware's (Echo's
// response, whose every Flush builds an http.ResponseController to find it again): the
// status is written and the header flushed, so that nothing the wrappers track changes
// after this, and a watch writes and flushes once per event and watcher.
func newHTTPSink(w http.ResponseWriter, fl http.Flusher) *httpSink {
	inner := w
	for {
		u, ok := inner.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		inner = u.Unwrap()
	}
	if ifl, ok := inner.(http.Flusher); ok && inner != w {
		return &httpSink{w: inner, fl: ifl}
	}
	return &httpSink{w: w, fl: fl}
}

func isWebSocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

// offeredSubprotocols lists the offered subprotocols but the bearer token one, which the real
// server's authenticator removes before the handshake: it echoes the one that is left.
func offeredSubprotocols(r *http.Request) []string {
	var out []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			p = strings.TrimSpace(p)
			if p != "" && !strings.HasPrefix(p, "base64url.bearer.authorization.k8s.io.") {
				out = append(out, p)
			}
		}
	}
	return out
}

// sendObject encodes a storage-version object for the client and writes the event frame.
func (ws *watchServer) sendObject(sink eventSink, typ watch.EventType, obj runtime.Object) error {
	q := ws.q
	var payload runtime.Object
	gv := q.gv
	switch ws.out.as {
	case asTable:
		acc, _ := meta.Accessor(obj)
		t, err := q.table([]runtime.Object{obj}, metav1.ListMeta{ResourceVersion: acc.GetResourceVersion()}, ws.headers, ws.out.metaGV())
		if err != nil {
			return err
		}
		ws.headers = false
		payload, gv = t, ws.out.metaGV()
	case asPartialObjectMetadata:
		pom, err := partialObjectMetadata(obj, ws.out.metaGV())
		if err != nil {
			return err
		}
		payload, gv = pom, ws.out.metaGV()
	default:
		v, err := q.toVersion(obj)
		if err != nil {
			return err
		}
		payload = v
	}
	return ws.write(sink, typ, payload, gv)
}

// sendBookmark sends a BOOKMARK: an empty object of the watched kind carrying only the
// revision up to which the client has seen everything.
func (ws *watchServer) sendBookmark(sink eventSink, rv int64, initialEnd bool) error {
	obj, err := ws.q.s.reg.Scheme.New(ws.q.gv.WithKind(ws.q.kind.Kind))
	if err != nil {
		return err
	}
	acc, _ := meta.Accessor(obj)
	acc.SetResourceVersion(strconv.FormatInt(rv, 10))
	if initialEnd {
		acc.SetAnnotations(map[string]string{initialEventsEnd: "true"})
	}
	return ws.write(sink, watch.Bookmark, obj, ws.q.gv)
}

// write frames one event: the object encoded once in the negotiated format, wrapped in a
// metav1.WatchEvent by the stream serializer of the same format.
func (ws *watchServer) write(sink eventSink, typ watch.EventType, obj runtime.Object, gv schema.GroupVersion) error {
	frame, err := ws.encodeFrame(typ, obj, gv)
	if err != nil {
		return err
	}
	return sink.send(frame)
}

// encodeFrame encodes one event frame into a new slice, which may be shared.
func (ws *watchServer) encodeFrame(typ watch.EventType, obj runtime.Object, gv schema.GroupVersion) ([]byte, error) {
	var objBuf bytes.Buffer
	if err := ws.q.s.reg.Codecs.EncoderForVersion(ws.out.info.Serializer, gv).Encode(obj, &objBuf); err != nil {
		ws.q.s.log.Error("encode watch event", slog.Any("error", err))
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(objBuf.Len() + 64)
	fw := ws.out.info.StreamSerializer.Framer.NewFrameWriter(&buf)
	enc := streaming.NewEncoder(fw, ws.out.info.StreamSerializer.Serializer)
	ev := &metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: objBuf.Bytes()}}
	if err := enc.Encode(ev); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// frameKey identifies an encoded watch frame: one change, in one format and version.
type frameKey struct {
	rev      int64
	resource string
	typ      watch.EventType
	media    string
	gv       schema.GroupVersion
}
