package ui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/judge"
	"github.com/leaselab/leaselab/web/lease/timings"
	"github.com/leaselab/leaselab/web/play/scenario"
)

// maxScenarioRuns bounds the runs playing at once on one server: starting one more stops the
// oldest, so that a room clicking Start cannot fill the server with candidates.
const maxScenarioRuns = 8

// speedsOf are the speeds a scenario's page offers (scenario.Speeds: a coordinated lesson
// only 1, scenario.ErrRealTimeOnly), as the page writes them.
func speedsOf(sc *scenario.Scenario) []string {
	var out []string
	for _, s := range sc.Speeds() {
		out = append(out, strconv.FormatFloat(s, 'g', -1, 64))
	}
	return out
}

// scenarioRuns are the runs playing on this server, one per scenario and seed: a link with a
// seed brings everyone who opens it to the same run.
type scenarioRuns struct {
	mu   sync.Mutex
	runs map[string]*scenario.Run // by scenarioKey
	// order is the keys from the oldest run to the newest.
	order []string
	// touched is the key of the run last started or stepped: the one /follow shows; bumped is
	// closed (and replaced) whenever it or the session plan changes, and bumps counts those
	// changes, so that a follower that was busy when one came still sees it.
	touched string
	bumped  chan struct{}
	bumps   uint64
}

// touch makes key's run the one /follow shows, and tells the followers.
func (s *scenarioRuns) touch(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.touched = key
	s.bumpLocked()
}

// bump tells the followers that what /follow shows changed beside the run (the session plan).
func (s *scenarioRuns) bump() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bumpLocked()
}

func (s *scenarioRuns) bumpLocked() {
	s.bumps++
	if s.bumped != nil {
		close(s.bumped)
	}
	s.bumped = make(chan struct{})
}

// followed is the run /follow shows (nil when none plays), its key, the count of changes
// beside the run so far, and a channel closed at the next one.
func (s *scenarioRuns) followed() (string, *scenario.Run, uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bumped == nil {
		s.bumped = make(chan struct{})
	}
	return s.touched, s.runs[s.touched], s.bumps, s.bumped
}

func scenarioKey(name string, seed uint64) string { return name + "/" + strconv.FormatUint(seed, 10) }

// parseScenarioKey splits a run's key (scenarioKey) into its scenario's name and seed.
func parseScenarioKey(key string) (name string, seed uint64, ok bool) {
	name, s, found := strings.Cut(key, "/")
	seed, err := strconv.ParseUint(s, 10, 64)
	return name, seed, found && err == nil
}

// scenarioNamespace is where the run of a scenario with a seed writes.
func scenarioNamespace(name string, seed uint64) string {
	if sc := scenario.Find(name); sc != nil && sc.Namespace != "" {
		return sc.Namespace // the arena's, whatever the seed
	}
	return "scenario-" + name + "-" + strconv.FormatUint(seed, 10)
}

func (s *scenarioRuns) get(name string, seed uint64) *scenario.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[scenarioKey(name, seed)]
}

// running is the link to the newest run of the scenario name, with its seed and speed ("" when
// none plays): where a participant finds the lesson the instructor started.
func (s *scenarioRuns) running(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range slices.Backward(s.order) {
		if n, seed, ok := parseScenarioKey(k); ok && n == name {
			return scenarioURL(name, seed, s.runs[k].Speed(), nil)
		}
	}
	return ""
}

// put keeps r under its key and returns the runs to stop: the one it replaces, and the oldest
// when there are too many.
func (s *scenarioRuns) put(key string, r *scenario.Run) (stop []*scenario.Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == nil {
		s.runs = map[string]*scenario.Run{}
	}
	if old := s.runs[key]; old != nil {
		stop = append(stop, old)
		s.removeLocked(key)
	}
	for len(s.order) >= maxScenarioRuns {
		k := s.order[0]
		stop = append(stop, s.runs[k])
		s.removeLocked(k)
	}
	s.runs[key] = r
	s.order = append(s.order, key)
	return stop
}

func (s *scenarioRuns) take(key string) *scenario.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[key]
	s.removeLocked(key)
	return r
}

