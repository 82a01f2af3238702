package templates

// SessionPlan is the instructor's session plan, as /scenarios and /follow show it.
type SessionPlan struct {
	Entries []PlanEntry
	// Total is the whole session on its clock ("1:28"); TotalMinutes the same in minutes.
	Total, TotalMinutes string
	// MayEdit offers the plan's forms (the instructor's, in workshop mode); TalkMax is the most
	// minutes their talk time takes.
	MayEdit bool
	TalkMax string
	// Addable are the lessons not in the plan, which MayEdit offers to add.
	Addable []PlanChoice
	// Followed is the title of the lesson the room follows ("" for none); Current the number
	// (from 1) of its entry, 0 when it is not in the plan.
	Followed string
	Current  int
}

// PlanEntry is one lesson of the plan: when it begins on the session's clock ("0:17") and how
// long it takes, its run at 1×, a reading of its steps and the talk after it (minutes).
type PlanEntry struct {
	N                int
	Name, URL, Title string
	Starts, Minutes  string
	// TalkMinutes is the time to talk the lesson over after its run, in whole minutes.
	TalkMinutes string
	// Current marks the lesson the room follows.
	Current bool
}

// PlanChoice is a lesson the instructor may add to the plan.
type PlanChoice struct{ Name, Title string }
