// Package front is leaselab's HTTP server without its browser screens: the handler chain every
// request goes through (request info, panics, body limits, authentication) with the Kubernetes
// API, discovery, the health checks and the workshop's pages, and the in-process transport to
// that chain. Package web builds `leaselab serve`'s server on it, the screens added as an
// Extension; web/leasetest serves it alone to tests, which must not carry the screens'
// templates and embedded assets.
package front

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // served only with Config.Profiling
	"runtime/debug"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/apiserver"
	"github.com/leaselab/leaselab/web/api/discovery"
	"github.com/leaselab/leaselab/web/api/inprocess"
	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/selfreview"
	"github.com/leaselab/leaselab/web/api/status"
)

// Config is what the handler chain needs; web.Config carries it for `leaselab serve`.
type Config struct {
	Logger *slog.Logger
	Store  store.Interface
	// Version is served at /version.
	Version version.Info
	// CoordinatedLeaderElection keeps Lease strategy and preferredHolder (the real server's
	// feature gate); leaselab turns it on by default.
	CoordinatedLeaderElection bool
	// Now is the clock for server-set timestamps; default time.Now.
	Now func() time.Time
	// BookmarkInterval is how often idle watches that asked for bookmarks get one.
	BookmarkInterval time.Duration
	// Profiling serves net/http/pprof under /debug/pprof/.
	Profiling bool
	// Auth authenticates, authorizes and limits every request and serves the join link and the
	// workshop page; nil serves everyone everything (loopback only).
	Auth Auth
	// BodyReadTimeout bounds reading a request's body (default one minute): a client that
	// announces a body and never sends it would otherwise hold its connection forever.
	BodyReadTimeout time.Duration
	// OpenAPIOnDemand builds the OpenAPI documents on the first request for them, instead of
	// in the background as the server starts: tests that start many servers and never ask for
	// them save the CPU.
	OpenAPIOnDemand bool
	// NoImplicitNamespaces answers a create in a missing namespace with 404 NotFound, as
	// kube-apiserver does, and creates the system namespaces at start; the zero value creates
	// a namespace the first time something is written in it.
	NoImplicitNamespaces bool
	// Middleware run after authentication, before any route (a replay's read-only guard, the
	// forwarder to a cluster).
	Middleware []echo.MiddlewareFunc
	// Pre run before routing, first of all (the path of the screens' reads of a cluster's
	// mirror).
	Pre []echo.MiddlewareFunc
	// ReadyChecks are readiness checks beyond the store's, by name (/readyz?verbose lists them).
	ReadyChecks []ReadyCheck
}

// ReadyCheck is one readiness check: Check returns why the server is not ready, nil when it is.
type ReadyCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

// Auth is what the server needs of the workshop's authentication (web/api/auth.Auth). It is an
// interface so that a server without one (web/leasetest) does not carry the workshop's pages
// and their templates: reachable html/template execution makes the linker keep every exported
// method of every reachable type, which made a test binary of web/leasetest half again as
// large (79 MiB against 54).
type Auth interface {
	// Middleware authenticates, authorizes and limits each request.
	Middleware(next echo.HandlerFunc) echo.HandlerFunc
	// Register adds the join link and the workshop's pages.
	Register(e *echo.Echo)
	// AdmitCreate and AdmitSize are the limits on creates and object sizes (apiserver.Options).
	AdmitCreate(ctx context.Context, gr schema.GroupResource, namespace, name string) (done func(), err error)
	AdmitSize(ctx context.Context, gr schema.GroupResource, namespace, name string, size int) error
}

// API is the server without its browser screens: the handler chain (request info, panics,
// body limits, authentication) with the Kubernetes API, discovery, the health checks and the
// workshop's pages, and whatever routes the Extensions given to New added. web.New builds the
// whole server on it; web/leasetest serves it alone.
type API struct {
	cfg       Config
	log       *slog.Logger
	st        store.Interface
	reg       *kinds.Registry
	api       *apiserver.Server
	echo      *echo.Echo
	transport *inprocess.Transport

	// ctx ends long-lived streams (watches, WebSockets) at shutdown.
	ctx    context.Context
	cancel context.CancelFunc
}

// An Extension adds routes after the API's own (web.New adds the browser screens'). New calls
// each while it builds the chain, with the API as built so far: an extension may keep the API's
// in-process transport, registry and lifetime for later, but sends nothing through the
// transport, since the chain is not complete until New returns. Echo sizes each pooled request
// context for the path parameters of the routes it has when the context is made; a smaller one
// reused for a later route with more would crash that request. Routes can be added only here,
// so no request is ever served before the last of them.
type Extension func(a *API, e *echo.Echo) error

