// Package ui serves leaselab's browser screens: the dashboard (/), the per-lease page
// (/leases/{namespace}/{name}) and the candidate tab (/play), their live updates, the lease
// actions, the hub that connects candidate tabs with the dashboard, and the embedded static
// assets (scripts, styles, the wasm candidate).
//
// Pages are rendered on the server with the components of package templates from view models
// built here. The dashboard is kept current by the server too: its board renders every card
// and row that changes with the same components and pushes the fragments (dashlive.go). The
// other pages' scripts fetch their server-rendered fragments again when a stream says they
// changed, or follow the API server's own watch streams (WebSocket upgrades of the real watch
// URLs) and the tab hub.
package ui

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/api/outage"
	"github.com/leaselab/leaselab/web/api/status"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/lease/recording"
	"github.com/leaselab/leaselab/web/lease/traffic"
	"github.com/leaselab/leaselab/web/lease/views"
	"github.com/leaselab/leaselab/web/play/scenario"
)

// Options configure a UI.
type Options struct {
	// Now is the server's clock; default time.Now.
	Now func() time.Time
	// Context is the server's lifetime: WebSocket streams end when it is done. Default: never.
	Context context.Context
	// API is the server's in-process transport (web/api/inprocess). Lease creates and deletes from
	// the dashboard go through it as the signed-in user, so that they follow exactly the API's
	// rules (authorization, quota, validation, defaulting, namespaces, managed fields). Without
	// it those actions answer 503.
	API http.RoundTripper
	// MayCommandTabs reports whether the caller of a dashboard may inject faults into other
	// people's candidate tabs (in workshop mode: the instructor). Nil lets everyone, as on an
	// open loopback server; others still see the tabs live.
	MayCommandTabs func(r *http.Request) bool
	// TabUser returns who opens a candidate tab (/ui/tabs/connect), and false on a server
	// without authentication. The hub lists the tab as that user's and refuses its reports of
	// a namespace outside TabUser.Namespaces. Nil: tabs have no owner and may report any
	// namespace, as on an open loopback server.
	TabUser func(r *http.Request) (TabUser, bool)
	// Elections is the Coordinated Leader Election controller whose decisions the lease page
	// and the dashboard show, and push to open dashboards as they are taken; nil when the
	// controller does not run.
	Elections Elections
	// Replay, when set, is the recording this server replays, read-only: the screens say so,
	// candidate tabs cannot join and the dashboard commands no tab.
	Replay *Replay
	// Outage is the API-server outage the instructor injects from the dashboard (POST
	// /ui/outage); nil offers none.
	Outage *outage.Fault
	// ScenarioAPI carries the requests of the scenarios' candidates to the API in process, as
	// the server's own user (allowed to write the scenarios' namespaces); nil means API.
	ScenarioAPI http.RoundTripper
	// Upstream, when set, is the cluster this server stands in front of: the screens read its
	// mirror and say so, and coordinated tabs are refused when the cluster cannot have them.
	Upstream *Upstream
}

// Upstream is what the screens say about the cluster a server stands in front of.
type Upstream struct {
	// Server is the cluster's URL; User the kubeconfig's identity leaselab acts as there.
	Server, User string
	// Namespaces are the only namespaces forwarded and shown; empty: every one.
	Namespaces []string
	// CandidatesRefused says why coordinated candidates cannot run against the cluster (no
	// LeaseCandidates v1beta1, or no right to them), "" when they can.
	CandidatesRefused string
	// ReadOnly says why the kubeconfig's identity may not write Leases: the screens hide what
	// writes and tabs are refused. "" when it may.
	ReadOnly string
	// Problem returns why the cluster is not mirrored right now (unreachable), nil while it is.
	Problem func() error
	// Relisted returns how often the cluster answered the record's watches or lists with 410
	// Expired, and how often the record listed the cluster again after one; nil: never.
	Relisted func() (expired, relisted int64)
	// APIBase is the path prefix under which the mirror's API is read (web/api/upstream's
	// MirrorPrefix).
	APIBase string
}