func (s *scenarioRuns) removeLocked(key string) {
	delete(s.runs, key)
	for i, k := range s.order {
		if k == key {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// stopAll ends every run (the server is closing).
func (s *scenarioRuns) stopAll() {
	s.mu.Lock()
	runs := s.runs
	s.runs, s.order = nil, nil
	s.mu.Unlock()
	for _, r := range runs {
		r.Stop()
	}
}

// scenarioParams reads the seed and speed of a scenario URL or form: seed 1 and speed 1 when
// absent.
func scenarioParams(c echo.Context, sc *scenario.Scenario) (seed uint64, speed float64, problem string) {
	seed, speed = 1, 1
	if s := c.FormValue("seed"); s != "" {
		v, err := strconv.ParseUint(s, 10, 63)
		if err != nil {
			return 0, 0, "scn.err.seed"
		}
		seed = v
	}
	if s := c.FormValue("speed"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err == nil {
			err = sc.CheckSpeed(v)
		}
		switch {
		case errors.Is(err, scenario.ErrRealTimeOnly):
			return 0, 0, "scn.err.realTime"
		case err != nil:
			return 0, 0, "scn.err.speed"
		}
		speed = v
	}
	return seed, speed, ""
}

func speedText(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) }

// scenarioURL is a scenario page's URL with its seed, speed and the other parameters kept.
func scenarioURL(name string, seed uint64, speed float64, extra url.Values) string {
	q := url.Values{}
	for k, v := range extra {
		q[k] = v
	}
	q.Set("seed", strconv.FormatUint(seed, 10))
	q.Set("speed", speedText(speed))
	return "/scenarios/" + name + "?" + q.Encode()
}

// scenarioTimings are the play-page parameters that give a joining tab the scenario's timings.
func scenarioTimings(sc *scenario.Scenario) string {
	f := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
	return "&leaseDuration=" + f(sc.LeaseDuration) + "&renewDeadline=" + f(sc.RenewDeadline) + "&retryPeriod=" + f(sc.RetryPeriod)
}

// scenarioMode is the rest of a join link's query: in a coordinated lesson the joining tab is a
// coordinated candidate too, with the versions of the cast's last member (a rolling upgrade's
// newest), so that the election controller, not the lease's expiry, decides for it.
func scenarioMode(sc *scenario.Scenario) string {
	if !sc.Coordinated {
		return ""
	}
	q := url.Values{"coordinated": {"true"}}
	for _, m := range sc.Cast {
		if m.BinaryVersion != "" {
			q.Set("binaryVersion", m.BinaryVersion)
			q.Set("emulationVersion", m.EmulationVersion)
		}
	}
	return "&" + q.Encode()
}

// scenarioList serves /scenarios.
func (u *scenarioScreen) scenarioList(c echo.Context) error {
	ctx := c.Request().Context()
	lang := i18n.FromContext(ctx)
	v := templates.Scenarios{Page: u.page(lang.T("scn.library"), "scenarios")}
	for _, sc := range scenario.Library() {
		v.Items = append(v.Items, templates.ScenarioItem{
			Name: sc.Name, URL: "/scenarios/" + sc.Name, Title: sc.Title.In(lang), Summary: sc.Summary.In(lang),
			Teaches: sc.Teaches.In(lang), Incident: sc.Incident, RunningURL: u.scenarios.running(sc.Name),
			Minutes: minutesText(sc.Minutes()), Seconds: strconv.Itoa(int(sc.Minutes().Seconds())),
		})
	}
	v.Plan = planView(lang, u.plan, "", u.mayRunScenarios(c.Request()) && u.opts.Replay == nil)
	return u.render(c, http.StatusOK, templates.ScenariosView(v))
}

// minutesText is a length in whole minutes, at least one: "3".
func minutesText(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+30*time.Second)/time.Minute)))
}

// clockMinutes is a moment of a session as a clock shows it from its start: "0:00", "1:05".
func clockMinutes(d time.Duration) string {
	m := int(d.Round(time.Minute) / time.Minute)
	return fmt.Sprintf("%d:%02d", m/60, m%60)
}