// New builds the handler chain with the API's routes, then the extensions' in order. The
// server's lifetime starts here: Close ends it (web.Server.Shutdown calls it). It returns the
// first extension's error, the API's lifetime then ended.
func New(cfg Config, extend ...Extension) (*API, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &API{cfg: cfg, log: cfg.Logger, st: cfg.Store, ctx: ctx, cancel: cancel}
	a.reg = kinds.NewRegistry(kinds.Options{CoordinatedLeaderElection: cfg.CoordinatedLeaderElection})
	apiOpts := apiserver.Options{
		Now:                  cfg.Now,
		Context:              ctx,
		BookmarkInterval:     cfg.BookmarkInterval,
		NoImplicitNamespaces: cfg.NoImplicitNamespaces,
	}
	if cfg.Auth != nil {
		apiOpts.AdmitCreate = cfg.Auth.AdmitCreate
		apiOpts.AdmitSize = cfg.Auth.AdmitSize
	}
	var err error
	if a.api, err = apiserver.New(cfg.Logger, a.reg, cfg.Store, apiOpts); err != nil {
		cancel()
		return nil, fmt.Errorf("api server: %w", err)
	}
	disc, err := discovery.New(a.reg.Kinds(), a.reg.Scheme, a.reg.StructuralSchema, cfg.Version)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("discovery: %w", err)
	}
	a.echo = a.chain()
	a.echo.GET("/healthz", a.health(false))
	a.echo.GET("/livez", a.health(false))
	a.echo.GET("/readyz", a.health(true))
	disc.Register(a.echo)
	if a.cfg.Auth == nil {
		selfreview.Register(a.echo, nil) // with tokens, Auth.Register serves them by its rules
	}
	if !cfg.OpenAPIOnDemand {
		go disc.BuildOpenAPI()
	}
	if cfg.Profiling {
		a.echo.Any("/debug/pprof/*", echo.WrapHandler(http.DefaultServeMux))
	}
	a.api.Register(a.echo)
	a.transport = inprocess.New(a.echo)
	for _, ext := range extend {
		if err := ext(a, a.echo); err != nil {
			cancel()
			return nil, err
		}
	}
	return a, nil
}

// chain is the Echo instance with the middleware every request goes through, in order.
func (a *API) chain() *echo.Echo {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = writeError
	for _, m := range a.cfg.Pre {
		e.Pre(m)
	}
	e.Use(a.logRequests)
	e.Use(a.recoverPanics)
	e.Use(withRequestInfo)
	e.Use(limitBodyReads(cmp.Or(a.cfg.BodyReadTimeout, time.Minute)))
	if a.cfg.Auth == nil {
		e.Use(guardOpen)
	} else {
		e.Use(a.cfg.Auth.Middleware)
		a.cfg.Auth.Register(e)
	}
	for _, m := range a.cfg.Middleware {
		e.Use(m)
	}
	return e
}

// Transport is the in-process transport of the whole handler chain (web/api/inprocess): the
// server's own clients call the server through it, without a network or a token.
func (a *API) Transport() *inprocess.Transport { return a.transport }

// Close ends the lifetime New started: every watch and WebSocket stream ends. It does not wait
// for requests in flight.
func (a *API) Close() { a.cancel() }

// Config is the configuration the API was built with, Logger set.
func (a *API) Config() Config { return a.cfg }

// Context ends when Close is called: long-lived streams end with it.
func (a *API) Context() context.Context { return a.ctx }

// Registry is the served kinds.
func (a *API) Registry() *kinds.Registry { return a.reg }

// Handler is the handler chain with every route.
func (a *API) Handler() http.Handler { return a.echo }

// health answers /healthz, /livez and /readyz as the real server does: "ok", or with ?verbose
// the list of checks. Readiness also needs the store to answer.
func (a *API) health(ready bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		checks := []string{"ping"}
		failed := ""
		if ready {
			checks = append(checks, "store")
			if _, _, err := a.st.Revision(c.Request().Context()); err != nil {
				failed = "store"
			}
			if d, ok := a.st.(store.DamageReporter); ok && d.Damaged() != nil {
				failed = "store"
			}
			if w, ok := a.st.(store.WriteHealthReporter); ok && failed == "" && w.WriteHealth(c.Request().Context()) != nil {
				failed = "store"
			}
			for _, rc := range a.cfg.ReadyChecks {
				checks = append(checks, rc.Name)
				if failed == "" && rc.Check(c.Request().Context()) != nil {
					failed = rc.Name
				}
			}
			if a.ctx.Err() != nil {
				failed = "shutdown"
			}
			checks = append(checks, "shutdown")
		}
		h := c.Response().Header()
		h.Set("Cache-Control", "no-cache, private")
		h.Set("X-Content-Type-Options", "nosniff")
		code := http.StatusOK
		if failed != "" {
			code = http.StatusInternalServerError
		}
		_, verbose := c.QueryParams()["verbose"]
		if !verbose && failed == "" {
			return c.String(code, "ok")
		}
		var b strings.Builder
		for _, ch := range checks {
			if ch == failed {
				fmt.Fprintf(&b, "[-]%s failed: reason withheld\n", ch)
			} else {
				fmt.Fprintf(&b, "[+]%s ok\n", ch)
			}
		}
		name := strings.TrimPrefix(c.Path(), "/")
		if failed != "" {
			fmt.Fprintf(&b, "%s check failed\n", name)
		} else {
			fmt.Fprintf(&b, "%s check passed\n", name)
		}
		return c.String(code, b.String())
	}
}

