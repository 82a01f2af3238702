// Package timings is the timing calculator: from the three durations of client-go's leader
// election (leaseDuration, renewDeadline, retryPeriod) it tells whether client-go accepts them,
// and, following client-go's own loops, how long a failover takes after a crash and after a
// release, how many renew attempts fit in the renew deadline, which API-server outage a leader
// rides out, how long before another candidate may take over a cut-off leader has stopped, what
// the whole-second leaseDurationSeconds does to the lease, and which settings work badly, each
// with its reason.
//
// It is pure functions of the three durations and the standard library only: the server renders
// its verdicts (leaselab timings, the /play settings drawer, the scenario pages), and the browser
// build may link it.
//
// The loops it follows are those of client-go's tools/leaderelection (v0.36):
//
//   - A follower tries every retryPeriod plus a jitter of up to JitterFactor × retryPeriod,
//     counted from the end of its previous try (wait.JitterUntil, sliding). It judges the lease
//     expired leaseDurationSeconds after it last saw the record change, by its own clock.
//   - A leader starts a renew round retryPeriod after its last successful renewal
//     (wait.UntilWithContext, sliding). A round tries at once and then every retryPeriod on a
//     ticker until renewDeadline has passed since the round began
//     (wait.PollUntilContextTimeout); every try runs under the round's deadline. When the round
//     ends without a renewal the leader stops leading.
//   - client-go writes leaseDurationSeconds as int32(leaseDuration / time.Second).
//   - Releasing (ReleaseOnCancel) writes an empty holderIdentity, which a follower takes at its
//     next try without waiting for the lease to expire.
package timings

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// JitterFactor is client-go's leaderelection.JitterFactor: a follower waits between
// retryPeriod and (1 + JitterFactor) × retryPeriod between tries, and renewDeadline must exceed
// JitterFactor × retryPeriod.
const JitterFactor = 1.2

// Settings are the three durations of a leader election, as client-go's
// LeaderElectionConfig takes them.
type Settings struct {
	// LeaseDuration is how long a follower waits, from when it last saw the lease change,
	// before it takes the lease.
	LeaseDuration time.Duration
	// RenewDeadline is how long a leader keeps trying to renew before it stops leading.
	RenewDeadline time.Duration
	// RetryPeriod is the pause between tries.
	RetryPeriod time.Duration
}

// KubernetesDefaults are the settings of kube-controller-manager and kube-scheduler
// (--leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period),
// the values client-go's documentation calls the core clients' defaults.
var KubernetesDefaults = Settings{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}

// The thresholds of the warnings.
const (
	// ThinMargin: a cut-off leader that stops less than this before another may take over
	// leaves no room for a garbage-collection pause or a slow last response.
	ThinMargin = time.Second
	// MinRenewAttempts: fewer renew attempts in the renew deadline make a short hiccup fatal.
	MinRenewAttempts = 3
	// BusyRetryPeriod: a retry period under this has every candidate call the API server more
	// than once a second.
	BusyRetryPeriod = time.Second
	// ShortRenewDeadline: a renew deadline under this loses the lease to ordinary API-server
	// and etcd hiccups.
	ShortRenewDeadline = 5 * time.Second
	// SlowFailover: a worst-case failover after a crash beyond this leaves the work undone for
	// a long time.
	SlowFailover = time.Minute
)

// Severity says how bad a warning is.
type Severity string

const (
	// Danger: the settings break the election (two leaders at once).
	Danger Severity = "danger"
	// Caution: the settings work, but fragile, slow or costly.
	Caution Severity = "caution"
)

// The codes of the warnings, stable for scripts and translations.
const (
	CodeTwoLeaders         = "two-leaders"
	CodeThinMargin         = "thin-margin"
	CodeNotWholeSeconds    = "not-whole-seconds"
	CodeFewRenewAttempts   = "few-renew-attempts"
	CodeShortRenewDeadline = "short-renew-deadline"
	CodeBusyRetryPeriod    = "busy-retry-period"
	CodeSlowFailover       = "slow-failover"
)

