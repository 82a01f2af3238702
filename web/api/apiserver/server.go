// Package apiserver serves the Kubernetes REST surface for the kinds in web/api/kinds on top of a
// store.Interface: get, list, watch, create, update, patch, delete and deletecollection, with the
// content negotiation, errors, options and metadata handling of the real API server. Its
// handlers only speak HTTP: they negotiate, decode, call the kind's registry (package registry,
// which alone reads and writes the store) and encode.
package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/apiserver/registry"
	"github.com/leaselab/leaselab/web/api/apiserver/ring"
	"github.com/leaselab/leaselab/web/api/kinds"
	apirequest "github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/status"
)

// MaxBodyBytes is the largest request body accepted, as the real server's 3 MiB limit.
const MaxBodyBytes = 3 << 20

// watchFrameCacheSize is how many encoded watch frames the server keeps: enough for every
// format and version of the changes a burst of writes produces while watchers catch up.
const watchFrameCacheSize = 4096

// Options configure a Server.
type Options struct {
	// Now is the clock for creationTimestamp and managedFields times; default time.Now.
	Now func() time.Time
	// Context bounds long-running streams (watches): they end when it is done. Default: never.
	Context context.Context
	// BookmarkInterval is how often an idle watch that asked for bookmarks gets one; default 1m.
	BookmarkInterval time.Duration
	// AdmitCreate, when set, is asked after validation before any object is created, whether
	// by POST or by a PUT or apply to a missing name, dry runs included; an error refuses the
	// create and is the response (admission, as the real server's ResourceQuota plugin). An
	// admitted create calls done once it is stored or has failed: admission that counts objects
	// holds back other creates it counts until then.
	AdmitCreate func(ctx context.Context, gr schema.GroupResource, namespace, name string) (done func(), err error)
	// AdmitSize, when set, is asked before a create or an update stores an object of size bytes
	// (as stored, after defaulting and managed fields); an error refuses the write and is the
	// response. Dry runs are not asked: they store nothing.
	AdmitSize func(ctx context.Context, gr schema.GroupResource, namespace, name string, size int) error
	// NoImplicitNamespaces answers a create in a namespace that does not exist with 404, as
	// kube-apiserver does, and creates the namespaces every cluster has (default, kube-system,
	// kube-public, kube-node-lease) at start. By default leaselab creates a namespace the
	// first time something is written in it.
	NoImplicitNamespaces bool
}

// Server answers API requests for the kinds of a registry from a store.
type Server struct {
	log  *slog.Logger
	reg  *kinds.Registry
	opts Options
	// objects is the registry of every kind.
	objects *registry.Registry

	params      runtime.ParameterCodec
	serializers map[string]runtime.SerializerInfo
	frames      *ring.Ring[frameKey, []byte] // encoded watch frames of the latest changes
}

