// Package web is leaselab's HTTP server: the Kubernetes API (web/apiserver), discovery and
// OpenAPI (web/discovery), health checks and the browser UI, on one Echo instance.
package web

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
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/apiserver"
	"github.com/leaselab/leaselab/web/auth"
	"github.com/leaselab/leaselab/web/discovery"
	"github.com/leaselab/leaselab/web/inprocess"
	"github.com/leaselab/leaselab/web/kinds"
	"github.com/leaselab/leaselab/web/request"
	"github.com/leaselab/leaselab/web/status"
	"github.com/leaselab/leaselab/web/ui"
)

// Config is what the server needs; cmd/leaselab fills it from flags.
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
	Auth *auth.Auth
	// BodyReadTimeout bounds reading a request's body (default one minute): a client that
	// announces a body and never sends it would otherwise hold its connection forever.
	BodyReadTimeout time.Duration
	// Replay, when set, makes the server a read-only replay of a recording (leaselab replay):
	// every request that could change something is refused with a 405 Status that names the
	// recording, the clock (Now) stands at the recording's last change, and the screens say so.
	Replay *ui.Replay
}

// API is the server before its browser screens are added: the handler chain (request info,
// panics, body limits, authentication) with the Kubernetes API, discovery, the health checks
// and the workshop's pages. It comes apart from Server so that the server's own clients (the
// election controller) can be built on its in-process transport (Transport) first, and handed
// to the screens when New adds them: wiring goes one way, nothing is set after construction.
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

// NewAPI builds the handler chain and every route but the browser screens'. The server's
// lifetime starts here: Server.Shutdown ends it, or Close when no Server is made.
func NewAPI(cfg Config) (*API, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Replay != nil {
		stopped := cfg.Replay.To
		cfg.Now = func() time.Time { return stopped }
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &API{cfg: cfg, log: cfg.Logger, st: cfg.Store, ctx: ctx, cancel: cancel}
	a.reg = kinds.NewRegistry(kinds.Options{CoordinatedLeaderElection: cfg.CoordinatedLeaderElection})
	apiOpts := apiserver.Options{
		Now:              cfg.Now,
		Context:          ctx,
		BookmarkInterval: cfg.BookmarkInterval,
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
	if cfg.Profiling {
		a.echo.Any("/debug/pprof/*", echo.WrapHandler(http.DefaultServeMux))
	}
	a.api.Register(a.echo)
	a.transport = inprocess.New(a.echo)
	return a, nil
}

// chain is the Echo instance with the middleware every request goes through, in order.
func (a *API) chain() *echo.Echo {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
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
	if a.cfg.Replay != nil {
		e.Use(readOnly(a.cfg.Replay))
	}
	return e
}

// Transport is the in-process transport of the whole handler chain (web/inprocess): the
// server's own clients call the server through it, without a network or a token.
func (a *API) Transport() *inprocess.Transport { return a.transport }

// Close ends the lifetime NewAPI started, for an API that no Server was made of.
func (a *API) Close() { a.cancel() }

// Screens configure the browser screens New adds.
type Screens struct {
	// Elections is the Coordinated Leader Election controller whose decisions the screens
	// show; nil when it does not run.
	Elections ui.Elections
}

// Server serves leaselab over HTTP.
type Server struct {
	api  *API
	http *http.Server
	ui   *ui.UI // the browser screens

	connsMu sync.Mutex
	fresh   map[net.Conn]struct{} // connections without a request yet (trackConn)
}

// New adds the browser screens to a and returns the server, ready to serve. a belongs to the
// server from now on.
func New(a *API, screens Screens) (*Server, error) {
	uiOpts := ui.Options{Now: a.cfg.Now, Context: a.ctx, API: a.transport, Elections: screens.Elections, Replay: a.cfg.Replay}
	if a.cfg.Auth != nil {
		uiOpts.MayCommandTabs = mayCommandTabs
		uiOpts.TabUser = tabUser
	}
	u, err := ui.New(a.log, a.reg, a.st, uiOpts)
	if err != nil {
		return nil, fmt.Errorf("ui: %w", err)
	}
	u.Register(a.echo)
	s := &Server{api: a, ui: u, fresh: map[net.Conn]struct{}{}}
	s.http = &http.Server{
		Handler:           a.echo,
		ReadHeaderTimeout: 10 * time.Second,
		// Idle keep-alive connections are closed: a crowd of stuck clients cannot pile them up.
		IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return a.ctx },
		// Connection-level noise (TLS handshakes of clients without the CA, port scans) at Debug.
		ErrorLog:  slog.NewLogLogger(a.log.Handler(), slog.LevelDebug),
		ConnState: s.trackConn,
	}
	return s, nil
}

// mayCommandTabs lets only the instructor inject faults into other people's candidate tabs.
func mayCommandTabs(r *http.Request) bool {
	u, ok := auth.UserFrom(r.Context())
	return ok && u.Role == auth.RoleInstructor
}

// tabUser is who opens a candidate tab, and the namespaces its reports may name: the
// participant's own and the arena; any for the instructor.
func tabUser(r *http.Request) (ui.TabUser, bool) {
	u, ok := auth.UserFrom(r.Context())
	if !ok {
		return ui.TabUser{}, false
	}
	tu := ui.TabUser{Name: u.Name}
	if u.Role != auth.RoleInstructor {
		if u.Namespace != "" {
			tu.Namespaces = append(tu.Namespaces, u.Namespace)
		}
		tu.Namespaces = append(tu.Namespaces, auth.ArenaNamespace)
	}
	return tu, true
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.api.echo }

// Serve accepts connections on ln until Shutdown; it returns nil after a clean shutdown.
func (s *Server) Serve(ln net.Listener) error {
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown ends every watch, then waits for in-flight requests until ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	s.api.cancel()
	done := make(chan error, 1)
	go func() { done <- s.http.Shutdown(ctx) }()
	// net/http waits five seconds for a connection that has not sent a request yet before it
	// counts it as idle, and browsers open such connections ahead of need: close them now, and
	// any that arrive while the listener is closing.
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		s.closeFresh()
		select {
		case err := <-done:
			return err
		case <-t.C:
		}
	}
}

