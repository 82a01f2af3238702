package ui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHeaderNamesWhoIsSignedIn: on a workshop server every page's header names the identity
// the browser signed in as, escaped, and the instructor's links the workshop page; a
// server without tokens shows neither.
func TestHeaderNamesWhoIsSignedIn(t *testing.T) {
	now := t0
	for _, c := range []struct {
		name       string
		tokens     bool
		user       string
		instructor bool
	}{
		{"participant", true, `p<1>&"`, false},
		{"instructor", true, "instructor", true},
		{"no tokens", false, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tu := mustNewUI(t, now, func(o *Options) {
				if !c.tokens {
					return
				}
				o.TabUser = func(*http.Request) (TabUser, bool) { return TabUser{Name: c.user}, true }
				o.MayCommandTabs = func(*http.Request) bool { return c.instructor }
			})
			for _, path := range []string{"/", "/scenarios", "/play?namespace=default&lease=demo"} {
				doc := tu.mustGetDoc(t, path, http.StatusOK)
				chip := doc.Find(`header [data-testid="signed-in"]`)
				if got := strings.TrimSpace(chip.Text()); got != c.user {
					t.Errorf("%s: signed in as %q, want %q", path, got, c.user)
				}
				if n := doc.Find(`header [data-testid="nav-workshop"][href="/workshop"]`).Length(); (n == 1) != c.instructor {
					t.Errorf("%s: %d links to the workshop page, instructor %v", path, n, c.instructor)
				}
			}
		})
	}
	// What a participant typed as a name is text, never markup.
	tu := mustNewUI(t, now, func(o *Options) {
		o.TabUser = func(*http.Request) (TabUser, bool) { return TabUser{Name: `<b>x</b>`}, true }
	})
	w := tu.do(t, httptest.NewRequest(http.MethodGet, "/scenarios", nil))
	if body := w.Body.String(); strings.Contains(body, "<b>x</b>") || !strings.Contains(body, "&lt;b&gt;x&lt;/b&gt;") {
		t.Errorf("the signed-in name is not escaped")
	}
}