// New returns a Server. The field managers are built in the background: should that fail,
// which only a kind without a schema can cause, writes answer 500 with the reason. The error
// is always nil.
func New(logger *slog.Logger, reg *kinds.Registry, st store.Interface, opts Options) (*Server, error) {
	if opts.Context == nil {
		opts.Context = context.Background()
	}
	s := &Server{
		log:         logger,
		reg:         reg,
		opts:        opts,
		params:      runtime.NewParameterCodec(reg.Scheme),
		serializers: map[string]runtime.SerializerInfo{},
		frames:      ring.New[frameKey, []byte](watchFrameCacheSize),
		objects: registry.New(logger, reg, st, registry.Options{
			Now:                  opts.Now,
			BookmarkInterval:     opts.BookmarkInterval,
			AdmitCreate:          opts.AdmitCreate,
			AdmitSize:            opts.AdmitSize,
			NoImplicitNamespaces: opts.NoImplicitNamespaces,
		}),
	}
	if opts.NoImplicitNamespaces {
		// A store that cannot be written (a replay) serves what it has: not fatal.
		if err := s.objects.CreateSystemNamespaces(opts.Context); err != nil {
			logger.Warn("create system namespaces", slog.Any("error", err))
		}
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	for _, info := range reg.Codecs.SupportedMediaTypes() {
		s.serializers[info.MediaType] = info
	}
	return s, nil
}

func (s *Server) serializer(media string) runtime.SerializerInfo { return s.serializers[media] }

// Register routes every API path under /api and /apis to the server. Exact discovery routes
// registered elsewhere win over these wildcards. Echo's Any takes only the methods Echo knows:
// the other ones (FOO) reach the server through the not-found routes, so that every method
// without a verb gets the same 405 Status, as from kube-apiserver's router.
func (s *Server) Register(e *echo.Echo) {
	h := echo.WrapHandler(http.HandlerFunc(s.ServeHTTP))
	for _, prefix := range []string{"/api/*", "/apis/*"} {
		e.Any(prefix, h)
		e.RouteNotFound(prefix, h)
	}
}

// request is one API request being served.
type request struct {
	scope
	w  http.ResponseWriter
	r  *http.Request
	ri apirequest.Info
}

// scope is what route finds a request is about: the kind and the version of its URL, and
// the kind's registry. It converts objects between that version, storage and lists, as
// k8s.io/apiserver's RequestScope does for its handlers.
type scope struct {
	s    *Server
	kind *kinds.Kind
	gv   schema.GroupVersion // the version of the URL
	// objects is the registry of the kind.
	objects *registry.Store
}

// ServeHTTP serves one API request, as the front door's request info describes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := &request{scope: scope{s: s}, w: w, r: r, ri: apirequest.InfoOf(r)}
	if err := q.route(); err != nil {
		q.fail(err)
		return
	}
	if msg, ok := q.kind.Deprecated[q.ri.Version]; ok {
		q.warn(msg)
	}
	if err := q.serve(); err != nil {
		q.fail(err)
	}
}

// route finds the kind of the request and checks what the real server's router checks before
// a handler runs, in its order: the path, the method, a PATCH's Content-Type, then the Accept
// header.
func (q *request) route() error {
	ri := q.ri
	if !ri.IsResourceRequest {
		return errNotFoundPath()
	}
	q.gv = schema.GroupVersion{Group: ri.Group, Version: ri.Version}
	q.kind = q.s.reg.Lookup(ri.Group, ri.Version, ri.Resource)
	if q.kind == nil || ri.Subresource != "" {
		return errNotFoundPath()
	}
	q.objects = q.s.objects.For(q.kind)
	// The real server's router has no HEAD routes: a known path answers 405 to it.
	if ri.Verb == "" || q.r.Method == http.MethodHead {
		return errMethodNotAllowed()
	}
	if !q.kind.Namespaced && ri.Namespace != "" {
		return errNotFoundPath()
	}
	// The real server's router matches the path first, then the method: a path it has a
	// route for answers 405 to the methods it has no route for, before any other check.
	if q.kind.Namespaced && ri.Namespace == "" {
		switch {
		case ri.Verb == "list" || ri.Verb == "watch" && ri.Name == "":
		case ri.Name == "" || ri.Verb == "create":
			// The list across namespaces is only a GET.
			return errMethodNotAllowed()
		default:
			return errNotFoundPath()
		}
	}
	if !allowedMethod(ri) {
		return errMethodNotAllowed()
	}
	if ri.Verb == "patch" {
		if _, err := patchType(q.r); err != nil {
			return err
		}
	}
	return checkAccept(q.r, ri.Verb == "list" || ri.Verb == "watch")
}

// serve runs the handler of the request's verb.
func (q *request) serve() error {
	switch q.ri.Verb {
	case "create", "update", "patch":
		if err := q.s.objects.WaitFieldManagers(q.r.Context()); err != nil {
			return err
		}
	}
	switch q.ri.Verb {
	case "get":
		return q.get()
	case "list":
		return q.list()
	case "watch":
		return q.watch()
	case "create":
		return q.create()
	case "update":
		return q.update()
	case "patch":
		return q.patch()
	case "delete":
		return q.delete()
	case "deletecollection":
		return q.deleteCollection()
	}
	return nil
}

// allowedMethod reports whether the real server has a route for the request's method on its
// path: a collection takes GET, POST and DELETE; an object GET, PUT, PATCH and DELETE; the
// legacy /watch/ paths only GET.
func allowedMethod(ri apirequest.Info) bool {
	switch {
	case ri.LegacyWatch:
		return ri.Verb == "watch"
	case ri.Name == "":
		return ri.Verb != "update" && ri.Verb != "patch"
	}
	return ri.Verb != "create"
}

