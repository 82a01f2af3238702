package i18n

import (
	"net/http"
	"net/url"
	"time"
)

// cookieAge is how long the language switch's choice is kept.
const cookieAge = 365 * 24 * time.Hour

// PageLangHeader carries the language of the page a script fetches a part of (its live
// fragment, say): the part comes in the page's language, whichever another tab switched the
// cookie to since, and the choice is not kept. PageLangParam says the same in the URL of a
// WebSocket, which can carry no header of its own.
const (
	PageLangHeader = "X-Leaselab-Page-Lang"
	PageLangParam  = "page-lang"
)

// FromRequest picks a request's language (Negotiate over its lang query parameter, the
// switch's cookie and Accept-Language; PageLangHeader before the cookie) and, when the request
// names a language with ?lang=, returns the cookie that keeps the choice; nil otherwise.
func FromRequest(r *http.Request) (Lang, *http.Cookie) {
	q := r.URL.Query().Get("lang")
	if q == "" {
		for _, page := range []string{r.Header.Get(PageLangHeader), r.URL.Query().Get(PageLangParam)} {
			if l, ok := Parse(page); ok {
				return l, nil
			}
		}
	}
	var cookie string
	if ck, err := r.Cookie(CookieName); err == nil {
		cookie = ck.Value
	}
	lang := Negotiate(q, cookie, r.Header.Get("Accept-Language"))
	l, ok := Parse(q)
	if !ok {
		return lang, nil
	}
	return lang, &http.Cookie{Name: CookieName, Value: string(l), Path: "/",
		MaxAge: int(cookieAge / time.Second), SameSite: http.SameSiteLaxMode}
}

// SwitchHref is the link of a language switch on the page at u, shown in l: the same page in
// the other language, with its other query parameters kept.
func SwitchHref(u *url.URL, l Lang) string {
	q := u.Query()
	q.Set("lang", string(l.Other()))
	return u.Path + "?" + q.Encode()
}
