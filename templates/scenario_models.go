package templates

// Scenarios is the view of /scenarios: the library.
type Scenarios struct {
	Page  Page
	Items []ScenarioItem
	// Plan is the instructor's session plan.
	Plan SessionPlan
}

// ScenarioItem is one scenario of the library.
type ScenarioItem struct {
	Name    string
	URL     string
	Title   string
	Summary string
	// Teaches is what the lesson teaches, in one line; Incident the upstream issue, pull request
	// or documentation it retells ("" for none).
	Teaches  string
	Incident string
	// Minutes is how long it takes at 1×, its run and a reading of each step, in minutes;
	// Seconds the same in seconds (data-seconds).
	Minutes, Seconds string
	// RunningURL links the newest run of it that plays on the server, with its seed and speed;
	// "" when none does.
	RunningURL string
}

// Scenario is the view of /scenarios/{name}.
type Scenario struct {
	Page    Page
	Name    string
	Title   string
	Summary string
	// Teaches is what the lesson teaches, in one line; Incident the upstream issue, pull request
	// or documentation it retells ("" for none).
	Teaches  string
	Incident string
	// Seed and Speed are the run's (or, before it starts, the link's).
	Seed  string
	Speed string
	// Speeds are the speeds offered.
	Speeds []string
	// Present is the presenter mode (?present=1).
	Present bool
	// Namespace is where a run of this seed writes; Lease the lease it plays for.
	Namespace string
	Lease     string
	// LeaseURL, DashboardURL and JoinURL lead to the run's lease page, the dashboard filtered
	// to its namespace, and a candidate tab that joins the run.
	LeaseURL     string
	DashboardURL string
	JoinURL      string
	// ShareURL is the link that reproduces the lesson (scenario, seed and speed).
	ShareURL string
	// OtherSeedURL is the same lesson with another seed: other jitter, perhaps another outcome.
	OtherSeedURL string
	// Actions is the base URL of the control forms (…/start, …/next, …).
	Actions string
	// LiveURL renders the live part; WatchURL is the WebSocket that says when to fetch it.
	LiveURL  string
	WatchURL string
	// MayControl is false for a participant in workshop mode: only the instructor runs
	// scenarios.
	MayControl bool
	Live       ScenarioLive
	Timings    Timings
	// Error is a refusal to show (a bad seed or speed, a failed start).
	Error string
	// Stage is the lesson's lease as the stage draws it, followed at StageLiveURL and
	// StageWatchURL.
	Stage                       StageLive
	StageLiveURL, StageWatchURL string
}

// ScenarioLive is the part of a scenario page that follows the run.
type ScenarioLive struct {
	// Running is false before a run of this seed started (and after it stopped).
	Running bool
	// Steps are the steps reached, in order; Shown is the index of the one shown.
	Steps []ScenarioStep
	Shown int
	Total int
	// Waiting says what the current step waits for; "" once it is done.
	Waiting string
	// CanNext and CanBack enable Next and Back.
	CanNext bool
	CanBack bool
	// Last is true when the step shown is the script's last, and Done once it is done.
	Last, Done bool
	// Step is the run's step (from 0); Shown below it means Back: the cards and the record
	// show the run now.
	Step  int
	Auto  bool
	Speed string
	// Holder and Transitions are the lease's record.
	Holder      string
	Transitions string
	Members     []ScenarioMember
	// Overlaps counts the split brains the checker found in the run so far.
	Overlaps int
	// Ledger is the shared resource the leaders' work writes, in a lesson that has one.
	Ledger *ScenarioLedger
	// Room is the panel of a lesson whose cast is the room (arena.templ), running or not.
	Room *ArenaRoom
	// Outage says, while the lesson has taken the API server away, how its requests fare
	// ("" while it answers).
	Outage string
	// Claims are what the lesson says its run shows, and, once it has played its last step,
	// whether each held.
	Claims []ScenarioClaim
	// Question is the shown step's question, when it asks one; Asking says it is open, the
	// step waiting for its reveal.
	Question *Prediction
	Asking   bool
}