// findScenario returns the scenario the path names, or answers 404.
func (u *scenarioScreen) findScenario(c echo.Context) (*scenario.Scenario, error) {
	sc := scenario.Find(c.Param("name"))
	if sc == nil {
		return nil, u.fail(c, http.StatusNotFound, i18n.T(c.Request().Context(), "scn.notfound", c.Param("name")))
	}
	return sc, nil
}

// scenarioPage serves /scenarios/:name[?seed=&speed=&present=1&lang=].
func (u *scenarioScreen) scenarioPage(c echo.Context) error {
	v, ok, err := u.scenarioOfRequest(c)
	if !ok {
		return err
	}
	return u.render(c, http.StatusOK, templates.ScenarioView(v))
}

// scenarioOfRequest is the view of the scenario, seed and speed a page request names; it
// answers the request itself (404, 400) and returns false when they are not valid.
func (u *scenarioScreen) scenarioOfRequest(c echo.Context) (templates.Scenario, bool, error) {
	ctx := c.Request().Context()
	sc, err := u.findScenario(c)
	if sc == nil {
		return templates.Scenario{}, false, err
	}
	seed, speed, problem := scenarioParams(c, sc)
	if problem != "" {
		return templates.Scenario{}, false, u.fail(c, http.StatusBadRequest, i18n.T(ctx, problem))
	}
	return u.scenarioView(c, sc, seed, speed), true, nil
}

func (u *scenarioScreen) scenarioView(c echo.Context, sc *scenario.Scenario, seed uint64, speed float64) templates.Scenario {
	ctx := c.Request().Context()
	lang := i18n.FromContext(ctx)
	run := u.scenarios.get(sc.Name, seed)
	if run != nil {
		speed = run.Speed()
	}
	ns := scenarioNamespace(sc.Name, seed)
	seedText := strconv.FormatUint(seed, 10)
	base := "/scenarios/" + sc.Name
	keep := url.Values{}
	if l := c.QueryParam("lang"); l != "" {
		keep.Set("lang", l)
	}
	present := c.QueryParam("present") == "1"
	if present {
		keep.Set("present", "1")
	}
	v := templates.Scenario{
		Page:          u.page(sc.Title.In(lang), "scenarios"),
		Name:          sc.Name,
		Title:         sc.Title.In(lang),
		Summary:       sc.Summary.In(lang),
		Teaches:       sc.Teaches.In(lang),
		Incident:      sc.Incident,
		Seed:          seedText,
		Speed:         speedText(speed),
		Speeds:        speedsOf(sc),
		Present:       present,
		Namespace:     ns,
		Lease:         sc.Lease,
		LeaseURL:      leaseURL(ns, sc.Lease),
		DashboardURL:  "/?namespace=" + url.QueryEscape(ns),
		JoinURL:       "/play?namespace=" + url.QueryEscape(ns) + "&lease=" + url.QueryEscape(sc.Lease) + scenarioTimings(sc) + scenarioMode(sc),
		ShareURL:      scenarioURL(sc.Name, seed, speed, nil),
		OtherSeedURL:  scenarioURL(sc.Name, seed+1, speed, keep),
		Actions:       base,
		LiveURL:       base + "/live?seed=" + seedText,
		WatchURL:      base + "/watch?seed=" + seedText,
		MayControl:    u.mayRunScenarios(c.Request()),
		Live:          u.scenarioLive(ctx, sc, run, ns, liveFor{seed: seedText, voter: u.voterOf(c.Request()), mayControl: u.mayRunScenarios(c.Request())}),
		StageLiveURL:  "/stage/live?" + url.Values{"namespace": {ns}, "lease": {sc.Lease}}.Encode(),
		StageWatchURL: "/stage/watch?" + url.Values{"namespace": {ns}, "lease": {sc.Lease}}.Encode(),
		Timings: timingsView(timings.Check(timings.Settings{
			LeaseDuration: sc.LeaseDuration, RenewDeadline: sc.RenewDeadline, RetryPeriod: sc.RetryPeriod,
		}), 0),
	}
	var err error
	if v.Stage, err = u.stage.stageView(ctx, ns, sc.Lease, moment{}); err != nil {
		u.log.Warn("lesson stage", slog.String("scenario", sc.Name), slog.Any("error", err))
	}
	return v
}

