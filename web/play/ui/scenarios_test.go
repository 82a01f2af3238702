package ui

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

// TestScenarioPageIdle: a scenario that is not running tells whoever may start it to do so,
// and tells a participant, who may not, that it appears when the instructor starts it: the
// page never asks a viewer for a Start it does not show.
func TestScenarioPageIdle(t *testing.T) {
	for _, c := range []struct {
		name    string
		may     bool
		control int
		says    string
	}{
		{"instructor", true, 1, "Start it to bring its candidates up"},
		{"participant", false, 0, "as soon as the instructor starts it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tu := mustNewUI(t, t0, func(o *Options) { o.MayCommandTabs = func(*http.Request) bool { return c.may } })
			for _, path := range []string{"/scenarios/leader-crash?seed=7", "/scenarios/leader-crash/live?seed=7"} {
				doc := tu.mustGetDoc(t, path, http.StatusOK)
				idle := strings.TrimSpace(doc.Find(`[data-testid="scenario-idle"]`).Text())
				if !strings.Contains(idle, c.says) {
					t.Errorf("%s: idle says %q, want it to contain %q", path, idle, c.says)
				}
			}
			doc := tu.mustGetDoc(t, "/scenarios/leader-crash?seed=7", http.StatusOK)
			if n := doc.Find(`[data-testid="start"]`).Length(); n != c.control {
				t.Errorf("%d start controls, want %d", n, c.control)
			}
			// A participant may not write in the run's namespace: no link to a tab that would.
			if n := doc.Find(`[data-testid="scenario-join"]`).Length(); n != c.control {
				t.Errorf("%d links to join the run with a tab, want %d", n, c.control)
			}
		})
	}
}

// TestMemberCardShowsBelief: a lesson's card whose badge shows a fault (paused, cut off) still
// says when the candidate believes it leads: the narration's "two leaders" is on the cards.
func TestMemberCardShowsBelief(t *testing.T) {
	for _, tc := range []struct {
		role  candidate.Role
		state candidate.State
		want  bool
	}{
		{candidate.RoleLeader, candidate.StatePaused, true},
		{candidate.RoleLeader, candidate.StatePartitioned, true},
		{candidate.RoleLeader, candidate.StateLeader, false}, // the badge says it
		{candidate.RoleFollower, candidate.StatePaused, false},
		{candidate.RoleNone, candidate.StateStopped, false},
	} {
		m := memberView(i18n.EN, candidate.Snapshot{Identity: "alice", Role: tc.role, State: tc.state}, 1)
		if m.Believes != tc.want {
			t.Errorf("%s %s: believes %v, want %v", tc.role, tc.state, m.Believes, tc.want)
		}
	}
}

// TestMemberCardFaultsInTheReadersLanguage: a card's faults are worded in the page's language.
func TestMemberCardFaultsInTheReadersLanguage(t *testing.T) {
	s := candidate.Snapshot{Identity: "alice", Role: candidate.RoleLeader, State: candidate.StatePaused,
		Faults: tabproto.Faults{Paused: true}}
	if got := memberView(i18n.ZH, s, 1).Faults; !slices.Equal(got, []string{"已暂停"}) {
		t.Errorf("Chinese card's faults: %q", got)
	}
	if got := memberView(i18n.EN, s, 1).Faults; !slices.Equal(got, []string{"paused"}) {
		t.Errorf("English card's faults: %q", got)
	}
}

// TestCountdownSaysWhatComesNext: a follower's countdown that has run out says what it does
// next instead of a bare 0.0 s.
func TestCountdownSaysWhatComesNext(t *testing.T) {
	now := t0.Add(time.Minute)
	m := memberView(i18n.EN, candidate.Snapshot{Identity: "bob", Role: candidate.RoleFollower, State: candidate.StateFollower,
		Now: now, ObservedExpiry: now.Add(-time.Second), LeaseDurationSeconds: 10}, 1)
	if m.LeftMs > 0 || m.Countdown != "lease expires, by its clock, in" || m.Elapsed != "lease expired, by its clock: it tries to take it at its next try" {
		t.Errorf("card %+v", m)
	}
}

// TestJoinLinkOfACoordinatedLesson: the tab that joins a Coordinated Leader Election lesson is a
// coordinated candidate with the versions of the cast's newest member; another lesson's is not.
func TestJoinLinkOfACoordinatedLesson(t *testing.T) {
	tu := mustNewUI(t, t0)
	for _, c := range []struct {
		name string
		want url.Values
	}{
		{"cle-rolling-upgrade", url.Values{"coordinated": {"true"}, "binaryVersion": {"1.36.0"}, "emulationVersion": {"1.35.0"}}},
		{"leader-crash", url.Values{"coordinated": nil, "binaryVersion": nil, "emulationVersion": nil}},
	} {
		doc := tu.mustGetDoc(t, "/scenarios/"+c.name+"?seed=7", http.StatusOK)
		href, ok := doc.Find(`[data-testid="scenario-join"]`).Attr("href")
		u, err := url.Parse(href)
		if !ok || err != nil {
			t.Fatalf("%s: no join link (%q, %v)", c.name, href, err)
		}
		for k, want := range c.want {
			if got := u.Query()[k]; strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("%s: the join link's %s is %q, want %q (%s)", c.name, k, got, want, href)
			}
		}
	}
}

// TestScenarioLibraryShowsLengthsAndASession: /scenarios lists at least 16 lessons, each with its
// length at 1×, the ones retold from the field with their incident links, and a suggested
// 90-minute session in order.
func TestScenarioLibraryShowsLengthsAndASession(t *testing.T) {
	tu := mustNewUI(t, time.Now())
	doc := tu.mustGetDoc(t, "/scenarios", 200)
	items := doc.Find(`.scenario-item`)
	if items.Length() < 16 {
		t.Errorf("%d lessons, want at least 16", items.Length())
	}
	items.Each(func(_ int, s *goquery.Selection) {
		secs, _ := s.Find(`[data-testid=length]`).Attr("data-seconds")
		if n, err := strconv.Atoi(secs); err != nil || n < 60 {
			t.Errorf("%s: length %q", s.AttrOr("data-name", "?"), secs)
		}
	})
	if n := doc.Find(`[data-testid=incident][href^="https://"]`).Length(); n < 6 {
		t.Errorf("%d incident links, want at least 6", n)
	}
	plan := doc.Find(`[data-testid=session-plan] li`)
	if plan.Length() < 8 || plan.First().AttrOr("data-name", "") != "leader-crash" || !strings.HasPrefix(plan.First().Text(), "0:00") {
		t.Errorf("the session plan: %d lessons, first %q", plan.Length(), plan.First().Text())
	}
}
