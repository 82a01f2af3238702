package auth

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/leaselab/leaselab/templates/i18n"
)

// TestJoin: GET /join only asks (no cookie), so that loading a URL cannot sign a browser in;
// a same-origin POST of the token sets the session and 303s to the dashboard; a cross-site
// POST is refused with 403, and a bad token gets the invalid-link page, neither with a cookie.
func TestJoin(t *testing.T) {
	e := pagesServer("tp<&'")
	do := func(req *http.Request) *httptest.ResponseRecorder {
		t.Helper()
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		for _, k := range []string{"Referrer-Policy", "Cache-Control"} {
			if want := map[string]string{"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}[k]; rec.Header().Get(k) != want {
				t.Errorf("%s %s: %s %q, want %q", req.Method, req.URL, k, rec.Header().Get(k), want)
			}
		}
		return rec
	}
	post := func(token string, header map[string]string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "http://lab.example/join", strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		return do(req)
	}
	noCookie := func(name string, rec *httptest.ResponseRecorder) {
		t.Helper()
		if sc := rec.Header().Values("Set-Cookie"); len(sc) != 0 {
			t.Errorf("%s sets a cookie: %q", name, sc)
		}
	}

	// GET: the confirmation page, the token escaped in its form, and no cookie.
	rec := do(httptest.NewRequest(http.MethodGet, "http://lab.example/join?"+url.Values{"token": {"tp<&'"}}.Encode(), nil))
	body := rec.Body.String()
	noCookie("GET /join", rec)
	if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="join-button"`) ||
		!strings.Contains(body, `Join the workshop as <strong data-testid="join-identity">p1</strong>`) ||
		!strings.Contains(body, `<code data-testid="join-namespace">p1</code>`) ||
		!strings.Contains(body, `<form method="post" action="/join">`) ||
		!strings.Contains(body, `name="token" value="tp&lt;&amp;&#39;"`) {
		t.Errorf("GET /join: %d %s", rec.Code, body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("GET /join: CSP %q", csp)
	}
	if strings.Contains(body, "<script") {
		t.Errorf("GET /join has a script: %s", body)
	}
	rec = do(httptest.NewRequest(http.MethodGet, "http://lab.example/join?token=ti", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `as the <strong data-testid="join-identity">instructor</strong>: you may write in every namespace.`) {
		t.Errorf("GET /join as the instructor: %d %s", rec.Code, rec.Body)
	}
	rec = do(httptest.NewRequest(http.MethodGet, "http://lab.example/join?token=nope", nil))
	noCookie("GET /join with a bad token", rec)
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "not valid") {
		t.Errorf("GET /join with a bad token: %d %s", rec.Code, rec.Body)
	}

	// A browser already signed in as the link's identity goes straight to the dashboard; one
	// signed in as another is asked, and so is one whose cookie is a token, not a session.
	session := func(token string) *http.Cookie {
		t.Helper()
		cookies := post(token, map[string]string{"Sec-Fetch-Site": "same-origin"}).Result().Cookies()
		if len(cookies) != 1 {
			t.Fatalf("POST /join: cookies %+v", cookies)
		}
		return cookies[0]
	}
	req := httptest.NewRequest(http.MethodGet, "http://lab.example/join?token=ti", nil)
	req.AddCookie(session("ti"))
	if rec := do(req); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" {
		t.Errorf("GET /join signed in as the same identity: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	for _, ck := range []*http.Cookie{session("tp<&'"), {Name: SessionCookie, Value: "ti"}} {
		req = httptest.NewRequest(http.MethodGet, "http://lab.example/join?token=ti", nil)
		req.AddCookie(ck)
		if rec := do(req); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "join-button") {
			t.Errorf("GET /join with the cookie %q: %d %s", ck.Value, rec.Code, rec.Body)
		}
	}

	// POST from the join page itself: the session, and the participant's dashboard.
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "same-origin", "Origin": "http://lab.example"},
		{"Origin": "http://lab.example"},
	} {
		rec := post("tp<&'", h)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/?namespace=p1" {
			t.Errorf("POST /join %v: %d %q", h, rec.Code, rec.Header().Get("Location"))
		}
		// The cookie is a session of its own, not the token, which is the API's credential too.
		cookies := rec.Result().Cookies()
		if len(cookies) != 1 || cookies[0].Name != SessionCookie || cookies[0].Value == "" || strings.Contains(cookies[0].Value, "tp<") || strings.Contains(cookies[0].Value, "tp%3C") ||
			!cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/" {
			t.Errorf("POST /join %v: cookies %+v", h, cookies)
		}
	}
	if rec := post("ti", map[string]string{"Sec-Fetch-Site": "same-origin"}); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/" {
		t.Errorf("POST /join as the instructor: %d %q", rec.Code, rec.Header().Get("Location"))
	}

	// Another site's form (login CSRF): refused, with or without Origin, and no cookie.
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site", "Origin": "http://other.lab.example"},
		{"Origin": "https://evil.example"},
	} {
		rec := post("tp<&'", h)
		noCookie("cross-site POST /join", rec)
		if rec.Code != http.StatusForbidden {
			t.Errorf("POST /join %v: %d, want 403", h, rec.Code)
		}
	}

	// A bad or missing token: the invalid-link page, no cookie.
	for _, tok := range []string{"nope", ""} {
		rec := post(tok, map[string]string{"Sec-Fetch-Site": "same-origin"})
		noCookie("POST /join with a bad token", rec)
		if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "not valid") {
			t.Errorf("POST /join with token %q: %d %s", tok, rec.Code, rec.Body)
		}
	}
}

// TestPagesStyle: the sign-in, join and workshop pages share a stylesheet anyone may load (the
// sign-in page is shown before any sign-in), and the workshop page lists a card per identity.
func TestPagesStyle(t *testing.T) {
	e := pagesServer("tp")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://lab.example/join/pages.css", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/css") || !strings.Contains(rec.Body.String(), "@media print") {
		t.Fatalf("stylesheet: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	req := httptest.NewRequest(http.MethodGet, "http://lab.example/workshop", nil)
	req.Header.Set("Authorization", "Bearer ti")
	rec = httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `href="`+pagesCSSURL+`"`) || !strings.HasPrefix(pagesCSSURL, "/join/pages.css?v=") || strings.Count(body, `data-testid="identity"`) != 2 {
		t.Errorf("workshop page: %d\n%s", rec.Code, body)
	}
	// It has the screens' way around (not printed).
	if !strings.Contains(body, `<header class="top no-print">`) || !strings.Contains(body, `<a href="/scenarios">Scenarios</a> <a href="/timings" data-testid="nav-timings">Timings</a>`) ||
		!strings.Contains(body, `<a href="/workshop" aria-current="page">Workshop</a>`) {
		t.Errorf("workshop page: no header:\n%s", body)
	}
	// Its header names who signed in, as every screen's does.
	if !strings.Contains(body, `data-testid="signed-in" title="signed in as instructor">instructor</span>`) {
		t.Errorf("workshop page: the header does not name the instructor:\n%s", body)
	}
	// The page is printed to hand the cards round: the instructor's card, whose link signs in
	// with every right, is left out of the print; the participants' are not.
	if !strings.Contains(body, `<li class="card" data-testid="identity" data-name="p1"`) ||
		!strings.Contains(body, `<li class="card instructor no-print" data-testid="identity" data-name="instructor"`) ||
		!strings.Contains(body, `data-testid="instructor-note"`) {
		t.Errorf("workshop page: the instructor's card is not kept off the print:\n%s", body)
	}
	css := httptest.NewRecorder()
	e.ServeHTTP(css, httptest.NewRequest(http.MethodGet, "http://lab.example/join/pages.css", nil))
	if !regexp.MustCompile(`@media print \{[^@]*\.no-print \{ display: none; \}`).MatchString(css.Body.String()) {
		t.Errorf("pages.css does not hide .no-print in print")
	}
}

// catalogWords are the screens' words, as the server gives them (web.AuthWords, which this
// package's tests cannot import).
func catalogWords(r *http.Request) Words {
	lang, keep := i18n.FromRequest(r)
	return Words{Lang: string(lang), HTMLLang: lang.HTMLLang(), Switch: i18n.SwitchHref(r.URL, lang), T: lang.T, Keep: keep}
}

// pagesServer serves the pages of an Auth with a participant p1 (token participantToken) and
// the instructor (token "ti").
func pagesServer(participantToken string) *echo.Echo {
	a := New(nil, countingStore{}, Options{Tokens: []Token{
		{participantToken, User{Name: "p1", Role: RoleParticipant, Namespace: "p1"}},
		{"ti", User{Name: "instructor", Role: RoleInstructor}},
	}, Words: catalogWords})
	e := echo.New()
	e.Use(a.Middleware)
	a.Register(e)
	return e
}

// TestPagesSpeakChinese: the join, sign-in and workshop pages speak the language the screens
// pick (?lang=, the switch's cookie, Accept-Language), link the same page in the other, and
// ?lang= keeps the choice for the screens that follow.
func TestPagesSpeakChinese(t *testing.T) {
	e := pagesServer("tp")
	get := func(target string, header map[string]string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, target, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	rec := get("http://lab.example/join?token=tp&lang=zh", nil)
	body := rec.Body.String()
	if !strings.Contains(body, `<html lang="zh-CN">`) ||
		!strings.Contains(body, `以 <strong data-testid="join-identity">p1</strong> 的身份加入工作坊，在命名空间 <code data-testid="join-namespace">p1</code>`) ||
		!strings.Contains(body, `>加入</button>`) || rec.Header().Get("Content-Language") != "zh" {
		t.Errorf("GET /join?lang=zh is not in Chinese:\n%s", body)
	}
	if !strings.Contains(body, `href="/join?lang=en&amp;token=tp" data-testid="lang-switch"`) {
		t.Errorf("GET /join?lang=zh has no switch to English:\n%s", body)
	}
	if ck := rec.Result().Cookies(); len(ck) != 1 || ck[0].Value != "zh" {
		t.Errorf("GET /join?lang=zh keeps no choice: %v", ck)
	}
	if body := get("http://lab.example/join?token=nope", map[string]string{"Accept-Language": "zh-CN,zh;q=0.9"}).Body.String(); !strings.Contains(body, "这个加入链接无效") {
		t.Errorf("the invalid-link page ignores Accept-Language:\n%s", body)
	}
	if body := get("http://lab.example/join?token=ti", map[string]string{"Cookie": "leaselab-lang=zh"}).Body.String(); !strings.Contains(body, `以<strong data-testid="join-identity">instructor</strong>的身份加入工作坊：你可以在每个命名空间中写入。`) {
		t.Errorf("the instructor's join page ignores the language cookie:\n%s", body)
	}
	body = get("http://lab.example/workshop", map[string]string{"Authorization": "Bearer ti", "Accept-Language": "zh"}).Body.String()
	for _, want := range []string{`<h1>工作坊</h1>`, `参与者 · 写入 <code>p1</code> 和 <code>arena</code>`, `仅供你自己使用`, `alt="p1 的加入链接二维码"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the workshop page in Chinese lacks %q:\n%s", want, body)
		}
	}
	if body := get("http://lab.example/workshop", map[string]string{"Authorization": "Bearer ti"}).Body.String(); !strings.Contains(body, `<h1>Workshop</h1>`) || !strings.Contains(body, `participant · writes in <code>p1</code> and <code>arena</code>`) {
		t.Errorf("the workshop page is not in English by default:\n%s", body)
	}
}