// liveFor is who a live part is drawn for: the run's seed, the reader as a voter, whether the
// reader runs the lesson, and the page a vote sent without script returns to.
type liveFor struct {
	seed, voter string
	mayControl  bool
	back        string
}

// scenarioLive builds the live part of a scenario page from the run (nil: not running).
func (u *scenarioScreen) scenarioLive(ctx context.Context, sc *scenario.Scenario, run *scenario.Run, ns string, f liveFor) templates.ScenarioLive {
	lang := i18n.FromContext(ctx)
	l := templates.ScenarioLive{Total: len(sc.Steps), Speed: "1"}
	if run == nil {
		return u.roomLive(ctx, sc, nil, l)
	}
	st := run.State()
	l.Running = !st.Stopped
	l.Shown, l.Auto, l.Speed = st.Shown, st.Auto, speedText(st.Speed)
	l.CanBack = st.Shown > 0
	l.CanNext = l.Running && (st.Shown < st.Step || st.Ready && st.Step+1 < len(sc.Steps))
	l.Last = st.Shown == len(sc.Steps)-1
	l.Done = st.Step == len(sc.Steps)-1 && st.Ready
	l.Step = st.Step
	l.Question = predictionView(lang, sc, run, st, f.seed, f.voter, f.mayControl, f.back)
	l.Asking = l.Question != nil && l.Question.Open && st.Shown == st.Step
	if !st.Ready && !l.Asking {
		l.Waiting = sc.Steps[st.Step].Waiting.In(lang)
	}
	for i := 0; i <= st.Step; i++ {
		at := st.Moments[i]
		say := sc.Steps[i].Say.In(lang)
		if i == st.Step && l.Asking {
			say = "" // it would give the answer away
		}
		l.Steps = append(l.Steps, templates.ScenarioStep{
			N: i + 1, Say: say, At: clockTime(at),
			MomentURL: leaseURL(ns, sc.Lease) + "?at=" + url.QueryEscape(at.UTC().Format(time.RFC3339Nano)),
			Current:   i == st.Shown,
		})
	}
	l.Holder, l.Transitions, l.Overlaps = st.Holder, strconv.Itoa(int(st.Transitions)), st.Overlaps
	if st.Ledger != nil {
		l.Ledger = ledgerView(lang, ns, st.Ledger)
	}
	l.Claims = claimsView(lang, sc, run, l.Done)
	switch st.Outage {
	case candidate.PartitionHang:
		l.Outage = lang.T("scn.outage.hang")
	case candidate.PartitionFail:
		l.Outage = lang.T("scn.outage.fail")
	}
	for _, s := range st.Members {
		m := memberView(lang, s.Snapshot, st.Speed)
		if s.Name != s.Identity {
			m.Name = s.Name
		}
		// A program that ran client-go's Run once: it returned, the process lives on.
		m.Zombie = s.StopsAfterLoss && s.State == candidate.StateStopped && s.StopReason == candidate.StopLostLeadership
		l.Members = append(l.Members, m)
	}
	return u.roomLive(ctx, sc, run, l)
}

// claimsView is what the lesson claims, each with whether it held once the lesson is done.
func claimsView(lang i18n.Lang, sc *scenario.Scenario, run *scenario.Run, done bool) []templates.ScenarioClaim {
	var errs []error
	if done {
		errs = run.Claims()
	}
	out := make([]templates.ScenarioClaim, len(sc.Claims))
	for i, c := range sc.Claims {
		out[i].Says = c.Says().In(lang)
		if i < len(errs) {
			out[i].Held = strconv.FormatBool(errs[i] == nil)
		}
	}
	return out
}

