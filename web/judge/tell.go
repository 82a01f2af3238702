package judge

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// Kinds of feed lines.
const (
	KindAcquired    = "acquired"
	KindReleased    = "released"
	KindTakeover    = "takeover"
	KindExpired     = "expired"
	KindSteppedDown = "stepped-down"
	KindDeleted     = "deleted"
	KindSplitBrain  = "split-brain"
)

// Told is one line of the feed: what happened to a lease, in words.
type Told struct {
	At   time.Time
	Kind string
	Text string
	// Known, when set, is when the judge, judging as of that moment, first tells the line:
	// later than At for what it can only tell once it lasted (a split brain's beginning).
	Known time.Time
}

// KnownAt is when the judge, judging as of that moment, first tells the line.
func (t Told) KnownAt() time.Time {
	if t.Known.IsZero() {
		return t.At
	}
	return t.Known
}

// Key identifies a line, so that a feed told again from a longer history can tell which lines
// are new.
func (t Told) Key() string { return fmt.Sprintf("%d/%s/%s", t.At.UnixNano(), t.Kind, t.Text) }

// Tell tells a lease's terms as feed lines, oldest first: who acquired it, and how each term
// ended. lease names it ("namespace/name").
func Tell(lease string, terms []Term) []Told {
	var out []Told
	for i, t := range terms {
		if i == 0 || terms[i-1].Ended != EndTakeover {
			text := fmt.Sprintf("%s acquired %s (transitions %d)", Shown(t.Holder), lease, t.Transitions)
			if i > 0 && terms[i-1].Ended == EndExpired && terms[i-1].Next == t.Holder {
				prev := terms[i-1]
				if prev.Holder == t.Holder {
					text = fmt.Sprintf("%s wrote %s again after its hold had expired (transitions %d)", Shown(t.Holder), lease, t.Transitions)
				} else {
					text = fmt.Sprintf("%s acquired %s after %s's hold expired (transitions %d)", Shown(t.Holder), lease, Shown(prev.Holder), t.Transitions)
				}
			}
			out = append(out, Told{At: t.Start, Kind: KindAcquired, Text: text})
		}
		if line, ok := endLine(lease, terms, i); ok {
			out = append(out, line)
		}
	}
	return out
}

// TellOverlaps tells a lease's split-brain intervals as feed lines, oldest first: one when an
// interval began, and one with the whole story when it ended.
func TellOverlaps(lease string, overlaps []Overlap) []Told {
	var out []Told
	for _, o := range overlaps {
		out = append(out, Told{At: o.Start, Kind: KindSplitBrain, Text: begunText(lease, o), Known: o.Start.Add(OverlapGrace)})
		if !o.End.IsZero() {
			out = append(out, Told{At: o.End, Kind: KindSplitBrain, Text: o.Text})
		}
	}
	return out
}

// begunText says who believed what when an interval began, in words that do not change while
// it lasts (the line's key is its text).
func begunText(lease string, o Overlap) string {
	stale := "a candidate"
	if len(o.Stale) > 0 {
		stale = Shown(o.Stale[0])
	}
	if o.Holder == "" {
		return fmt.Sprintf("split brain: %s believes it leads %s while the record names nobody", stale, lease)
	}
	return fmt.Sprintf("split brain: %s believes it leads %s while %s holds it", stale, lease, Shown(o.Holder))
}

// endLine tells how terms[i] ended, if it did.
func endLine(lease string, terms []Term, i int) (Told, bool) {
	t := terms[i]
	switch t.Ended {
	case EndReleased:
		return Told{At: t.End, Kind: KindReleased, Text: fmt.Sprintf("%s released %s", Shown(t.Holder), lease)}, true
	case EndTakeover:
		next := ""
		if i+1 < len(terms) {
			next = fmt.Sprintf(" (transitions %d)", terms[i+1].Transitions)
		}
		return Told{At: t.End, Kind: KindTakeover, Text: fmt.Sprintf("%s took %s over from %s%s", Shown(t.Next), lease, Shown(t.Holder), next)}, true
	case EndExpired:
		return Told{At: t.End, Kind: KindExpired, Text: fmt.Sprintf("%s's hold on %s expired: not renewed in time", Shown(t.Holder), lease)}, true
	case EndSteppedDown:
		return Told{At: t.End, Kind: KindSteppedDown, Text: fmt.Sprintf("%s stepped down from %s: the election controller prefers %s", Shown(t.Holder), lease, Shown(t.Next))}, true
	case EndDeleted:
		return Told{At: t.End, Kind: KindDeleted, Text: fmt.Sprintf("%s was deleted while %s held it", lease, Shown(t.Holder))}, true
	}
	return Told{}, false
}

