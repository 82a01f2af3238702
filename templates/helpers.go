package templates

import (
	"math"
	"strconv"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// scrubSpeeds are the speeds the time control plays at.
var scrubSpeeds = []string{"0.25", "0.5", "1", "2", "4", "8"}

// The countdown ring's geometry (viewBox 0 0 100 100).
const (
	ringRadius        = 42
	ringCircumference = 2 * math.Pi * ringRadius
)

func i(v int) string     { return strconv.Itoa(v) }
func i32(v int32) string { return strconv.FormatInt(int64(v), 10) }
func i64(v int64) string { return strconv.FormatInt(v, 10) }

func itoa(v int) string { return strconv.Itoa(v) }

// f2 formats a coordinate with at most two decimals.
func f2(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// leaseStateWords are what the page calls the states of a lease card; a tab's states and their
// words are the tab protocol's (tabproto.State).
var leaseStateWords = map[string]string{"held": "HELD", "free": "FREE", "expired": "EXPIRED"}

// stateWord is the word shown for a tab's or a lease card's state.
func stateWord(state string) string {
	if s := tabproto.State(state); s.Valid() {
		return s.Word()
	}
	if w, ok := leaseStateWords[state]; ok {
		return w
	}
	return "UNKNOWN"
}

// iconNames maps states and feed kinds to sprite symbols (IconName).
var iconNames = map[string]string{
	"leader": "leader", "follower": "follower", "paused": "paused", "partitioned": "partitioned",
	"stopped": "stopped", "held": "leader", "free": "free", "expired": "expired",
	"acquired": "acquired", "released": "released", "stepped-down": "released", "takeover": "takeover", "deleted": "deleted",
	"created": "created", "conflict": "conflict", "renewed": "renewed", "split-brain": "split",
}

// overlapCount is how a lease card counts its split-brain intervals.
func overlapCount(n int) string {
	if n == 1 {
		return "1 split brain"
	}
	return strconv.Itoa(n) + " split brains"
}

// IconName is the sprite symbol of a state or a feed kind.
func IconName(kind string) string {
	if n, ok := iconNames[kind]; ok {
		return n
	}
	return "free"
}

// holderText is what a holder chip says.
func holderText(holder string) string {
	if holder == "" {
		return "no holder"
	}
	return holder
}

// formNamespace is the namespace a form starts with.
func formNamespace(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func pick(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// offsetText shows a clock offset ("in sync" when there is none).
func offsetText(offset string) string {
	if offset == "" {
		return "clock in sync"
	}
	return "clock " + offset
}

// slowLabel is the Slow button's label: with its delay while it is on.
func slowLabel(ms int64) string {
	if ms <= 0 {
		return "Slow network"
	}
	return "Slow " + strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
}

// rateValue is a clock rate for a data attribute: "1" for the real rate (reported as 0).
func rateValue(rate float64) string {
	if rate == 0 {
		rate = 1
	}
	return strconv.FormatFloat(rate, 'f', -1, 64)
}

// rateText is a clock rate in words: "clock 1.5×".
func rateText(rate float64) string { return "clock " + rateValue(rate) + "×" }

// hasChoice reports whether ms is one of the delays offered.
func hasChoice(choices []SlowChoice, ms int64) bool {
	for _, c := range choices {
		if c.Ms == ms {
			return true
		}
	}
	return false
}

// slowIndex is the position of the delay ms among the tab's choices (0 when it is not one).
func slowIndex(s PlaySlow, ms int64) int {
	for i, c := range s.Choices {
		if c.Ms == ms {
			return i
		}
	}
	return 0
}

// slowChoice is the tab's choice for the delay ms (the zero choice when there are none).
func slowChoice(s PlaySlow, ms int64) SlowChoice {
	if len(s.Choices) == 0 {
		return SlowChoice{}
	}
	return s.Choices[slowIndex(s, ms)]
}

// faultsText lists active faults in words.
func faultsText(faults []string) string {
	if len(faults) == 0 {
		return "no faults"
	}
	s := ""
	for i, f := range faults {
		if i > 0 {
			s += ", "
		}
		s += f
	}
	return s
}

// tabLeaseText is a tab row's lease, and who opened the tab when the server knows users; the
// dashboard's script writes the same text when the row changes.
func tabLeaseText(t Tab) string {
	s := t.Namespace + "/" + t.Lease
	if t.Owner != "" {
		s += " · opened by " + t.Owner
	}
	return s
}

// secsText is a countdown in seconds with one decimal.
func secsText(ms int64) string {
	return strconv.FormatFloat(float64(max(ms, 0))/1000, 'f', 1, 64) + " s"
}

// apiBase is the prefix of the API paths the page's scripts watch: the mirror's on a server in
// front of a cluster, "" otherwise.
func apiBase(p Page) string {
	if p.Upstream == nil {
		return ""
	}
	return p.Upstream.APIBase
}
