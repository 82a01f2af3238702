package ui

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/wasm/tabproto"
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

// TestParticipantIsOfferedWhatTheyMayDo: a participant's pages offer the writes and fault
// commands the API and the hub would accept, and no others. Their forms start in their own
// namespace, the header leads to their own dashboard, their own tabs take their commands and
// another participant's refuse them. The instructor is offered everything.
func TestParticipantIsOfferedWhatTheyMayDo(t *testing.T) {
	for _, c := range []struct {
		name       string
		user       TabUser
		instructor bool
	}{
		{"participant", TabUser{Name: "p1", Namespaces: []string{"p1", "arena"}}, false},
		{"instructor", TabUser{Name: "instructor"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tu := mustNewUI(t, t0, func(o *Options) {
				o.TabUser = func(*http.Request) (TabUser, bool) { return c.user, true }
				o.MayCommandTabs = func(*http.Request) bool { return c.instructor }
			})
			tu.putLease(t, lease("p1", "a", "", t0, 10, 0), t0)
			tu.putLease(t, lease("p2", "b", "", t0, 10, 0), t0)
			tabs := map[string]string{}
			for _, owner := range []string{"p1", "p2"} {
				tab := tu.hub.addTab(TabUser{Name: owner, Namespaces: []string{owner, "arena"}}, func() {})
				if err := tu.hub.report(tab, tabproto.Report{Identity: "tab-" + owner, Namespace: owner, Lease: "x", State: "follower", Role: "follower"}); err != nil {
					t.Fatal(err)
				}
				tabs[owner] = tab.id
			}
			mine := func(ns string) string { return strconv.FormatBool(c.instructor || ns == "p1") }

			doc := tu.mustGetDoc(t, "/", http.StatusOK)
			for _, ns := range []string{"p1", "p2"} {
				if got := doc.Find(`[data-lease-card][data-namespace="`+ns+`"]`).AttrOr("data-writable", ""); got != mine(ns) {
					t.Errorf("card in %s: data-writable=%q, want %s", ns, got, mine(ns))
				}
				if got := doc.Find(`[data-tab-row][data-owner="`+ns+`"]`).AttrOr("data-commandable", ""); got != mine(ns) {
					t.Errorf("tab of %s: data-commandable=%q, want %s", ns, got, mine(ns))
				}
			}
			home, dash := "default", "/"
			if !c.instructor {
				home, dash = "p1", "/?namespace=p1"
			}
			if got := doc.Find("#new-lease-namespace").AttrOr("value", ""); got != home {
				t.Errorf("New lease starts in %q, want %q", got, home)
			}
			if got := doc.Find("header nav a").First().AttrOr("href", ""); got != dash {
				t.Errorf("the header's dashboard link is %q, want %q", got, dash)
			}
			for filter, want := range map[string]string{"p2": pick(c.instructor, "p2", "p1"), "arena": "arena", "p1": "p1"} {
				doc := tu.mustGetDoc(t, "/?namespace="+filter, http.StatusOK)
				if got := doc.Find("#open-tab-namespace").AttrOr("value", ""); got != want {
					t.Errorf("showing %s, Open tab opens in %q, want %q", filter, got, want)
				}
			}
			for _, ns := range []string{"p1", "p2"} {
				doc := tu.mustGetDoc(t, "/leases/"+ns+"/"+map[string]string{"p1": "a", "p2": "b"}[ns], http.StatusOK)
				if got := doc.Find("#lease-page").AttrOr("data-writable", ""); got != mine(ns) {
					t.Errorf("lease page in %s: data-writable=%q, want %s", ns, got, mine(ns))
				}
			}

			// A past moment's tabs, read back from the views on record, still say who opened them.
			past := tu.mustGetDoc(t, "/?at="+url.QueryEscape(t0.UTC().Format(momentLayout)), http.StatusOK)
			for _, owner := range []string{"p1", "p2"} {
				if got := past.Find(`[data-tab-row][data-identity="tab-`+owner+`"]`).AttrOr("data-owner", ""); got != owner {
					t.Errorf("at a past moment, tab-%s was opened by %q, want %s", owner, got, owner)
				}
			}

			// The hub takes a participant's command for their own tab only.
			if err := tu.hub.CommandOwn("p1", tabs["p2"], tabproto.Command{Type: tabproto.CommandPause}); !errors.Is(err, ErrNotYours) {
				t.Errorf("p1 pausing p2's tab: %v, want ErrNotYours", err)
			}
			if err := tu.hub.CommandOwn("p1", tabs["p1"], tabproto.Command{Type: tabproto.CommandPause}); err != nil {
				t.Errorf("p1 pausing their own tab: %v", err)
			}
		})
	}
}

func pick(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
