package scenario

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// TestPredictThenWatch: Next onto a step that asks opens its question and holds the step's
// faults back; the room votes, one choice each and changeable, while Next is refused; a vote
// for a closed question or a choice that is not offered is refused and counts nothing; Reveal
// closes the question and only then does the step run (alice is killed).
func TestPredictThenWatch(t *testing.T) {
	sc := Find("leader-crash")
	const asks = 2 // "alice is about to be killed"
	synctest.Test(t, func(t *testing.T) {
		run, changed, _ := startRun(t, sc, 1, 1)
		for st := run.State(); st.Step < asks-1; st = run.State() {
			if st.Ready {
				nextAndReveal(t, run)
				continue
			}
			<-changed
		}
		for !run.State().Ready {
			<-changed
		}
		if err := run.Next(); err != nil {
			t.Fatal(err)
		}
		st := run.State()
		if st.Step != asks || st.Question == nil || !st.Question.Open || st.Ready {
			t.Fatalf("after Next: step %d, question %+v, ready %v", st.Step, st.Question, st.Ready)
		}
		if err := run.Ballot().Vote("ann", asks-1, 1); !errors.Is(err, ErrClosed) {
			t.Errorf("a vote for another step's question: %v", err)
		}
		for _, v := range []struct {
			who    string
			choice int
		}{{"ann", 0}, {"ben", 1}, {"ann", 1}, {"cat", 2}} {
			if err := run.Ballot().Vote(v.who, asks, v.choice); err != nil {
				t.Fatalf("%s votes %d: %v", v.who, v.choice, err)
			}
		}
		if err := run.Ballot().Vote("dan", asks, 3); err == nil {
			t.Error("a fourth choice of three was taken")
		}
		if got := run.State().Question.Votes; !slices.Equal(got, []int{0, 2, 1}) {
			t.Errorf("votes %v, want [0 2 1]: ann changed her mind, dan's vote counts nothing", got)
		}
		if run.Ballot().ChoiceOf("ann", asks) != 1 || run.Ballot().ChoiceOf("dan", asks) != -1 {
			t.Errorf("ann's choice %d, dan's %d", run.Ballot().ChoiceOf("ann", asks), run.Ballot().ChoiceOf("dan", asks))
		}
		if err := run.Next(); !errors.Is(err, ErrAsking) {
			t.Errorf("Next while the question is open: %v", err)
		}
		// The room may take its time: alice is not killed before the reveal.
		time.Sleep(30 * time.Second)
		if m := run.State().Members[0]; m.Identity != "alice" || m.State != candidate.StateLeader {
			t.Fatalf("before the reveal alice is %s", m.State)
		}
		if err := run.Reveal(); err != nil {
			t.Fatal(err)
		}
		if err := run.Ballot().Vote("eve", asks, 1); !errors.Is(err, ErrClosed) {
			t.Errorf("a vote after the reveal: %v", err)
		}
		st = run.State()
		if st.Question == nil || st.Question.Open || st.Question.Total() != 3 {
			t.Errorf("after the reveal the question is %+v", st.Question)
		}
		for run.State().Members[0].State != candidate.StateStopped {
			<-changed
		}
	})
}

// TestAutoPlayReveals: auto-play leaves a question open for askPause of real time, then
// reveals it and runs the step.
func TestAutoPlayReveals(t *testing.T) {
	sc := Find("clean-release")
	synctest.Test(t, func(t *testing.T) {
		run, changed, _ := startRun(t, sc, 1, 2)
		run.SetAuto(true)
		var opened time.Time
		for {
			st := run.State()
			if q := st.Question; q != nil && q.Open && opened.IsZero() {
				opened = time.Now()
			}
			if q := st.Question; q != nil && !q.Open {
				break
			}
			select {
			case <-changed:
			case <-time.After(time.Minute):
				t.Fatalf("auto-play stuck at step %d", st.Step+1)
			}
		}
		if open := time.Since(opened); opened.IsZero() || open < askPause {
			t.Errorf("the question was open %v of real time; want at least %v", open, askPause)
		}
	})
}

// TestLessonsAsk: at least six lessons ask the room before a step, each question well formed
// (Scenario.check) and shown by claims that TestEveryLessonKeepsItsClaims checks.
func TestLessonsAsk(t *testing.T) {
	n := 0
	for _, sc := range Library() {
		if err := sc.check(); err != nil {
			t.Error(err)
		}
		if slices.ContainsFunc(sc.Steps, func(s Step) bool { return s.Ask != nil }) {
			n++
		}
	}
	if n < 6 {
		t.Errorf("%d lessons ask a question, want at least 6", n)
	}
	bad := *Find("leader-crash")
	bad.Steps = slices.Clone(bad.Steps)
	q := *bad.Steps[2].Ask
	q.Answer = len(q.Choices)
	bad.Steps[2].Ask = &q
	if err := bad.check(); err == nil {
		t.Error("a question whose answer is not among its choices passed the check")
	}
}
