package auth

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"rsc.io/qr"

	"github.com/leaselab/leaselab/web/api/selfreview"
)

// pageCSP is the policy of the pages served here: no scripts at all, images from this server.
const pageCSP = "default-src 'none'; img-src 'self'; style-src 'self'; form-action 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'"

// Register adds the join link and the instructor's workshop page:
//
//	GET  /join?token=T                   asks to confirm: a page whose Join button posts the token
//	POST /join                           same origin only: sets the session cookie, redirects to
//	                                     the dashboard
//	GET  /workshop                       join links, QR codes and kubeconfigs (instructor)
//	GET  /workshop/qr/:name              the QR code of a join link (PNG)
//	GET  /workshop/kubeconfig/:name      a kubeconfig (download)
func (a *Auth) Register(e *echo.Echo) {
	selfreview.Register(e, a)
	e.GET("/join", a.joinPage)
	e.POST("/join", a.join)
	e.GET("/workshop", a.workshopPage)
	e.GET("/workshop/qr/:name", a.qrCode)
	e.GET("/workshop/kubeconfig/:name", a.kubeconfig)
	e.GET("/join/pages.css", pagesStyle)
}

//go:embed pages.css
var pagesCSS []byte

// pagesCSSURL is the stylesheet's address with its content's hash, so that a browser that kept
// an older one for its hour of caching fetches the new one after an upgrade.
var pagesCSSURL = func() string {
	sum := sha256.Sum256(pagesCSS)
	return "/join/pages.css?v=" + hex.EncodeToString(sum[:8])
}()

// pageFuncs are the functions of the pages' templates.
var pageFuncs = template.FuncMap{"css": func() string { return pagesCSSURL }}

// pagesStyle serves the stylesheet of the sign-in, join and workshop pages. It sits under
// /join, which anyone may open, so that the sign-in page is styled too.
func pagesStyle(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=3600")
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", pagesCSS)
}

// invalidJoin is the message of a join link or form whose token is unknown.
const invalidJoin = "auth.join.invalid"

// page is what every page of this package shows besides its own content: the words of its
// language and the link to the same page in the other.
type page struct{ W Words }

func (p *page) setWords(w Words) { p.W = w }

// keysOnly is the words of a server that was given none: the keys themselves.
func keysOnly(r *http.Request) Words {
	return Words{Lang: "en", HTMLLang: "en", Switch: r.URL.RequestURI(),
		T: func(key string, args ...any) string { return key }}
}

type joinView struct {
	page
	Name, Namespace, Arena string
	Instructor             bool
	Token                  string
}

// joinPage asks before it signs the browser in: loading a URL is something any page can make a
// browser do (an image, a link, a redirect), so a GET that set the session would let anyone sign
// the instructor's browser in as a participant of their choosing (login CSRF). The page's
// button posts the token to /join, which only a page of this site can do. A browser already
// signed in as the link's identity goes straight to the dashboard.
func (a *Auth) joinPage(c echo.Context) error {
	r := c.Request()
	noReferrer(c)
	token := r.URL.Query().Get("token")
	u, ok := a.authn.Lookup(token)
	if !ok {
		return a.renderPage(c, http.StatusUnauthorized, signInTmpl, &signInView{Message: invalidJoin})
	}
	if ck, err := r.Cookie(SessionCookie); err == nil {
		if cur, ok := a.authn.sessionUser(r.Context(), ck.Value); ok && cur.Name == u.Name {
			return c.Redirect(http.StatusSeeOther, dashboardOf(u))
		}
	}
	return a.renderPage(c, http.StatusOK, joinTmpl, &joinView{
		Name: u.Name, Namespace: u.Namespace, Arena: ArenaNamespace, Instructor: u.Role == RoleInstructor, Token: token,
	})
}

