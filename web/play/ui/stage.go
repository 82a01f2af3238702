package ui

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/judge"
	"github.com/leaselab/leaselab/web/lease/traffic"
)

// The stage (/stage?namespace=&lease=): one lease's election as one picture. The server draws
// it (templates/stage.templ) from what it knows: the Lease, every candidate's last report (its
// role, its timers, its requests), the requests of other clients seen at the API's door
// (requestTap), and the candidates' recorded views as belief lanes; at a past moment, the
// recorded views and the requests kept then (web/lease/traffic). stage.js patches the picture
// in place when the server says it changed, and animates between: request dots and draining
// rings, from the instants the picture carries.

// The stage's frame: the server at the centre, candidates on an ellipse around it.
const (
	stageCX, stageCY = 500.0, 300.0
	stageRX, stageRY = 360.0, 220.0
	// stageRecent is how long an ended request stays in the picture.
	stageRecent = 4 * time.Second
	// stageLaneSpan is how much history the lanes hold; the page zooms within it.
	stageLaneSpan = 5 * time.Minute
)

func stageURL(ns, name string) string {
	return "/stage?" + url.Values{"namespace": {ns}, "lease": {name}}.Encode()
}

// stageParams are the lease the stage shows.
func (u *stageScreen) stageParams(c echo.Context) (ns, name string, err error) {
	ns, name = c.QueryParam("namespace"), c.QueryParam("lease")
	if ns == "" || name == "" {
		return "", "", u.failSays(c, http.StatusBadRequest, i18n.Say("error.stageParams"))
	}
	if len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", "", u.failSays(c, http.StatusBadRequest, i18n.Say("error.noLease", ns+"/"+name))
	}
	return ns, name, nil
}

// stagePage serves /stage?namespace=NS&lease=NAME[&at=].
func (u *stageScreen) stagePage(c echo.Context) error {
	ns, name, err := u.stageParams(c)
	if ns == "" {
		return err
	}
	m, ok, err := u.momentOfRequest(c)
	if !ok {
		return err
	}
	live, err := u.stageView(c.Request().Context(), ns, name, m)
	if err != nil {
		return u.failMoment(c, m.at, err)
	}
	q := url.Values{"namespace": {ns}, "lease": {name}}.Encode()
	v := templates.StagePage{
		Page:      u.page("", "stage"),
		Namespace: ns, Name: name,
		LiveURL:  "/stage/live?" + q,
		WatchURL: "/stage/watch?" + q,
		LeaseURL: leaseURL(ns, name),
		Live:     live,
	}
	v.Page.TitleSays = i18n.Say("stage.title", ns+"/"+name)
	v.Page.At = live.At
	return u.render(c, http.StatusOK, templates.StagePageView(v))
}

// stageLive serves the picture alone, which stage.js swaps in.
func (u *stageScreen) stageLive(c echo.Context) error {
	ns, name, err := u.stageParams(c)
	if ns == "" {
		return err
	}
	m, ok, err := u.momentOfRequest(c)
	if !ok {
		return err
	}
	live, err := u.stageView(c.Request().Context(), ns, name, m)
	if err != nil {
		return u.failMoment(c, m.at, err)
	}
	return u.render(c, http.StatusOK, templates.StageLiveView(live))
}

// stageWatch is a WebSocket that says when the stage of a lease changed: a candidate of its
// namespace reported, or a request on the lease came or went. Changes coalesce: at most one
// message every stageMinInterval, the newest state drawn when the page asks for it.
func (u *stageScreen) stageWatch(c echo.Context) error {
	ns, name, err := u.stageParams(c)
	if ns == "" {
		return err
	}
	s, cancel, ok := u.openChangeStream(c)
	if !ok {
		return nil
	}
	defer cancel()
	ctx := s.ctx
	w := u.hub.addWatcher(ns, i18n.FromContext(c.Request().Context()))
	defer u.hub.removeWatcher(w)
	requests, unsubscribe := u.tap.subscribe(ns, name)
	defer unsubscribe()
	wrote := lastWrite{n: u.tap.writes(ns, name)}
	for {
		if s.tell() != nil {
			return nil
		}
		told := time.Now()
		// Look again at least once a second: the lanes move with time.
		tick := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
		case <-w.notify:
		case <-requests:
		case <-tick.C:
		}
		tick.Stop()
		if !u.spaceRedraw(ctx, ns, name, told, &wrote, requests) {
			s.end()
			return nil
		}
	}
}

