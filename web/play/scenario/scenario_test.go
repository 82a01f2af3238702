package scenario

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/judge"
	"github.com/leaselab/leaselab/web/lease/views"
	"github.com/leaselab/leaselab/web/leasetest"
)

// nextAndReveal takes Next and, when the step asks a question, reveals its answer at once.
func nextAndReveal(t *testing.T, run *Run) {
	t.Helper()
	if err := run.Next(); err != nil {
		t.Fatal(err)
	}
	if q := run.State().Question; q != nil && q.Open {
		if err := run.Reveal(); err != nil {
			t.Fatal(err)
		}
	}
}

// readerPause is how long after a step is done the tests take Next.
const readerPause = 250 * time.Millisecond

// play runs sc to its end inside the test's bubble, taking Next as soon as each step is done,
// and returns the run (stopped) and its events.
func play(t *testing.T, sc *Scenario, seed uint64) (*Run, []Event) {
	t.Helper()
	run, evs, _ := playAt(t, sc, seed, 1)
	return run, evs
}

// playAt is play at a speed, with the server the run wrote to; configure may change the run's
// options.
func playAt(t *testing.T, sc *Scenario, seed uint64, speed float64, configure ...func(*Options)) (*Run, []Event, *leasetest.Server) {
	t.Helper()
	srv := leasetest.Start(t)
	cfg := srv.Config()
	var run *Run
	opts := Options{
		Transport: cfg.Transport,
		BaseURL:   cfg.Host,
		Namespace: "scenario-" + sc.Name,
		Seed:      seed,
		Speed:     speed,
		Overlaps: func(_ context.Context, ns, lease string, views []judge.View) ([]judge.Overlap, error) {
			return srv.Overlaps(ns, lease, views...), nil
		},
	}
	if speed != 1 {
		// Judged on the run's own clock, by the run's own record of the lease and of what each
		// member believed: the test kit's judge dates the record on the server's clock, which
		// a run faster or slower than real time does not keep (the server's screens read the
		// views it recorded, with the run's pace divided out).
		opts.Overlaps = nil
	}
	for _, c := range configure {
		c(&opts)
	}
	run, err := Start(t.Context(), sc, opts)
	if err != nil {
		t.Fatalf("start %s: %v", sc.Name, err)
	}
	defer run.Stop()
	changed, unsubscribe := run.Subscribe()
	defer unsubscribe()
	limit := time.Now().Add(10 * time.Minute) // fake time: a script that never finishes fails, fast
	for {
		run.mu.Lock()
		step, ready := run.step, run.ready
		run.mu.Unlock()
		asking := run.Ballot().isOpen()
		if asking {
			// The room votes, the instructor reveals: the step runs from there.
			time.Sleep(readerPause)
			if err := run.Reveal(); err != nil {
				t.Fatalf("reveal: %v", err)
			}
			continue
		}
		if step == len(sc.Steps)-1 && ready {
			break
		}
		if time.Now().After(limit) {
			t.Fatalf("%s stuck at step %d of %d after 10 minutes of its time; events:\n%s", sc.Name, step+1, len(sc.Steps), eventList(run.Events()))
		}
		if ready {
			// Next a moment after the step is done, as a reader clicks: a fault injected at
			// the very instant a member acts (the takeover a step waited for) would race
			// with it, and goroutines of one instant run in no fixed order.
			time.Sleep(readerPause)
			if err := run.Next(); err != nil {
				t.Fatalf("next: %v", err)
			}
			continue
		}
		select {
		case <-changed:
		case <-time.After(time.Minute):
		}
	}
	if err := run.Outcome(); err != nil {
		t.Errorf("%s did not end as the lesson says: %v\nevents:\n%s", sc.Name, err, eventList(run.Events()))
	}
	return run, run.Events(), srv
}