// ledgerView is a lesson's ledger as its page shows it: the writes of one writer's term that
// came to the same are one row, in the order of their first, so that two leaders writing in
// turn read as two rows, not as a column of alternating lines.
func ledgerView(lang i18n.Lang, ns string, st *scenario.LedgerState) *templates.ScenarioLedger {
	v := &templates.ScenarioLedger{Lease: ns + "/" + st.Lease, Fenced: st.Fenced}
	v.Landed, v.Damage, v.Refused = st.Counts()
	type key struct {
		by     string
		token  int32
		fenced bool
		says   string
	}
	rows := map[key]int{}
	for _, e := range st.Effects {
		says := "scn.effect.failed"
		switch {
		case e.Damage():
			says = "scn.effect.damage"
		case e.Accepted && e.Conflicts > 0:
			says = "scn.effect.retried"
		case e.Accepted:
			says = "scn.effect.landed"
		case e.Refused():
			says = "scn.effect.refused"
		}
		k := key{e.By, e.Token, e.Fenced, says}
		if i, ok := rows[k]; ok {
			v.Rows[i].Count++
			continue
		}
		rows[k] = len(v.Rows)
		v.Rows = append(v.Rows, templates.ScenarioEffect{By: e.By, Count: 1, Token: e.Token, Fenced: e.Fenced, Accepted: e.Accepted,
			Stale: e.Stale, Says: lang.T(says), At: strconv.FormatFloat(e.At.Seconds(), 'f', 1, 64) + " s"})
	}
	return v
}

// memberView is one member's card: its state, and the countdown it acts on, on its own clock.
func memberView(lang i18n.Lang, s candidate.Snapshot, speed float64) templates.ScenarioMember {
	m := templates.ScenarioMember{Identity: s.Identity, State: string(s.State), Holder: s.Holder, Stale: s.Stale, Faults: tabproto.Words(s.Faults.Describe(), string(lang)),
		Believes: s.Role == candidate.RoleLeader && s.State != candidate.StateLeader && s.State != candidate.StateStopped}
	rate := speed
	if s.Faults.ClockRate > 0 {
		rate *= s.Faults.ClockRate
	}
	m.Rate = strconv.FormatFloat(rate, 'f', 3, 64)
	switch {
	case s.State == candidate.StateStopped:
	case s.Role == candidate.RoleLeader && !s.RenewDeadline.IsZero():
		// The deadline the elector acts on: the running round's, or the next round's.
		m.Countdown, m.Elapsed = lang.T("scn.deadline"), lang.T("scn.deadlinePassed")
		m.LeftMs, m.TotalMs = s.RenewDeadline.Sub(s.Now).Milliseconds(), s.Timings.RenewDeadline.Milliseconds()
		if s.Faults.Paused && !s.RenewRound {
			// Paused between rounds: the round, and its deadline, begin when it resumes.
			m.LeftMs, m.Rate = m.TotalMs, "0"
		}
	case !s.ObservedExpiry.IsZero():
		m.Countdown, m.Elapsed = lang.T("scn.expires"), lang.T("scn.expired")
		m.LeftMs = s.ObservedExpiry.Sub(s.Now).Milliseconds()
		m.TotalMs = int64(s.LeaseDurationSeconds) * 1000
	}
	return m
}

// scenarioLiveFragment serves /scenarios/:name/live?seed=: the live part, for scenario.js.
func (u *scenarioScreen) scenarioLiveFragment(c echo.Context) error {
	v, ok, err := u.scenarioOfRequest(c)
	if !ok {
		return err
	}
	return u.render(c, http.StatusOK, templates.ScenarioLiveView(v.Live, v))
}

// mayRunScenarios: in workshop mode only the instructor starts and steps scenarios (they put
// candidates on the server); everyone may watch.
func (u *pages) mayRunScenarios(r *http.Request) bool {
	return u.opts.MayCommandTabs == nil || u.opts.MayCommandTabs(r)
}

// instructorsAction checks a lesson action that only the instructor takes: allowed to the
// caller, not on a replay, with a valid seed and speed. When not, it answers the request itself
// and ok is false.
func (u *scenarioScreen) instructorsAction(c echo.Context, sc *scenario.Scenario) (seed uint64, speed float64, ok bool, err error) {
	if ok, err := u.instructorOnly(c); !ok {
		return 0, 0, false, err
	}
	seed, speed, problem := scenarioParams(c, sc)
	if problem != "" {
		return 0, 0, false, u.fail(c, http.StatusBadRequest, i18n.T(c.Request().Context(), problem))
	}
	return seed, speed, true, nil
}

