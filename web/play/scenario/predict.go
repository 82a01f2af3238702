package scenario

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Predict, then watch: a step that asks (Step.Ask) waits, once Next reaches it, for the
// instructor's Reveal; until then everyone who watches may vote, one choice each, changeable.

// ErrAsking refuses Next while the step's question is open: reveal the answer first.
var ErrAsking = errors.New("the step asks a question: reveal its answer first")

// ErrClosed refuses a vote once the question it answers is no longer open.
var ErrClosed = errors.New("that question is closed: its answer has been revealed")

// ErrTooManyVoters refuses a new voter once a question has maxVoters.
var ErrTooManyVoters = errors.New("this question has as many voters as it takes")

// maxVoters bounds the voters of one question: a room of a thousand phones, and some.
const maxVoters = 5000

// askPause is the least time auto-play leaves a question open, in real time: long enough to
// read it and vote.
const askPause = 10 * time.Second

// QuestionState is the state of the question of a step reached.
type QuestionState struct {
	// Step is the step that asks (from 0).
	Step int
	// Open says votes are taken and the step waits for the reveal.
	Open bool
	// Votes are the votes for each choice.
	Votes []int
}

// Total is the number of votes cast.
func (q *QuestionState) Total() int {
	n := 0
	for _, v := range q.Votes {
		n += v
	}
	return n
}

// Ballot is a run's questions and their votes: which one is open, and who chose what.
type Ballot struct {
	mu    sync.Mutex
	sc    *Scenario
	open  int                    // the step whose question is open; -1 for none
	votes map[int]map[string]int // by step, by voter: the choice
	// changed tells the run's subscribers; called without mu.
	changed func()
}

func newBallot(sc *Scenario, changed func()) *Ballot {
	return &Ballot{sc: sc, open: -1, votes: map[int]map[string]int{}, changed: changed}
}

// openAt opens the question of step; close closes the open one.
func (b *Ballot) openAt(step int) {
	b.mu.Lock()
	b.open = step
	b.mu.Unlock()
}

func (b *Ballot) close() {
	b.mu.Lock()
	b.open = -1
	b.mu.Unlock()
}

// isOpen says a question is open: its step waits for the reveal.
func (b *Ballot) isOpen() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open >= 0
}

// state is the state of step i's question, for a run that reached step reached; nil when it
// asks none or is not reached.
func (b *Ballot) state(i, reached int) *QuestionState {
	if i > reached || b.sc.Steps[i].Ask == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	q := &QuestionState{Step: i, Open: i == b.open, Votes: make([]int, len(b.sc.Steps[i].Ask.Choices))}
	for _, c := range b.votes[i] {
		q.Votes[c]++
	}
	return q
}

// Vote records voter's choice for the question of step (from 0), which must be open: a vote
// sent from a page that shows a question since closed is refused, not counted elsewhere.
// A second vote replaces the first.
func (b *Ballot) Vote(voter string, step, choice int) error {
	if err := b.vote(voter, step, choice); err != nil {
		return err
	}
	b.changed()
	return nil
}

func (b *Ballot) vote(voter string, step, choice int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if step != b.open || step < 0 {
		return ErrClosed
	}
	if n := len(b.sc.Steps[step].Ask.Choices); choice < 0 || choice >= n {
		return fmt.Errorf("choice %d: the question has choices 0 to %d", choice, n-1)
	}
	vs := b.votes[step]
	if vs == nil {
		vs = map[string]int{}
		b.votes[step] = vs
	}
	if _, ok := vs[voter]; !ok && len(vs) >= maxVoters {
		return ErrTooManyVoters
	}
	vs[voter] = choice
	return nil
}

// ChoiceOf is voter's choice for the question of step, -1 for none.
func (b *Ballot) ChoiceOf(voter string, step int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.votes[step][voter]; ok {
		return c
	}
	return -1
}

// Ballot is the run's questions and votes.
func (r *Run) Ballot() *Ballot { return r.ballot }

// Reveal closes the open question and begins its step: its faults are injected now, and its
// claims count from now.
func (r *Run) Reveal() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.ballot.isOpen() {
		return errors.New("no question is open")
	}
	r.revealLocked(r.clock.Now())
	return nil
}

func (r *Run) revealLocked(now time.Time) {
	r.ballot.close()
	r.entered[r.step] = now
	r.enteredBase[r.step] = r.opts.Clock.Now()
	r.addEventLocked(now, "step", fmt.Sprint(r.step+1))
	r.changedLocked()
	r.enterLocked(r.step)
}

// revealAt is when auto-play reveals q, asked at asked, on a run's clock going at rate: once it
// has been open askPause, and not before it and its choices could be read.
func revealAt(q *Question, asked time.Time, rate float64) time.Time {
	words := len(strings.Fields(q.Ask.En))
	for _, c := range q.Choices {
		words += len(strings.Fields(c.En))
	}
	wait := max(askPause, time.Duration(words)*readingPace)
	return asked.Add(time.Duration(float64(wait) * rate))
}

// Answers checks, for every question of the run's steps, the claims that show its answer:
// nil for each that holds. The run must have played its last step.
func (r *Run) Answers() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.worldLocked(r.clock.Now())
	var out []error
	for i, st := range r.sc.Steps {
		if st.Ask == nil {
			continue
		}
		for _, c := range st.Ask.Shown {
			if err := c.Check(w); err != nil {
				out = append(out, fmt.Errorf("step %d's answer: %w", i+1, err))
			}
		}
	}
	return out
}