// TestSpeedKeepsTheStory: a lesson run faster or slower than real time is judged on its own
// clock, so that the server's screens tell the story the narration tells: at every speed the
// crashed leader's term ends by expiry, after leaseDurationSeconds of the run's clock, and
// not by a takeover (the server's clock alone would count 10 s where the run's members count
// 10 of theirs).
func TestSpeedKeepsTheStory(t *testing.T) {
	sc := Find("leader-crash")
	for _, speed := range []float64{0.5, 1, 2, 4} {
		t.Run(strconv.FormatFloat(speed, 'g', -1, 64), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				run, _, srv := playAt(t, sc, 42, speed)
				terms := srv.History(run.opts.Namespace, sc.Lease)
				if len(terms) < 2 || terms[0].Holder != "alice" {
					t.Fatalf("terms %+v, want alice's and her successor's", terms)
				}
				cs := kubernetes.NewForConfigOrDie(srv.Config())
				l, err := cs.CoordinationV1().Leases(run.opts.Namespace).Get(t.Context(), sc.Lease, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := l.Annotations[judge.TimeScaleAnnotation], strconv.FormatFloat(speed, 'g', -1, 64); got != want {
					t.Errorf("the lease's %s is %q, want %q", judge.TimeScaleAnnotation, got, want)
				}
				first := terms[0]
				if first.Ended != judge.EndExpired {
					t.Errorf("at %gx alice's term ended %q, want %q: %+v", speed, first.Ended, judge.EndExpired, terms)
				}
			})
		})
	}
}

func eventList(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintln(&b, e)
	}
	return b.String()
}

// TestEveryScenarioReachesItsOutcome plays each scenario of the library on a virtual clock.
func TestEveryScenarioReachesItsOutcome(t *testing.T) {
	for _, sc := range Library() {
		t.Run(sc.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, evs := play(t, sc, 42)
				t.Logf("%s:\n%s", sc.Name, eventList(evs))
			})
		})
	}
}

// TestSameSeedSameEvents: a seed is a lesson that can be given again, event for event.
func TestSameSeedSameEvents(t *testing.T) {
	for _, sc := range Library() {
		t.Run(sc.Name, func(t *testing.T) {
			var runs [2]string
			for i := range runs {
				synctest.Test(t, func(t *testing.T) {
					_, evs := play(t, sc, 7)
					if sc.Coordinated {
						// The server's election controller decides on its own schedule
						// (informers, a work queue, requeues), which no seed reaches: a
						// coordinated lesson gives the same events in the same order, at
						// times that may differ.
						for i := range evs {
							evs[i].At = 0
						}
					}
					runs[i] = eventList(evs)
				})
			}
			if runs[0] != runs[1] {
				t.Fatalf("seed 7 gave two different runs:\n%s\n---\n%s", runs[0], runs[1])
			}
		})
	}
}

// recordingStage seats a run's members as the dashboard's tab hub does, with their reports
// recorded as the server records a tab's views (web/lease/views).
type recordingStage struct{ rec *views.Recorder }

func (s recordingStage) Enter(func(tabproto.Command) error) Seat { return recordingSeat(s) }

type recordingSeat recordingStage

func (s recordingSeat) Report(rep tabproto.Report) { s.rec.Report(rep, views.SourceTab, time.Now()) }
func (recordingSeat) Leave()                       {}

