package ui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/lease/judge"
)

func itoa(v int) string { return strconv.Itoa(v) }

// clockTime is an instant as the screens show it: local wall-clock time to the second.
func clockTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("15:04:05")
}

// secsText is a duration in seconds with one decimal: "4.1 s".
func secsText(d time.Duration) string {
	s := d.Seconds()
	if math.Abs(s) >= 100 {
		return strconv.FormatFloat(math.Round(s), 'f', 0, 64) + " s"
	}
	return strconv.FormatFloat(s, 'f', 1, 64) + " s"
}

// lengthSays is how long a term or a split brain lasted: secsText under 100 s, else minutes
// and seconds ("6 min 49 s"), which read at a glance where "409 s" does not.
func lengthSays(d time.Duration) i18n.Text {
	if d < 100*time.Second {
		return i18n.Same(secsText(d))
	}
	return judge.MinutesAndSeconds(d).Both()
}

// exactSecsText is a duration in seconds with as many decimals as it has, one at least, as
// secsText writes the screens' seconds: "0.25 s", "1.5 s", "10.0 s" (a delay's label, which
// must not round 250 ms to "0.2 s"; live.js's delaySecs writes the same).
func exactSecsText(d time.Duration) string {
	s := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s + " s"
}

// spanText is a window length: "45 s", "3 min".
func spanText(d time.Duration) string {
	if d < time.Minute {
		return strconv.Itoa(int(d.Round(time.Second)/time.Second)) + " s"
	}
	m := d.Minutes()
	return strconv.FormatFloat(math.Round(m*10)/10, 'f', -1, 64) + " min"
}

// ageText says how long ago t was in English: "12 s ago", "3 min ago", "2 h ago".
func ageText(t, now time.Time) string { return ageSays(t, now).En }

// ageSays says how long ago t was, in both languages.
func ageSays(t, now time.Time) i18n.Text {
	if t.IsZero() {
		return i18n.Text{}
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return i18n.Say("age.future")
	case d < time.Minute:
		return i18n.Say("age.s", int(d/time.Second))
	case d < time.Hour:
		return i18n.Say("age.min", int(d/time.Minute))
	case d < 48*time.Hour:
		return i18n.Say("age.h", int(d/time.Hour))
	}
	return i18n.Say("age.d", int(d/(24*time.Hour)))
}

// spanSays is spanText in both languages.
func spanSays(d time.Duration) i18n.Text {
	if d < time.Minute {
		return i18n.Same(spanText(d))
	}
	m := d.Minutes()
	return i18n.Say("span.min", strconv.FormatFloat(math.Round(m*10)/10, 'f', -1, 64))
}