// banner is the page's view of u; nil when u is.
func (u *Upstream) banner() *templates.Upstream {
	if u == nil {
		return nil
	}
	b := &templates.Upstream{Server: u.Server, User: u.User, Namespaces: strings.Join(u.Namespaces, ", "), APIBase: u.APIBase, ReadOnly: u.ReadOnly,
		CandidatesRefused: u.CandidatesRefused}
	if u.Relisted != nil {
		b.Expired, b.Relisted = u.Relisted()
	}
	if u.Problem != nil {
		if err := u.Problem(); err != nil {
			b.Problem = err.Error()
		}
	}
	return b
}

// Elections is what the screens read from the Coordinated Leader Election controller
// (web/lease/election's Controller).
type Elections interface {
	// Decisions lists the decisions kept about a lease, oldest first.
	Decisions(namespace, lease string) []election.Decision
	// Subscribe returns every decision from now on, and a function that ends the
	// subscription and closes the channel.
	Subscribe() (<-chan election.Decision, func())
}

var _ Elections = (*election.Controller)(nil)

// UI serves the browser screens. It is the router: each screen is a type of its own, and all of
// them stand on the same renderer (pages), which stands on the same reads of the record (reader)
// and the same shared dependencies (deps).
type UI struct {
	*pages
	dashboard *dashboardScreen
	lease     *leaseScreen
	records   *historyScreen
	stage     *stageScreen
	tabs      *tabScreen
	lessons   *scenarioScreen
	calc      *calcScreen
}

// deps are what every screen shares: the store and how to decode it, the options, the tab hub,
// the request tap and keeper, the history cache and the views reader.
type deps struct {
	log    *slog.Logger
	reg    *kinds.Registry
	store  store.Interface
	opts   Options
	assets func() *assets // waits for the embedded assets, loaded in the background by New
	hub    *Hub
	tap    *requestTap // the requests on leases at the API's door, for the stage
	// requests writes the requests on leases to the store, for the stage's past; nil on a
	// replay.
	requests *traffic.Keeper
	hist     *historyCache
	views    *views.Reader

	leases, candidates, events, namespaces *kinds.Kind
}

// reader reads the record the screens show: the objects as of a moment, decoded, and the
// judge's verdicts on them.
type reader struct {
	*deps
	// decisions lists the election controller's decisions about a lease; nil when the
	// controller does not run.
	decisions func(namespace, lease string) []templates.DecisionView
}

// pages renders pages and fragments and answers with the screens' error pages.
type pages struct{ *reader }

// dashboardScreen serves the dashboard, its live board and the lease actions.
type dashboardScreen struct {
	*pages
	board *board
	// commands carries the fault commands a dashboard sends to candidate tabs.
	commands *tabScreen
}

// leaseScreen serves the per-lease page.
type leaseScreen struct{ *pages }

// historyScreen serves the time control's moments and the recordings to download.
type historyScreen struct {
	*pages
	rec *recording.Recorder // writes the downloads of /ui/history
}

// stageScreen serves the stage: one lease's election as one picture.
type stageScreen struct{ *pages }

// tabScreen serves the candidate tab and the hub's WebSockets for tabs and dashboards.
type tabScreen struct {
	*pages
	// dfeed tells open dashboards which leases have new decisions (decisionsChanged).
	dfeed *decisionFeed
}

// scenarioScreen serves the guided lessons.
type scenarioScreen struct {
	*pages
	// scenarios are the guided lessons playing on this server.
	scenarios scenarioRuns
	stage     *stageScreen // draws a lesson's stage
	// plan is the instructor's session plan, the suggested one until edited; kept in memory.
	plan *scenario.Plan
}