// instructorOnly checks that the caller may run lessons (in workshop mode, the instructor) and
// that the server is no replay (read-only, and no lesson runs on it). When not, it answers the
// request itself and ok is false.
func (u *scenarioScreen) instructorOnly(c echo.Context) (ok bool, err error) {
	if !u.mayRunScenarios(c.Request()) {
		return false, u.fail(c, http.StatusForbidden, i18n.T(c.Request().Context(), "scn.instructor"))
	}
	if u.opts.Replay != nil {
		return false, u.fail(c, http.StatusMethodNotAllowed, u.opts.Replay.Refusal())
	}
	return true, nil
}

// scenarioAction serves POST /scenarios/:name/{start,next,back,reveal,auto,speed,stop}: a form, answered
// with a redirect to the page (or, from scenario.js, 204).
func (u *scenarioScreen) scenarioAction(c echo.Context) error {
	ctx := c.Request().Context()
	sc, err := u.findScenario(c)
	if sc == nil {
		return err
	}
	seed, speed, ok, err := u.instructorsAction(c, sc)
	if !ok {
		return err
	}
	action := c.Param("action")
	key := scenarioKey(sc.Name, seed)
	run := u.scenarios.get(sc.Name, seed)
	if action != "start" && run == nil {
		return u.fail(c, http.StatusConflict, i18n.T(ctx, "scn.notrunning", strconv.FormatUint(seed, 10)))
	}
	switch action {
	case "start":
		if err := u.startScenario(sc, seed, speed, key); err != nil {
			return u.fail(c, http.StatusInternalServerError, err.Error())
		}
		u.scenarios.touch(key)
	case "next":
		if err := run.Next(); err != nil {
			return u.fail(c, http.StatusConflict, err.Error())
		}
		u.scenarios.touch(key)
	case "back":
		run.Back()
		u.scenarios.touch(key)
	case "reveal":
		if err := run.Reveal(); err != nil {
			return u.fail(c, http.StatusConflict, i18n.T(ctx, "scn.predict.none"))
		}
		u.scenarios.touch(key)
	case "auto":
		run.SetAuto(c.FormValue("on") == "1")
	case "speed":
		if err := run.SetSpeed(speed); err != nil {
			return u.fail(c, http.StatusBadRequest, err.Error())
		}
	case "stop":
		if err := u.stopScenario(sc, seed, key); err != nil {
			return u.fail(c, http.StatusInternalServerError, err.Error())
		}
	default:
		return u.fail(c, http.StatusNotFound, "no such action: "+action) //said:english only the page's script makes this request
	}
	if c.Request().Header.Get("X-Requested-With") == "scenario.js" {
		return c.NoContent(http.StatusNoContent)
	}
	extra := url.Values{}
	if c.QueryParam("present") == "1" {
		extra.Set("present", "1")
	}
	return c.Redirect(http.StatusSeeOther, scenarioURL(sc.Name, seed, speed, extra))
}

// startScenario (re)starts the run of sc with seed: the previous run of the same seed stops,
// what it left in its namespace is cleared, and the new one begins.
func (u *scenarioScreen) startScenario(sc *scenario.Scenario, seed uint64, speed float64, key string) error {
	if old := u.scenarios.take(key); old != nil {
		old.Stop()
	}
	ns := scenarioNamespace(sc.Name, seed)
	api := u.scenarioAPI()
	if api == nil {
		return fmt.Errorf("scenarios need the server's API in process")
	}
	const base = "http://leaselab.in-process"
	ctx := u.opts.Context
	if err := scenario.Clear(ctx, api, base, ns, sc); err != nil {
		return fmt.Errorf("clear %s: %w", ns, err)
	}
	run, err := scenario.Start(ctx, sc, scenario.Options{
		Transport: api,
		BaseURL:   base,
		Namespace: ns,
		Seed:      seed,
		Speed:     speed,
		Stage:     hubStage{h: u.hub, lesson: sc.Name},
		Room:      u.roomOf(sc),
		Overlaps:  u.scenarioOverlaps,
		Logger:    u.log,
	})
	if err != nil {
		return err
	}
	for _, r := range u.scenarios.put(key, run) {
		r.Stop()
	}
	u.log.Info("scenario started", slog.String("scenario", sc.Name), slog.Uint64("seed", seed), slog.String("namespace", ns))
	return nil
}

