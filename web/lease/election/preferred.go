package election

import (
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// PreferredStrategies is one candidate's ordered strategy list, as LeaseCandidate v1alpha1
// (Kubernetes 1.31) declared it in spec.preferredStrategies.
type PreferredStrategies struct {
	Candidate  string
	Strategies []coordinationv1.CoordinatedLeaseStrategy
}

// StrategyDisagreementError reports v1alpha1 candidates whose preference lists cannot be merged
// into one order: the Lease is left alone until they are fixed.
type StrategyDisagreementError struct {
	Lists []PreferredStrategies
	// Roots are the strategies no list puts below another, when there are several; empty for a
	// cycle.
	Roots []coordinationv1.CoordinatedLeaseStrategy
	// Repeated is a strategy some list names twice in a row: 1.31 read that as the strategy
	// superseding itself, a cycle.
	Repeated coordinationv1.CoordinatedLeaseStrategy
}

func (e *StrategyDisagreementError) Error() string { return e.Says().English() }

// Says is the disagreement as a sentence.
func (e *StrategyDisagreementError) Says() Said {
	var lists []Said
	for _, l := range e.Lists {
		lists = append(lists, say("election.prefers", l.Candidate, formatStrategies(l.Strategies)))
	}
	why := say("election.contradict")
	switch {
	case e.Repeated != "":
		why = say("election.supersedesItself", e.Repeated)
	case len(e.Roots) > 0:
		why = say("election.noRoot", formatStrategies(e.Roots))
	}
	return say("election.disagree", listSaid(lists), why)
}

func formatStrategies(s []coordinationv1.CoordinatedLeaseStrategy) string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// ResolvePreferredStrategies settles the strategy of v1alpha1 candidates by the rules of that
// version: each list orders strategies by preference, every earlier entry superseding the later
// ones, and the lists are merged into one order, whose first strategy is used. So when every list
// starts with X, X is used; [Y, X] against [X] gives Y; [X, Y] against [Y, X] is a user error,
// as are lists with no common first strategy ([X] against [Y]): it returns a
// *StrategyDisagreementError and the Lease is left alone, and so is a list that names a strategy
// twice in a row ([X, X]), which 1.31 took for X superseding itself. Empty lists take no part;
// with no strategy at all it returns an error.
func ResolvePreferredStrategies(lists []PreferredStrategies) (StrategyChoice, error) {
	// below[a] holds the strategies some list puts right after a.
	below := map[coordinationv1.CoordinatedLeaseStrategy][]coordinationv1.CoordinatedLeaseStrategy{}
	var used []PreferredStrategies
	var repeated coordinationv1.CoordinatedLeaseStrategy
	for _, l := range lists {
		if len(l.Strategies) == 0 {
			continue
		}
		used = append(used, l)
		for i, s := range l.Strategies {
			if _, ok := below[s]; !ok {
				below[s] = nil
			}
			if i+1 < len(l.Strategies) && l.Strategies[i+1] == s {
				repeated = s
			}
			if i+1 < len(l.Strategies) && !slices.Contains(below[s], l.Strategies[i+1]) {
				below[s] = append(below[s], l.Strategies[i+1])
			}
		}
	}
	if len(below) == 0 {
		return StrategyChoice{}, errorf("election.noPreference")
	}
	slices.SortFunc(used, func(a, b PreferredStrategies) int { return strings.Compare(a.Candidate, b.Candidate) })
	if repeated != "" {
		return StrategyChoice{}, &StrategyDisagreementError{Lists: used, Repeated: repeated}
	}

	// Kahn's topological sort: a valid order has exactly one root, and reaches every strategy.
	indegree := map[coordinationv1.CoordinatedLeaseStrategy]int{}
	for s, next := range below {
		indegree[s] += 0
		for _, n := range next {
			indegree[n]++
		}
	}
	var roots []coordinationv1.CoordinatedLeaseStrategy
	for s, d := range indegree {
		if d == 0 {
			roots = append(roots, s)
		}
	}
	slices.Sort(roots)
	if len(roots) != 1 {
		err := &StrategyDisagreementError{Lists: used}
		if len(roots) > 1 {
			err.Roots = roots
		}
		return StrategyChoice{}, err
	}
	queue, seen := []coordinationv1.CoordinatedLeaseStrategy{roots[0]}, 0
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		seen++
		for _, n := range below[s] {
			if indegree[n]--; indegree[n] == 0 {
				queue = append(queue, n)
			}
		}
	}
	if seen != len(indegree) {
		return StrategyChoice{}, &StrategyDisagreementError{Lists: used}
	}
	s := roots[0]
	firsts := true
	for _, l := range used {
		firsts = firsts && l.Strategies[0] == s
	}
	if firsts {
		return chose(s, say("election.strategyFirst", s)), nil
	}
	return chose(s, say("election.strategySupersedes", s)), nil
}
