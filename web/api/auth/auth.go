package auth

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/status"
)

// Options configure an Auth.
type Options struct {
	// Tokens are every identity: the token file's and the workshop's.
	Tokens []Token
	// RateQPS and RateBurst size each identity's token bucket; RateQPS <= 0 means no limit.
	RateQPS   float64
	RateBurst int
	// MaxWatchers bounds the watches and WebSockets one identity holds open; 0 means no limit.
	MaxWatchers int
	// MaxObjectsPerNamespace bounds the objects of one resource a participant can create in a
	// namespace; 0 means no limit. Instructors are not limited.
	MaxObjectsPerNamespace int
	// MaxObjectBytes bounds the size of each object written in a namespace participants write
	// (as stored); with MaxObjectsPerNamespace it bounds what one participant may store. 0: no
	// limit.
	MaxObjectBytes int
	// MaxFormBytes bounds a UI form post; default 64 KiB.
	MaxFormBytes int64
	// PublicURL is the base of join links and kubeconfigs (e.g. https://10.0.0.5:8443);
	// `leaselab serve` sets its --public-url, else the address it listens at. Empty: the
	// address each request came in at (never its Host header).
	PublicURL string
	// CAData is the PEM certificate authority kubeconfigs carry (TLS with a self-signed or
	// private certificate).
	CAData []byte
	// Now is the clock of the rate limiter; default time.Now.
	Now func() time.Time
	// Words returns what the sign-in, join and workshop pages say in a request's language
	// (the screens' catalog, which this package does not reach); nil: the catalog's keys.
	Words func(r *http.Request) Words
}

// Words is what the pages of this package say in one request's language.
type Words struct {
	// Lang is the language's code for Content-Language ("en"), HTMLLang its tag for <html
	// lang> ("zh-CN"), Switch the same page in the other language.
	Lang, HTMLLang, Switch string
	// T says the catalog's message key with args.
	T func(key string, args ...any) string
	// Keep is the cookie that keeps a language the request chose with ?lang=; nil otherwise.
	Keep *http.Cookie
}

// Auth authenticates, authorizes and limits every request but the public ones, and serves the
// join link and the instructor's workshop page.
type Auth struct {
	log     *slog.Logger
	st      store.Interface
	opts    Options
	authn   *Authenticator
	rate    *rateLimiter
	watches *watchCounter
	byName  map[string]Token
	order   []string // identity names, instructors first
	// seen holds, per workshop identity, when it last made a request (Unix ns, 0 for never):
	// the workshop page tells the instructor who has joined.
	seen map[string]*atomic.Int64
	// quotaLocks holds a *sync.Mutex per namespace/resource (AdmitCreate).
	quotaLocks sync.Map
	// sessions are the browsers signed in with a join link.
	sessions *sessions
}

// New returns an Auth for opts.Tokens, counting objects for the quota in st.
func New(logger *slog.Logger, st store.Interface, opts Options) *Auth {
	if logger == nil {
		logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxFormBytes <= 0 {
		opts.MaxFormBytes = 64 << 10
	}
	a := &Auth{
		log:      logger,
		st:       st,
		opts:     opts,
		authn:    NewAuthenticator(opts.Tokens),
		sessions: newSessions(logger, st, opts.Now),
		watches:  &watchCounter{max: opts.MaxWatchers},
		byName:   map[string]Token{},
		seen:     map[string]*atomic.Int64{},
	}
	a.authn.sessions = a.sessions
	if opts.RateQPS > 0 {
		a.rate = newRateLimiter(opts.RateQPS, opts.RateBurst)
	}
	for _, role := range []Role{RoleInstructor, RoleParticipant} {
		for _, t := range opts.Tokens {
			if t.User.Role == role && !internalUser(t.User) {
				if _, dup := a.byName[t.User.Name]; !dup {
					a.order = append(a.order, t.User.Name)
				}
				a.byName[t.User.Name] = t
				a.seen[t.User.Name] = new(atomic.Int64)
			}
		}
	}
	return a
}

// publicPath says whether a path is served to anyone: health checks, static assets (scripts,
// styles, the wasm: no secrets) and the join link.
func publicPath(p string) bool {
	switch p {
	case "/healthz", "/livez", "/readyz", "/join", "/join/pages.css", "/favicon.ico":
		return true
	}
	return strings.HasPrefix(p, "/static/")
}

// apiPath says whether a path belongs to the Kubernetes API (answered with Status JSON).
func apiPath(p string) bool {
	return p == "/api" || p == "/apis" || p == "/version" || p == "/openapi" ||
		strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/apis/") ||
		strings.HasPrefix(p, "/version/") || strings.HasPrefix(p, "/openapi/")
}

// crossOrigin refuses cross-site unsafe requests (Sec-Fetch-Site, then Origin against Host).
var crossOrigin = http.NewCrossOriginProtection()

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// Middleware is the Echo middleware that guards every route.
func (a *Auth) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		p := r.URL.Path
		if publicPath(p) {
			return next(c)
		}
		u, trusted := inProcessUser(r.Context())
		if !trusted {
			var ok bool
			var err error
			if u, ok, err = a.admit(c); !ok {
				return err
			}
		}
		if apiPath(p) {
			return a.serveAPI(c, next, u)
		}
		return a.serveUI(c, next, u)
	}
}