// join turns a token posted by the join page into a browser session. Only a same-origin post
// is taken (Sec-Fetch-Site, then Origin against Host): another site cannot sign a browser in.
// The cookie carries a random session id, not the token (see SessionResource); it is HttpOnly
// (scripts never see it), SameSite=Strict (no cross-site request carries it) and Secure over
// TLS.
func (a *Auth) join(c echo.Context) error {
	r := c.Request()
	noReferrer(c)
	if err := crossOrigin.Check(r); err != nil {
		return c.String(http.StatusForbidden, "cross-origin request refused: "+err.Error()+"\n")
	}
	r.Body = http.MaxBytesReader(c.Response(), r.Body, a.opts.MaxFormBytes)
	token := r.PostFormValue("token")
	u, ok := a.authn.Lookup(token)
	if !ok {
		return a.renderPage(c, http.StatusUnauthorized, signInTmpl, &signInView{Message: invalidJoin})
	}
	id, err := a.sessions.open(r.Context(), token)
	if err != nil {
		return err
	}
	c.SetCookie(&http.Cookie{
		Name:     SessionCookie,
		Value:    id,
		Path:     "/",
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
		MaxAge:   int(sessionTTL / time.Second),
	})
	return c.Redirect(http.StatusSeeOther, dashboardOf(u))
}

