package ui

import (
	"html"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/web/judge"
)

// TestHeaderNamesWhoIsSignedIn: on a workshop server every page's header names the identity
// the browser signed in as, escaped, and the instructor's links the workshop page; a
// server without tokens shows neither.
func TestHeaderNamesWhoIsSignedIn(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
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

// TestUnknownPathForBrowsers: a path nothing serves gets the screens' 404 page in a browser,
// with the way back to the dashboard, and Echo's JSON 404 for any other client.
func TestUnknownPathForBrowsers(t *testing.T) {
	tu := mustNewUI(t, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	for _, path := range []string{"/leases", "/leases/default", "/nope/<b>"} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
		w := tu.do(t, r)
		body := w.Body.String()
		if w.Code != http.StatusNotFound || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") ||
			!strings.Contains(body, "There is no page at "+html.EscapeString(path)+".") || !strings.Contains(body, `href="/"`) {
			t.Errorf("GET %s from a browser: %d %s\n%s", path, w.Code, w.Header().Get("Content-Type"), body)
		}
		w = tu.do(t, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusNotFound || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			t.Errorf("GET %s from a program: %d %s", path, w.Code, w.Header().Get("Content-Type"))
		}
	}
}

// TestScaledLeaseCard: a lesson's lease written at 2x (judge.TimeScaleAnnotation) shows the
// leaseDurationSeconds it wrote, and its ring drains over the hold the judge counts, half of
// that on the server's clock.
func TestScaledLeaseCard(t *testing.T) {
	now := t0.Add(time.Hour)
	tu := mustNewUI(t, now)
	l := lease("default", "fast", "alice", now.Add(-time.Second), 10, 0)
	l.Annotations = map[string]string{judge.TimeScaleAnnotation: "2"}
	tu.putLease(t, l, now.Add(-time.Second))
	doc := tu.mustGetDoc(t, "/", http.StatusOK)
	card := doc.Find(`[data-lease-card][data-name=fast]`)
	ring := card.Find(`[data-ring]`)
	since, _ := strconv.ParseInt(ring.AttrOr("data-since", ""), 10, 64)
	expires, _ := strconv.ParseInt(ring.AttrOr("data-expires", ""), 10, 64)
	if card.AttrOr("data-duration", "") != "10" || ring.AttrOr("data-duration", "") != "10" || expires-since != 5000 {
		t.Errorf("card duration %q, ring %q over %d ms, want 10 s written and a 5,000 ms hold",
			card.AttrOr("data-duration", ""), ring.AttrOr("data-duration", ""), expires-since)
	}
	if got := strings.TrimSpace(ring.Find(`[data-testid=remaining]`).Text()); got != "4.0 s" {
		t.Errorf("remaining %q, want 4.0 s (5 s of hold, 1 s gone)", got)
	}
}