// TestWorkOutlivingTheLeaseEnds: in release-on-cancel, the leader's work runs on after it
// released the lease; when the work stops, the view the server records of it is dated then,
// after the views that had it leading, so that the split brain ends there (its report's role
// change was dated back to the release, before them, and the lease page showed the overlap
// as lasting for ever).
func TestWorkOutlivingTheLeaseEnds(t *testing.T) {
	sc := Find("release-on-cancel")
	synctest.Test(t, func(t *testing.T) {
		db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "views.db"), sqlite.Options{CompactInterval: -1}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rec := views.NewRecorder(t.Context(), db, slog.New(slog.DiscardHandler))
		run, _, _ := playAt(t, sc, 42, 1, func(o *Options) { o.Stage = recordingStage{rec} })
		vs, err := views.NewReader(db, 1000).Views(t.Context(), run.opts.Namespace, sc.Lease)
		if err != nil {
			t.Fatal(err)
		}
		// The judge reads them in the order of their dates.
		slices.SortStableFunc(vs, func(a, b judge.View) int { return a.At.Compare(b.At) })
		var alice []judge.View
		for _, v := range vs {
			if v.Identity == "alice" {
				alice = append(alice, v)
			}
		}
		// alice released at her first view naming no holder; her work ran 4 s more.
		var released, stopped time.Time
		for _, v := range alice {
			if v.Holder == "" && v.Leads && released.IsZero() {
				released = v.At
			}
			if v.State == "stopped" {
				stopped = v.At
			}
		}
		if released.IsZero() || stopped.Sub(released) < 4*time.Second || alice[len(alice)-1].Leads {
			t.Errorf("alice released at %s and stopped at %s (want when her 4 s of work ended); her views by date end with %+v",
				released.Format(time.StampMilli), stopped.Format(time.StampMilli), alice[len(alice)-1])
		}
		if judge.Disagreeing(vs, run.holderNow()) {
			t.Errorf("at the end someone but holder %q believes it leads: %+v", run.holderNow(), vs)
		}
	})
}

