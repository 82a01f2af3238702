package templates

import (
	"context"
	"html"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/a-h/templ"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

// lang is the language the page is rendered in.
func lang(ctx context.Context) i18n.Lang { return i18n.FromContext(ctx) }

// tr is the catalog's message key in the page's language (i18n.T).
func tr(ctx context.Context, key string, args ...any) string { return i18n.T(ctx, key, args...) }

// say is t in the page's language; fallback when t is zero (a view model built without it).
func say(ctx context.Context, t i18n.Text, fallback string) string {
	if t.IsZero() {
		return fallback
	}
	return t.In(lang(ctx))
}

// otherLang is the language the header's switch leads to, as an HTML lang attribute.
func otherLang(ctx context.Context) string {
	if lang(ctx) == i18n.ZH {
		return i18n.EN.HTMLLang()
	}
	return i18n.ZH.HTMLLang()
}

// pageTitle is the page's title in its language.
func pageTitle(ctx context.Context, p Page) string { return say(ctx, p.TitleSays, p.Title) }

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

// stateWord is the word shown for a tab's or a lease card's state ("LEADER", "HELD"), in the
// page's language: the catalog's "state.<state>".
func stateWord(ctx context.Context, state string) string {
	if s := tabproto.State(state); s.Valid() || state == "held" || state == "free" || state == "expired" || state == "stale" {
		return tr(ctx, "state."+state)
	}
	return tr(ctx, "state.unknown")
}

// tabBadge is the state a tab's badge shows: "stale" for a stale leader (the word STALE LEADER
// and the conflict icon, as on the tab itself), else the state it reported.
func tabBadge(t Tab) string {
	if t.Stale {
		return "stale"
	}
	return t.State
}

// iconNames maps states and feed kinds to sprite symbols (IconName).
var iconNames = map[string]string{
	"leader": "leader", "follower": "follower", "paused": "paused", "partitioned": "partitioned",
	"stopped": "stopped", "stale": "conflict", "held": "leader", "free": "free", "expired": "expired",
	"acquired": "acquired", "released": "released", "stepped-down": "released", "takeover": "takeover", "deleted": "deleted",
	"created": "created", "conflict": "conflict", "renewed": "renewed", "split-brain": "split",
}

// overlapCount is how a lease card counts its split-brain intervals.
func overlapCount(ctx context.Context, n int) string {
	if n == 1 {
		return tr(ctx, "dash.splitBrain1")
	}
	return tr(ctx, "dash.splitBrains", n)
}

// IconName is the sprite symbol of a state or a feed kind.
func IconName(kind string) string {
	if n, ok := iconNames[kind]; ok {
		return n
	}
	return "free"
}

// holderText is what a holder chip says.
func holderText(ctx context.Context, holder string) string {
	if holder == "" {
		return tr(ctx, "dash.noHolder")
	}
	return holder
}

// cardsIn are the cards the dashboard shows with its namespace filter ns ("" for all).
func cardsIn(cards []LeaseCard, ns string) []LeaseCard {
	if ns == "" {
		return cards
	}
	var out []LeaseCard
	for _, c := range cards {
		if c.Namespace == ns {
			out = append(out, c)
		}
	}
	return out
}

// tabsIn counts the tabs the dashboard shows with its namespace filter ns ("" for all).
func tabsIn(tabs []Tab, ns string) int {
	if ns == "" {
		return len(tabs)
	}
	n := 0
	for _, t := range tabs {
		if t.Namespace == ns {
			n++
		}
	}
	return n
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

// offsetText shows a clock offset of ms milliseconds: "clock +2 s", or "in sync" when there
// is none.
func offsetText(ctx context.Context, ms int64) string {
	if ms == 0 {
		return tr(ctx, "faults.clockInSync")
	}
	s := strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64)
	if ms > 0 {
		s = "+" + s
	}
	return tr(ctx, "faults.clock", s+" s")
}

// slowLabel is the Slow button's label: with its delay while it is on ("Slow 4.0 s").
func slowLabel(ctx context.Context, ms int64) string {
	if ms <= 0 {
		return tr(ctx, "faults.slow")
	}
	return tr(ctx, "faults.slowOn", strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64)+" s")
}

// rateValue is a clock rate for a data attribute: "1" for the real rate (reported as 0).
func rateValue(rate float64) string {
	if rate == 0 {
		rate = 1
	}
	return strconv.FormatFloat(rate, 'f', -1, 64)
}

// rateText is a clock rate in words: "clock 1.5×".
func rateText(ctx context.Context, rate float64) string {
	return tr(ctx, "faults.rate", rateValue(rate)+"×")
}

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

// faultsText lists a tab's active faults in words, in the page's language.
func faultsText(ctx context.Context, t Tab) string {
	if ms := t.Faults.Describe(); len(ms) > 0 {
		return tabproto.JoinWords(ms, string(lang(ctx)))
	}
	return tr(ctx, "dash.noFaults")
}

// lastLogText is a tab's newest decision in the page's language, when the tab said it as a
// message; else as the tab worded it.
func lastLogText(ctx context.Context, t Tab) string {
	if t.LastLogMsg != nil {
		return t.LastLogMsg.In(string(lang(ctx)))
	}
	return t.LastLog
}

// tabLeaseText is a tab row's lease, and who opened the tab when the server knows users.
func tabLeaseText(ctx context.Context, t Tab) string {
	s := t.Namespace + "/" + t.Lease
	if t.Owner != "" {
		s += tr(ctx, "dash.openedBy", t.Owner)
	}
	return s
}

