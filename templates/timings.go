package templates

import "github.com/leaselab/leaselab/templates/i18n"

// Timings is the timing calculator's verdict on a leader election's three durations
// (web/lease/timings decides all of it), as the candidate tab's settings drawer and the scenario
// pages show it.
type Timings struct {
	// Settings names the durations judged: "lease 10 s · renew deadline 7 s · retry period 2 s".
	Settings string
	// Refused is why client-go, or the API server, refuses them; only it is shown then.
	Refused string
	// Chart draws what happens after a leader's last renewal.
	Chart    TimingsChart
	Figures  []TimingFigure
	Warnings []TimingWarning
	// Defaults names the Kubernetes components' settings, for reference.
	Defaults string
	// SettingsSays, RefusedSays and DefaultsSays are the same in both languages; the strings
	// alone when zero.
	SettingsSays, RefusedSays, DefaultsSays i18n.Text
}

// TimingFigure is one figure: what it is, its value, and how it comes about.
type TimingFigure struct {
	Key, Label, Value, Detail string
	// LabelSays, ValueSays and DetailSays are the same in both languages; the strings alone
	// when zero.
	LabelSays, ValueSays, DetailSays i18n.Text
}

// TimingWarning is a setting that works badly. Severity is "danger" or "caution".
type TimingWarning struct {
	Code, Severity, Message, Reason string
	// MessageSays and ReasonSays are the same in both languages; the strings alone when zero.
	MessageSays, ReasonSays i18n.Text
}

// TimingsChart draws a leader cut off from the API server (or crashed) against a follower, on
// one time axis that starts at the leader's last successful renewal. Positions are percentages
// of the chart's width.
type TimingsChart struct {
	// Label describes the drawing in words, for screen readers; LeaderLabel and FollowerLabel
	// are the legend of its two rows.
	Label, LeaderLabel, FollowerLabel string
	// LabelSays, LeaderLabelSays and FollowerLabelSays are the same in both languages; the
	// strings alone when zero.
	LabelSays, LeaderLabelSays, FollowerLabelSays i18n.Text
	// LeaderStops is where the cut-off leader stops leading; Tries are its renew tries.
	LeaderStops float64
	Tries       []float64
	// LeaseEnds is where the lease runs out for a follower that saw the renewal at once;
	// TakeoverBy is the latest a follower takes it (it saw the renewal late, and tries again
	// only so often).
	LeaseEnds, TakeoverBy float64
	// Overlap is true when the leader still leads at LeaseEnds: both lead in between. Otherwise
	// the margin between LeaderStops and LeaseEnds is drawn.
	Overlap bool
	// Ticks label the axis.
	Ticks []TimingsTick
}

// TimingsTick is a label on the chart's axis.
type TimingsTick struct {
	At    float64
	Label string
}

// pct is a percentage for an SVG length: "12.5%".
func pct(v float64) string { return f2(v) + "%" }

// tickAnchor keeps the axis labels at the chart's edges inside it.
func tickAnchor(at float64) string {
	switch {
	case at < 5:
		return "start"
	case at > 95:
		return "end"
	}
	return "middle"
}

// TimingsPage is the timing calculator as a page of its own (/timings): three sliders, and the
// verdict at their values, which timings.js swaps in as they move.
type TimingsPage struct {
	Page Page
	// LeaseDuration, RenewDeadline and RetryPeriod are the sliders' values in seconds, as the
	// page writes them.
	LeaseDuration, RenewDeadline, RetryPeriod string
	Live                                      TimingsLive
}

// TimingsLive is what moves with the sliders: the verdict, three incidents drawn at those
// timings, and the link that opens a candidate tab with them. Problem says why a value could
// not be read (the verdict is then empty).
type TimingsLive struct {
	Problem   string
	Verdict   Timings
	Incidents []TimingsIncident
	// Ticks label the incidents' shared axis, in seconds from the old leader's last renewal.
	Ticks   []TimingsTick
	PlayURL string
}

// TimingsIncident is one incident drawn on the axis the incidents share (percentages of its
// width): what the old leader does, and when a follower holds the lease after it.
type TimingsIncident struct {
	// Kind is "crash", "release" or "pause"; Says says the incident and its figure.
	Kind string
	Says i18n.Text
	// LeaderEnd is where the old leader's bar ends (it crashed, released, or froze); Wakes,
	// for a pause, where it runs again (0: never).
	LeaderEnd, Wakes float64
	// TakeFrom and TakeTo are the window in which a follower takes the lease.
	TakeFrom, TakeTo float64
}