// logRequests logs every request at Debug, and failures (5xx) at Warn.
func (a *API) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		r := c.Request()
		code := c.Response().Status
		level := slog.LevelDebug
		if code >= 500 {
			level = slog.LevelWarn
		}
		if err != nil && code >= 500 {
			level = slog.LevelError
		}
		// Most requests are logged at debug level, which is usually off: their attributes
		// are not even built then (a renewal is two requests).
		if !a.log.Enabled(r.Context(), level) {
			return nil
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", code),
			slog.Duration("duration", time.Since(start)),
			slog.String("user_agent", r.UserAgent()),
		}
		if err != nil && code >= 500 {
			// A handler's error is its cause: without it a 500 says nothing.
			attrs = append(attrs, slog.Any("error", err))
		}
		a.log.LogAttrs(r.Context(), level, "request", attrs...)
		return nil
	}
}

// writeError answers every error no handler answered itself, whatever raised it (the router, a
// middleware, a screen's handler), with a Status, as kube-apiserver answers everything: never
// with Echo's own {"message":...}. The screens answer browsers with their error page first.
func writeError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status.Write(c.Response(), c.Request(), routerStatus(err), status.Router)
}

// routerStatus is the Status of an error: Echo's own are the router's 404 and 405, worded as
// kube-apiserver's, or a code and a message; any other is status.From's.
func routerStatus(err error) error {
	var he *echo.HTTPError
	if !errors.As(err, &he) {
		return err
	}
	switch he.Code {
	case http.StatusNotFound:
		return status.PathNotFound()
	case http.StatusMethodNotAllowed:
		return status.NoRouteForMethod()
	}
	msg := http.StatusText(he.Code)
	if m, ok := he.Message.(string); ok && m != "" {
		msg = m
	}
	return status.ForCode(he.Code, msg)
}

// recoverPanics turns a handler's panic into a 500 Status, as the real server's panic filter
// does, instead of a dropped connection; the server goes on serving everyone else.
func (a *API) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			r := c.Request()
			a.log.Error("panic serving a request", slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			err = nil
			if c.Response().Committed {
				return
			}
			status.Write(c.Response(), r, status.Internal(fmt.Sprintf("Internal error occurred: %v", v)), status.Recovered)
		}()
		return next(c)
	}
}

// withRequestInfo parses what a request addresses, once, for every later step: authorization,
// limits, the API and discovery handlers read it from the request's context.
func withRequestInfo(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		c.SetRequest(r.WithContext(request.WithInfo(r.Context(), request.Parse(r))))
		return next(c)
	}
}

// limitBodyReads gives a request with a body d to arrive, after which reading it fails and the
// connection closes. Requests without one (every watch and WebSocket upgrade) keep no deadline,
// so that long-lived streams are not cut.
func limitBodyReads(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Request().ContentLength != 0 { // -1: chunked, length unknown
				// Also bounds what net/http drains of a body that a refusal left unread.
				_ = http.NewResponseController(c.Response()).SetReadDeadline(time.Now().Add(d))
			}
			return next(c)
		}
	}
}

// openCrossOrigin refuses cross-site unsafe requests to a server without tokens.
var openCrossOrigin = http.NewCrossOriginProtection()

// guardOpen protects a server without tokens, which listens on loopback only, from web pages
// in the user's browser, which could otherwise write without any credential: a Host that is not
// a loopback name is refused (a DNS rebinding attack names the attacker's host), and so is a
// cross-site unsafe request (Sec-Fetch-Site, then Origin against Host). kubectl, client-go and
// curl send neither header and pass, and so does the server's own code calling itself in
// process (web/api/inprocess), whatever host its requests name.
func guardOpen(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if request.InProcess(r.Context()) {
			return next(c)
		}
		if r.Host != "" && !loopbackHost(r.Host) {
			return c.String(http.StatusMisdirectedRequest, fmt.Sprintf(
				"leaselab without tokens answers only to localhost, 127.0.0.1 and [::1], not to %q (serve with --workshop or --token-file to be reached by other names)\n", r.Host))
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions {
			if err := openCrossOrigin.Check(r); err != nil {
				return c.String(http.StatusForbidden, "cross-origin request refused: "+err.Error()+"\n")
			}
		}
		return next(c)
	}
}

// loopbackHost reports whether a Host header names this machine's loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
