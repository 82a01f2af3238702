package ui

import (
	"net/http"
	"net/http/httptest"
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