// formError is the i-th reason the New lease form was refused, in the page's language.
func formError(ctx context.Context, f LeaseForm, i int, e string) string {
	if i < len(f.ErrorsSays) {
		return say(ctx, f.ErrorsSays[i], e)
	}
	return e
}

// decisionWord is how an election decision's kind reads in a badge: "CONFLICT", "NONE" when
// there is no decision; the same word in Chinese pages, as the kinds are the controller's.
func decisionWord(ctx context.Context, has bool, kind string) string {
	if !has || kind == "" {
		return tr(ctx, "dash.decisionNone")
	}
	if w := tr(ctx, "decision."+kind); w != "decision."+kind {
		return w
	}
	return strings.ToUpper(kind)
}

// problem is the i-th reason a candidate tab's settings were refused, in the page's language.
func problem(ctx context.Context, v Play, i int, p string) string {
	if i < len(v.ProblemsSays) {
		return say(ctx, v.ProblemsSays[i], p)
	}
	return p
}

// browserPrefixes are the catalog's parts and messages the pages' scripts use (a test checks
// that every key the scripts name is among them).
var browserPrefixes = []string{"js.", "log.", "fault.", "faults.", "state.", "decision.", "age.", "conn.live",
	"time.live", "time.pause", "time.play", "time.stop",
	"dash.renewals", "dash.renewal1", "stage.role.", "tp.seconds"}

// browserMessages are the messages the page's scripts use, in the page's language: the page
// embeds them (the i18n script element) and live.js's LL.t reads them.
func browserMessages(ctx context.Context) map[string]string {
	l := lang(ctx)
	if m, ok := browserCache.Load(l); ok {
		return m.(map[string]string)
	}
	m := i18n.Browser(l, browserPrefixes...)
	browserCache.Store(l, m)
	return m
}

// browserCache holds browserMessages by language: the catalog is fixed once the program runs,
// and every page embeds them.
var browserCache sync.Map

// shownMs is a countdown as it is shown: at most total, when total is known. A leader's renew
// deadline between rounds lies up to a retry period beyond the setting; it shows full.
func shownMs(left, total int64) int64 {
	if total > 0 && left > total {
		return total
	}
	return left
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

// SignedIn is who a workshop page is rendered for; the zero value on a server without tokens.
type SignedIn struct {
	// Name is the identity the browser signed in as; Instructor is true for the instructor,
	// whose header links the workshop page and who commands every candidate tab.
	Name       string
	Instructor bool
	// Namespaces are the only namespaces the user writes in, the user's own first (a
	// participant's and the arena); nil for anywhere.
	Namespaces []string
}

// MayWrite says whether the page's user may write leases in ns: the page hides the buttons
// the API would refuse.
func (s SignedIn) MayWrite(ns string) bool {
	return s.Namespaces == nil || slices.Contains(s.Namespaces, ns)
}

// MayCommand says whether the page's user may inject faults into a tab that owner opened:
// the instructor into every tab, a participant into their own.
func (s SignedIn) MayCommand(owner string) bool {
	return s.Name == "" || s.Instructor || owner == s.Name
}

// Home is the namespace the user's dashboard shows: a participant's own, "" (every
// namespace) for anyone who writes anywhere.
func (s SignedIn) Home() string {
	if len(s.Namespaces) == 0 {
		return ""
	}
	return s.Namespaces[0]
}

// writeNamespace is the namespace a form that writes starts with: ns when the user may write
// there, else the user's own, else "default".
func (s SignedIn) writeNamespace(ns string) string {
	switch {
	case ns != "" && s.MayWrite(ns):
		return ns
	case s.Home() != "":
		return s.Home()
	}
	return "default"
}

// dashboardURL is where the header's dashboard link goes: the user's Home, as after joining.
func (s SignedIn) dashboardURL() templ.SafeURL {
	if s.Home() == "" {
		return "/"
	}
	return templ.SafeURL("/?namespace=" + url.QueryEscape(s.Home()))
}

type signedInKey struct{}

// WithSignedIn returns ctx carrying who the page is rendered for.
func WithSignedIn(ctx context.Context, s SignedIn) context.Context {
	return context.WithValue(ctx, signedInKey{}, s)
}

// signedIn is who the page is rendered for, the zero value when nobody signed in.
func signedIn(ctx context.Context) SignedIn {
	s, _ := ctx.Value(signedInKey{}).(SignedIn)
	return s
}

// legendTitle is the title attribute of a legend line: the catalog's text of key, none when
// key is empty.
func legendTitle(ctx context.Context, key string) templ.Attributes {
	if key == "" {
		return nil
	}
	return templ.Attributes{"title": tr(ctx, key)}
}

// wordBreaks shows a CamelCase name (a strategy: OldestEmulationVersion) with a place to break
// between its words (<wbr>, which adds no space to its text), so that a narrow screen breaks
// it there and not inside a word. Each word is escaped: the name is whatever a client wrote.
func wordBreaks(s string) templ.Component {
	words := camelWords(s)
	for i, w := range words {
		words[i] = html.EscapeString(w)
	}
	return templ.Raw(strings.Join(words, "<wbr>"))
}

// camelWords splits a CamelCase name before each capital that follows a small letter:
// "OldestEmulationVersion" is Oldest, Emulation, Version.
func camelWords(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' && s[i-1] >= 'a' && s[i-1] <= 'z' {
			out = append(out, s[start:i])
			start = i
		}
	}
	return append(out, s[start:])
}
