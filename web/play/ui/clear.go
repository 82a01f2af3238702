package ui

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/web/play/scenario"
)

// clearFinished serves POST /ui/scenarios/clear, the dashboard's "clear finished lessons" (the
// instructor's, in workshop mode): every lesson run that is finished, or whose namespace is
// left with Leases or LeaseCandidates while no run plays there any more, is stopped and cleaned
// up as Stop does (stopScenario). Runs still playing are left alone. It answers with a
// redirect to the dashboard of the namespace it showed, which says how many were cleared.
func (u *scenarioScreen) clearFinished(c echo.Context) error {
	ctx := c.Request().Context()
	if ok, err := u.instructorOnly(c); !ok {
		return err
	}
	n, err := u.clearFinishedRuns(ctx)
	if err != nil {
		return u.fail(c, http.StatusInternalServerError, err.Error())
	}
	q := url.Values{"cleared": {strconv.Itoa(n)}}
	// The view field is the namespace the dashboard showed (dashboard.js keeps it current).
	if ns := c.FormValue("view"); ns != "" && len(validation.IsDNS1123Label(ns)) == 0 {
		q.Set("namespace", ns)
	}
	return c.Redirect(http.StatusSeeOther, "/?"+q.Encode())
}

// clearFinishedRuns stops the finished runs and clears their namespaces and those of runs that
// no longer play (stopped, or put out by maxScenarioRuns); it returns how many namespaces it
// cleared.
func (u *scenarioScreen) clearFinishedRuns(ctx context.Context) (int, error) {
	// What is left in the lessons' namespaces is listed before the runs are looked at: a run
	// started meanwhile is among those playing, and its namespace is not touched.
	left, err := u.lessonLeftovers(ctx)
	if err != nil {
		return 0, err
	}
	clear := map[string]*scenario.Scenario{}
	for ns := range left {
		clear[ns] = lessonOfNamespace(ns)
	}
	finished, playing := u.scenarios.takeFinished()
	for key, r := range finished {
		r.Stop()
		name, seed, _ := strings.Cut(key, "/")
		sd, _ := strconv.ParseUint(seed, 10, 64)
		clear[scenarioNamespace(name, sd)] = scenario.Find(name)
	}
	for ns := range playing {
		delete(clear, ns)
	}
	api := u.scenarioAPI()
	for ns, sc := range clear {
		if api != nil {
			if err := scenario.Clear(u.opts.Context, api, "http://leaselab.in-process", ns, sc); err != nil {
				return 0, fmt.Errorf("clear %s: %w", ns, err)
			}
		}
		if err := u.hub.views.Clear(u.opts.Context, ns); err != nil {
			return 0, err
		}
		u.log.Info("finished lesson cleared", slog.String("namespace", ns))
	}
	return len(clear), nil
}

// lessonLeftovers are the lessons' namespaces (scenario-*) that hold Leases or LeaseCandidates.
func (u *scenarioScreen) lessonLeftovers(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	leases, _, err := u.listLeases(ctx, "", moment{})
	if err != nil {
		return nil, err
	}
	for _, l := range leases {
		if strings.HasPrefix(l.Namespace, "scenario-") {
			out[l.Namespace] = true
		}
	}
	cands, _, err := u.listCandidates(ctx, "", moment{})
	if err != nil {
		return nil, err
	}
	for _, lc := range cands {
		if strings.HasPrefix(lc.Namespace, "scenario-") {
			out[lc.Namespace] = true
		}
	}
	return out, nil
}

// lessonOfNamespace is the lesson whose runs write in ns (scenarioNamespace), nil when none.
func lessonOfNamespace(ns string) *scenario.Scenario {
	for _, sc := range scenario.Library() {
		seed, ok := strings.CutPrefix(ns, "scenario-"+sc.Name+"-")
		if _, err := strconv.ParseUint(seed, 10, 64); ok && err == nil {
			return sc
		}
	}
	return nil
}

// runFinished says whether the run of the lesson sc is over: stopped, or its last step reached
// and done.
func runFinished(sc *scenario.Scenario, r *scenario.Run) bool {
	st := r.State()
	return st.Stopped || sc == nil || st.Step == len(sc.Steps)-1 && st.Ready
}

// takeFinished takes the finished runs out of s, by key, and returns them with the namespaces
// of the runs that still play.
func (s *scenarioRuns) takeFinished() (finished map[string]*scenario.Run, playing map[string]bool) {
	s.mu.Lock()
	runs := make(map[string]*scenario.Run, len(s.runs))
	for k, r := range s.runs {
		runs[k] = r
	}
	s.mu.Unlock()
	finished, playing = map[string]*scenario.Run{}, map[string]bool{}
	for key, r := range runs {
		name, seed, _ := strings.Cut(key, "/")
		sd, _ := strconv.ParseUint(seed, 10, 64)
		// A run's state is read without s's lock (it judges the run's split brains); the run is
		// taken only if it is still the one under its key.
		if !runFinished(scenario.Find(name), r) || !s.takeIf(key, r) {
			playing[scenarioNamespace(name, sd)] = true
			continue
		}
		finished[key] = r
	}
	return finished, playing
}

// takeIf takes the run under key out of s if it is r.
func (s *scenarioRuns) takeIf(key string, r *scenario.Run) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs[key] != r {
		return false
	}
	s.removeLocked(key)
	return true
}

// clearOffer is the dashboard's "clear finished lessons", offered to whoever may run lessons on
// a live server that plays them; nil when not offered. cleared is the count the form's redirect
// carries ("" when the page is not its answer).
func (u *dashboardScreen) clearOffer(r *http.Request, ns string, m moment) *templates.ClearFinished {
	if !m.at.IsZero() || u.opts.Replay != nil || (u.opts.ScenarioAPI == nil && u.opts.API == nil) || !u.mayRunScenarios(r) {
		return nil
	}
	o := &templates.ClearFinished{Namespace: ns, Cleared: -1}
	if n, err := strconv.Atoi(r.URL.Query().Get("cleared")); err == nil && n >= 0 {
		o.Cleared = n
	}
	return o
}