// lastWrite is the count of a lease's writes and when it last grew.
type lastWrite struct {
	n  uint64
	at time.Time
}

// spaceRedraw waits until the stage of ns/name, last told at told, may be told again: a crowd's
// reports after stageCrowdInterval, but stageMinInterval apart for a while after a write of the
// lease (what the room watches for), until the picture has surely caught it, so that a crowd
// does not hold a renewal back. It reports false once ctx is done.
func (u *stageScreen) spaceRedraw(ctx context.Context, ns, name string, told time.Time, wrote *lastWrite, requests <-chan struct{}) bool {
	crowd := u.stageInterval(ns, name) // counts the lease's tabs: once, not at every request
	t := time.NewTimer(crowd)          // one timer for the wait, reset as requests come
	defer t.Stop()
	for {
		if n := u.tap.writes(ns, name); n != wrote.n {
			wrote.n, wrote.at = n, time.Now()
		}
		gap := crowd
		if time.Since(wrote.at) < stageCrowdInterval {
			gap = stageMinInterval
		}
		wait := time.Until(told.Add(gap))
		if wait <= 0 {
			return ctx.Err() == nil
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return false
		case <-requests: // perhaps a write: look again
		case <-t.C:
		}
	}
}

// stageMinInterval spaces the stage's redraws: a renewal changes every candidate at once, and
// a room of phones reports all the time. Between redraws the page moves what the picture
// carries (requests, rings) on its own.
const stageMinInterval = 250 * time.Millisecond

// stageCrowdInterval spaces the redraws of a stage that draws a crowd: a room of phones
// changes the picture with every report, and each redraw costs the page a frame or more on a
// slow machine, while the rings and dots it carries move on their own between.
const stageCrowdInterval = time.Second

// stageInterval is how long the stage of ns/name waits after a redraw before the next.
func (u *stageScreen) stageInterval(ns, name string) time.Duration {
	if u.hub.countOn(ns, name) > stageMaxShown {
		return stageCrowdInterval
	}
	return stageMinInterval
}

// stageView draws the stage of ns/name as of m.
func (u *stageScreen) stageView(ctx context.Context, ns, name string, m moment) (templates.StageLive, error) {
	now := u.judgeTime(m)
	s := templates.StageLive{NowMs: now.UnixMilli()}
	if m.past() {
		s.At = m.at.UTC().Format(momentLayout)
	}
	changes, err := u.hist.changes(ctx, ns, name)
	if m.past() {
		changes, err = u.hist.changesAt(ctx, ns, name, m.at)
	}
	if err != nil {
		return s, err
	}
	if s.Record, err = u.stageRecord(ctx, ns, name, changes, m); err != nil {
		return s, err
	}
	reps, err := u.stageReports(ctx, ns, name, m)
	if err != nil {
		return s, err
	}
	overlaps, vs, err := u.overlaps(ctx, ns, name, changes, now, m.past())
	if err != nil {
		return s, err
	}
	reqs, err := u.stageRequests(ctx, ns, name, reps, m, now)
	if err != nil {
		return s, err
	}
	shown, crowds := stageCrowd(reps, reqs, now)
	s.Candidates, s.Requests = stageCast(shown, s.Record.Holder, reqs, now)
	s.Candidates = append(s.Candidates, crowds...)
	placeOnEllipse(s.Candidates)
	s.Requests, s.RequestGroups = foldRequests(s.Candidates, s.Requests, len(crowds) > 0)
	placeRequests(s.Candidates, s.Requests)
	terms := judge.TermsSeen(changes, vs, now)
	past := judge.PastLease(ns+"/"+name, changes, vs, now)
	s.Lanes = stageLanes(terms, laneViews(vs, shown, len(crowds) > 0), overlaps, past, now)
	s.Caption = stageCaption(ns+"/"+name, terms, overlaps, vs, now)
	return s, nil
}

