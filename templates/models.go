// Package templates holds the templ components of every page and live fragment. Components
// take the view models defined here and nothing else: they never read the store or the
// request, so a handler decides everything a page shows and a test can render any state.
package templates

import (
	"time"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

// Assets are the versioned URLs of the embedded static files (the hash of the content is in
// the query, so a browser never runs a stale script or wasm).
type Assets struct {
	CSS        string
	Icon       string
	LiveJS     string // shared helpers: watch streams, countdown rings, clock offset
	Dashboard  string
	LeaseJS    string
	ScrubJS    string // the time control of the dashboard and the lease page
	PlayJS     string
	ScenarioJS string // the scenario pages
	StageJS    string // the stage
	TimingsJS  string // the timing calculator (/timings)
	FollowJS   string // /follow
	ArenaJS    string // the room lesson's panel
	WorkerJS   string
	WasmExec   string
	Wasm       string
	// WasmMissing is true when candidate.wasm was not built into the binary.
	WasmMissing bool
}

// Page is what every page shares.
type Page struct {
	Title string
	// TitleSays is the title in both languages; Title alone when zero.
	TitleSays i18n.Text
	Assets    Assets
	// ServerNowMs is the server's clock when the page was rendered (Unix ms): scripts take the
	// offset between the browser's clock and the server's from it.
	ServerNowMs int64
	// Nav names the current section: "dashboard", "lease" or "play".
	Nav string
	// At is the past moment the page shows (RFC 3339 with milliseconds), "" when it is live:
	// the body's data-at, which scripts keep current as the time control moves.
	At string
	// Replay is the recording the server replays, read-only, with its clock stopped at the
	// recording's last change; nil on a live server.
	Replay *Replay
	// Upstream is the cluster this server stands in front of; nil when leaselab is the API
	// server itself.
	Upstream *Upstream
	// Candidate says the page starts the browser candidate: its head starts fetching the
	// candidate's wasm at once (play.js takes it over and hands it to the worker), not after
	// the page's scripts, the worker and wasm_exec.js, a round trip each on a phone's network.
	Candidate bool
}

// Upstream is the banner of a server in front of a cluster (serve --upstream-kubeconfig).
type Upstream struct {
	// Server is the cluster's URL, User the kubeconfig's identity leaselab uses there.
	Server, User string
	// Namespaces are the namespaces shown and forwarded, "" for every one.
	Namespaces string
	// ReadOnly says why leaselab's identity may not write on the cluster, "" when it may: the
	// page hides what writes.
	ReadOnly string
	// Problem says why the cluster is not mirrored right now, "" while it is.
	Problem string
	// CandidatesRefused says why coordinated candidate tabs are refused (the cluster does not
	// serve LeaseCandidates v1beta1, or the identity may not use them), "" when they run.
	CandidatesRefused string
	// Expired counts the cluster's 410 Expired answers to the record's watches and lists;
	// Relisted the lists of the cluster taken after one.
	Expired, Relisted int64
	// APIBase is the path prefix under which the pages' scripts watch the mirror.
	APIBase string
}

// Replay is the banner of a server that replays a recording.
type Replay struct {
	File string
	// Scope is what it records: "lease demo/x", "namespace demo"; "" for everything.
	Scope string
	// ScopeSays is Scope in both languages; Scope alone when zero.
	ScopeSays i18n.Text
	From, To  string
	// FirstRevision and LastRevision are the revisions of the first and last change.
	FirstRevision, LastRevision int64
	Changes                     int64
}

// Dashboard is the view of /.
type Dashboard struct {
	Page Page
	// The resourceVersions the page was rendered at; the live script watches from them.
	LeasesRV     string
	NamespacesRV string
	CandidatesRV string
	// Namespace is the namespace filter ("" for all); Namespaces are all known namespaces.
	Namespace  string
	Namespaces []string
	Leases     []LeaseCard
	Candidates []CandidateRow
	Tabs       []Tab
	Feed       []FeedItem
	Form       LeaseForm
	// RecordingURL downloads the recording of the namespace shown (of everything when none).
	RecordingURL string
	// Election is true when the server runs the Coordinated Leader Election controller;
	// Elections are the leases that have LeaseCandidates, each with the controller's latest
	// decision about it, by namespace and name.
	Election  bool
	Elections []ElectionRow
	// Moment is the past moment shown (its At is "" when live); Time is the time control.
	Moment Moment
	Time   TimeControl
	// Outage is the API-server outage in effect, offered to the instructor; nil when not offered.
	Outage *Outage
	// Clear is "clear finished lessons", offered to the instructor; nil when not offered.
	Clear *ClearFinished
	// SlowChoices are the delays a tab row's slow-network control offers.
	SlowChoices []SlowChoice
	// Room is the instructor's view of the room in workshop mode, one row per participant
	// with candidate tabs open; nil for anyone else.
	Room []RoomRow
}

// RoomRow is one participant of a workshop with candidate tabs open, on the instructor's
// dashboard: how many tabs, how many lead, their faults, its stale leaders and the split
// brains on the leases of its tabs.
type RoomRow struct {
	Owner string
	// Namespace is where the participant's tabs run (the participant's own, the arena only
	// when nowhere else): the row's name shows it.
	Namespace                    string
	Tabs, Leading, Stale         int
	Paused, Partitioned, Stopped int
	SplitBrains                  int
}

// ElectionRow is one lease that has LeaseCandidates, on the dashboard: how many, and the
// election controller's latest decision about it (the lease itself may not exist).
type ElectionRow struct {
	Namespace  string
	Lease      string
	LeaseURL   string
	Candidates int
	// Decision is the latest decision; HasDecision is false while there is none.
	HasDecision bool
	Decision    DecisionView
}

// Conflict reports whether the latest decision is a strategy conflict.
func (r ElectionRow) Conflict() bool { return r.HasDecision && r.Decision.Kind == DecisionConflict }

// DecisionConflict is the kind of the decisions that leave a lease alone because its candidates
// disagree on the strategy (web/lease/election's KindConflict).
const DecisionConflict = "conflict"

// LeaseForm is the "New lease" form, with the values typed and why they were refused.
type LeaseForm struct {
	Namespace string
	Name      string
	Errors    []string
	// ErrorsSays are Errors in both languages, when known.
	ErrorsSays []i18n.Text
}

// LeaseCard is one lease on the dashboard grid.
type LeaseCard struct {
	Namespace       string
	Name            string
	Holder          string
	Transitions     int32
	DurationSeconds int32
	// RenewTimeMs is spec.renewTime; SinceMs is when the hold counts from (renewTime, else
	// acquireTime, else the time of the last write); ExpiresAtMs is SinceMs +
	// leaseDurationSeconds. All Unix ms, 0 when unset.
	RenewTimeMs int64
	SinceMs     int64
	ExpiresAtMs int64
	// Status is "held", "expired" or "free", judged on the server's clock at render time.
	Status string
	// RemainingFraction (0..1) and Remaining ("4.1 s") are the countdown at render time.
	RemainingFraction float64
	Remaining         string
	Strategy          string
	PreferredHolder   string
	// Cast are the lease's connected candidates and their roles, as the stage words them: who
	// leads, who follows, who is stale or faulted, above the fold.
	Cast []CastMember
	// Candidates counts LeaseCandidates naming this lease; Tabs the connected candidate tabs.
	Candidates int
	Tabs       int
	// Conflict is the election controller's latest decision about the lease when that is a
	// strategy conflict among its candidates (the lease is left alone); "" otherwise.
	Conflict string
	// ConflictSays is Conflict in both languages; Conflict alone when zero.
	ConflictSays i18n.Text
	// Overlaps counts the split-brain intervals the server found in the lease's recorded
	// window (judge.Overlaps); OverlapText says the latest in a sentence.
	Overlaps    int
	OverlapText string
	// OverlapSays is OverlapText in both languages; OverlapText alone when zero.
	OverlapSays i18n.Text
	URL         string
	PlayURL     string
	StageURL    string // the stage of the lease: one picture of its election
	DeleteURL   string
	// Writable says whether the page's user may write leases in the lease's namespace: the
	// card offers only what the API would allow (SignedIn.MayWrite).
	Writable bool
}

// CandidateRow is one LeaseCandidate.
type CandidateRow struct {
	Namespace        string
	Name             string
	LeaseName        string
	BinaryVersion    string
	EmulationVersion string
	Strategy         string
	// Strategies is how the strategy column reads: the preferredStrategies of a candidate
	// written through v1alpha1, in order ("example.com/custom > OldestEmulationVersion"),
	// otherwise its strategy. V1alpha1 is true for those candidates.
	Strategies string
	V1alpha1   bool
	RenewTime  string // "14:02:11", or "" when never renewed
	RenewAge   string // "3 s ago"
	// RenewAgeSays is RenewAge in both languages; RenewAge alone when zero.
	RenewAgeSays i18n.Text
	PingTime     string // when the election controller last pinged it; "" when never
	LeaseURL     string
}

// Tab is one connected browser candidate tab, as it last reported itself.
type Tab struct {
	ID        string
	Owner     string // the user who opened the tab, on a server with tokens
	Identity  string
	Namespace string
	Lease     string
	State     string
	Holder    string
	// Faults are its faults: its fault buttons show them, and the page words them in its
	// language (tabproto.Faults.Describe).
	Faults  tabproto.Faults
	LastLog string
	// LastLogMsg is LastLog as the tab said it as a message, when it did.
	LastLogMsg *tabproto.Msg
	// Coordinated is the tab's mode (Coordinated Leader Election, or plain: it races for the
	// lease itself); the versions and the strategy are its LeaseCandidate's, reported by the tab.
	Coordinated      bool
	BinaryVersion    string
	EmulationVersion string
	Strategy         string
	// PreferredHolder is the candidate the server prefers; SteppingDown is true when that is
	// another candidate while this tab leads or holds the lease.
	PreferredHolder string
	SteppingDown    bool
	// Stale is true while the tab believes it leads but the record it last read names another
	// holder: its row says STALE LEADER, as the tab does, and State stays as it reported it.
	Stale bool
	// Native is true for leaselab candidate (client-go), which takes no fault commands.
	Native bool
	// Recorded is true for a candidate as its view was recorded at a past moment, rather than
	// a connected tab: it takes no commands.
	Recorded bool
	// Commandable says whether the page's user may inject faults into the tab
	// (SignedIn.MayCommand).
	Commandable bool
}

// SlowChoice is one delay the slow-network fault offers: its value, its label and, where
// the tab's timings are known, what it does at them (web decides it).
type SlowChoice struct {
	Ms     int64  `json:"ms"`
	Label  string `json:"label"` // "0.1 s"
	Effect string `json:"effect,omitempty"`
}

// FeedItem is one line of the dashboard's event feed.
type FeedItem struct {
	AtMs int64
	At   string // "14:02:11"
	Kind string // acquired, released, expired, takeover, stepped-down, deleted, conflict
	Text string
	// Says is Text in both languages; Text alone when zero.
	Says      i18n.Text
	Namespace string
	Lease     string
	// Fresh marks a line that arrived while the page was open: it is drawn arriving.
	Fresh bool
}

// LeasePage is the view of /leases/{namespace}/{name}.
type LeasePage struct {
	Page      Page
	Namespace string
	Name      string
	// Live is the part the page's script refreshes.
	Live LeaseLive
	// RV is the resourceVersion the page was rendered at.
	RV        string
	DeleteURL string
	PlayURL   string
	StageURL  string // the stage of the lease: one picture of its election
	LiveURL   string
	// RecordingURL downloads the recording of the lease.
	RecordingURL string
	// Time is the page's time control.
	Time TimeControl
}

// Moment is the past moment a page or fragment shows. At (RFC 3339 with milliseconds) is ""
// when it is live; Text ("14:02:11.300") and Age ("2 min ago") say it in words, and LiveLink
// leads back to live.
type Moment struct {
	At, Text, Age, LiveLink string
	// AgeSays is Age in both languages; Age alone when zero.
	AgeSays i18n.Text
}

// TimeControl is a page's time bar (scrub.js): it reads the recorded window and its events
// from MomentsURL, and shows a moment by fetching FragmentURL with ?at= and swapping the
// fragment's element Target into the page. ReloadLive says that going back to live loads the
// page again (the dashboard's script follows its stream from the page it was loaded with).
// At is the moment shown at first, "" when live.
type TimeControl struct {
	MomentsURL  string
	FragmentURL string
	Target      string
	ReloadLive  bool
	At          string
}

// LeaseLive is the live part of the lease page: the current state, the timeline, the events,
// the candidates and the object.
type LeaseLive struct {
	// Moment is the past moment shown; its At is "" when live.
	Moment     Moment
	Exists     bool
	Card       LeaseCard
	Timeline   Timeline
	Events     []EventRow
	Candidates []CandidateRow
	Tabs       []Tab
	// Election is true when the server runs the Coordinated Leader Election controller;
	// Decisions are its decisions about this lease, newest first.
	Election  bool
	Decisions []DecisionView
	// DecisionsLater is true at a past moment that none of the decisions the server keeps
	// precedes: it keeps the newest only, so those before may be gone.
	DecisionsLater bool
	// Conflict is the latest decision's message when that is a strategy conflict; "" otherwise.
	Conflict string
	// ConflictSays is Conflict in both languages; Conflict alone when zero.
	ConflictSays i18n.Text
	// Overlaps are the split-brain intervals of the recorded window, newest first.
	Overlaps []Overlap
	// ViewsRecorded is true when any candidate's view of this lease is on record: without
	// one, the checker can only compare nothing.
	ViewsRecorded bool
	YAML          string
	// YAMLCut is true when YAML shows some long value cut; ObjectURL is the whole object's
	// address in the API.
	YAMLCut   bool
	ObjectURL string
	// Revision is the store revision this view reflects.
	Revision string
	// Lanes are the stage's lanes: whom the record named and what each candidate believed.
	Lanes StageLanes
	// PastLease are the intervals in which a leader acted after its lease had run out by the
	// others' count while nobody else held it (judge.PastLease), listed with the split brains.
	PastLease []Overlap
}

// Overlap is one split-brain interval: candidates that believed they led at once, or one that
// believed it led while the record named another holder.
type Overlap struct {
	// Identities are everyone involved, sorted and comma-separated (the data-identities
	// contract); Start and End are RFC 3339 with milliseconds; End is the shown moment while
	// the interval lasts (Ongoing).
	Identities string
	Start, End string
	Ongoing    bool
	// StartText and EndText are clock times ("14:02:11.300"); Duration "3.2 s".
	StartText, EndText, Duration string
	DurationSays                 i18n.Text // Duration in both languages
	Cause                        string
	Text                         string
	Advice                       string
	// Says and AdviceSays are Text and Advice in both languages; the strings alone when zero.
	Says, AdviceSays i18n.Text
	// AtURL is the lease page at the first moment that tells the interval (AtSays, the link's
	// title, says when that is).
	AtURL  string
	AtSays i18n.Text
}

// EventRow is one core v1 Event about the lease.
type EventRow struct {
	Type    string // Normal, Warning
	Reason  string
	Message string
	Count   int32
	Last    string // "14:02:11"
	Age     string // "12 s ago"
	// AgeSays is Age in both languages; Age alone when zero.
	AgeSays i18n.Text
	Source  string
}

// Timeline is the holder timeline, laid out for an SVG: x in [LabelWidth, Width], one lane per
// identity.
type Timeline struct {
	Width      float64
	Height     float64
	LabelWidth float64
	LaneHeight float64
	// From and To label the window ("14:00:11", "14:03:11"); Span its length ("3 min").
	From string
	To   string
	Span string
	// SpanSays is Span in both languages; Span alone when zero.
	SpanSays i18n.Text
	Lanes    []TimelineLane
	Ticks    []TimelineTick
	// Marks are the term ends (takeover, release, expiry, deleted), drawn over the lanes.
	Marks []TimelineMark
	// Terms are every term in the window, newest first, for the table beside the drawing.
	Terms []TimelineTerm
	// NowX is the x of the right edge (now).
	NowX float64
	// Bands are the split-brain intervals, drawn hatched across every lane.
	Bands []TimelineBand
	// LanesBottom is the y below the last lane.
	LanesBottom float64
}

// TimelineBand is one split-brain interval on the timeline.
type TimelineBand struct {
	// Kind is split-brain, or past-lease: a leader acting after its lease ran out.
	Kind      string
	X, W      float64
	Title     string
	TitleSays i18n.Text // Title in both languages; Title alone when zero
}

// TimelineLane is one identity's row.
type TimelineLane struct {
	Identity string
	Label    string  // the identity, shortened to fit the label column
	Y        float64 // top of the lane
	LabelY   float64 // text baseline
	Bars     []TimelineBar
}

// TimelineBar is one term drawn in a lane.
type TimelineBar struct {
	X, Y, W, H float64
	Open       bool      // still held at the right edge
	Ended      string    // "", released, takeover, expired, stepped-down, deleted
	Title      string    // the hover text: start, end, how it ended
	TitleSays  i18n.Text // Title in both languages; Title alone when zero
}

// TimelineMark is a marker at the end of a term.
type TimelineMark struct {
	X, Y      float64 // centre
	Kind      string  // takeover, released, expired, stepped-down, deleted
	Title     string
	TitleSays i18n.Text // Title in both languages; Title alone when zero
}

// TimelineTick is a time label on the axis.
type TimelineTick struct {
	X     float64
	Label string
	// Anchor is where the label sits on X: "end" when it ends there; centred when empty.
	Anchor string
}

// TimelineTerm is one term as a table row.
type TimelineTerm struct {
	Holder   string
	Start    string
	End      string // "" while held
	Duration string
	// DurationSays is Duration in both languages.
	DurationSays i18n.Text
	Ended        string // "", released, takeover, expired, stepped-down, deleted
	EndedText    string // "held", "released", "taken over by tab-2", ...
	// EndSays and EndedSays are End and EndedText in both languages; the strings alone when
	// zero.
	EndSays, EndedSays i18n.Text
	Transitions        int32
	Renewals           int
}

// Play is the view of /play: one candidate tab.
type Play struct {
	Page      Page
	Namespace string
	Lease     string
	Identity  string
	// The timings as typed (for the settings form) and as used.
	LeaseDuration string
	RenewDeadline string
	RetryPeriod   string
	// Coordinated mode and its versions, as typed (for the settings form and the mode line).
	Coordinated      bool
	BinaryVersion    string
	EmulationVersion string
	// Problems are why the configuration was refused; the candidate does not start then.
	Problems []string
	// ProblemsSays are Problems in both languages, when known.
	ProblemsSays []i18n.Text
	// Timings is the timing calculator's verdict on the durations; nil when one is not a number.
	Timings *Timings
	// Config is the worker's start configuration and the asset URLs, as JSON for play.js.
	Config   PlayConfig
	LeaseURL string
}

// PlayConfig is handed to play.js in a JSON script element.
type PlayConfig struct {
	Start       PlayStart `json:"start"`
	WorkerURL   string    `json:"workerURL"`
	WasmExecURL string    `json:"wasmExecURL"`
	WasmURL     string    `json:"wasmURL"`
	ServerNowMs int64     `json:"serverNow"`
	Disabled    bool      `json:"disabled"`
	// Slow is the slow-network fault's choice of delays, each with what it does at this tab's
	// timings, and the one chosen at first.
	Slow PlaySlow `json:"slow"`
}

// PlaySlow is the tab's choice of network delays.
type PlaySlow struct {
	Choices   []SlowChoice `json:"choices"`
	DefaultMs int64        `json:"defaultMs"`
}

// PlayStart is the "config" of the worker's start message (see wasm/candidate.Params).
type PlayStart struct {
	Namespace     string  `json:"namespace"`
	Lease         string  `json:"lease"`
	Identity      string  `json:"identity"`
	LeaseDuration float64 `json:"leaseDuration"`
	RenewDeadline float64 `json:"renewDeadline"`
	RetryPeriod   float64 `json:"retryPeriod"`
	// Coordinated mode (Coordinated Leader Election) and the candidate's versions.
	Coordinated      bool   `json:"coordinated,omitempty"`
	BinaryVersion    string `json:"binaryVersion,omitempty"`
	EmulationVersion string `json:"emulationVersion,omitempty"`
}

// DecisionView is one decision of the Coordinated Leader Election controller about a lease.
type DecisionView struct {
	// At is when the controller decided; Time ("14:02:11") and Age ("3 s ago") are filled by
	// the UI from it.
	At        time.Time
	AtMs      int64
	Time      string
	Age       string
	Kind      string // elect, prefer, ping, wait, keep, ...
	Icon      string // the icon of Kind
	Word      string // Kind as a badge reads ("CONFLICT")
	Candidate string // the candidate the decision names, if any
	Message   string
	// Says is Message and AgeSays is Age in both languages; the strings alone when zero.
	Says    i18n.Text
	AgeSays i18n.Text
}

// ErrorPage is shown for a missing page or a failure.
type ErrorPage struct {
	Page    Page
	Code    int
	Message string
	// MessageSays is Message in both languages; Message alone when zero.
	MessageSays i18n.Text
}

// CastMember is one candidate on a lease card: its identity and its role as the stage words it
// (leader, follower, stale, paused, partitioned, stopped).
type CastMember struct {
	Identity, Role string
}

// CastRole is a tab's role as the stage and the cards word it: a leader whose record names
// another is stale; otherwise its state.
func CastRole(state string, stale bool) string {
	if stale && state == "leader" {
		return "stale"
	}
	return state
}

// Outage is an API-server outage the instructor injects: Mode "hang", "fail" or "" (none), for
// the whole server or Namespace.
type Outage struct {
	Mode, Namespace string
}

// ClearFinished is the dashboard's "clear finished lessons", offered to the instructor.
type ClearFinished struct {
	// Namespace is the dashboard's filter, kept by the form's answer.
	Namespace string
	// Cleared is how many lesson runs the form's last use cleared; -1 when the page is not its
	// answer.
	Cleared int
}
