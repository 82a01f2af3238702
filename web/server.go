// Package web is leaselab's HTTP server: the Kubernetes API (web/api/apiserver), discovery and
// OpenAPI (web/api/discovery) and the health checks, on one Echo instance built by web/api/front,
// with the browser UI (web/play/ui), the Coordinated Leader Election controller (web/lease/election)
// and, in front of a cluster, its mirror added. New is the one constructor of the whole server:
// `leaselab serve`, `leaselab replay` and the tests all build it there.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/api/front"
	"github.com/leaselab/leaselab/web/api/inprocess"
	"github.com/leaselab/leaselab/web/api/outage"
	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/status"
	"github.com/leaselab/leaselab/web/api/upstream"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/play/ui"
)

// Config is what the server needs; cmd/leaselab fills it from flags. The handler chain's part
// is front.Config, whose Auth, when set, is the workshop's authentication (web/api/auth's
// *auth.Auth; see front.Auth for why the chain takes an interface). Leave it nil, not a nil
// *auth.Auth, on an open server.
type Config struct {
	front.Config
	// Replay, when set, makes the server a read-only replay of a recording (leaselab replay):
	// every request that could change something is refused with a 405 Status that names the
	// recording, the clock (Now) stands at the recording's last change, and the screens say so.
	Replay *ui.Replay
	// Upstream, when set, puts the server in front of a cluster (serve --upstream-kubeconfig):
	// the API requests are forwarded to it and the store is its mirror. It belongs to the
	// server from New on.
	Upstream *Upstream
	// Election, when set, runs the Coordinated Leader Election controller with these options,
	// as a client of the server in process, and the screens show its decisions; nil runs none.
	Election *election.Options
}

// Upstream is the cluster a server stands in front of: the forwarder of its API requests and
// the mirror of its objects in the store, as upstream.New makes them.
type Upstream struct {
	Forwarder *upstream.Forwarder
	Mirror    *upstream.Mirror
}

// Close stops the mirror and the forwarder's streams; nil does nothing. The server closes its
// own; Close is for an Upstream that never reached New.
func (u *Upstream) Close() {
	if u == nil {
		return
	}
	u.Forwarder.Close()
	u.Mirror.Close()
}

// The workshop's authentication is what the handler chain needs of one.
var _ front.Auth = (*auth.Auth)(nil)

// front is the configuration of the handler chain, with what a replay and a cluster add.
func (c Config) front() front.Config {
	fc := c.Config
	// Appended to below: the caller's slices stay as they were.
	fc.Pre, fc.Middleware, fc.ReadyChecks = slices.Clip(fc.Pre), slices.Clip(fc.Middleware), slices.Clip(fc.ReadyChecks)
	if c.Replay != nil {
		// A replay's clock stands at the recording's last change, and nothing may change.
		stopped := c.Replay.To
		fc.Now = func() time.Time { return stopped }
		fc.Middleware = append(fc.Middleware, readOnly(c.Replay))
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

// Server serves leaselab over HTTP.
type Server struct {
	api       *front.API
	http      *http.Server
	elections *election.Controller // nil when the controller does not run
	stopElect func()
	upstream  *Upstream

	connsMu sync.Mutex
	fresh   map[net.Conn]struct{} // connections without a request yet (trackConn)
}

// New builds the whole server: the handler chain and the API (web/api/front), the mirror of
// the cluster it stands in front of (started here: ctx bounds its first lists), the election
// controller and the browser screens. Its lifetime starts here: the controller and the mirror
// run until Shutdown. Serve, the test helpers and web/leasetest's API-only server all go
// through front.New. When New fails, what cfg.Upstream holds is closed too.
func New(ctx context.Context, cfg Config) (*Server, error) {
	s := &Server{upstream: cfg.Upstream, fresh: map[net.Conn]struct{}{}}
	a, err := front.New(cfg.front(), func(a *front.API, e *echo.Echo) error { return s.extend(ctx, cfg, a, e) })
	if err != nil {
		cfg.Upstream.Close()
		return nil, err
	}
	s.api = a
	s.http = &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		// Idle keep-alive connections are closed: a crowd of stuck clients cannot pile them up.
		IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return a.Context() },
		// Connection-level noise (TLS handshakes of clients without the CA, port scans) at Debug.
		ErrorLog:  slog.NewLogLogger(a.Config().Logger.Handler(), slog.LevelDebug),
		ConnState: s.trackConn,
	}
	if s.elections != nil {
		// Now that every route is in place: the controller is the transport's first client.
		s.stopElect = s.elections.Start()
	}
	return s, nil
}