// TestWorkshopPageSaysWhoJoined: the workshop page tells the instructor which identities have
// made a request, and how long ago, and how many participants have joined.
func TestWorkshopPageSaysWhoJoined(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	clock := now
	a := New(nil, countingStore{}, Options{Tokens: []Token{
		{"tp1", User{Name: "p1", Role: RoleParticipant, Namespace: "p1"}},
		{"tp2", User{Name: "p2", Role: RoleParticipant, Namespace: "p2"}},
		{"ti", User{Name: "instructor", Role: RoleInstructor}},
	}, Words: catalogWords, Now: func() time.Time { return clock }})
	e := echo.New()
	e.Use(a.Middleware)
	a.Register(e)
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "dashboard") })
	get := func(path, token string) string {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, rec.Code)
		}
		return rec.Body.String()
	}
	get("/", "tp1") // p1 joins at 9:00:00
	clock = now.Add(90 * time.Second)
	body := get("/workshop", "ti")
	for _, want := range []string{
		`data-testid="joined" data-joined="1" data-participants="2">1 of 2 participants have joined`,
		`data-name="p1"`, `seen 1 min ago`, `not joined yet`, `seen 0 s ago`, // the instructor, now
		`aria-label="kubeconfig of p1"`, // each download link says whose it is
	} {
		if !strings.Contains(body, want) {
			t.Errorf("workshop page lacks %q:\n%s", want, body)
		}
	}
}

