package scenario

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func planNames(p *Plan) []string {
	var out []string
	for _, it := range p.Items() {
		out = append(out, it.Lesson.Name)
	}
	return out
}

// TestPlanEdits: a plan starts as the suggested session; a lesson is added at the end with its
// suggested talk (or the default), removed, moved one place at a time (staying put at either
// end), and the plan reset; a bad edit changes nothing and says why.
func TestPlanEdits(t *testing.T) {
	p := NewPlan()
	suggested := planNames(p)
	if len(suggested) == 0 || suggested[0] != "leader-crash" {
		t.Fatalf("a new plan: %v", suggested)
	}
	for _, bad := range []struct {
		err  error
		edit func() error
	}{
		{ErrUnknownLesson, func() error { return p.Add("no-such-lesson") }},
		{ErrInPlan, func() error { return p.Add("leader-crash") }},
		{ErrNotInPlan, func() error { return p.Remove("identity-collision") }},
		{ErrNotInPlan, func() error { return p.Move("no-such-lesson", 1) }},
	} {
		if err := bad.edit(); !errors.Is(err, bad.err) {
			t.Errorf("got %v, want %v", err, bad.err)
		}
		if got := planNames(p); !slices.Equal(got, suggested) {
			t.Fatalf("a refused edit changed the plan: %v", got)
		}
	}
	if err := p.Add("identity-collision"); err != nil {
		t.Fatal(err)
	}
	items := p.Items()
	if last := items[len(items)-1]; last.Lesson.Name != "identity-collision" || last.Talk != DefaultTalk {
		t.Errorf("added: %s with %v of talk", last.Lesson.Name, last.Talk)
	}
	if err := p.Move("leader-crash", -1); err != nil || planNames(p)[0] != "leader-crash" {
		t.Errorf("moving the first up: %v %v", err, planNames(p))
	}
	if err := p.Move("identity-collision", 1); err != nil || planNames(p)[len(items)-1] != "identity-collision" {
		t.Errorf("moving the last down: %v %v", err, planNames(p))
	}
	_ = p.Move("leader-crash", 1)
	_ = p.Move("identity-collision", -1)
	got := planNames(p)
	if got[0] != suggested[1] || got[1] != "leader-crash" || got[len(got)-2] != "identity-collision" {
		t.Errorf("after two moves: %v", got)
	}
	if err := p.Remove("leader-crash"); err != nil || slices.Contains(planNames(p), "leader-crash") {
		t.Errorf("remove: %v %v", err, planNames(p))
	}
	// The suggested talk of a lesson taken out and put back is kept.
	if err := p.Add("leader-crash"); err != nil || p.Items()[len(got)-1].Talk != Session()[0].Talk {
		t.Errorf("re-added: %v", err)
	}
	p.Reset()
	if got := planNames(p); !slices.Equal(got, suggested) {
		t.Errorf("reset: %v", got)
	}
}

// TestPlanStarts: each lesson starts when the ones before it, with their talks, are over.
func TestPlanStarts(t *testing.T) {
	items := Session()[:3]
	starts, total := Starts(items)
	if starts[0] != 0 || starts[1] != items[0].Length() || starts[2] != items[0].Length()+items[1].Length() {
		t.Errorf("starts %v", starts)
	}
	if total != starts[2]+items[2].Length() || items[0].Length() != items[0].Lesson.Minutes()+items[0].Talk {
		t.Errorf("total %v", total)
	}
	if _, total := Starts(nil); total != time.Duration(0) {
		t.Errorf("an empty plan lasts %v", total)
	}
}