// stageRecord is the Lease as the server held it at m.
func (u *stageScreen) stageRecord(ctx context.Context, ns, name string, changes []judge.Change, m moment) (templates.StageRecord, error) {
	var r templates.StageRecord
	if m.past() {
		cur, l, ok, err := u.changeAsOf(ctx, ns, name, changes, m.at)
		if err != nil || !ok {
			return r, err
		}
		r = templates.StageRecord{Exists: true, Holder: judge.Shown(cur.Holder), Transitions: cur.Transitions,
			RV: strconv.FormatInt(cur.Revision, 10)}
		if l != nil && l.Spec.RenewTime != nil {
			r.RenewTime = l.Spec.RenewTime.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
		}
		return r, nil
	}
	l, err := u.getLease(ctx, ns, name)
	if err != nil || l == nil {
		return r, err
	}
	r = templates.StageRecord{Exists: true, RV: l.ResourceVersion}
	if h := l.Spec.HolderIdentity; h != nil {
		r.Holder = judge.Shown(*h)
	}
	if t := l.Spec.LeaseTransitions; t != nil {
		r.Transitions = *t
	}
	if l.Spec.RenewTime != nil {
		r.RenewTime = l.Spec.RenewTime.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	}
	return r, nil
}

// stageReport is a candidate's last report, with when the server received it.
type stageReport struct {
	tabproto.Report
	stale      bool
	receivedMs int64
}

// stageReports are the reports of the lease's candidates as of m: the connected tabs (and
// native candidates, and lessons' members), or at a past moment their recorded views.
func (u *stageScreen) stageReports(ctx context.Context, ns, name string, m moment) ([]stageReport, error) {
	var out []stageReport
	if !m.past() {
		for _, t := range u.hub.TabsIn(ns) {
			if t.Lease == name {
				out = append(out, stageReport{Report: t.Report, stale: t.Stale, receivedMs: t.ReceivedMs})
			}
		}
		return out, nil
	}
	recs, err := u.viewsAt(ctx, m, ns)
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		if rec.Lease == name && rec.State != string(tabproto.StateStopped) {
			out = append(out, stageReport{Report: rec.Report(), stale: rec.Stale, receivedMs: rec.ReceivedMs})
		}
	}
	return out, nil
}

// stageRole is a candidate's one word on the stage, as the lease cards word it: its state
// (which says first what stops it from acting), a leader whose record names another stale.
func stageRole(r tabproto.Report, stale bool) string {
	return templates.CastRole(string(r.State), stale)
}

// stageLink is how a candidate's link to the server is drawn: cut, frozen (its end is paused),
// lossy (it loses a share of the requests) or slow.
func stageLink(f tabproto.Faults) string {
	switch {
	case f.Partition != tabproto.PartitionNone:
		return "cut"
	case f.Paused:
		return "frozen"
	case f.LossPercent > 0:
		return "lossy"
	case f.LatencyMs > 0:
		return "slow"
	}
	return ""
}

// stageRequests are the requests on ns/name the stage draws as of m, on the server's clock:
// live, the candidates' as they report them and the other clients' seen at the door; at a past
// moment, those kept in the store then (web/lease/traffic).
func (u *stageScreen) stageRequests(ctx context.Context, ns, name string, reps []stageReport, m moment, now time.Time) ([]traffic.Request, error) {
	if m.past() {
		return traffic.At(ctx, u.store, ns, name, m.at, stageRecent)
	}
	var out []traffic.Request
	for _, r := range reps {
		out = append(out, traffic.FromReport(r.Report, r.receivedMs, stageLink(r.Faults))...)
	}
	for _, q := range u.tap.recent(ns, name, now.Add(-stageRecent)) {
		out = append(out, q.request())
	}
	return out, nil
}

// stageCast places the candidates around the server and their requests between: every
// reporting candidate, then the record's holder and the other clients seen at the door when
// they are none of them (Role client). The requests are those in flight or ended within
// stageRecent, of anyone: a crowd's are folded (foldRequests).
func stageCast(reps []stageReport, holder string, reqs []traffic.Request, now time.Time) ([]templates.StageCandidate, []templates.StageRequest) {
	var cands []templates.StageCandidate
	known := map[string]int{}
	add := func(c templates.StageCandidate) {
		if _, ok := known[c.Identity]; !ok {
			known[c.Identity] = len(cands)
			cands = append(cands, c)
		}
	}
	for _, r := range reps {
		c := templates.StageCandidate{Identity: r.Identity, Role: stageRole(r.Report, r.stale), Link: stageLink(r.Faults)}
		if t := r.Timers; t != nil {
			at := r.onServer
			c.ExpiresAtMs, c.RenewByMs, c.RetryAtMs = at(t.ExpiresInMs), at(t.RenewByMs), at(t.RetryInMs)
			c.LeaseMs, c.RenewDeadlineMs, c.RetryMs = t.LeaseMs, t.RenewDeadlineMs, t.RetryPeriodMs
		}
		add(c)
	}
	if holder != "" {
		add(templates.StageCandidate{Identity: holder, Role: "client"})
	}
	recent := now.Add(-stageRecent).UnixMilli()
	var out []templates.StageRequest
	for _, q := range reqs {
		if q.EndMs != 0 && q.EndMs < recent {
			continue
		}
		if q.Door {
			add(templates.StageCandidate{Identity: q.Identity, Role: "client"})
		}
		out = append(out, templates.StageRequest{ID: q.ID, Identity: q.Identity, Verb: q.Verb, Outcome: q.Outcome,
			Kind: outcomeKind(q.Outcome), StartMs: q.StartMs, EndMs: q.EndMs, Link: q.Link})
	}
	return cands, out
}

