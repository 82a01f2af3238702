package ui

import (
	"regexp"
	"time"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/lease/timings"
)

// timingsView is the calculator's verdict as the timings panel shows it (the /play settings
// drawer, the scenario pages): the figures and warnings as web/lease/timings words them, in both
// languages, and the chart's geometry from its figures, its axis running to axis at least (0:
// to its own end).
func timingsView(v timings.Verdict, axis time.Duration) templates.Timings {
	s := v.Settings
	d := timings.KubernetesDefaults
	settings := i18n.Say("timings.settings", timings.Seconds(s.LeaseDuration), timings.Seconds(s.RenewDeadline), timings.Seconds(s.RetryPeriod))
	defaults := i18n.Say("timings.defaults", timings.Seconds(d.LeaseDuration), timings.Seconds(d.RenewDeadline), timings.Seconds(d.RetryPeriod))
	out := templates.Timings{Settings: settings.En, SettingsSays: settings, Defaults: defaults.En, DefaultsSays: defaults}
	var refused i18n.Text
	switch {
	case v.Refused != "":
		refused = i18n.Say("timings.clientGoRefuses", v.Refused)
	case v.APIServerRefuses != "":
		refused = i18n.Say("timings.apiServerRefuses", timings.Seconds(s.LeaseDuration), v.LeaseDurationSeconds, v.APIServerRefuses)
	}
	if !refused.IsZero() {
		out.Refused, out.RefusedSays = refused.En, refused
		return out
	}
	for _, f := range v.Figures() {
		value, detail := keepUnitsSays(f.ValueSays.Both()), keepUnitsSays(f.DetailSays.Both())
		out.Figures = append(out.Figures, templates.TimingFigure{Key: f.Key, Label: f.Label, Value: value.En, Detail: detail.En,
			LabelSays: f.LabelSays.Both(), ValueSays: value, DetailSays: detail})
	}
	for _, w := range v.Warnings {
		msg, reason := keepUnitsSays(w.MessageSays.Both()), keepUnitsSays(w.ReasonSays.Both())
		out.Warnings = append(out.Warnings, templates.TimingWarning{Code: w.Code, Severity: string(w.Severity), Message: msg.En, Reason: reason.En,
			MessageSays: msg, ReasonSays: reason})
	}
	out.Chart = timingsChart(v, axis)
	return out
}

// timingsChart lays out the chart: the axis runs from the leader's last renewal to the latest
// takeover (or the leader's stop, when later), or to axis when that is later (a page that draws
// the chart under another gives both one scale), with a few round ticks.
func timingsChart(v timings.Verdict, axis time.Duration) templates.TimingsChart {
	takeoverBy := v.Takeover.Worst
	end := max(axis, takeoverBy, v.LeaderStops)
	at := func(d time.Duration) float64 { return 100 * float64(d) / float64(end) }
	label := i18n.Say("timings.chartLabel", timings.Seconds(v.LeaderStops), timings.Seconds(v.Lease), timings.Seconds(takeoverBy))
	leader := keepUnitsSays(i18n.Say("timings.chartLeaderLabel", timings.Seconds(v.LeaderStops)))
	follower := keepUnitsSays(i18n.Say("timings.chartFollowerLabel", timings.Seconds(v.Lease), timings.Seconds(takeoverBy)))
	c := templates.TimingsChart{
		Label: label.En, LeaderLabel: leader.En, FollowerLabel: follower.En,
		LabelSays: label, LeaderLabelSays: leader, FollowerLabelSays: follower,
		LeaderStops: at(v.LeaderStops),
		LeaseEnds:   at(v.Lease),
		TakeoverBy:  at(takeoverBy),
		Overlap:     v.Margin < 0,
	}
	// The tries of the last round: the first retryPeriod after the last renewal.
	for k := 1; k <= v.RenewAttempts && k <= 60; k++ {
		c.Tries = append(c.Tries, at(time.Duration(k)*v.Settings.RetryPeriod))
	}
	c.Ticks = timingsTicks(end)
	return c
}

// timingsTicks labels an axis from 0 to end on round steps, the last far enough from the end,
// which is labelled too, for the labels not to run into each other on a phone.
func timingsTicks(end time.Duration) []templates.TimingsTick {
	var ticks []templates.TimingsTick
	step := tickStep(end)
	for t := time.Duration(0); t <= end-step*7/10; t += step {
		ticks = append(ticks, templates.TimingsTick{At: 100 * float64(t) / float64(end), Label: timings.Seconds(t)})
	}
	return append(ticks, templates.TimingsTick{At: 100, Label: timings.Seconds(end)})
}

// tickStep is a round step cutting span into at most four.
func tickStep(span time.Duration) time.Duration {
	for _, s := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour} {
		if span/s <= 4 {
			return s
		}
	}
	return max(span/4, time.Hour)
}

// keepUnits keeps a number and its unit on one line ("4.4 s", "2 ×").
func keepUnits(s string) string { return unitAfterNumber.ReplaceAllString(s, "$1\u00a0$2") }

// keepUnitsSays is keepUnits in both languages.
func keepUnitsSays(t i18n.Text) i18n.Text { return i18n.Text{En: keepUnits(t.En), Zh: keepUnits(t.Zh)} }

var unitAfterNumber = regexp.MustCompile(`(\d) (s\b|×)`)
