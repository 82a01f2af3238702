package judge

import (
	"fmt"
	"slices"
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
	// Says is Text as a sentence the screens put in their reader's language (Text is its
	// English).
	Says Said
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
			text := say("judge.acquired", Shown(t.Holder), lease, t.Transitions)
			if i > 0 && terms[i-1].Ended == EndExpired && terms[i-1].Next == t.Holder {
				prev := terms[i-1]
				if prev.Holder == t.Holder {
					text = say("judge.wroteAgain", Shown(t.Holder), lease, t.Transitions)
				} else {
					text = say("judge.acquiredAfter", Shown(t.Holder), lease, Shown(prev.Holder), t.Transitions)
				}
			}
			out = append(out, told(t.Start, KindAcquired, text))
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
		begun := told(o.Start, KindSplitBrain, begunText(lease, o))
		begun.Known = o.Start.Add(OverlapGrace)
		out = append(out, begun)
		if !o.End.IsZero() {
			says := o.Says
			if says.IsZero() {
				says = same(o.Text)
			}
			out = append(out, told(o.End, KindSplitBrain, says))
		}
	}
	return out
}

// begunText says who believed what when an interval began, in words that do not change while
// it lasts (the line's key is its text): a believer other than the holder of that moment (Stale
// spans the whole interval, and may name the first holder, who lost the record later on).
func begunText(lease string, o Overlap) Said {
	stale := say("judge.aCandidate")
	for _, ids := range [][]string{o.Stale, o.Believers} {
		if i := slices.IndexFunc(ids, func(id string) bool { return id != o.Holder }); i >= 0 {
			stale = same(Shown(ids[i]))
			break
		}
	}
	if o.Holder == "" && o.Cause == CauseDeleted {
		return say("judge.splitDeleted", stale, lease)
	}
	if o.Holder == "" {
		return say("judge.splitNobody", stale, lease)
	}
	return say("judge.splitHolder", stale, lease, Shown(o.Holder))
}

// told is a line of kind at at that says text.
func told(at time.Time, kind string, text Said) Told {
	return Told{At: at, Kind: kind, Text: text.English(), Says: text}
}

// endLine tells how terms[i] ended, if it did.
func endLine(lease string, terms []Term, i int) (Told, bool) {
	t := terms[i]
	switch t.Ended {
	case EndReleased:
		return told(t.End, KindReleased, say("judge.released", Shown(t.Holder), lease)), true
	case EndTakeover:
		if i+1 < len(terms) {
			return told(t.End, KindTakeover, say("judge.tookOverTransitions", Shown(t.Next), lease, Shown(t.Holder), terms[i+1].Transitions)), true
		}
		return told(t.End, KindTakeover, say("judge.tookOver", Shown(t.Next), lease, Shown(t.Holder))), true
	case EndExpired:
		return told(t.End, KindExpired, say("judge.expired", Shown(t.Holder), lease)), true
	case EndSteppedDown:
		return told(t.End, KindSteppedDown, say("judge.steppedDown", Shown(t.Holder), lease, Shown(t.Next))), true
	case EndDeleted:
		return told(t.End, KindDeleted, say("judge.deleted", lease, Shown(t.Holder))), true
	}
	return Told{}, false
}

// EndedText says how a term ended, in words.
func EndedText(t Term) string { return EndedSays(t).English() }

// EndedSays is EndedText as a sentence for the screens.
func EndedSays(t Term) Said {
	switch t.Ended {
	case EndHeld:
		return say("judge.endHeld")
	case EndReleased:
		return say("judge.endReleased")
	case EndTakeover:
		return say("judge.endTakeover", Shown(t.Next))
	case EndSteppedDown:
		return say("judge.endSteppedDown", Shown(t.Next))
	case EndExpired:
		if t.Next == t.Holder {
			return say("judge.endExpiredLate", Shown(t.Holder))
		}
		if t.Next != "" {
			return say("judge.endExpiredTook", Shown(t.Next))
		}
		return say("judge.endExpired")
	case EndDeleted:
		return say("judge.endDeleted")
	}
	return same(t.Ended)
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
	"no-answer": "expired", "gc": "deleted", "error": "expired", "retry": "renewed",
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

// roleTexts word a candidate's state (catalog keys; their arguments: its identity, then the
// lease).
var roleTexts = map[string]string{
	"leader":      "judge.roleLeader",
	"follower":    "judge.roleFollower",
	"paused":      "judge.rolePaused",
	"partitioned": "judge.rolePartitioned",
	"stopped":     "judge.roleStopped",
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
		text := say("judge.roleOther", Shown(v.Identity), Shown(v.State), lease)
		if key, ok := roleTexts[v.State]; ok {
			text = say(key, Shown(v.Identity), lease)
		}
		out = append(out, told(v.At, KindRole, text))
	}
	return out
}
