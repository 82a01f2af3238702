// Package timingsreport writes the verdict of `leaselab timings` (web/lease/timings): a report
// for a reader, wrapped at 96 columns, or the JSON whose fields docs/timings.md lists.
package timingsreport

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/leaselab/leaselab/web/lease/timings"
)

// WriteText prints a verdict for a reader: the settings, the figures with how they come about,
// the warnings with their reasons, and the Kubernetes defaults. Refused settings print
// nothing: the command's error says why. It returns w's error.
func WriteText(w io.Writer, v timings.Verdict) error {
	if !v.OK() {
		return nil
	}
	var b strings.Builder
	s := v.Settings
	fmt.Fprintf(&b, "leaseDuration %s, renewDeadline %s, retryPeriod %s: client-go accepts these settings.\n\n", s.LeaseDuration, s.RenewDeadline, s.RetryPeriod)
	for _, f := range v.Figures() {
		fmt.Fprintf(&b, "  %-40s %s\n", f.Label, f.Value)
		wrap(&b, f.Detail, "      ", "      ", 96)
	}
	b.WriteString("\n")
	if len(v.Warnings) == 0 {
		b.WriteString("No warnings.\n")
	} else {
		b.WriteString("Warnings:\n")
	}
	for _, warn := range v.Warnings {
		wrap(&b, warn.Message, fmt.Sprintf("  %-8s", strings.ToUpper(string(warn.Severity))), "          ", 96)
		wrap(&b, "Why: "+warn.Reason, "          ", "          ", 96)
	}
	d := timings.KubernetesDefaults
	fmt.Fprintf(&b, "\nFor reference, kube-controller-manager and kube-scheduler use %s / %s / %s.\n", d.LeaseDuration, d.RenewDeadline, d.RetryPeriod)
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap writes text in lines of at most width columns (longer words stay whole), the first after
// first, the others after indent. A number and its unit ("4.4 s", "25 %") stay on one line.
func wrap(b *strings.Builder, text, first, indent string, width int) {
	text = unitAfterNumber.ReplaceAllString(text, "$1\u00a0$2")
	n := utf8.RuneCountInString
	line, start := first, n(first)
	for _, word := range strings.Split(text, " ") {
		if word == "" {
			continue
		}
		if n(line) > start && n(line)+1+n(word) > width {
			b.WriteString(strings.ReplaceAll(line, "\u00a0", " ") + "\n")
			line, start = indent, n(indent)
		}
		if n(line) > start {
			line += " "
		}
		line += word
	}
	if n(line) > start {
		b.WriteString(strings.ReplaceAll(line, "\u00a0", " ") + "\n")
	}
}

// unitAfterNumber finds a number followed by a unit of the calculator's sentences.
var unitAfterNumber = regexp.MustCompile(`(\d) (s\b|×)`)

// WriteJSON prints a verdict as the JSON of leaselab timings --json, indented. It returns w's
// error.
func WriteJSON(w io.Writer, v timings.Verdict) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonOf(v))
}

// timingsJSON is the output of leaselab timings --json; docs/timings.md lists its fields. Durations
// are seconds, to the millisecond, except the settings, which are Go durations as the flags
// take them. Only the settings, accepted, the refusals and kubernetesDefaults are present when
// the settings are refused.
type timingsJSON struct {
	Settings         durationsJSON `json:"settings"`
	Accepted         bool          `json:"accepted"`
	Refused          string        `json:"refused,omitempty"`
	APIServerRefuses string        `json:"apiServerRefuses,omitempty"`
	// LeaseDurationSeconds is present whenever client-go accepts the settings (0 included).
	LeaseDurationSeconds *int32 `json:"leaseDurationSeconds,omitempty"`
	*figuresJSON
	KubernetesDefaults durationsJSON `json:"kubernetesDefaults"`
}

type durationsJSON struct {
	LeaseDuration string `json:"leaseDuration"`
	RenewDeadline string `json:"renewDeadline"`
	RetryPeriod   string `json:"retryPeriod"`
}

type figuresJSON struct {
	FailoverAfterCrashSeconds   rangeJSON     `json:"failoverAfterCrashSeconds"`
	FailoverAfterReleaseSeconds rangeJSON     `json:"failoverAfterReleaseSeconds"`
	FollowerTryGapSeconds       rangeJSON     `json:"followerTryGapSeconds"`
	RenewAttempts               int           `json:"renewAttempts"`
	LastRenewAttemptSeconds     float64       `json:"lastRenewAttemptSeconds"`
	OutageRiddenOutSeconds      float64       `json:"outageRiddenOutSeconds"`
	LeaderStopsAfterSeconds     float64       `json:"leaderStopsAfterSeconds"`
	TakeoverMarginSeconds       float64       `json:"takeoverMarginSeconds"`
	ClockRateTolerance          float64       `json:"clockRateTolerance"`
	LeaderWritesPerSecond       float64       `json:"leaderWritesPerSecond"`
	FollowerReadsPerSecond      float64       `json:"followerReadsPerSecond"`
	Warnings                    []warningJSON `json:"warnings"`
}

type rangeJSON struct {
	Best  float64 `json:"best"`
	Worst float64 `json:"worst"`
}

type warningJSON struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Reason   string `json:"reason"`
}

// jsonOf is the JSON form of a verdict.
func jsonOf(v timings.Verdict) timingsJSON {
	durations := func(s timings.Settings) durationsJSON {
		return durationsJSON{s.LeaseDuration.String(), s.RenewDeadline.String(), s.RetryPeriod.String()}
	}
	out := timingsJSON{
		Settings:           durations(v.Settings),
		Accepted:           v.OK(),
		Refused:            v.Refused,
		APIServerRefuses:   v.APIServerRefuses,
		KubernetesDefaults: durations(timings.KubernetesDefaults),
	}
	if v.Refused == "" {
		out.LeaseDurationSeconds = &v.LeaseDurationSeconds
	}
	if !v.OK() {
		return out
	}
	secs := func(d time.Duration) float64 { return d.Round(time.Millisecond).Seconds() }
	span := func(r timings.Range) rangeJSON { return rangeJSON{secs(r.Best), secs(r.Worst)} }
	round := func(f float64) float64 { return math.Round(f*1e4) / 1e4 }
	f := &figuresJSON{
		FailoverAfterCrashSeconds:   span(v.CrashFailover),
		FailoverAfterReleaseSeconds: span(v.ReleaseFailover),
		FollowerTryGapSeconds:       span(v.FollowerTryGap),
		RenewAttempts:               v.RenewAttempts,
		LastRenewAttemptSeconds:     secs(v.LastRenewAttempt),
		OutageRiddenOutSeconds:      secs(v.OutageRiddenOut),
		LeaderStopsAfterSeconds:     secs(v.LeaderStops),
		TakeoverMarginSeconds:       secs(v.Margin),
		ClockRateTolerance:          round(v.ClockRateTolerance),
		LeaderWritesPerSecond:       round(v.LeaderWritesPerSecond),
		FollowerReadsPerSecond:      round(v.FollowerReadsPerSecond),
		Warnings:                    []warningJSON{},
	}
	for _, w := range v.Warnings {
		f.Warnings = append(f.Warnings, warningJSON{w.Code, string(w.Severity), w.Message, w.Reason})
	}
	out.figuresJSON = f
	return out
}
