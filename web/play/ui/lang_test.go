package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/templates/i18n"
)

// TestSwitchAfterAForm: the answer to a form has no page of its own to load again, so its
// language switch loads the page the form was on (same origin only), else the dashboard; any
// other page's switch loads itself.
func TestSwitchAfterAForm(t *testing.T) {
	for _, c := range []struct {
		method, target, referer, want string
	}{
		{http.MethodGet, "/leases/default/x?at=2026-11-27T09:00:00Z", "", "/leases/default/x?at=2026-11-27T09%3A00%3A00Z&lang=zh"},
		{http.MethodPost, "/ui/leases", "http://lab.example/?namespace=participant-01&lang=en", "/?lang=zh&namespace=participant-01"},
		{http.MethodPost, "/ui/leases/p2/demo/delete", "http://lab.example/leases/p2/demo", "/leases/p2/demo?lang=zh"},
		{http.MethodPost, "/ui/leases", "https://elsewhere.example/?namespace=x", "/?lang=zh"},
		{http.MethodPost, "/ui/leases", "", "/?lang=zh"},
	} {
		r := httptest.NewRequest(c.method, "http://lab.example"+c.target, nil)
		if c.referer != "" {
			r.Header.Set("Referer", c.referer)
		}
		if got := i18n.SwitchHref(switchBase(r), i18n.EN); got != c.want {
			t.Errorf("%s %s from %q: the switch loads %q, want %q", c.method, c.target, c.referer, got, c.want)
		}
	}
}

// TestFragmentInThePagesLanguage: a part a page's script fetches comes in the page's language
// (PageLangHeader), not in the one another tab last switched the cookie to, and the cookie is
// left as it is; a ?lang= still wins and is kept.
func TestFragmentInThePagesLanguage(t *testing.T) {
	tu := mustNewUI(t, t0)
	tu.putLease(t, lease("default", "demo", "a", t0, 10, 0), t0)
	get := func(target, cookie, page string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.AddCookie(&http.Cookie{Name: i18n.CookieName, Value: cookie})
		if page != "" {
			r.Header.Set(i18n.PageLangHeader, page)
		}
		return tu.do(t, r)
	}
	for _, c := range []struct {
		target, cookie, page, want string
		keeps                      bool
	}{
		{"/leases/default/demo/live", "en", "zh-CN", "持有", false},
		{"/leases/default/demo/live", "zh", "en", "HELD", false},
		{"/leases/default/demo/live", "zh", "", "持有", false},
		{"/leases/default/demo/live?lang=en", "zh", "zh-CN", "HELD", true},
		{"/leases/default/demo/live?page-lang=zh-CN", "en", "", "持有", false},
	} {
		w := get(c.target, c.cookie, c.page)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%s, cookie %s, page %q: status %d, want %q in it", c.target, c.cookie, c.page, w.Code, c.want)
		}
		if kept := w.Header().Get("Set-Cookie") != ""; kept != c.keeps {
			t.Errorf("%s, cookie %s, page %q: keeps the choice %v, want %v", c.target, c.cookie, c.page, kept, c.keeps)
		}
	}
}