// noReferrer keeps the token of a join link out of Referer headers and caches.
func noReferrer(c echo.Context) {
	h := c.Response().Header()
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// dashboardOf is where a signed-in identity lands: a participant in its namespace.
func dashboardOf(u User) string {
	if u.Role == RoleParticipant && u.Namespace != "" {
		return "/?" + url.Values{"namespace": {u.Namespace}}.Encode()
	}
	return "/"
}

// instructorOnly answers a participant who opened a page of the instructor's, in the page's
// language, with the way back to their own dashboard.
func (a *Auth) instructorOnly(c echo.Context, u User) error {
	return a.renderPage(c, http.StatusForbidden, signInTmpl, &signInView{Message: "auth.instructorOnly", Back: dashboardOf(u)})
}

func (a *Auth) signInPage(c echo.Context) error {
	return a.renderPage(c, http.StatusUnauthorized, signInTmpl, &signInView{Message: "auth.signin.needed"})
}

// baseURL is the URL participants reach this server at: Options.PublicURL, else the address
// the request came in at. Never the Host header: whoever sends the request chooses it, and a
// kubeconfig naming another server would hand it the participant's token.
func (a *Auth) baseURL(r *http.Request) string {
	if a.opts.PublicURL != "" {
		return strings.TrimRight(a.opts.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := "localhost"
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		host = addr.String()
	}
	return scheme + "://" + host
}

type identityView struct {
	Name, Namespace, Role string
	JoinURL               string
	QRURL, KubeconfigURL  string
	// SeenKey and SeenN say when the identity last made a request: the catalog's key of an age
	// and its number; "" for never.
	SeenKey string
	SeenN   int
}

type workshopView struct {
	page
	Viewer     string // who signed in: the header names them, as the screens' do
	BaseURL    string
	Loopback   bool
	Identities []identityView
	// Participants counts the participants, Joined those who have made a request.
	Participants, Joined int
}

func (a *Auth) workshopPage(c echo.Context) error {
	base := a.baseURL(c.Request())
	v := workshopView{BaseURL: base}
	if u, ok := UserFrom(c.Request().Context()); ok {
		v.Viewer = u.Name
	}
	if u, err := url.Parse(base); err == nil {
		host := u.Hostname()
		ip := net.ParseIP(host)
		v.Loopback = host == "localhost" || ip != nil && ip.IsLoopback()
	}
	now := a.opts.Now()
	for _, name := range a.order {
		t := a.byName[name]
		iv := identityView{
			Name:          name,
			Namespace:     t.User.Namespace,
			Role:          string(t.User.Role),
			JoinURL:       base + "/join?" + url.Values{"token": {t.Token}}.Encode(),
			QRURL:         "/workshop/qr/" + url.PathEscape(name),
			KubeconfigURL: "/workshop/kubeconfig/" + url.PathEscape(name),
		}
		if ns := a.seen[name].Load(); ns != 0 {
			iv.SeenKey, iv.SeenN = seenAgo(now.Sub(time.Unix(0, ns)))
		}
		if t.User.Role == RoleParticipant {
			v.Participants++
			if iv.SeenKey != "" {
				v.Joined++
			}
		}
		v.Identities = append(v.Identities, iv)
	}
	c.Response().Header().Set("Referrer-Policy", "no-referrer")
	return a.renderPage(c, http.StatusOK, workshopTmpl, &v)
}

func (a *Auth) qrCode(c echo.Context) error {
	t, ok := a.byName[c.Param("name")]
	if !ok {
		return c.String(http.StatusNotFound, "no such identity\n")
	}
	code, err := qr.Encode(a.baseURL(c.Request())+"/join?"+url.Values{"token": {t.Token}}.Encode(), qr.M)
	if err != nil {
		return err
	}
	code.Scale = 6
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "image/png", code.PNG())
}

func (a *Auth) kubeconfig(c echo.Context) error {
	t, ok := a.byName[c.Param("name")]
	if !ok {
		return c.String(http.StatusNotFound, "no such identity\n")
	}
	ns := t.User.Namespace
	if ns == "" {
		ns = "default"
	}
	b, err := Kubeconfig(a.baseURL(c.Request()), ns, t.Token, "leaselab", a.opts.CAData)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", `attachment; filename="leaselab-`+t.User.Name+`.kubeconfig"`)
	return c.Blob(http.StatusOK, "application/yaml", b)
}

// renderPage writes a page in the request's language, with a link to it in the other.
func (a *Auth) renderPage(c echo.Context, code int, t *template.Template, v interface{ setWords(Words) }) error {
	words := keysOnly
	if a.opts.Words != nil {
		words = a.opts.Words
	}
	w := words(c.Request())
	v.setWords(w)
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Language", w.Lang)
	h.Add("Vary", "Accept-Language")
	if w.Keep != nil {
		c.SetCookie(w.Keep)
	}
	return c.HTMLBlob(code, buf.Bytes())
}

// signInView is a page that only says something: Message is a catalog key.
type signInView struct {
	page
	Message string
	Back    string // where the page's one link leads, "" for none
}

var signInTmpl = template.Must(template.New("signin").Funcs(pageFuncs).Parse(`<!doctype html>
<html lang="{{.W.HTMLLang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{{css}}">
<title>{{call .W.T "auth.signin.title"}} — leaselab</title></head>
<body><main><p class="lang no-print"><a href="{{.W.Switch}}" data-testid="lang-switch" title="{{call .W.T "auth.langTitle"}}">{{call .W.T "auth.lang"}}</a></p><h1>leaselab</h1><p data-testid="signin-message">{{call .W.T .Message}}</p>{{if .Back}}<p><a href="{{.Back}}">{{call .W.T "error.back"}}</a></p>{{end}}</main></body></html>
`))

var joinTmpl = template.Must(template.New("join").Funcs(pageFuncs).Parse(`<!doctype html>
<html lang="{{.W.HTMLLang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{{css}}">
<title>{{call .W.T "auth.join.title"}} — leaselab</title></head>
<body><main><p class="lang no-print"><a href="{{.W.Switch}}" data-testid="lang-switch" title="{{call .W.T "auth.langTitle"}}">{{call .W.T "auth.lang"}}</a></p><h1>leaselab</h1>
<p data-testid="join-message">{{if and .Instructor (eq .Name "instructor")}}{{call .W.T "auth.join.asTheInstructor"}}<strong data-testid="join-identity">{{.Name}}</strong>{{call .W.T "auth.join.asTheInstructorEnd"}}{{else}}{{call .W.T "auth.join.asPre"}}<strong data-testid="join-identity">{{.Name}}</strong>{{end}}{{if and .Instructor (eq .Name "instructor")}}{{else if .Instructor}}{{call .W.T "auth.join.instructor"}}{{else if .Namespace}}{{call .W.T "auth.join.nsPre"}}<code data-testid="join-namespace">{{.Namespace}}</code>{{call .W.T "auth.join.nsMid"}}<code>{{.Arena}}</code>{{call .W.T "auth.join.nsPost"}}{{else}}{{call .W.T "auth.join.end"}}{{end}}</p>
<form method="post" action="/join">
<input type="hidden" name="token" value="{{.Token}}">
<p><button type="submit" data-testid="join-button" autofocus>{{call .W.T "auth.join.button"}}</button></p>
</form>
<p><small>{{call .W.T "auth.join.stay" .Name}}</small></p>
</main></body></html>
`))

var workshopTmpl = template.Must(template.New("workshop").Funcs(pageFuncs).Parse(`<!doctype html>
<html lang="{{.W.HTMLLang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{{css}}">
<title>{{call .W.T "auth.ws.title"}} — leaselab</title></head>
<body><header class="top no-print"><a class="brand" href="/">lease<b>lab</b></a>
<nav aria-label="main"><a href="/">{{call .W.T "auth.ws.dashboard"}}</a> <a href="/scenarios">{{call .W.T "auth.nav.scenarios"}}</a> <a href="/timings" data-testid="nav-timings">{{call .W.T "auth.nav.timings"}}</a> <a href="/workshop" aria-current="page">{{call .W.T "auth.ws.title"}}</a></nav>
{{if .Viewer}}<span class="signed-in" data-testid="signed-in" title="{{call .W.T "layout.signedIn" .Viewer}}">{{.Viewer}}</span>{{end}}<a class="lang" href="{{.W.Switch}}" data-testid="lang-switch" title="{{call .W.T "auth.langTitle"}}">{{call .W.T "auth.lang"}}</a></header>
<main><h1>{{call .W.T "auth.ws.title"}}</h1>
<p class="lead">{{call .W.T "auth.ws.joinAt"}}<code data-testid="base-url">{{.BaseURL}}</code>{{call .W.T "auth.ws.lead"}}<code>arena</code>{{call .W.T "auth.ws.leadEnd"}}</p>
<p class="no-print" data-testid="joined" data-joined="{{.Joined}}" data-participants="{{.Participants}}">{{call .W.T "auth.ws.joined" .Joined .Participants}}</p>
{{if .Loopback}}<p class="warning no-print" data-testid="loopback-warning"><strong>{{call .W.T "auth.ws.loopback"}}</strong></p>{{end}}
<p class="toolbar no-print"><span>{{call .W.T "auth.ws.print"}}</span></p>
<ul class="cards">
{{range .Identities}}<li class="card{{if eq .Role "instructor"}} instructor no-print{{end}}" data-testid="identity" data-name="{{.Name}}" data-role="{{.Role}}">
<h2>{{.Name}}</h2>
<div class="seen no-print" data-testid="seen">{{if .SeenKey}}{{call $.W.T "auth.ws.seen" (call $.W.T .SeenKey .SeenN)}}{{else}}{{call $.W.T "auth.ws.notSeen"}}{{end}}</div>
<div class="role">{{call $.W.T (print "auth.role." .Role)}} · {{if .Namespace}}{{call $.W.T "auth.ws.writesIn"}}<code>{{.Namespace}}</code>{{call $.W.T "auth.ws.and"}}<code>arena</code>{{else}}{{call $.W.T "auth.ws.everywhere"}}{{end}}</div>
<img src="{{.QRURL}}" alt="{{call $.W.T "auth.ws.qrAlt" .Name}}" width="200" height="200" data-testid="qr">
<a class="link" href="{{.JoinURL}}" data-testid="join-link">{{.JoinURL}}</a>
<div class="actions"><a href="{{.KubeconfigURL}}" download data-testid="kubeconfig-link" aria-label="{{call $.W.T "auth.ws.kubeconfigOf" .Name}}">kubeconfig</a></div>
{{if eq .Role "instructor"}}<p class="keep" data-testid="instructor-note">{{call $.W.T "auth.ws.instructor"}}</p>{{end}}
</li>
{{end}}</ul>
</main></body></html>
`))

// seenAgo is how long ago, roughly, as the catalog's words for an age (web/play/ui's ageSays picks
// the same keys; this package takes its words from the catalog, not the catalog itself) and
// their number.
func seenAgo(d time.Duration) (key string, n int) {
	switch d = max(d, 0); {
	case d < time.Minute:
		return "age.s", int(d / time.Second)
	case d < time.Hour:
		return "age.min", int(d / time.Minute)
	case d < 48*time.Hour:
		return "age.h", int(d / time.Hour)
	}
	return "age.d", int(d / (24 * time.Hour))
}
