package scenario

import (
	"errors"
	"slices"
	"sync"
	"time"
)

// DefaultTalk is the time to talk a lesson over that a plan gives a lesson the suggested
// session does not name.
const DefaultTalk = 5 * time.Minute

// The refusals of a plan's edits.
var (
	ErrUnknownLesson = errors.New("no such lesson")
	ErrInPlan        = errors.New("the lesson is in the plan already")
	ErrNotInPlan     = errors.New("the lesson is not in the plan")
	ErrBadTalk       = errors.New("the time to talk a lesson over is outside 0 to MaxTalkMinutes")
)

// MaxTalkMinutes is the longest time to talk a lesson over that a plan takes, in minutes.
const MaxTalkMinutes = 120

// Plan is the session an instructor gives: lessons in order, each with time to talk it over
// after its run. It starts as the suggested Session; a lesson is in it at most once, so that a
// lesson names its place in it. Safe for concurrent use.
type Plan struct {
	mu    sync.Mutex
	items []SessionItem
}

// NewPlan returns the suggested session as a plan to edit.
func NewPlan() *Plan { return &Plan{items: Session()} }

// Items are the plan's lessons in order (a copy).
func (p *Plan) Items() []SessionItem {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.items)
}

// Add puts the lesson name at the end of the plan, with the suggested session's time to talk
// it over (DefaultTalk when that does not name it). It changes nothing when the lesson is
// unknown (ErrUnknownLesson) or in the plan already (ErrInPlan).
func (p *Plan) Add(name string) error {
	sc := Find(name)
	if sc == nil {
		return ErrUnknownLesson
	}
	talk := DefaultTalk
	for _, it := range Session() {
		if it.Lesson.Name == name {
			talk = it.Talk
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.indexLocked(name) >= 0 {
		return ErrInPlan
	}
	p.items = append(p.items, SessionItem{Lesson: sc, Talk: talk})
	return nil
}

// Remove takes the lesson name out of the plan (ErrNotInPlan when it is not there).
func (p *Plan) Remove(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.indexLocked(name)
	if i < 0 {
		return ErrNotInPlan
	}
	p.items = slices.Delete(p.items, i, i+1)
	return nil
}

// Move moves the lesson name one place earlier (by < 0) or later (by > 0); at either end it
// stays where it is. ErrNotInPlan when it is not in the plan.
func (p *Plan) Move(name string, by int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.indexLocked(name)
	if i < 0 {
		return ErrNotInPlan
	}
	j := i
	switch {
	case by < 0 && i > 0:
		j = i - 1
	case by > 0 && i+1 < len(p.items):
		j = i + 1
	}
	p.items[i], p.items[j] = p.items[j], p.items[i]
	return nil
}

// SetTalk gives the lesson name minutes to talk it over after its run: ErrBadTalk when
// minutes is below zero or above MaxTalkMinutes, ErrNotInPlan when it is not in the plan.
func (p *Plan) SetTalk(name string, minutes int) error {
	if minutes < 0 || minutes > MaxTalkMinutes {
		return ErrBadTalk
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.indexLocked(name)
	if i < 0 {
		return ErrNotInPlan
	}
	p.items[i].Talk = time.Duration(minutes) * time.Minute
	return nil
}

// Reset makes the plan the suggested session again.
func (p *Plan) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.items = Session()
}

func (p *Plan) indexLocked(name string) int {
	return slices.IndexFunc(p.items, func(it SessionItem) bool { return it.Lesson.Name == name })
}

// Length is how long giving the item takes: the lesson at 1×, and the talk after it.
func (it SessionItem) Length() time.Duration { return it.Lesson.Minutes() + it.Talk }

// Starts are the moments, from the session's start, at which each of items begins, and the
// session's whole length.
func Starts(items []SessionItem) (starts []time.Duration, total time.Duration) {
	starts = make([]time.Duration, len(items))
	for i, it := range items {
		starts[i] = total
		total += it.Length()
	}
	return starts, total
}