// trackConn keeps the connections that have not sent a request yet (net/http's StateNew).
func (s *Server) trackConn(c net.Conn, state http.ConnState) {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if state == http.StateNew {
		s.fresh[c] = struct{}{}
	} else {
		delete(s.fresh, c)
	}
}

// closeFresh closes the connections that have not sent a request yet: they have nothing in
// flight to wait for.
func (s *Server) closeFresh() {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	for c := range s.fresh {
		c.Close()
		delete(s.fresh, c)
	}
}

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
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", code),
			slog.Duration("duration", time.Since(start)),
			slog.String("user_agent", r.UserAgent()),
		}
		if err != nil && code >= 500 {
			// A handler's error is its cause: without it a 500 says nothing.
			level = slog.LevelError
			attrs = append(attrs, slog.Any("error", err))
		}
		a.log.LogAttrs(r.Context(), level, "request", attrs...)
		return nil
	}
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
// process (web/inprocess), whatever host its requests name.
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

// readOnly refuses, on a replay, every request that could change something, on any path: the
// API's writes, the dashboard's forms, the server's own clients. It answers as kube-apiserver
// answers a verb a resource does not support: 405 MethodNotAllowed, with the reason.
func readOnly(r *ui.Replay) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			if req.Method == http.MethodGet || req.Method == http.MethodHead || req.Method == http.MethodOptions {
				return next(c)
			}
			ri := request.InfoOf(req)
			msg := fmt.Sprintf("%s %s is not allowed: %s", req.Method, req.URL.Path, r.Refusal())
			c.Response().Header().Set("Allow", "GET, HEAD, OPTIONS")
			status.Write(c.Response(), req, status.MethodNotAllowed(schema.GroupResource{Group: ri.Group, Resource: ri.Resource}, ri.Name, msg), status.Filter)
			return nil
		}
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
