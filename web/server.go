// Package web is leaselab's HTTP server: the Kubernetes API (web/api/apiserver), discovery and
// OpenAPI (web/api/discovery) and the health checks, on one Echo instance built by web/api/front, with
// the browser UI (web/play/ui) added.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/api/front"
	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/status"
	"github.com/leaselab/leaselab/web/api/upstream"
	"github.com/leaselab/leaselab/web/play/ui"
)

// Config is what the server needs; cmd/leaselab fills it from flags. It is front.Config with
// the workshop's authentication as web/api/auth's type: see front.Auth for why the handler chain
// takes an interface.
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
	// NoImplicitNamespaces answers a create in a missing namespace with 404 NotFound, as
	// kube-apiserver does, and creates default, kube-system, kube-public and kube-node-lease
	// at start. The zero value keeps leaselab's default: a namespace is created the first
	// time something is written in it (`serve --implicit-namespaces`).
	NoImplicitNamespaces bool
	// Replay, when set, makes the server a read-only replay of a recording (leaselab replay):
	// every request that could change something is refused with a 405 Status that names the
	// recording, the clock (Now) stands at the recording's last change, and the screens say so.
	Replay *ui.Replay
	// Upstream, when set, puts the server in front of a cluster (serve --upstream-kubeconfig):
	// the API requests are forwarded to it and the store is its mirror.
	Upstream *Upstream
}

// Upstream is the cluster a server stands in front of: the forwarder of its API requests and
// the mirror of its objects in the store (web/api/upstream).
type Upstream struct {
	Forwarder *upstream.Forwarder
	Mirror    *upstream.Mirror
}

// The workshop's authentication is what the handler chain needs of one.
var _ front.Auth = (*auth.Auth)(nil)

// front is the configuration of the handler chain: a nil Auth stays a nil interface.
func (c Config) front() front.Config {
	fc := front.Config{
		Logger:                    c.Logger,
		Store:                     c.Store,
		Version:                   c.Version,
		CoordinatedLeaderElection: c.CoordinatedLeaderElection,
		Now:                       c.Now,
		BookmarkInterval:          c.BookmarkInterval,
		Profiling:                 c.Profiling,
		BodyReadTimeout:           c.BodyReadTimeout,
		NoImplicitNamespaces:      c.NoImplicitNamespaces,
	}
	if c.Replay != nil {
		// A replay's clock stands at the recording's last change, and nothing may change.
		stopped := c.Replay.To
		fc.Now = func() time.Time { return stopped }
		fc.Middleware = append(fc.Middleware, readOnly(c.Replay))
	}
	if c.Auth != nil {
		fc.Auth = c.Auth
	}
	if u := c.Upstream; u != nil {
		// The screens read the mirror under upstream.MirrorPrefix; every other API request
		// goes to the cluster, once authentication and authorization allowed it.
		fc.Pre = append(fc.Pre, upstream.MirrorReads)
		fc.Middleware = append(fc.Middleware, u.Forwarder.Middleware)
		fc.ReadyChecks = append(fc.ReadyChecks, front.ReadyCheck{Name: "upstream", Check: u.Mirror.Check})
	}
	return fc
}

// API is the server before its browser screens are added (web/api/front).
type API = front.API

// NewAPI builds the handler chain and every route but the browser screens'. The server's
// lifetime starts here: Server.Shutdown ends it, or Close when no Server is made.
func NewAPI(cfg Config) (*API, error) { return front.New(cfg.front()) }

// Screens configure the browser screens New adds.
type Screens struct {
	// Elections is the Coordinated Leader Election controller whose decisions the screens
	// show; nil when it does not run.
	Elections ui.Elections
	// Replay is the recording a replay serves (the same as the API's Config.Replay); nil on a
	// live server.
	Replay *ui.Replay
	// Upstream is what the screens say about the cluster the server stands in front of; nil
	// when it is the API server itself.
	Upstream *ui.Upstream
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
	if a.Served() {
		// A request context Echo made then has room for the API routes' path parameters only;
		// reused for a screen's route with more, it panics.
		return nil, errors.New("the API served an in-process request before the screens' routes were added: add them first")
	}
	cfg := a.Config()
	uiOpts := ui.Options{Now: cfg.Now, Context: a.Context(), API: a.Transport(), Elections: screens.Elections, Replay: screens.Replay, Upstream: screens.Upstream,
		ScenarioAPI: a.Transport().As(scenarioUser)}
	if cfg.Auth != nil {
		uiOpts.MayCommandTabs = mayCommandTabs
		uiOpts.TabUser = tabUser
	}
	u, err := ui.New(cfg.Logger, a.Registry(), cfg.Store, uiOpts)
	if err != nil {
		return nil, fmt.Errorf("ui: %w", err)
	}
	u.Register(a.Echo())
	s := &Server{api: a, ui: u, fresh: map[net.Conn]struct{}{}}
	s.http = &http.Server{
		Handler:           a.Echo(),
		ReadHeaderTimeout: 10 * time.Second,
		// Idle keep-alive connections are closed: a crowd of stuck clients cannot pile them up.
		IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return a.Context() },
		// Connection-level noise (TLS handshakes of clients without the CA, port scans) at Debug.
		ErrorLog:  slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
		ConnState: s.trackConn,
	}
	return s, nil
}

// scenarioUser is who the scenarios' candidates write as: one of the server's own users (not
// limited), allowed everything.
var scenarioUser = auth.User{Name: "system:leaselab:scenarios", Role: auth.RoleInstructor, Groups: []string{"system:masters"}}

// AuthWords is what the workshop's own pages (join, sign-in, the cards) say in a request's
// language, chosen as the screens choose it (auth.Options.Words).
func AuthWords(r *http.Request) auth.Words {
	lang, keep := i18n.FromRequest(r)
	return auth.Words{Lang: string(lang), HTMLLang: lang.HTMLLang(), Switch: i18n.SwitchHref(r.URL, lang), T: lang.T, Keep: keep}
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
func (s *Server) Handler() http.Handler { return s.api.Echo() }

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
	s.api.Close()
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