// Prediction is a question a step asks before it runs, as a page shows it.
type Prediction struct {
	// Step is the step that asks (from 1); Seed the run's; VoteURL where a choice is posted,
	// RevealURL where the instructor reveals the answer.
	Step      int
	Seed      string
	VoteURL   string
	RevealURL string
	// Back is where a vote sent without the page's script returns ("follow" for /follow).
	Back    string
	Ask     string
	Choices []PredictionChoice
	// Open says votes are taken; once closed, the answer shows with Why.
	Open bool
	Why  string
	// Votes is the number of votes cast; ShowTally shows them (the instructor's page, and
	// everyone's once the answer is out); MayReveal offers Reveal.
	Votes     int
	ShowTally bool
	MayReveal bool
}

// PredictionChoice is one answer offered: its votes and share of them (in steps of 5 %, for
// the bar's class), whether the reader chose it, and, once revealed, whether it is right.
type PredictionChoice struct {
	Text   string
	Votes  int
	Share  int
	Chosen bool
	Right  bool
}

// ScenarioClaim is one claim of a lesson: Held is "true" or "false" once the lesson is done,
// "" before.
type ScenarioClaim struct {
	Says string
	Held string
}

// ScenarioLedger is a lesson's ledger: what the leaders' work wrote, and what came of it.
type ScenarioLedger struct {
	// Lease names the ledger (namespace/name); Fenced says whether writes carry a token now.
	Lease  string
	Fenced bool
	// Landed, Damage and Refused count the writes that landed, those of them made by a stale
	// leader, and those refused.
	Landed, Damage, Refused int
	// Rows are the writes in order, a writer's run of writes that came to the same folded
	// into one row.
	Rows []ScenarioEffect
}

// ScenarioEffect is one row of the ledger: Count writes in a row by By.
type ScenarioEffect struct {
	By       string
	Count    int
	Token    int32
	Fenced   bool
	Accepted bool
	Stale    bool
	// Says what came of the writes, in the page's language; At when the first was made.
	Says string
	At   string
}

// ScenarioStep is one narration step reached.
type ScenarioStep struct {
	N   int
	Say string
	// At is when the step began (RFC 3339); MomentURL shows the lease at that moment.
	At        string
	MomentURL string
	Current   bool
}

// ScenarioMember is one candidate of the run, its countdowns on its own clock.
type ScenarioMember struct {
	// Name is the member's name in the run when it differs from its Identity (two processes
	// that share one); "" otherwise.
	Name     string
	Identity string
	// Zombie is true once a member whose program ran client-go's Run only once has lost the
	// lease: Run returned, and its process lives on without competing.
	Zombie bool
	State  string
	Holder string
	Stale  bool
	// Believes is true when it believes it leads while a fault (a pause, a partition) is what
	// its card's badge shows: the narration's "two leaders" must be seen on the card too.
	Believes bool
	// Countdown says what runs out (in the page's language); LeftMs how much is left by the
	// member's clock when rendered, which runs at Rate times the browser's (speed × the
	// member's clock rate); Total is the full span, for the bar. A countdown shows at most
	// Total: a leader's renew deadline between rounds is the next round's, up to a retry
	// period further, and shows full until that round begins.
	Countdown string
	// Elapsed says what the member does once its countdown has run out, in place of Countdown
	// (a follower's "0.0 s" while it has not yet tried again read as a fault).
	Elapsed string
	LeftMs  int64
	TotalMs int64
	Rate    string
	Faults  []string
}

// Follow is /follow: the lesson the instructor shows, its step as shown, and its stage. Key
// names the run ("" when none plays): follow.js reloads the page when it changes.
type Follow struct {
	Page         Page
	Key          string
	Title, URL   string
	Step         ScenarioStep
	Total        int
	Waiting      string
	Question     *Prediction
	Namespace    string
	Lease        string
	StageLiveURL string
	// StageWatchURL is where stage.js follows the stage.
	StageWatchURL string
	Stage         StageLive
	// Plan is the session plan, with the lesson followed marked.
	Plan SessionPlan
}