// TestRestartCountsItsOwnSplitBrains: a lesson started again with the same seed writes the same
// lease, whose history still holds the first run's split brains; the new run counts only its
// own.
func TestRestartCountsItsOwnSplitBrains(t *testing.T) {
	sc := Find("split-brain")
	synctest.Test(t, func(t *testing.T) {
		first, _, srv := playAt(t, sc, 42, 1)
		if n := first.State().Overlaps; n == 0 {
			t.Fatal("the first run found no split brain")
		}
		opts := first.opts
		// The server judges the lease on every view it recorded, the first run's too, as the
		// screens' hook does (web/play/ui reads them from the store).
		first.mu.Lock()
		before := slices.Clone(first.views)
		first.mu.Unlock()
		for _, m := range sc.Cast { // the hub records a stopped view as a member's seat is left
			before = append(before, judge.View{Identity: m.Identity, At: time.Now(), State: "stopped"})
		}
		opts.Overlaps = func(_ context.Context, ns, lease string, views []judge.View) ([]judge.Overlap, error) {
			return srv.Overlaps(ns, lease, append(slices.Clone(before), views...)...), nil
		}
		if err := Clear(t.Context(), opts.Transport, opts.BaseURL, opts.Namespace, sc); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		again, err := Start(t.Context(), sc, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer again.Stop()
		time.Sleep(time.Second)
		if n := again.State().Overlaps; n != 0 {
			t.Errorf("the run started again counts %d split brains at its first step, want none of the first run's", n)
		}
	})
}

// TestCoordinatedRunsInRealTime: a lesson of Coordinated Leader Election refuses any speed but
// 1, at the start and later; the others take any speed in range.
func TestCoordinatedRunsInRealTime(t *testing.T) {
	cle := Find("cle-rolling-upgrade")
	if !cle.Coordinated {
		t.Fatal("cle-rolling-upgrade is not coordinated")
	}
	for _, speed := range []float64{0.5, 2} {
		if err := cle.CheckSpeed(speed); !errors.Is(err, ErrRealTimeOnly) {
			t.Errorf("cle-rolling-upgrade at %g: %v", speed, err)
		}
		if err := Find("leader-crash").CheckSpeed(speed); err != nil {
			t.Errorf("leader-crash at %g: %v", speed, err)
		}
	}
	if err := cle.CheckSpeed(1); err != nil {
		t.Errorf("cle-rolling-upgrade at 1: %v", err)
	}
	if _, err := Start(t.Context(), cle, Options{Namespace: "x", Speed: 2}); !errors.Is(err, ErrRealTimeOnly) {
		t.Errorf("Start at 2: %v", err)
	}
}

// TestRoleChangeDatedOnTheServersClock: a member's report says how long ago its role changed on
// its own clock, which runs at the run's speed; the report the server gets says it in the
// server's milliseconds.
func TestRoleChangeDatedOnTheServersClock(t *testing.T) {
	for _, tc := range []struct {
		speed     float64
		roleSince int64
	}{{4, 9900}, {0.5, 9200}, {1, 9600}} {
		rep := tabproto.Report{Clock: 10000, RoleSince: 9600} // 400 ms ago, on the member's clock
		rescaleRoleSince(&rep, tc.speed)
		if rep.RoleSince != tc.roleSince {
			t.Errorf("at %gx: RoleSince %d, want %d", tc.speed, rep.RoleSince, tc.roleSince)
		}
	}
}

// startRun starts sc with seed at speed against a server of its own, inside the test's bubble,
// and returns the run, a channel that says when it changed, and the server; the test's end
// stops it.
func startRun(t *testing.T, sc *Scenario, seed uint64, speed float64) (*Run, <-chan struct{}, *leasetest.Server) {
	t.Helper()
	srv := leasetest.Start(t)
	cfg := srv.Config()
	run, err := Start(t.Context(), sc, Options{Transport: cfg.Transport, BaseURL: cfg.Host,
		Namespace: "scenario-" + sc.Name, Seed: seed, Speed: speed})
	if err != nil {
		t.Fatal(err)
	}
	changed, unsubscribe := run.Subscribe()
	t.Cleanup(func() {
		unsubscribe()
		run.Stop()
	})
	return run, changed, srv
}

// TestAutoPlayLeavesTimeToRead: auto-play leaves each step on screen for at least autoPause of
// real time, and for as long as its narration takes to read (readingPace a word), at any
// speed: at 4x the run's clock runs four times as fast, and the reader does not.
func TestAutoPlayLeavesTimeToRead(t *testing.T) {
	sc := Find("leader-crash")
	synctest.Test(t, func(t *testing.T) {
		run, changed, _ := startRun(t, sc, 3, 4)
		run.SetAuto(true)
		shownAt := []time.Time{time.Now()}
		limit := time.Now().Add(10 * time.Minute)
		for len(shownAt) < len(sc.Steps) {
			select {
			case <-changed:
			case <-time.After(time.Minute):
			}
			if time.Now().After(limit) {
				t.Fatalf("auto-play stopped at step %d of %d", len(shownAt), len(sc.Steps))
			}
			run.mu.Lock()
			step := run.step
			run.mu.Unlock()
			for len(shownAt) <= step {
				shownAt = append(shownAt, time.Now())
			}
		}
		for i := 1; i < len(shownAt); i++ {
			read := time.Duration(len(strings.Fields(sc.Steps[i-1].Say.En))) * readingPace
			if on := shownAt[i].Sub(shownAt[i-1]); on < max(autoPause, read) {
				t.Errorf("step %d was on screen for %v of real time; its %d words take %v to read",
					i, on, len(strings.Fields(sc.Steps[i-1].Say.En)), read)
			}
		}
	})
}

// TestStepLinksShowWhatTheyTell: a step's link to the lease page shows the moment its
// narration tells of, however long the reader waited before Next: leader-crash's step 4 ("the
// lease has expired") links to when the others' clocks said so, before bob's takeover, not to
// the Next pressed 15 s later; step 3, which kills alice, links to just after her death.
func TestStepLinksShowWhatTheyTell(t *testing.T) {
	sc := Find("leader-crash")
	synctest.Test(t, func(t *testing.T) {
		run, changed, srv := startRun(t, sc, 42, 1)
		for st := run.State(); st.Step < 3; st = run.State() {
			if st.Ready {
				time.Sleep(15 * time.Second) // a reader who takes their time
				nextAndReveal(t, run)
				continue
			}
			select {
			case <-changed:
			case <-time.After(time.Minute):
			}
		}
		for !run.State().Ready {
			<-changed
		}
		time.Sleep(15 * time.Second)
		nextAndReveal(t, run) // step 4: the lease has expired
		st := run.State()
		terms := srv.History(run.opts.Namespace, sc.Lease)
		if len(terms) < 2 || terms[0].Holder != "alice" {
			t.Fatalf("terms %+v", terms)
		}
		if killed := st.Entered[2]; !st.Moments[2].Equal(killed.Add(momentAfter)) {
			t.Errorf("step 3's link shows %s, want %v after alice's death at %s", st.Moments[2].Format(time.RFC3339Nano), momentAfter, killed.Format(time.RFC3339Nano))
		}
		expired, taken := terms[0].End, terms[1].Start
		if m := st.Moments[3]; m.Before(expired) || m.After(taken.Add(momentAfter)) {
			t.Errorf("step 4's link shows %s; the lease expired at %s and bob took it at %s", m.Format(time.RFC3339Nano),
				expired.Format(time.RFC3339Nano), taken.Format(time.RFC3339Nano))
		}
	})
}

// TestReleaseOnCancelSaysWhatClientGoDoes: the lesson's last word on releasing is what
// client-go does (web/leasetest's TestReleaseDoesNotWaitForTheCallback shows it): the release
// comes as soon as the context is cancelled, never after the leader callback returns.
func TestReleaseOnCancelSaysWhatClientGoDoes(t *testing.T) {
	steps := Find("release-on-cancel").Steps
	last := steps[len(steps)-1].Say.En
	if !strings.Contains(last, "as soon as the elector's context is cancelled") || strings.Contains(last, "releases only after") {
		t.Errorf("the last step says: %s", last)
	}
}

// TestLessonSetsPacketLoss: a lesson's step sets packet loss on a member as the library's
// lessons pause or partition one (Actions.Member(...).SetLoss). The leader whose network
// loses 90 % of her requests gives up leading at a renew deadline, as a partitioned one does,
// and another takes over with no split brain; her snapshot and the views the judge reads
// carry the loss.
func TestLessonSetsPacketLoss(t *testing.T) {
	sc := plain(Scenario{
		Name:    "packet-loss",
		Title:   i18n.Text{En: "Packet loss", Zh: "丢包"},
		Summary: i18n.Text{En: "The leader's network loses most of its requests.", Zh: "领导者的网络丢失了大部分请求。"},
		Teaches: i18n.Text{En: "A lossy network is a partition some of the time.", Zh: "丢包的网络有时就是网络分区。"},
		Steps: []Step{
			aliceLeads(),
			{
				Say: i18n.Text{
					En: "alice's network loses 90 % of her requests: each lost renewal hangs until her renew deadline cuts it off, and she gives up leading.",
					Zh: "alice 的网络丢失了 90% 的请求：每次丢失的续约都挂起，直到续约期限将其打断，于是她放弃领导。",
				},
				Do:      func(a *Actions) { a.Member("alice").SetLoss(90) },
				Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
				Waiting: i18n.Text{En: "until bob or carol holds the lease", Zh: "等待 bob 或 carol 持有租约"},
			},
			{Say: i18n.Text{En: "A lossy network is a partition some of the time: no moment had two leaders.", Zh: "丢包的网络有时就是网络分区：任何时刻都没有两个领导者。"}},
		},
		Claims: []Claim{{Kind: HandedOver, Who: "alice"}, {Kind: NoSplitBrain}},
	})
	synctest.Test(t, func(t *testing.T) {
		run, evs := play(t, sc, 42)
		run.mu.Lock()
		views := slices.Clone(run.views)
		run.mu.Unlock()
		if !slices.ContainsFunc(views, func(v judge.View) bool { return v.Identity == "alice" && v.Faults.LossPercent == 90 }) {
			t.Errorf("no view of alice carries her loss: %+v", views)
		}
		run.mu.Lock()
		f := run.worldLocked(run.clock.Now()).Members["alice"].Faults
		run.mu.Unlock()
		if f.LossPercent != 90 {
			t.Errorf("alice's faults at the end: %+v", f)
		}
		if !slices.ContainsFunc(evs, func(e Event) bool { return e.Kind == "role" && e.What == "alice follower" }) {
			t.Errorf("alice never gave up leading; events:\n%s", eventList(evs))
		}
	})
}

// TestEveryLessonKeepsItsClaims plays every lesson at every speed its page offers with its
// default seed, and with every other seed it offers at 1×, and checks every claim its narration
// makes against what the judge found: a lesson cannot say what its run did not do.
func TestEveryLessonKeepsItsClaims(t *testing.T) {
	for _, sc := range Library() {
		if len(sc.Claims) == 0 {
			t.Errorf("%s states no claims", sc.Name)
		}
		for _, speed := range sc.Speeds() {
			for i, seed := range sc.Seeds() {
				if i > 0 && speed != 1 {
					continue
				}
				t.Run(fmt.Sprintf("%s/%gx/seed%d", sc.Name, speed, seed), func(t *testing.T) {
					t.Parallel()
					synctest.Test(t, func(t *testing.T) {
						run, _, _ := playAt(t, sc, seed, speed)
						if err := run.Outcome(); err != nil {
							t.Logf("events:\n%s", eventList(run.Events()))
						}
					})
				})
			}
		}
	}
}

// TestFencingLedger: in fencing, the leaders' work writes the ledger through the API: the
// frozen alice's writes land beside bob's (a 409 each, then a second try that lands), and once
// fenced, the frozen bob's writes meet a 409 and are refused; the ledger on the server ends
// with alice's token, 2, and every effect is on the page's state.
func TestFencingLedger(t *testing.T) {
	sc := Find("fencing")
	synctest.Test(t, func(t *testing.T) {
		run, _, srv := playAt(t, sc, 1, 1)
		st := run.State()
		if st.Ledger == nil || !st.Ledger.Fenced {
			t.Fatalf("ledger state %+v", st.Ledger)
		}
		landed, damage, refused := st.Ledger.Counts()
		t.Logf("landed %d, damage %d, refused %d", landed, damage, refused)
		for _, e := range st.Ledger.Effects {
			t.Logf("%+v", e)
		}
		if damage == 0 || refused == 0 {
			t.Errorf("damage %d, refused %d: want both", damage, refused)
		}
		for _, e := range st.Ledger.Effects {
			if e.Damage() && (e.By != "alice" || e.Fenced || e.Conflicts == 0) {
				t.Errorf("damage by %s (fenced %v, %d conflicts): only alice's unfenced second tries land stale", e.By, e.Fenced, e.Conflicts)
			}
			if e.Refused() && (e.By != "bob" || !e.Stale) {
				t.Errorf("refused %+v: only stale bob's writes are refused", e)
			}
		}
		cs := kubernetes.NewForConfigOrDie(srv.Config())
		l, err := cs.CoordinationV1().Leases(run.opts.Namespace).Get(t.Context(), sc.LedgerLease(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Annotations[ledgerTokenKey]; got != "2" {
			t.Errorf("the ledger's token is %q, want 2 (alice's term): %v", got, l.Annotations)
		}
		if got, want := l.Annotations[ledgerEntriesKey], strconv.Itoa(landed); got != want {
			t.Errorf("the ledger counts %s entries; %s writes landed", got, want)
		}
	})
}

// TestServersSplitBrainsOnTheRunsClock: the screens' judge (Options.Overlaps) dates a split
// brain on the server's clock; a run at 4x tells it on its own, as its claims and conditions
// count: 2 s of the server's are 8 s of the run's (a lesson's "a split brain of at least 10 s"
// failed on its page at 4x, and an ongoing one measured against the run's clock was off by the
// run's age).
func TestServersSplitBrainsOnTheRunsClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := leasetest.Start(t)
		cfg := srv.Config()
		base := time.Now()
		run, err := Start(t.Context(), Find("gc-pause"), Options{Transport: cfg.Transport, BaseURL: cfg.Host, Namespace: "scenario-gc-pause", Seed: 1, Speed: 4,
			Overlaps: func(context.Context, string, string, []judge.View) ([]judge.Overlap, error) {
				return []judge.Overlap{
					{Stale: []string{"alice"}, Start: base.Add(time.Second), End: base.Add(3 * time.Second), Cause: judge.CausePaused},
					{Stale: []string{"alice"}, Start: base.Add(4 * time.Second), Cause: judge.CausePaused},
				}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		defer run.Stop()
		time.Sleep(5 * time.Second)
		run.mu.Lock()
		got, now := run.overlaps(), run.clock.Now()
		run.mu.Unlock()
		if len(got) != 2 || got[0].Length(now) != 8*time.Second || got[1].Length(now) != 4*time.Second {
			t.Errorf("split brains of %v and %v on the run's clock, want 8 s and 4 s (so far): %+v", got[0].Length(now), got[1].Length(now), got)
		}
	})
}

// TestLessonLengths: the length each lesson states (what /scenarios shows, at 1×) is what its
// run takes, from Start to its last step with Next taken as soon as it is offered, within a
// quarter and five seconds, at its default seed.
func TestLessonLengths(t *testing.T) {
	for _, sc := range Library() {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				playAt(t, sc, sc.Seeds()[0], 1)
				took := time.Since(start)
				if slack := took/4 + 5*time.Second; sc.Length < took-slack || sc.Length > took+slack {
					t.Errorf("%s states it takes %v at 1x; its run took %v", sc.Name, sc.Length, took.Round(time.Second))
				}
			})
		})
	}
}

