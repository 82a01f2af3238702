package ui

import (
	"fmt"
	"regexp"
	"time"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/web/timings"
)

// timingsView is the calculator's verdict as the timings panel shows it (the /play settings
// drawer, the scenario pages): the figures and warnings as web/timings words them, and the chart's
// geometry from its figures.
func timingsView(v timings.Verdict) templates.Timings {
	s := v.Settings
	d := timings.KubernetesDefaults
	out := templates.Timings{
		Settings: fmt.Sprintf("lease %s · renew deadline %s · retry period %s",
			timings.Seconds(s.LeaseDuration), timings.Seconds(s.RenewDeadline), timings.Seconds(s.RetryPeriod)),
		Defaults: fmt.Sprintf("For reference, kube-controller-manager and kube-scheduler use %s / %s / %s (lease / renew deadline / retry period).",
			timings.Seconds(d.LeaseDuration), timings.Seconds(d.RenewDeadline), timings.Seconds(d.RetryPeriod)),
	}
	switch {
	case v.Refused != "":
		out.Refused = "client-go refuses these settings: " + v.Refused
		return out
	case v.APIServerRefuses != "":
		out.Refused = fmt.Sprintf("leaseDuration %s is written as leaseDurationSeconds %d, and the API server refuses that Lease: %s",
			timings.Seconds(s.LeaseDuration), v.LeaseDurationSeconds, v.APIServerRefuses)
		return out
	}
	for _, f := range v.Figures() {
		out.Figures = append(out.Figures, templates.TimingFigure{Key: f.Key, Label: f.Label, Value: keepUnits(f.Value), Detail: keepUnits(f.Detail)})
	}
	for _, w := range v.Warnings {
		out.Warnings = append(out.Warnings, templates.TimingWarning{Code: w.Code, Severity: string(w.Severity), Message: keepUnits(w.Message), Reason: keepUnits(w.Reason)})
	}
	out.Chart = timingsChart(v)
	return out
}

// timingsChart lays out the chart: the axis runs from the leader's last renewal to the latest
// takeover (or the leader's stop, when later), with a few round ticks.
func timingsChart(v timings.Verdict) templates.TimingsChart {
	takeoverBy := v.Takeover.Worst
	end := max(takeoverBy, v.LeaderStops)
	at := func(d time.Duration) float64 { return 100 * float64(d) / float64(end) }
	c := templates.TimingsChart{
		Label: fmt.Sprintf("After a leader's last renewal: cut off from the API server, it leads until %s; a follower's lease runs out at %s at the earliest, and a follower holds the lease by %s.",
			timings.Seconds(v.LeaderStops), timings.Seconds(v.Lease), timings.Seconds(takeoverBy)),
		LeaderLabel: keepUnits(fmt.Sprintf("a leader cut off from the API server tries to renew at each notch and stops leading at %s",
			timings.Seconds(v.LeaderStops))),
		FollowerLabel: keepUnits(fmt.Sprintf("a follower's lease runs out at %s by its clock; it holds the lease by %s",
			timings.Seconds(v.Lease), timings.Seconds(takeoverBy))),
		LeaderStops: at(v.LeaderStops),
		LeaseEnds:   at(v.Lease),
		TakeoverBy:  at(takeoverBy),
		Overlap:     v.Margin < 0,
	}
	// The tries of the last round: the first retryPeriod after the last renewal.
	for k := 1; k <= v.RenewAttempts && k <= 60; k++ {
		c.Tries = append(c.Tries, at(time.Duration(k)*v.Settings.RetryPeriod))
	}
	// Round ticks, the last far enough from the end, which is labelled too, for the labels not to
	// run into each other on a phone.
	step := tickStep(end)
	for t := time.Duration(0); t <= end-step*7/10; t += step {
		c.Ticks = append(c.Ticks, templates.TimingsTick{At: at(t), Label: timings.Seconds(t)})
	}
	c.Ticks = append(c.Ticks, templates.TimingsTick{At: 100, Label: timings.Seconds(end)})
	return c
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

var unitAfterNumber = regexp.MustCompile(`(\d) (s\b|×)`)