// outcomeKind is how the stage colours a request's outcome: "ok" (2xx), "conflict" (409),
// "failed" (any other status, a timeout, a refusal), "" while in flight.
func outcomeKind(outcome string) string {
	if outcome == "" {
		return ""
	}
	code, err := strconv.Atoi(outcome)
	switch {
	case err != nil:
		return "failed"
	case code >= 200 && code < 300:
		return "ok"
	case code == http.StatusConflict:
		return "conflict"
	}
	return "failed"
}

// foldRequests splits the requests into those drawn one by one and, with a crowd, groups per
// verb and outcome of the rest: the requests of the crowds and of the followers drawn one by
// one whose link is whole. A room of a thousand phones sends hundreds a second; the dots that
// matter (the leader's, a faulted candidate's, a client's) still travel. Without a crowd every
// request of a candidate on the stage is drawn.
func foldRequests(cands []templates.StageCandidate, reqs []templates.StageRequest, crowd bool) ([]templates.StageRequest, []templates.StageRequestGroup) {
	plain := map[string]bool{}
	on := map[string]bool{}
	for _, c := range cands {
		if c.Count == 0 {
			on[c.Identity] = true
			plain[c.Identity] = c.Role == "follower" && c.Link == ""
		}
	}
	var drawn []templates.StageRequest
	var groups []templates.StageRequestGroup
	at := map[[2]string]int{}
	for _, q := range reqs {
		switch {
		case on[q.Identity] && (!crowd || !plain[q.Identity]):
			drawn = append(drawn, q)
		case crowd:
			k := [2]string{q.Verb, q.Outcome}
			i, ok := at[k]
			if !ok {
				i = len(groups)
				at[k] = i
				groups = append(groups, templates.StageRequestGroup{Verb: q.Verb, Outcome: q.Outcome, Kind: q.Kind})
			}
			groups[i].Count++
		}
	}
	slices.SortStableFunc(groups, func(a, b templates.StageRequestGroup) int { return b.Count - a.Count })
	if len(groups) > stageMaxGroups {
		groups = groups[:stageMaxGroups]
	}
	placeGroups(groups)
	return drawn, groups
}

// stageMaxGroups bounds the groups of folded requests under the server: the most numerous.
const stageMaxGroups = 8

// placeGroups lines the groups up under the server's box, four to a row.
func placeGroups(groups []templates.StageRequestGroup) {
	const perRow, w, h = 4, 150.0, 34.0
	for i := range groups {
		row, col := i/perRow, i%perRow
		n := min(perRow, len(groups)-row*perRow)
		groups[i].X = stageCX + (float64(col)-float64(n-1)/2)*w
		groups[i].Y = stageCY + 104 + float64(row)*h
	}
}

// stageMaxShown is how many candidates the stage draws one by one; beyond it the rest are
// drawn as a crowd per role, so that a room of a thousand phones stays one picture that the
// page can redraw.
const stageMaxShown = 24