// TestSessionFitsNinetyMinutes: the suggested session names lessons of the library, each
// once, and its runs, readings and talks fill between 80 and 90 minutes.
func TestSessionFitsNinetyMinutes(t *testing.T) {
	var total time.Duration
	seen := map[string]bool{}
	for _, it := range Session() {
		if seen[it.Lesson.Name] {
			t.Errorf("%s twice in the session", it.Lesson.Name)
		}
		seen[it.Lesson.Name] = true
		total += it.Lesson.Minutes() + it.Talk
	}
	if len(seen) < 8 || total < 80*time.Minute || total > 90*time.Minute {
		t.Errorf("the session has %d lessons in %v, want at least 8 in 80 to 90 minutes", len(seen), total)
	}
}

// TestLeaderCrashStepSeesATakeoverAsExpiry: the crash step of leader-crash waits until bob or
// carol counts alice's lease as expired, or one of them holds it already. A run that looks too
// late (a loaded machine, at 4x) sees bob lead, his clock counting his own fresh lease, and
// carol following him: that step, waiting for an expiry nobody now counts, hung the lesson.
func TestLeaderCrashStepSeesATakeoverAsExpiry(t *testing.T) {
	until := Find("leader-crash").Steps[2].Until
	now := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	member := func(role candidate.Role, expiry time.Duration) candidate.Snapshot {
		return candidate.Snapshot{Role: role, Now: now, ObservedExpiry: now.Add(expiry)}
	}
	for _, c := range []struct {
		name string
		w    World
		want bool
	}{
		{"alice's lease running", World{Lease: heldBy("alice"), Members: map[string]candidate.Snapshot{
			"bob": member(candidate.RoleFollower, 3*time.Second), "carol": member(candidate.RoleFollower, 2*time.Second)}}, false},
		{"carol counts it expired", World{Lease: heldBy("alice"), Members: map[string]candidate.Snapshot{
			"bob": member(candidate.RoleFollower, time.Second), "carol": member(candidate.RoleFollower, 0)}}, true},
		{"bob took it before the run looked", World{Lease: heldBy("bob"), Members: map[string]candidate.Snapshot{
			"bob": member(candidate.RoleLeader, 10*time.Second), "carol": member(candidate.RoleFollower, 9*time.Second)}}, true},
	} {
		if got := until(&c.w); got != c.want {
			t.Errorf("%s: the crash step is done: %v, want %v", c.name, got, c.want)
		}
	}
}

// heldBy is a Lease whose record names holder.
func heldBy(holder string) *coordinationv1.Lease {
	return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
}