// New returns a UI reading objects from st and decoding them with reg. It fails when reg does
// not serve a kind the screens show. It starts reading and hashing the embedded assets (a few
// megabytes with the wasm candidate) in the background, so that the server is ready sooner;
// the first page or asset served waits for them.
func New(logger *slog.Logger, reg *kinds.Registry, st store.Interface, opts Options) (*UI, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Context == nil {
		opts.Context = context.Background()
	}
	d := &deps{log: logger, reg: reg, store: st, opts: opts}
	for _, k := range []struct {
		dst                      **kinds.Kind
		group, version, resource string
	}{
		{&d.leases, "coordination.k8s.io", "v1", "leases"},
		{&d.candidates, "coordination.k8s.io", "v1beta1", "leasecandidates"},
		{&d.events, "", "v1", "events"},
		{&d.namespaces, "", "v1", "namespaces"},
	} {
		if *k.dst = reg.Lookup(k.group, k.version, k.resource); *k.dst == nil {
			return nil, fmt.Errorf("registry does not serve %s/%s %s", k.group, k.version, k.resource)
		}
	}
	d.assets = sync.OnceValue(func() *assets {
		a, err := loadAssets(staticFS)
		if err != nil { // only a broken build gets here: the files are compiled in
			logger.Error("static assets unreadable", slog.Any("err", err))
			return &assets{files: map[string]*asset{}, urls: templates.Assets{WasmMissing: true}}
		}
		return a
	})
	go d.assets()
	p := &pages{&reader{deps: d}}
	stage := &stageScreen{p}
	u := &UI{pages: p, lease: &leaseScreen{p}, stage: stage, tabs: &tabScreen{pages: p, dfeed: newDecisionFeed()},
		lessons: &scenarioScreen{pages: p, stage: stage, plan: scenario.NewPlan()}, calc: &calcScreen{p}}
	if e := opts.Elections; e != nil {
		u.decisions = electionDecisions(e.Decisions)
		// Open dashboards get every new decision pushed: a decision can change (a strategy
		// conflict, a ping window running out) without any API object changing.
		decided, unsubscribe := e.Subscribe()
		context.AfterFunc(opts.Context, unsubscribe)
		go func() {
			for d := range decided {
				u.tabs.decisionsChanged(d.Namespace, d.Lease)
			}
		}()
	}
	rec, err := recording.New(reg)
	if err != nil {
		return nil, err
	}
	u.records = &historyScreen{pages: p, rec: rec}
	d.hub = NewHub(logger, opts.Now)
	if opts.Replay == nil { // a replay is read-only, and no candidate runs on it
		d.requests = traffic.NewKeeper(opts.Context, st, logger, opts.Now)
	}
	d.tap = newRequestTap(opts.Now, d.requests)
	d.hub.views = views.NewRecorder(opts.Context, st, logger)
	d.hub.requests = d.requests
	d.views = views.NewReader(st, viewsLookback(opts.Replay != nil))
	d.hist = newHistoryCache(st, d.leases.StorageResource(), p.decodeLease, opts.Replay != nil)
	u.dashboard = &dashboardScreen{pages: p, board: newBoard(p.reader, u.tabs.dfeed), commands: u.tabs}
	context.AfterFunc(opts.Context, u.lessons.scenarios.stopAll)
	return u, nil
}