// inProcessUser returns the identity of a request the server's own code made in this process
// (web/api/inprocess): it needs no token, and it was limited, if at all, as the request it serves.
func inProcessUser(ctx context.Context) (User, bool) {
	if !request.InProcess(ctx) {
		return User{}, false
	}
	return UserFrom(ctx)
}

// admit authenticates a request, checks that a browser's unsafe request comes from this site
// and applies the rate limit. It returns the user, or false after answering the request (err
// is then the answer's, for Echo's error handler).
func (a *Auth) admit(c echo.Context) (User, bool, error) {
	r := c.Request()
	api := apiPath(r.URL.Path)
	u, via, found, err := a.authn.Authenticate(r)
	if err != nil || !found {
		if err != nil {
			a.log.Debug("authentication failed", slog.String("path", r.URL.Path), slog.String("via", via), slog.Any("error", err))
		}
		if api {
			// As kube-apiserver: "Unauthorized", no details, no WWW-Authenticate.
			return User{}, false, writeErr(c, errUnauthorized())
		}
		return User{}, false, a.signInPage(c)
	}
	// A session cookie is sent by the browser on its own: an unsafe request riding on it
	// must come from this site (SameSite=Strict already keeps it off cross-site requests).
	if via == viaCookie && !safeMethod(r.Method) {
		if err := crossOrigin.Check(r); err != nil {
			if api {
				return User{}, false, writeErr(c, apierrors.NewForbidden(schema.GroupResource{}, "", err))
			}
			return User{}, false, c.String(http.StatusForbidden, "cross-origin request refused: "+err.Error()+"\n")
		}
	}
	c.SetRequest(r.WithContext(WithUser(r.Context(), u)))
	now := a.opts.Now()
	if at := a.seen[u.Name]; at != nil {
		at.Store(now.UnixNano())
	}
	// The server's own clients (system:leaselab...) are not limited.
	if a.rate != nil && !internalUser(u) {
		if ok, wait := a.rate.allow(u.Name, now); !ok {
			se := tooManyRequests("too many requests from user \""+u.Name+"\", please try again later", wait)
			return User{}, false, writeErr(c, se)
		}
	}
	return u, true, nil
}

// errUnauthorized is kube-apiserver's 401.
func errUnauthorized() *apierrors.StatusError { return apierrors.NewUnauthorized("Unauthorized") }

func (a *Auth) serveAPI(c echo.Context, next echo.HandlerFunc, u User) error {
	r := c.Request()
	ri := request.InfoOf(r)
	if !ri.IsResourceRequest || ri.Verb == "" {
		if err := AuthorizePath(u, strings.ToLower(r.Method), r.URL.Path); err != nil {
			return writeErr(c, err)
		}
		return next(c)
	}
	if err := Authorize(u, ri); err != nil {
		return writeErr(c, err)
	}
	if ri.Verb == "watch" && !internalUser(u) {
		return a.stream(c, next, u)
	}
	return next(c)
}