// Warning is a setting that works badly: what happens, and why.
type Warning struct {
	Code     string
	Severity Severity
	// Message says what goes wrong, in one sentence.
	Message string
	// Reason says why, with the figures of these settings.
	Reason string
	// MessageSays and ReasonSays are the same as sentences a screen puts in its reader's
	// language (Message and Reason are their English).
	MessageSays, ReasonSays Said
}

// Range is a best and a worst case.
type Range struct {
	Best, Worst time.Duration
}

// Verdict is what the calculator says about Settings.
type Verdict struct {
	Settings Settings
	// Refused is client-go's reason for refusing the settings, word for word as
	// leaderelection.NewLeaderElector returns it; "" when client-go accepts them. The figures
	// and warnings are zero when it refuses.
	Refused string
	// LeaseDurationSeconds is what client-go writes to spec.leaseDurationSeconds.
	LeaseDurationSeconds int32
	// APIServerRefuses is the API server's reason for refusing the Lease client-go writes with
	// these settings (a leaseDurationSeconds of 0: no candidate ever holds it); "" when it takes
	// it. The figures and warnings are zero when it refuses.
	APIServerRefuses string

	// Lease is how long the lease lasts as every candidate counts it: LeaseDurationSeconds.
	Lease time.Duration
	// CrashFailover is how long after a leader's crash (without a release) a follower holds the
	// lease: the leader crashed up to RetryPeriod after its last renewal, a follower saw that
	// renewal up to FollowerTryGap.Worst late, judges the lease expired Lease later, and takes
	// it at its next try, up to FollowerTryGap.Worst after that.
	CrashFailover Range
	// Takeover is how long after a leader's last renewal a follower holds the lease when the
	// leader renews no more (it crashed, or cannot reach the API server): Lease at the earliest,
	// and up to FollowerTryGap.Worst more for seeing that renewal late and again for the next try.
	Takeover Range
	// ReleaseFailover is how long after a release a follower holds the lease: at its next try.
	ReleaseFailover Range
	// FollowerTryGap is the time between a follower's tries: RetryPeriod to
	// (1 + JitterFactor) × RetryPeriod.
	FollowerTryGap Range
	// RenewAttempts is how many tries a renew round makes before its deadline when each fails
	// fast: at 0, RetryPeriod, 2 × RetryPeriod, ... before RenewDeadline. A try that hangs uses up
	// the rest of the round.
	RenewAttempts int
	// LastRenewAttempt is when the last try of a failing round comes, after the leader's last
	// successful renewal: the longest API-server outage the leader rides out, when the outage
	// begins right after a renewal.
	LastRenewAttempt time.Duration
	// OutageRiddenOut is the longest API-server outage the leader rides out whenever it begins:
	// LastRenewAttempt less one RetryPeriod.
	OutageRiddenOut time.Duration
	// LeaderStops is when a leader whose renewals all fail stops leading, after its last
	// successful renewal: RetryPeriod + RenewDeadline.
	LeaderStops time.Duration
	// Margin is how long before the earliest takeover a cut-off leader has stopped: a follower
	// may take over Lease after the leader's last renewal, the leader stops LeaderStops after it.
	// Zero or negative: both may lead at once, for -Margin.
	Margin time.Duration
	// ClockRateTolerance is how many times as fast as the leader's clock a follower's may run
	// before the two may lead at once: Lease / LeaderStops.
	ClockRateTolerance float64
	// LeaderWritesPerSecond and FollowerReadsPerSecond are the requests one candidate sends
	// while all is well: the leader writes once per RetryPeriod, a follower reads once per
	// (1 + JitterFactor/2) × RetryPeriod on average.
	LeaderWritesPerSecond  float64
	FollowerReadsPerSecond float64

	// Warnings are the settings that work badly, the dangerous first.
	Warnings []Warning
}

