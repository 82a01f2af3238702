package ui

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/web/lease/timings"
)

// calcScreen serves the timing calculator as a page of its own: /timings, and /timings/live,
// the part its sliders change, rendered by the same component as the page's first paint.
type calcScreen struct{ *pages }

// timingsPage serves /timings?leaseDuration=&renewDeadline=&retryPeriod= (seconds, or Go
// durations such as 10s; the tab's defaults when absent).
func (u *calcScreen) timingsPage(c echo.Context) error {
	ctx := c.Request().Context()
	s, typed, bad := timingsParams(c.QueryParams())
	v := templates.TimingsPage{
		Page:          u.pageSays(i18n.Say("tp.title"), "timings"),
		LeaseDuration: typed[0], RenewDeadline: typed[1], RetryPeriod: typed[2],
		Live: timingsLive(ctx, s, bad),
	}
	return u.render(c, timingsStatus(bad), templates.TimingsPageView(v))
}

// timingsLiveFragment serves /timings/live: the verdict at the query's durations.
func (u *calcScreen) timingsLiveFragment(c echo.Context) error {
	s, _, bad := timingsParams(c.QueryParams())
	return u.render(c, timingsStatus(bad), templates.TimingsLiveView(timingsLive(c.Request().Context(), s, bad)))
}

func timingsStatus(bad string) int {
	if bad != "" {
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// timingsParams reads the three durations, each in seconds ("10", "2.5") or as a Go duration
// ("10s", "1500ms"), and how the sliders show them; bad names the one that could not be read.
func timingsParams(q url.Values) (s timings.Settings, typed [3]string, bad string) {
	fields := []struct {
		name string
		def  time.Duration
		dst  *time.Duration
	}{
		{"leaseDuration", candidate.DefaultLeaseDuration, &s.LeaseDuration},
		{"renewDeadline", candidate.DefaultRenewDeadline, &s.RenewDeadline},
		{"retryPeriod", candidate.DefaultRetryPeriod, &s.RetryPeriod},
	}
	for i, f := range fields {
		*f.dst = f.def
		if raw := strings.TrimSpace(q.Get(f.name)); raw != "" {
			d, ok := parseSeconds(raw)
			if !ok {
				bad = f.name
				typed[i] = strconv.FormatFloat(f.def.Seconds(), 'f', -1, 64)
				continue
			}
			*f.dst = d
		}
		typed[i] = strconv.FormatFloat(f.dst.Seconds(), 'f', -1, 64)
	}
	return s, typed, bad
}

// parseSeconds reads "10", "2.5" (seconds) or a Go duration ("10s", "1500ms"): more than zero,
// at most an hour.
func parseSeconds(raw string) (time.Duration, bool) {
	var d time.Duration
	if f, err := strconv.ParseFloat(raw, 64); err == nil {
		d = time.Duration(f * float64(time.Second))
	} else if p, err := time.ParseDuration(raw); err == nil {
		d = p
	} else {
		return 0, false
	}
	return d, d > 0 && d <= time.Hour
}

// timingsLive is the verdict at s, three incidents drawn at those timings, and the link to a
// candidate tab with them; or why a value could not be read.
func timingsLive(ctx context.Context, s timings.Settings, bad string) templates.TimingsLive {
	if bad != "" {
		return templates.TimingsLive{Problem: i18n.T(ctx, "tp.bad", bad)}
	}
	v := timings.Check(s)
	q := url.Values{}
	for name, d := range map[string]time.Duration{"leaseDuration": s.LeaseDuration, "renewDeadline": s.RenewDeadline, "retryPeriod": s.RetryPeriod} {
		q.Set(name, strconv.FormatFloat(d.Seconds(), 'f', -1, 64))
	}
	out := templates.TimingsLive{PlayURL: "/play?" + q.Encode()}
	var axis time.Duration
	if v.OK() {
		out.Incidents, axis = timingsIncidents(v)
		out.Ticks = timingsTicks(axis)
	}
	// The chart below the incidents runs on their axis: their seconds line up.
	out.Verdict = timingsView(v, axis)
	return out
}

// timingsIncidents draws a crash, a release and a pause at v's timings on one axis, from the
// old leader's last renewal, and returns the axis's span: a crash hands over in
// CrashFailover, a release in ReleaseFailover, and a leader frozen past its lease finds, as it
// wakes, that a follower took it in Takeover; until its first request comes back it acts on its
// old belief.
func timingsIncidents(v timings.Verdict) ([]templates.TimingsIncident, time.Duration) {
	pause := v.Takeover.Worst + v.Settings.RetryPeriod
	span := pause + v.Settings.RetryPeriod
	at := func(d time.Duration) float64 { return 100 * float64(d) / float64(span) }
	secs := timings.Seconds
	return []templates.TimingsIncident{
		{Kind: "crash", Says: keepUnitsSays(i18n.Say("tp.crash", secs(v.CrashFailover.Best), secs(v.CrashFailover.Worst))),
			TakeFrom: at(v.CrashFailover.Best), TakeTo: at(v.CrashFailover.Worst)},
		{Kind: "release", Says: keepUnitsSays(i18n.Say("tp.release", secs(v.ReleaseFailover.Best), secs(v.ReleaseFailover.Worst))),
			TakeFrom: at(v.ReleaseFailover.Best), TakeTo: at(v.ReleaseFailover.Worst)},
		{Kind: "pause", Says: keepUnitsSays(i18n.Say("tp.pause", secs(pause), secs(v.Takeover.Best), secs(v.Takeover.Worst))),
			Wakes: at(pause), TakeFrom: at(v.Takeover.Best), TakeTo: at(v.Takeover.Worst)},
	}, span
}