// Register adds the UI's routes to e:
//
//	GET  /[?at=]                            dashboard, at a past moment with ?at=
//	GET  /ui/dashboard/live[?at=]           the part of the dashboard that shows a moment
//	                                        (HTML fragment, for the time control)
//	GET  /leases/:namespace/:name[?at=]     lease page
//	GET  /leases/:namespace/:name/live      the lease page's live part (HTML fragment), at a
//	                                        past moment with ?at=
//	GET  /ui/moments?namespace=&lease=      JSON: the recorded window and its events, for the
//	                                        time control
//	GET  /play                              candidate tab
//	POST /ui/leases                         create a lease (form)
//	POST /ui/leases/:namespace/:name/delete delete a lease (form)
//	GET  /ui/tabs/connect                   WebSocket: a candidate tab reports to the hub
//	GET  /ui/tabs/watch[?changes=1]         WebSocket: the tabs (with changes=1, what changed
//	                                        after the first list) and the election controller's
//	                                        latest decisions (JSON, for programs), and fault
//	                                        commands to the tabs
//	GET  /ui/board/watch                    WebSocket: the lease cards, LeaseCandidates and
//	                                        feed as the server judges them (JSON, for programs)
//	GET  /ui/dashboard/watch                WebSocket: the dashboard's live part as HTML
//	                                        fragments of its own templates, and fault commands
//	                                        from the dashboard to candidate tabs
//	GET  /ui/history                        a recording to download (?namespace=NS&lease=NAME)
//	GET  /scenarios                         the guided lessons
//	GET  /scenarios/:name[?seed=&speed=&present=1&lang=]  one lesson
//	GET  /scenarios/:name/live?seed=        its live part (HTML fragment)
//	GET  /scenarios/:name/watch?seed=       WebSocket: says when the run changed
//	POST /scenarios/:name/:action           start, next, back, reveal, auto, speed, stop (form)
//	POST /scenarios/:name/vote              a choice for the open question (seed, step, choice)
//	POST /ui/plan/:action                   the session plan: add, remove, up, down (lesson=),
//	                                        talk (lesson=, minutes=), reset (form)
//	POST /ui/scenarios/clear                stop and clean up every lesson run that is finished
//	                                        or no longer plays (the dashboard's form)
//	POST /scenarios/:name/room/:action      a room lesson's faults: fault, third, heal, simulate
//	GET  /scenarios/:name/room/qr           the QR code of its join link (PNG)
//	GET  /stage?namespace=&lease=[&at=]     the stage: one lease's election as one picture
//	GET  /stage/live?namespace=&lease=      its picture alone (HTML fragment)
//	GET  /stage/watch?namespace=&lease=     WebSocket: says when the stage changed
//	POST /ui/outage                         an API-server outage (mode=hang|fail|off, namespace)
//	GET  /follow                            what the instructor shows: the lesson last started or
//	                                        stepped, its step and its stage
//	GET  /follow/live                       its moving part (HTML fragment)
//	GET  /follow/plan                       the session plan, where the room is in it (HTML fragment)
//	GET  /follow/watch                      WebSocket: says when the instructor moved or edited the plan
//	GET  /timings[?leaseDuration=&renewDeadline=&retryPeriod=]  the timing calculator, with sliders
//	GET  /timings/live?...                  its verdict alone (HTML fragment)
//	GET  /static/*                          embedded assets
//
// Every screen and its fragments and streams go through Language: they speak the request's
// language (?lang=, the switch's cookie, Accept-Language).
func (u *UI) Register(e *echo.Echo) {
	lang := func(next echo.HandlerFunc) echo.HandlerFunc { return Language(u.errorPages(next)) }
	e.GET("/scenarios", u.lessons.scenarioList, lang)
	e.GET("/scenarios/:name", u.lessons.scenarioPage, lang)
	e.GET("/scenarios/:name/live", u.lessons.scenarioLiveFragment, lang)
	e.GET("/scenarios/:name/watch", u.lessons.scenarioWatch, lang)
	e.POST("/scenarios/:name/vote", u.lessons.vote, sameOrigin, lang)
	e.POST("/scenarios/:name/:action", u.lessons.scenarioAction, sameOrigin, lang)
	e.POST("/ui/plan/:action", u.lessons.planAction, sameOrigin, lang)
	e.POST("/ui/scenarios/clear", u.lessons.clearFinished, sameOrigin, lang)
	e.POST("/scenarios/:name/room/:action", u.lessons.roomAction, sameOrigin, lang)
	e.GET("/scenarios/:name/room/qr", u.lessons.roomQR, lang)
	e.GET("/", u.dashboard.dashboard, lang)
	e.GET("/leases/:namespace/:name", u.lease.leasePage, lang)
	e.GET("/leases/:namespace/:name/live", u.lease.leaseLive, lang)
	e.GET("/ui/dashboard/live", u.dashboard.dashboardLive, lang)
	e.GET("/ui/moments", u.records.moments, lang)
	e.GET("/play", u.tabs.play, lang)
	e.POST("/ui/leases", u.dashboard.createLease, sameOrigin, lang)
	e.POST("/ui/leases/:namespace/:name/delete", u.dashboard.deleteLease, sameOrigin, lang)
	e.GET("/ui/tabs/connect", u.tabs.tabConnect)
	e.GET("/ui/tabs/watch", u.tabs.tabWatch, lang)
	e.GET("/ui/board/watch", u.dashboard.boardWatch, lang)
	e.GET("/ui/dashboard/watch", u.dashboard.dashboardWatch, lang)
	e.GET("/ui/history", u.records.history, lang)
	e.GET("/stage", u.stage.stagePage, lang)
	e.GET("/stage/live", u.stage.stageLive, lang)
	e.GET("/stage/watch", u.stage.stageWatch, lang)
	e.POST("/ui/outage", u.lessons.setOutage, sameOrigin, lang)
	e.GET("/follow", u.lessons.followPage, lang)
	e.GET("/follow/live", u.lessons.followLive, lang)
	e.GET("/follow/plan", u.lessons.followPlan, lang)
	e.GET("/follow/watch", u.lessons.followWatch, lang)
	e.GET("/timings", u.calc.timingsPage, lang)
	e.GET("/timings/live", u.calc.timingsLiveFragment, lang)
	e.GET("/static/*", u.static)
	e.HEAD("/static/*", u.static)
	e.Use(u.tap.middleware)
	e.RouteNotFound("/*", u.notFound, lang)
}