// fail answers err as a Status in the format the client accepts (JSON when none is).
func (q *request) fail(err error) {
	code := status.Write(q.w, q.r, err, status.API(q.mediaTypes()))
	if code >= 500 && code != http.StatusServiceUnavailable && code != http.StatusGatewayTimeout {
		q.s.log.Error("request failed", slog.String("method", q.r.Method), slog.String("path", q.r.URL.Path), slog.Any("error", err))
	}
}

// writeObject encodes obj at version gv in the negotiated format.
func (q *request) writeObject(code int, out output, obj runtime.Object, gv schema.GroupVersion) {
	if code == 0 {
		code = http.StatusInternalServerError
	}
	ser := out.info.Serializer
	if out.pretty && out.info.PrettySerializer != nil {
		ser = out.info.PrettySerializer
	}
	var buf bytes.Buffer
	if err := q.s.reg.Codecs.EncoderForVersion(ser, gv).Encode(obj, &buf); err != nil {
		q.s.log.Error("encode response", slog.Any("error", err))
		code = http.StatusInternalServerError
		buf.Reset()
		fmt.Fprintf(&buf, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"code":500}`, "encode response: "+err.Error())
		out.info = q.s.serializer(mediaJSON)
	}
	b := buf.Bytes()
	if out.pretty && out.info.MediaType == mediaJSON {
		b = bytes.TrimRight(b, "\n")
	}
	h := q.w.Header()
	h.Set("Content-Type", out.info.MediaType)
	h.Set("Cache-Control", "no-cache, private")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	q.w.WriteHeader(code)
	if q.r.Method != http.MethodHead {
		q.w.Write(b)
	}
}

// readBody reads the request body, refusing more than MaxBodyBytes with 413.
func (q *request) readBody() ([]byte, error) {
	if q.r.ContentLength > MaxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxBodyBytes))
	}
	b, err := io.ReadAll(io.LimitReader(q.r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest("read request body: " + err.Error())
	}
	if len(b) > MaxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxBodyBytes))
	}
	return b, nil
}

// toVersion converts a storage-version object to the version of the request.
func (q *scope) toVersion(obj runtime.Object) (runtime.Object, error) {
	if q.gv.Version == q.kind.StorageVersion {
		return obj, nil
	}
	return q.s.reg.Convert(obj, q.gv)
}

// toStorage converts an object of the request's version to the storage version.
func (q *scope) toStorage(obj runtime.Object) (runtime.Object, error) {
	if q.gv.Version == q.kind.StorageVersion {
		return obj, nil
	}
	return q.s.reg.Convert(obj, schema.GroupVersion{Group: q.kind.Group, Version: q.kind.StorageVersion})
}

// respond writes a storage-version object in the request's version and format, as a Table or
// PartialObjectMetadata when the client asked for one.
func (q *request) respond(code int, out output, obj runtime.Object) error {
	if out.as != asObject {
		conv, gv, err := q.convertForOutput(out, obj, false)
		if err != nil {
			return err
		}
		q.writeObject(code, out, conv, gv)
		return nil
	}
	v, err := q.toVersion(obj)
	if err != nil {
		return err
	}
	q.writeObject(code, out, v, q.gv)
	return nil
}

// managerName is the field manager of a write: the fieldManager option, or the User-Agent up
// to its first "/", as the real server derives it.
func (q *request) managerName(fieldManager string) string {
	if fieldManager != "" {
		return fieldManager
	}
	ua := q.r.UserAgent()
	for i, c := range ua {
		if c == '/' {
			ua = ua[:i]
			break
		}
	}
	b := make([]rune, 0, len(ua))
	for _, c := range ua {
		if c >= 0x20 && c < 0x7f {
			b = append(b, c)
		}
	}
	if len(b) > 128 {
		b = b[:128]
	}
	return string(b)
}

// fieldManager is the field manager of the request's kind and version. ServeHTTP has waited
// for them to be built before a create, update or patch runs.
func (q *scope) fieldManager() *managedfields.FieldManager {
	return q.objects.FieldManager(q.gv)
}
