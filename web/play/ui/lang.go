package ui

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/templates/i18n"
)

// Language is the middleware of every screen: it picks the request's language (a lang query
// parameter, then the switch's cookie, then Accept-Language; English by default), puts it in
// the request's context, where the templates and i18n.T read it, and, when the request names
// a language with ?lang=, keeps the choice in the cookie. The API (/api, /apis) does not go
// through it: its Status messages stay English, as kube-apiserver's do.
func Language(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		lang, keep := i18n.FromRequest(r)
		if keep != nil {
			http.SetCookie(c.Response(), keep)
		}
		h := c.Response().Header()
		h.Add("Vary", "Accept-Language")
		h.Add("Vary", "Cookie")
		ctx := i18n.WithSwitch(i18n.WithLang(r.Context(), lang), i18n.SwitchHref(switchBase(r), lang))
		c.SetRequest(r.WithContext(ctx))
		return next(c)
	}
}

// switchBase is the page the language switch loads: the request's own, but for the answer to a
// form (a POST), which has no page of its own to load again: then the page the form was on
// (its same-origin Referer), else the dashboard.
func switchBase(r *http.Request) *url.URL {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return r.URL
	}
	if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host && ref.Path != "" {
		return &url.URL{Path: ref.Path, RawQuery: ref.RawQuery}
	}
	return &url.URL{Path: "/"}
}