// notFound answers a path nothing serves: a browser gets the screens' 404 page, with its way
// back to the dashboard; any other client Echo's 404 as before. (The API's paths, /api and
// /apis, have their own: a Kubernetes Status.)
func (u *pages) notFound(c echo.Context) error {
	if r := c.Request(); r.Method != http.MethodGet || !strings.Contains(r.Header.Get("Accept"), "text/html") {
		return echo.ErrNotFound
	}
	return u.failSays(c, http.StatusNotFound, i18n.Say("error.noPage", c.Request().URL.Path))
}

// errorPages answers a browser whose page or fragment failed with the screens' error page,
// whose message live.js shows when a fragment fails. Everything else goes on to the server's
// one error handler (web/api/front), which answers with a Status.
func (u *pages) errorPages(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err == nil || c.Response().Committed || !strings.Contains(c.Request().Header.Get("Accept"), "text/html") {
			return err
		}
		code, msg := errorOf(err)
		if code >= http.StatusInternalServerError {
			r := c.Request()
			u.log.Error("screen failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", err))
		}
		return u.fail(c, code, msg)
	}
}

// errorOf is the status code and message of a handler's error: Echo's own, or the Status the
// API would answer with.
func errorOf(err error) (int, string) {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		if m, ok := he.Message.(string); ok && m != "" {
			return he.Code, m
		}
		return he.Code, http.StatusText(he.Code)
	}
	st := status.From(err)
	return int(st.Code), st.Message
}

// pageSays returns what every page shares, with a title in both languages.
func (u *pages) pageSays(title i18n.Text, nav string) templates.Page {
	p := u.page(title.En, nav)
	p.TitleSays = title
	return p
}

// page returns what every page shares.
func (u *pages) page(title, nav string) templates.Page {
	return templates.Page{
		Title:       title,
		Assets:      u.assets().urls,
		ServerNowMs: u.opts.Now().UnixMilli(),
		Nav:         nav,
		Replay:      u.opts.Replay.banner(),
		Upstream:    u.opts.Upstream.banner(),
	}
}