// EndedText says how a term ended, in words.
func EndedText(t Term) string {
	switch t.Ended {
	case EndHeld:
		return "still held"
	case EndReleased:
		return "released"
	case EndTakeover:
		return "taken over by " + Shown(t.Next)
	case EndSteppedDown:
		return "stepped down for " + Shown(t.Next)
	case EndExpired:
		if t.Next == t.Holder {
			return "expired, then " + Shown(t.Holder) + " wrote it again late"
		}
		if t.Next != "" {
			return "expired, then " + Shown(t.Next) + " took it"
		}
		return "expired"
	case EndDeleted:
		return "lease deleted"
	}
	return t.Ended
}

// EndedWord labels how a term ended, in a word or two.
func EndedWord(ended string) string {
	switch ended {
	case EndHeld:
		return "held"
	case EndTakeover:
		return "taken over"
	case EndSteppedDown:
		return "stepped down"
	}
	return ended
}

// StrategiesText is how a LeaseCandidate's strategies read: in order of preference, "(none)"
// for a candidate written through v1alpha1 with an empty list.
func StrategiesText(list []coordinationv1.CoordinatedLeaseStrategy, v1alpha1 bool) string {
	if v1alpha1 && len(list) == 0 {
		return "(none)"
	}
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = string(s)
	}
	return strings.Join(parts, " > ")
}

// decisionIcons are the icons of the election controller's decision kinds.
var decisionIcons = map[string]string{
	"elect": "acquired", "prefer": "takeover", "strategy": "created", "keep": "leader",
	"idle": "free", "conflict": "conflict", "ping": "renewed", "wait": "paused",
	"no-answer": "expired", "gc": "deleted", "error": "expired",
}

// DecisionIcon is the icon of an election controller decision kind.
func DecisionIcon(kind string) string {
	if n, ok := decisionIcons[kind]; ok {
		return n
	}
	return "free"
}

// DecisionWord is how a decision kind reads in a badge ("CONFLICT", "NONE" for no decision).
func DecisionWord(kind string) string {
	if kind == "" {
		return "NONE"
	}
	return strings.ToUpper(kind)
}

// MaxShown is how many characters of a user's string (a holder identity may be megabytes, as
// in Kubernetes) the screens show; the object's YAML keeps the whole value.
const MaxShown = 128

// Shown is s as the screens show it: cut to MaxShown characters (Cut).
func Shown(s string) string { return Cut(s, MaxShown) }

// Cut is s cut to at most n characters, the cut marked with "…". It reads no further than the
// cut, however long s is.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n-1 {
			if _, size := utf8.DecodeRuneInString(s[i:]); i+size == len(s) {
				return s // exactly n characters: nothing to cut
			}
			return s[:i] + "…"
		}
		count++
	}
	return s
}

// KindRole is a feed line of a candidate's role change, as the candidate saw it.
const KindRole = "role"

// roleTexts word a candidate's state: its identity, then the lease.
var roleTexts = map[string]string{
	"leader":      "%s leads %s, as it sees it",
	"follower":    "%s follows on %s",
	"paused":      "%s was paused (a candidate of %s)",
	"partitioned": "%s was cut off from the API server (a candidate of %s)",
	"stopped":     "%s stopped (a candidate of %s)",
}

// TellRoles tells the candidates' role changes as lines, oldest first: one each time a
// candidate's view of itself (views, ordered by At) takes another state, its first view
// included. lease names it ("namespace/name").
func TellRoles(lease string, views []View) []Told {
	var out []Told
	last := map[string]string{}
	for _, v := range views {
		if prev, ok := last[v.Identity]; ok && prev == v.State {
			continue
		}
		last[v.Identity] = v.State
		format, ok := roleTexts[v.State]
		if !ok {
			format = "%s is " + Shown(v.State) + " (a candidate of %s)"
		}
		out = append(out, Told{At: v.At, Kind: KindRole, Text: fmt.Sprintf(format, Shown(v.Identity), lease)})
	}
	return out
}