// TestWorkshopPageRefusesParticipants: a participant who opens the instructor's page gets a
// page in their language that says why and leads back to their own dashboard.
func TestWorkshopPageRefusesParticipants(t *testing.T) {
	e := pagesServer("tp")
	req := httptest.NewRequest(http.MethodGet, "/workshop?lang=zh", nil)
	req.Header.Set("Authorization", "Bearer tp")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	body := rec.Body.String()
	if rec.Code != http.StatusForbidden || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") ||
		!strings.Contains(body, "只有讲师可以打开此页面。") || !strings.Contains(body, `<a href="/?namespace=p1">`) {
		t.Errorf("participant opens /workshop: %d %s\n%s", rec.Code, rec.Header().Get("Content-Type"), body)
	}
}

// TestKubeconfigServerWithoutPublicURL: without a public URL, a kubeconfig names the address
// the request came in at, not its Host header, which whoever sends the request chooses.
func TestKubeconfigServerWithoutPublicURL(t *testing.T) {
	e := pagesServer("tp")
	req := httptest.NewRequest(http.MethodGet, "http://evil.example/workshop/kubeconfig/p1", nil)
	req.Header.Set("Authorization", "Bearer ti")
	local := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 8443}
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, net.Addr(local)))
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	cfg, err := clientcmd.Load(rec.Body.Bytes())
	if rec.Code != http.StatusOK || err != nil {
		t.Fatalf("kubeconfig: %d %v %s", rec.Code, err, rec.Body)
	}
	if s := cfg.Clusters["leaselab"].Server; s != "http://192.0.2.7:8443" {
		t.Errorf("kubeconfig server %s, want http://192.0.2.7:8443", s)
	}
}