// contentSecurityPolicy lets pages run only the embedded scripts and the wasm candidate, and
// talk only to this server.
const contentSecurityPolicy = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors 'none'"

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// render writes a component as an HTML response, gzip-compressed when the client accepts it.
// Every page and fragment goes through here.
func (u *pages) render(c echo.Context, status int, comp templ.Component) error {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	r := c.Request()
	if err := comp.Render(u.withSignedIn(r), buf); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	h := c.Response().Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Language", string(i18n.FromContext(r.Context())))
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Add("Vary", "Accept-Encoding")
	body := buf.Bytes()
	if len(body) > 1024 && accepts(r, "gzip") {
		zbuf := bufPool.Get().(*bytes.Buffer)
		zbuf.Reset()
		defer bufPool.Put(zbuf)
		zw := gzipPool.Get().(*gzip.Writer)
		zw.Reset(zbuf)
		zw.Write(body)
		zw.Close()
		gzipPool.Put(zw)
		body = zbuf.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	return c.Blob(status, "text/html; charset=utf-8", body)
}

// withSignedIn is the request's context with who the page is rendered for, on a server with
// tokens: the header names the identity, and links the workshop page for the instructor; the
// page offers only what the user may do.
func (u *pages) withSignedIn(r *http.Request) context.Context {
	s, ok := u.signedIn(r)
	if !ok {
		return r.Context()
	}
	return templates.WithSignedIn(r.Context(), s)
}

// signedIn is who the request is made by, on a server with tokens; false without them.
func (u *pages) signedIn(r *http.Request) (templates.SignedIn, bool) {
	if u.opts.TabUser == nil {
		return templates.SignedIn{}, false
	}
	tu, ok := u.opts.TabUser(r)
	if !ok {
		return templates.SignedIn{}, false
	}
	return templates.SignedIn{Name: tu.Name, Instructor: u.mayRunScenarios(r), Namespaces: tu.Namespaces}, true
}

var gzipPool = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return zw
}}

// accepts reports whether the request's Accept-Encoding allows the content coding (gzip, br).
func accepts(r *http.Request, coding string) bool {
	for _, h := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(h, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != coding && name != "*" {
				continue
			}
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
				return false
			}
			return true
		}
	}
	return false
}

// fail renders an error page.
func (u *pages) fail(c echo.Context, code int, msg string) error {
	return u.failSays(c, code, i18n.Same(msg))
}

// failSays renders an error page that says msg in the request's language.
func (u *pages) failSays(c echo.Context, code int, msg i18n.Text) error {
	title := i18n.Same(http.StatusText(code))
	if t := i18n.Say("status." + strconv.Itoa(code)); t.En != "status."+strconv.Itoa(code) {
		title = t
	}
	return u.render(c, code, templates.ErrorView(templates.ErrorPage{
		Page: u.pageSays(title, ""), Code: code, Message: msg.En, MessageSays: msg,
	}))
}

// crossOrigin refuses cross-site form posts (Sec-Fetch-Site, then Origin against Host); requests
// from non-browser clients, which send neither, pass.
var crossOrigin = http.NewCrossOriginProtection()

// sameOrigin is the CSRF guard of the UI's POST routes.
func sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := crossOrigin.Check(c.Request()); err != nil {
			return c.String(http.StatusForbidden, "cross-origin request refused: "+err.Error()+"\n")
		}
		return next(c)
	}
}

// notFound says whether err is the store's "not found".
func notFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// viewsLookback is how far back the first read of a lease's candidate views goes: as far as
// the lease history on a live server, the whole log on a replay.
func viewsLookback(replay bool) int64 {
	if replay {
		return math.MaxInt64 / 2
	}
	return historyLookback
}