// stageCrowd splits the reports into those drawn one by one (whoever leads, believes it leads
// wrongly or is faulted first, then in order) and a crowd per role of the rest, with how many
// requests the crowd has in flight or just ended.
func stageCrowd(reps []stageReport, reqs []traffic.Request, now time.Time) ([]stageReport, []templates.StageCandidate) {
	if len(reps) <= stageMaxShown {
		return reps, nil
	}
	rank := func(r stageReport) int {
		switch stageRole(r.Report, r.stale) {
		case "leader", "stale":
			return 0
		case "paused", "partitioned":
			return 1
		}
		return 2
	}
	sorted := slices.Clone(reps)
	slices.SortStableFunc(sorted, func(a, b stageReport) int { return rank(a) - rank(b) })
	shown, rest := sorted[:stageMaxShown], sorted[stageMaxShown:]
	byRole := map[string]*templates.StageCandidate{}
	var crowds []templates.StageCandidate
	var order []string
	of := make(map[string]*templates.StageCandidate, len(rest))
	for _, r := range rest {
		role := stageRole(r.Report, r.stale)
		c := byRole[role]
		if c == nil {
			c = &templates.StageCandidate{Role: role}
			byRole[role] = c
			order = append(order, role)
		}
		c.Count++
		of[r.Identity] = c
	}
	recent := now.Add(-stageRecent).UnixMilli()
	for _, q := range reqs {
		if c := of[q.Identity]; c != nil && !q.Door && (q.EndMs == 0 || q.EndMs >= recent) {
			c.Requests++
		}
	}
	for _, role := range order {
		c := byRole[role]
		c.Identity = "+" + strconv.Itoa(c.Count)
		crowds = append(crowds, *c)
	}
	return shown, crowds
}

// laneViews are the views whose candidates have a belief lane: all of them, or with a crowd,
// those drawn one by one.
func laneViews(vs []judge.View, shown []stageReport, crowd bool) []judge.View {
	if !crowd {
		return vs
	}
	ids := make(map[string]bool, len(shown))
	for _, r := range shown {
		ids[r.Identity] = true
	}
	var out []judge.View
	for _, v := range vs {
		if ids[v.Identity] {
			out = append(out, v)
		}
	}
	return out
}

// placeRequests starts each request at its candidate's place.
func placeRequests(cands []templates.StageCandidate, reqs []templates.StageRequest) {
	at := make(map[string]int, len(cands))
	for i, c := range cands {
		if c.Count == 0 {
			at[c.Identity] = i
		}
	}
	for i := range reqs {
		if j, ok := at[reqs[i].Identity]; ok {
			reqs[i].FromX, reqs[i].FromY = cands[j].X, cands[j].Y
		}
	}
}

// onServer places a timer, milliseconds from the report's clock reading on the candidate's
// own clock, on the server's clock; 0 stays 0 (not running).
func (r stageReport) onServer(in int64) int64 {
	if in == 0 {
		return 0
	}
	return traffic.OnServer(r.Report, r.receivedMs, r.Clock+in)
}

// placeOnEllipse spreads the candidates around the server, the first at the top.
func placeOnEllipse(cands []templates.StageCandidate) {
	n := float64(len(cands))
	for i := range cands {
		a := -math.Pi/2 + 2*math.Pi*float64(i)/n
		cands[i].X = stageCX + stageRX*math.Cos(a)
		cands[i].Y = stageCY + stageRY*math.Sin(a)
	}
}

// stageLanes are the record lane, the belief lanes and the split brains over the last
// stageLaneSpan (or since the lease's story began, when that is shorter).
func stageLanes(terms []judge.Term, vs []judge.View, overlaps, past []judge.Overlap, now time.Time) templates.StageLanes {
	from := now.Add(-stageLaneSpan)
	first := now
	for _, t := range terms {
		first = minTime(first, t.Start)
	}
	for _, v := range vs {
		first = minTime(first, v.At)
	}
	from = maxTime(from, first.Add(-time.Second))
	if !now.After(from) {
		from = now.Add(-10 * time.Second)
	}
	span := float64(now.Sub(from))
	x := func(t time.Time) float64 { return math.Max(0, math.Min(100, float64(t.Sub(from))*100/span)) }
	seg := func(kind, holder string, a, b time.Time, title string) templates.StageSegment {
		return templates.StageSegment{Kind: kind, Holder: holder, X: x(a), W: x(b) - x(a), FromMs: a.UnixMilli(), ToMs: b.UnixMilli(), Title: title}
	}
	l := templates.StageLanes{FromMs: from.UnixMilli(), ToMs: now.UnixMilli()}
	for _, t := range terms {
		end := t.End
		if end.IsZero() {
			end = now
		}
		if end.Before(from) {
			continue
		}
		holder := judge.Shown(t.Holder) // a holderIdentity may be megabytes long
		l.Record = append(l.Record, seg("held", holder, t.Start, end, holder))
		// A hold that ran out is drawn healthy until it ran out, then as a gap until someone
		// took the lease.
		if t.Ended == judge.EndExpired {
			next := t.NextAt
			if next.IsZero() {
				next = now
			}
			l.Record = append(l.Record, seg("expired", holder, end, next, holder))
		}
	}
	order, lanes := judge.Beliefs(vs, from, now)
	for _, id := range order {
		lane := templates.StageLane{Identity: id}
		for _, b := range lanes[id] {
			lane.Segments = append(lane.Segments, seg(b.Belief, "", maxTime(b.From, from), b.To, ""))
		}
		l.Beliefs = append(l.Beliefs, lane)
	}
	// The split brains, and the stretches in which a leader acted past its lease.
	bands := func(os []judge.Overlap, kind string) (out []templates.StageSegment) {
		for _, o := range os {
			end := o.End
			if end.IsZero() {
				end = now
			}
			if !end.Before(from) {
				out = append(out, seg(kind, o.Holder, maxTime(o.Start, from), end, ""))
			}
		}
		return out
	}
	l.Overlaps = bands(overlaps, "split-brain")
	l.PastLease = bands(past, judge.CausePastLease)
	l.Ticks = stageTicks(from, now, x)
	return l
}