// OK says whether client-go and the API server both accept the settings.
func (v Verdict) OK() bool { return v.Refused == "" && v.APIServerRefuses == "" }

// Refusal is why the settings cannot be used, client-go's reason first; "" when they can.
func (v Verdict) Refusal() string {
	if v.Refused != "" {
		return v.Refused
	}
	return v.APIServerRefuses
}

// Check judges settings as client-go would run them.
func Check(s Settings) Verdict {
	v := Verdict{Settings: s, Refused: ClientGoRefusal(s)}
	if v.Refused != "" {
		return v
	}
	v.LeaseDurationSeconds = LeaseDurationSeconds(s.LeaseDuration)
	if v.LeaseDurationSeconds <= 0 {
		// k8s.io/kubernetes pkg/apis/coordination/validation, ValidateLeaseSpec.
		v.APIServerRefuses = fmt.Sprintf("spec.leaseDurationSeconds: Invalid value: %d: must be greater than 0", v.LeaseDurationSeconds) //said:english kube-apiserver's own error, quoted exactly
		return v
	}
	rp, rd := s.RetryPeriod, s.RenewDeadline
	v.Lease = time.Duration(v.LeaseDurationSeconds) * time.Second

	// The sums saturate: a duration of centuries is valid input, but must not wrap around.
	v.FollowerTryGap = Range{Best: rp, Worst: add(rp, scale(rp, JitterFactor))}
	v.ReleaseFailover = Range{Best: 0, Worst: v.FollowerTryGap.Worst}
	v.Takeover = Range{Best: v.Lease, Worst: add(add(v.FollowerTryGap.Worst, v.Lease), v.FollowerTryGap.Worst)}
	// The crash comes up to one retryPeriod after the last renewal, before the next.
	v.CrashFailover = Range{Best: max(v.Lease-rp, 0), Worst: v.Takeover.Worst}

	// PollUntilContextTimeout tries at once, then on a ticker every retryPeriod; a tick that
	// falls on the deadline loses to it.
	v.RenewAttempts = int(rd / rp)
	if rd%rp != 0 {
		v.RenewAttempts++
	}
	v.LastRenewAttempt = scale(rp, float64(v.RenewAttempts))
	v.OutageRiddenOut = v.LastRenewAttempt - rp
	v.LeaderStops = add(rp, rd)
	v.Margin = v.Lease - v.LeaderStops
	v.ClockRateTolerance = float64(v.Lease) / float64(v.LeaderStops)
	v.LeaderWritesPerSecond = 1 / rp.Seconds()
	v.FollowerReadsPerSecond = 1 / ((1 + JitterFactor/2) * rp.Seconds())

	v.Warnings = warnings(v)
	return v
}

// ClientGoRefusal is the error client-go's leaderelection.NewLeaderElector returns for these
// durations, word for word and in its order of checks; "" when it accepts them.
//
//said:english client-go's own errors, quoted exactly
func ClientGoRefusal(s Settings) string {
	switch {
	case s.LeaseDuration <= s.RenewDeadline:
		return "leaseDuration must be greater than renewDeadline"
	case s.RenewDeadline <= jitter(s.RetryPeriod):
		return "renewDeadline must be greater than retryPeriod*JitterFactor"
	case s.LeaseDuration < 1:
		return "leaseDuration must be greater than zero"
	case s.RenewDeadline < 1:
		return "renewDeadline must be greater than zero"
	case s.RetryPeriod < 1:
		return "retryPeriod must be greater than zero"
	}
	return ""
}

// jitter is JitterFactor × d, converted as client-go converts it (the comparison of
// NewLeaderElector must agree with client-go's to the nanosecond).
func jitter(d time.Duration) time.Duration { return time.Duration(JitterFactor * float64(d)) }