// scenarioAPI is the API the lessons' runs write through, in process; nil when there is none.
func (u *scenarioScreen) scenarioAPI() http.RoundTripper {
	if u.opts.ScenarioAPI != nil {
		return u.opts.ScenarioAPI
	}
	return u.opts.API
}

// stopScenario ends the run of sc with seed at once: its members leave the dashboard, and its
// namespace's Leases, LeaseCandidates and views are deleted (the change log keeps them for the
// run's recording, /ui/history, until compaction).
func (u *scenarioScreen) stopScenario(sc *scenario.Scenario, seed uint64, key string) error {
	if r := u.scenarios.take(key); r != nil {
		r.Stop()
	}
	ns := scenarioNamespace(sc.Name, seed)
	if err := u.clearLesson(ns, sc); err != nil {
		return err
	}
	u.log.Info("scenario stopped", slog.String("scenario", sc.Name), slog.Uint64("seed", seed), slog.String("namespace", ns))
	return nil
}

// clearLesson deletes what a run of sc (nil: a lesson no longer known) left in ns: its Leases,
// LeaseCandidates and views. The arena's views are the room's, and stay.
func (u *scenarioScreen) clearLesson(ns string, sc *scenario.Scenario) error {
	if api := u.scenarioAPI(); api != nil {
		if err := scenario.Clear(u.opts.Context, api, "http://leaselab.in-process", ns, sc); err != nil {
			return fmt.Errorf("clear %s: %w", ns, err)
		}
	}
	if sc != nil && sc.Namespace != "" {
		return nil
	}
	return u.hub.views.Clear(u.opts.Context, ns)
}

// scenarioOverlaps judges a run's lease as its lease page does: the record's changes against
// the views the hub recorded of its members.
func (u *scenarioScreen) scenarioOverlaps(ctx context.Context, ns, lease string, _ []judge.View) ([]judge.Overlap, error) {
	changes, err := u.hist.changes(ctx, ns, lease)
	if err != nil {
		return nil, err
	}
	out, _, err := u.overlaps(ctx, ns, lease, changes, u.opts.Now(), false)
	return out, err
}

// hubStage shows a run's members on the dashboard, like tabs, opened by the lesson: a row
// reads "opened by gc-pause".
type hubStage struct {
	h      *Hub
	lesson string
}

func (s hubStage) Enter(obey func(tabproto.Command) error) scenario.Seat {
	return s.h.Enter(TabUser{Name: s.lesson}, obey)
}

// scenarioWatch serves /scenarios/:name/watch?seed=: a WebSocket that says {"v":n} whenever
// the run changes, at most a few times a second; scenario.js then fetches the live part.
func (u *scenarioScreen) scenarioWatch(c echo.Context) error {
	sc, err := u.findScenario(c)
	if sc == nil {
		return err
	}
	seed, _, problem := scenarioParams(c, sc)
	if problem != "" {
		return u.fail(c, http.StatusBadRequest, i18n.T(c.Request().Context(), problem))
	}
	s, cancel, ok := u.openChangeStream(c)
	if !ok {
		return nil
	}
	defer cancel()
	ctx := s.ctx
	tell := true
	for {
		// Subscribed before the page is told: a change while it fetches still wakes us.
		run := u.scenarios.get(sc.Name, seed)
		var changed, done <-chan struct{}
		unsubscribe := func() {}
		if run != nil {
			changed, unsubscribe = run.Subscribe()
			done = run.Done()
		}
		if tell && s.tell() != nil {
			unsubscribe()
			return nil
		}
		tell = false
		// A run that starts, restarts or stops elsewhere is looked for every second.
		poll := time.NewTimer(time.Second)
		same := false
		select {
		case <-ctx.Done():
		case <-changed:
		case <-done:
		case <-poll.C:
			same = u.scenarios.get(sc.Name, seed) == run
		}
		poll.Stop()
		unsubscribe()
		if ctx.Err() != nil {
			s.end()
			return nil
		}
		if same {
			continue
		}
		// Changes come in bursts (a renewal changes every member): let them settle.
		select {
		case <-ctx.Done():
			continue
		case <-time.After(150 * time.Millisecond):
		}
		tell = true
	}
}
