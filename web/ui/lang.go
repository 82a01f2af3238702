package ui

import (
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/templates/i18n"
)

// langCookieAge is how long the language switch's choice is kept.
const langCookieAge = 365 * 24 * time.Hour

// Language is the middleware of every screen: it picks the request's language (a lang query
// parameter, then the switch's cookie, then Accept-Language; English by default), puts it in
// the request's context, where the templates and i18n.T read it, and, when the request names
// a language with ?lang=, keeps the choice in the cookie. The API (/api, /apis) does not go
// through it: its Status messages stay English, as kube-apiserver's do.
func Language(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		q := r.URL.Query().Get("lang")
		var cookie string
		if ck, err := r.Cookie(i18n.CookieName); err == nil {
			cookie = ck.Value
		}
		lang := i18n.Negotiate(q, cookie, r.Header.Get("Accept-Language"))
		if l, ok := i18n.Parse(q); ok {
			http.SetCookie(c.Response(), &http.Cookie{
				Name: i18n.CookieName, Value: string(l), Path: "/",
				MaxAge: int(langCookieAge / time.Second), SameSite: http.SameSiteLaxMode,
			})
		}
		h := c.Response().Header()
		h.Add("Vary", "Accept-Language")
		h.Add("Vary", "Cookie")
		ctx := i18n.WithSwitch(i18n.WithLang(r.Context(), lang), langSwitch(r.URL, lang))
		c.SetRequest(r.WithContext(ctx))
		return next(c)
	}
}

// langSwitch is the link of the header's language switch: the same page in the other
// language, with its other query parameters kept.
func langSwitch(u *url.URL, lang i18n.Lang) string {
	other := i18n.ZH
	if lang == i18n.ZH {
		other = i18n.EN
	}
	q := u.Query()
	q.Set("lang", string(other))
	return u.Path + "?" + q.Encode()
}