// add is a + b for positive durations, saturating at the longest duration.
func add(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// scale is f × d for a positive duration, saturating at the longest duration.
func scale(d time.Duration, f float64) time.Duration {
	if p := f * float64(d); p < math.MaxInt64 {
		return time.Duration(p)
	}
	return math.MaxInt64
}

// LeaseDurationSeconds is what client-go writes to spec.leaseDurationSeconds for a lease
// duration: the whole seconds, the fraction dropped, converted to int32 as it does.
func LeaseDurationSeconds(d time.Duration) int32 { return int32(int(d / time.Second)) }

// warnings lists what works badly in the settings of an accepted verdict.
func warnings(v Verdict) []Warning {
	s := v.Settings
	var ws []Warning
	add := func(code string, sev Severity, msg, reason Said) {
		ws = append(ws, Warning{Code: code, Severity: sev, Message: msg.English(), Reason: reason.English(), MessageSays: msg, ReasonSays: reason})
	}
	leads := say("timings.leads", Seconds(v.LeaderStops))
	switch {
	case v.Margin <= 0:
		add(CodeTwoLeaders, Danger, say("timings.twoLeaders"),
			say("timings.twoLeadersWhy", leads, Seconds(v.Lease), v.LeaseDurationSeconds, Seconds(-v.Margin)))
	case v.Margin < ThinMargin:
		add(CodeThinMargin, Caution, say("timings.thinMargin", Seconds(v.Margin)),
			say("timings.thinMarginWhy", leads, Seconds(v.Lease), percent(v.ClockRateTolerance-1),
				Seconds(KubernetesDefaults.LeaseDuration-KubernetesDefaults.RenewDeadline-KubernetesDefaults.RetryPeriod)))
	}
	if s.LeaseDuration%time.Second != 0 {
		add(CodeNotWholeSeconds, Caution,
			say("timings.notWhole", Seconds(s.LeaseDuration), v.LeaseDurationSeconds, Seconds(v.Lease), Seconds(s.LeaseDuration)),
			say("timings.notWholeWhy"))
	}
	if v.RenewAttempts < MinRenewAttempts {
		add(CodeFewRenewAttempts, Caution, say("timings.fewAttempts", v.RenewAttempts),
			say("timings.fewAttemptsWhy", Seconds(s.RetryPeriod), Seconds(s.RenewDeadline), v.RenewAttempts, MinRenewAttempts-1))
	}
	if s.RenewDeadline < ShortRenewDeadline {
		add(CodeShortRenewDeadline, Caution, say("timings.shortDeadline", Seconds(s.RenewDeadline)),
			say("timings.shortDeadlineWhy", Seconds(KubernetesDefaults.RenewDeadline)))
	}
	if s.RetryPeriod < BusyRetryPeriod {
		add(CodeBusyRetryPeriod, Caution, say("timings.busy"),
			say("timings.busyWhy", Seconds(s.RetryPeriod), rate(v.LeaderWritesPerSecond), Seconds(v.FollowerTryGap.Best),
				Seconds(v.FollowerTryGap.Worst), Seconds(KubernetesDefaults.RetryPeriod)))
	}
	if v.CrashFailover.Worst > SlowFailover {
		add(CodeSlowFailover, Caution, say("timings.slowFailover", Seconds(v.CrashFailover.Worst)),
			say("timings.slowFailoverWhy", v.LeaseDurationSeconds, Seconds(v.ReleaseFailover.Worst)))
	}
	return ws
}

// Figure is one result of the calculator, worded for a reader.
type Figure struct {
	// Key names the figure, stable for tests and styles.
	Key string
	// Label says what it is; Value is the figure; Detail says how it comes about.
	Label, Value, Detail string
	// LabelSays, ValueSays and DetailSays are the same as sentences a screen puts in its
	// reader's language (the strings are their English).
	LabelSays, ValueSays, DetailSays Said
}

// The keys of the figures.
const (
	FigureCrashFailover   = "crash-failover"
	FigureReleaseFailover = "release-failover"
	FigureRenewAttempts   = "renew-attempts"
	FigureOutage          = "outage"
	FigureMargin          = "margin"
	FigureLease           = "lease-duration-seconds"
	FigureLoad            = "load"
)

// Figures words the verdict's figures, in the order a reader wants them; none when the
// settings are refused.
func (v Verdict) Figures() []Figure {
	if !v.OK() {
		return nil
	}
	s := v.Settings
	attempts := make([]string, 0, min(v.RenewAttempts, 7))
	for k := range v.RenewAttempts {
		if k == 5 && v.RenewAttempts > 7 {
			attempts = append(attempts, "…", number(time.Duration(v.RenewAttempts-1)*s.RetryPeriod))
			break
		}
		attempts = append(attempts, number(time.Duration(k)*s.RetryPeriod))
	}
	margin := say("timings.toSpare", Seconds(v.Margin))
	clocks := say("timings.clocks", percent(v.ClockRateTolerance-1))
	if v.Margin <= 0 {
		margin = say("timings.noMargin", Seconds(-v.Margin))
		clocks = say("timings.clocksOverlap")
	}
	figure := func(key string, label, value, detail Said) Figure {
		return Figure{Key: key, Label: label.English(), Value: value.English(), Detail: detail.English(), LabelSays: label, ValueSays: value, DetailSays: detail}
	}
	return []Figure{
		figure(FigureCrashFailover, say("timings.crashFailover"), spanSays(v.CrashFailover),
			say("timings.crashFailoverHow", Seconds(v.Lease), Seconds(v.FollowerTryGap.Best), Seconds(v.FollowerTryGap.Worst), Seconds(v.FollowerTryGap.Worst), Seconds(s.RetryPeriod))),
		figure(FigureReleaseFailover, say("timings.releaseFailover"), spanSays(v.ReleaseFailover), say("timings.releaseFailoverHow")),
		figure(FigureRenewAttempts, say("timings.renewAttempts"), same(strconv.Itoa(v.RenewAttempts)),
			say("timings.renewAttemptsHow", Seconds(s.RetryPeriod), Seconds(s.RenewDeadline), strings.Join(attempts, ", "))),
		figure(FigureOutage, say("timings.outage"), say("timings.upTo", Seconds(v.LastRenewAttempt)),
			say("timings.outageHow", Seconds(v.LastRenewAttempt), Seconds(v.OutageRiddenOut), Seconds(v.LeaderStops), Seconds(v.Lease))),
		figure(FigureMargin, say("timings.margin"), margin,
			say("timings.marginHow", Seconds(v.LeaderStops), Seconds(v.Lease), clocks)),
		figure(FigureLease, say("timings.writtenToLease"), same(fmt.Sprintf("leaseDurationSeconds: %d", v.LeaseDurationSeconds)),
			say("timings.writtenToLeaseHow")),
		figure(FigureLoad, say("timings.load"), say("timings.loadValue", rate(v.LeaderWritesPerSecond), rate(v.FollowerReadsPerSecond)),
			say("timings.loadHow")),
	}
}

// Seconds formats a duration in seconds, to the millisecond: "4.4 s", "15 s", "0.2 s".
func Seconds(d time.Duration) string { return number(d) + " s" }

// number is d in seconds, to the millisecond, without a unit.
func number(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Round(time.Millisecond))/float64(time.Second), 'f', -1, 64)
}

// spanSays says a range: "13 s to 23.8 s".
func spanSays(r Range) Said {
	if r.Best == r.Worst {
		return same(Seconds(r.Best))
	}
	return say("timings.span", number(r.Best), Seconds(r.Worst))
}

// percent formats a ratio as a whole percentage, rounded down: 0.25 is "25%".
func percent(f float64) string {
	return strconv.FormatFloat(math.Floor(f*100+1e-9), 'f', 0, 64) + "%"
}

// rate formats a rate with two significant decimals: "0.5", "0.31", "12".
func rate(f float64) string {
	switch {
	case f >= 10:
		return strconv.FormatFloat(math.Round(f), 'f', -1, 64)
	default:
		return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
	}
}