// AdmitCreate is the API server's admission of creates (apiserver.Options.AdmitCreate): a
// participant may keep at most MaxObjectsPerNamespace objects of a resource in a namespace,
// however they are created (POST, PUT or apply to a missing name, the dashboard's form). The
// instructor and the server's own clients are not limited. Limited creates of one resource in
// one namespace go one at a time, from the count to the stored object (done), so that creates
// sent together cannot all pass the same count.
func (a *Auth) AdmitCreate(ctx context.Context, gr schema.GroupResource, namespace, name string) (done func(), err error) {
	u, ok := UserFrom(ctx)
	if !ok || a.opts.MaxObjectsPerNamespace <= 0 || u.Role == RoleInstructor && !internalUser(u) {
		return func() {}, nil
	}
	// The server's own clients (the election controller creating a Lease for a participant's
	// LeaseCandidates) count too, in the namespaces participants write: whoever writes there,
	// the objects are the participant's.
	if internalUser(u) && !a.participantNamespace(namespace) {
		return func() {}, nil
	}
	mu := a.quotaLock(namespace + "/" + gr.String())
	mu.Lock()
	if err := checkQuota(ctx, a.st, a.opts.MaxObjectsPerNamespace, gr, namespace, name); err != nil {
		mu.Unlock()
		return func() {}, err
	}
	return mu.Unlock, nil
}

// quotaLock is the lock of the creates counted against one quota (namespace/resource).
func (a *Auth) quotaLock(key string) *sync.Mutex {
	mu, _ := a.quotaLocks.LoadOrStore(key, &sync.Mutex{})
	return mu.(*sync.Mutex)
}

// participantNamespace says whether participants write in ns: one's own, or the arena.
func (a *Auth) participantNamespace(ns string) bool {
	if ns == ArenaNamespace {
		return true
	}
	for _, t := range a.byName {
		if t.User.Role == RoleParticipant && t.User.Namespace == ns {
			return true
		}
	}
	return false
}

// AdmitSize is the API server's admission of an object's stored size
// (apiserver.Options.AdmitSize): in the namespaces participants write, whoever writes there
// (the election controller too) but the instructor, an object may be at most MaxObjectBytes.
// A refusal is 413 and says the limit, so that one participant cannot grow the database or
// the screens without bound.
func (a *Auth) AdmitSize(ctx context.Context, gr schema.GroupResource, namespace, name string, size int) error {
	u, ok := UserFrom(ctx)
	if !ok || a.opts.MaxObjectBytes <= 0 || size <= a.opts.MaxObjectBytes || !a.participantNamespace(namespace) ||
		u.Role == RoleInstructor && !internalUser(u) {
		return nil
	}
	return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("%s %q would take %d bytes: in a workshop, objects in %q may take at most %d bytes each (--max-object-bytes)",
		gr.String(), name, size, namespace, a.opts.MaxObjectBytes))
}

// internalUser says whether u is one of the server's own clients.
func internalUser(u User) bool { return strings.HasPrefix(u.Name, "system:leaselab") }

// stream serves a long-lived request (watch, WebSocket) counted against u's watches.
func (a *Auth) stream(c echo.Context, next echo.HandlerFunc, u User) error {
	if !a.watches.acquire(u.Name) {
		return writeErr(c, tooManyRequests("too many open watches for user \""+u.Name+"\": close some before opening more", time.Second))
	}
	defer a.watches.release(u.Name)
	return next(c)
}

func (a *Auth) serveUI(c echo.Context, next echo.HandlerFunc, u User) error {
	r := c.Request()
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/workshop") || strings.HasPrefix(p, "/debug/"):
		if u.Role != RoleInstructor {
			return a.instructorOnly(c, u)
		}
	case p == "/ui/tabs/watch", p == "/ui/tabs/connect", p == "/ui/board/watch", p == "/ui/dashboard/watch":
		// Everyone sees the tabs and the board live; the UI lets only the instructor command them
		// (MayCommandTabs).
		return a.stream(c, next, u)
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/ui/"):
		// The forms' actions call the API in process as u, which authorizes them as any
		// other request (web/api/inprocess).
		r.Body = http.MaxBytesReader(c.Response(), r.Body, a.opts.MaxFormBytes)
	}
	return next(c)
}

// writeErr answers err as a Status, as the real server's filters do (web/api/status).
func writeErr(c echo.Context, err error) error {
	status.Write(c.Response(), c.Request(), err, status.Filter)
	return nil
}