// Half a tick's label (about 60 pixels), in percent of the lanes' width: on a screen wider than
// a phone (lanes of 550 pixels or more), and on a phone (260), where every other label is shown.
const stageTickHalfWide, stageTickHalfPhone = 5.5, 11.0

// stageTicks labels the lanes' time about every sixth of their span, on round seconds.
func stageTicks(from, to time.Time, x func(time.Time) float64) []templates.StageTick {
	step := time.Second
	for _, s := range []time.Duration{2, 5, 10, 15, 30, 60, 120, 300} {
		if to.Sub(from)/(s*time.Second) <= 6 {
			step = s * time.Second
			break
		}
		step = s * time.Second
	}
	var out []templates.StageTick
	for t := from.Truncate(step).Add(step); t.Before(to); t = t.Add(step) {
		k := templates.StageTick{X: x(t), Label: clockTime(t), Anchor: "middle"}
		if k.X > 100-stageTickHalfWide {
			k.Anchor = "end"
		}
		k.Late = k.X > 100-stageTickHalfPhone
		out = append(out, k)
	}
	// The last label, ending at its instant, may reach the one before: it is left out.
	if n := len(out); n >= 2 && out[n-1].Anchor == "end" && out[n-1].X-2*stageTickHalfWide < out[n-2].X+stageTickHalfWide {
		out = out[:n-1]
	}
	// A phone shows every other label (TestStageTicksFit: they keep apart, whatever the span).
	for i := range out {
		out[i].OnPhone = i%2 == 0
	}
	return out
}

// stageCaption is the newest line the judge tells of the lease by now, short: what just
// happened. A split brain is told as it began (the lease page explains it at length), and a
// candidate's role changes are lines too (a pause, a cut, a stop).
func stageCaption(lease string, terms []judge.Term, overlaps []judge.Overlap, vs []judge.View, now time.Time) i18n.Text {
	told := judge.Tell(lease, terms)
	for _, t := range judge.TellRoles(lease, vs) {
		// Whom the record names is told by the terms; a role line tells what stops a candidate.
		if t.Says.Key != "judge.roleLeader" && t.Says.Key != "judge.roleFollower" {
			told = append(told, t)
		}
	}
	for _, t := range judge.TellOverlaps(lease, overlaps) {
		if slices.ContainsFunc(overlaps, func(o judge.Overlap) bool { return o.Start.Equal(t.At) }) {
			told = append(told, t)
		}
	}
	var newest *judge.Told
	for i, t := range told {
		if t.KnownAt().After(now) {
			continue
		}
		if newest == nil || !t.KnownAt().Before(newest.KnownAt()) {
			newest = &told[i]
		}
	}
	if newest == nil {
		return i18n.Text{}
	}
	return newest.Says.Both()
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// getLease is the lease ns/name as stored now; nil when there is none.
func (u *reader) getLease(ctx context.Context, ns, name string) (*coordinationv1.Lease, error) {
	o, err := u.store.Get(ctx, store.Key{Resource: u.leases.StorageResource(), Namespace: ns, Name: name})
	switch {
	case notFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return u.decodeLease(o)
}