// extend adds to the API what it serves beyond the Kubernetes API: it starts the mirror of the
// cluster, builds the election controller on the API's in-process transport, and adds the
// screens' routes. The controller starts once New has returned.
func (s *Server) extend(ctx context.Context, cfg Config, a *front.API, e *echo.Echo) error {
	fc := a.Config()
	var up *ui.Upstream
	if u := cfg.Upstream; u != nil {
		if err := u.Mirror.Start(ctx, a.Registry()); err != nil {
			return fmt.Errorf("upstream: %w", err)
		}
		up = screensUpstream(u.Mirror)
		fc.Logger.Info("serving in front of a cluster; its own controller decides elections", slog.String("server", up.Server),
			slog.String("user", up.User), slog.Any("namespaces", up.Namespaces))
	}
	fault := &outage.Fault{}
	e.Use(fault.Middleware)
	uiOpts := ui.Options{Now: fc.Now, Context: a.Context(), API: a.Transport(), Replay: cfg.Replay, Upstream: up,
		ScenarioAPI: a.Transport().As(scenarioUser), Outage: fault}
	if cfg.Election != nil {
		rc := a.Transport().As(electionUser).RESTConfig(election.DefaultFieldManager)
		rc.QPS, rc.Burst = 100, 200
		ctrl, err := election.NewForConfig(rc, *cfg.Election)
		if err != nil {
			return err
		}
		s.elections, uiOpts.Elections = ctrl, ctrl
	}
	if fc.Auth != nil {
		uiOpts.MayCommandTabs = mayCommandTabs
		uiOpts.TabUser = tabUser
	}
	u, err := ui.New(fc.Logger, a.Registry(), fc.Store, uiOpts)
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	u.Register(e)
	return nil
}

// screensUpstream is what the screens say about the cluster m mirrors.
func screensUpstream(m *upstream.Mirror) *ui.Upstream {
	c := m.Cluster()
	return &ui.Upstream{
		Server:            c.Server(),
		User:              c.User,
		Namespaces:        c.Namespaces,
		CandidatesRefused: m.CandidatesRefused(),
		ReadOnly:          m.ReadOnly(),
		Problem:           m.Err,
		Relisted: func() (int64, int64) {
			h := m.History()
			return h.Expired, h.RelistedAfterExpired
		},
		APIBase: upstream.MirrorPrefix,
	}
}

// electionUser is the election controller's identity: one of the server's own (not limited),
// allowed everything.
var electionUser = auth.User{Name: "system:leaselab:election", Role: auth.RoleInstructor, Groups: []string{"system:masters"}}

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
func (s *Server) Handler() http.Handler { return s.api.Handler() }

// Transport is the in-process transport of the whole handler chain (web/api/inprocess): how
// the server's own code calls it, without a network or a token.
func (s *Server) Transport() *inprocess.Transport { return s.api.Transport() }

// Elections is the Coordinated Leader Election controller, nil when it does not run.
func (s *Server) Elections() *election.Controller { return s.elections }

// Serve accepts connections on ln until Shutdown; it returns nil after a clean shutdown.
func (s *Server) Serve(ln net.Listener) error {
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops the election controller and the mirror of a cluster, ends every watch, then
// waits for in-flight requests until ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.stopElect != nil {
		s.stopElect()
	}
	s.upstream.Close()
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
