package ui

import (
	"slices"
	"time"

	"github.com/leaselab/leaselab/templates"
	"github.com/leaselab/leaselab/web/election"
)

// maxDecisions is how many election decisions the lease page lists.
const maxDecisions = 30

// SetDecisions sets where the lease page reads the Coordinated Leader Election controller's
// decisions (see Options.Decisions), once the controller runs; nil hides them.
func (u *UI) SetDecisions(f func(namespace, lease string) []templates.DecisionView) {
	u.decisions.Store(&f)
}

// ElectionDecisions adapts web/election's Controller.Decisions for SetDecisions.
func ElectionDecisions(list func(namespace, lease string) []election.Decision) func(namespace, lease string) []templates.DecisionView {
	return func(namespace, lease string) []templates.DecisionView {
		ds := list(namespace, lease)
		out := make([]templates.DecisionView, len(ds))
		for i, d := range ds {
			out[i] = templates.DecisionView{At: d.Time, Kind: string(d.Kind), Candidate: d.Candidate, Message: d.Message}
		}
		return out
	}
}

// decisionViews orders decisions newest first, keeps the latest maxDecisions and fills in
// their times for the page.
func decisionViews(ds []templates.DecisionView, now time.Time) []templates.DecisionView {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b templates.DecisionView) int { return b.At.Compare(a.At) })
	if len(out) > maxDecisions {
		out = out[:maxDecisions]
	}
	for i := range out {
		out[i].Time = clockTime(out[i].At)
		out[i].Age = ageText(out[i].At, now)
	}
	return out
}
