package election

import (
	"errors"
	"fmt"
	"strings"

	"github.com/leaselab/leaselab/web/lease/said"
)

// Said is a sentence of the controller (web/lease/said): the decision's Message and the log carry its
// English; the screens put a decision in their reader's language. Its arguments are strings (a
// name, a version, a duration, an API server's error, which read the same in every language)
// or sentences of their own.
type Said = said.Said

// KeyList is the key of a list ("a, b"; in Chinese "a、b"): its arguments are the items.
var KeyList = said.RegisterList("election.list", func(items []string) string { return strings.Join(items, ", ") })

var (
	same   = said.Same
	concat = said.Concat
)

// say is the sentence key with args; an argument that is not a Said is kept as its text, as
// the controller's formats take every argument with %s.
func say(key string, args ...any) Said {
	s := Said{Key: key, Args: make([]any, len(args))}
	for i, a := range args {
		if n, ok := a.(Said); ok {
			s.Args[i] = n
		} else {
			s.Args[i] = fmt.Sprint(a)
		}
	}
	return s
}

// list lists items.
func list(items []string) Said {
	args := make([]any, len(items))
	for i, it := range items {
		args[i] = it
	}
	return Said{Key: KeyList, Args: args}
}

// listSaid lists sentences.
func listSaid(items []Said) Said {
	args := make([]any, len(items))
	for i, it := range items {
		args[i] = it
	}
	return Said{Key: KeyList, Args: args}
}

// saidError is an error the controller words as a sentence.
type saidError struct{ said Said }

func (e *saidError) Error() string { return e.said.English() }

// Says is the error as a sentence.
func (e *saidError) Says() Said { return e.said }

// errorf is an error that says the sentence key with args.
func errorf(key string, args ...any) error { return &saidError{say(key, args...)} }

// ErrorSays is err as a sentence: its own when it words itself (the controller's errors, the
// strategy conflicts), else its text, which reads the same in every language.
func ErrorSays(err error) Said {
	var s interface{ Says() Said }
	if errors.As(err, &s) && error(s.(error)).Error() == err.Error() {
		return s.Says()
	}
	return same(err.Error())
}

// english holds the controller's sentences.
var english = said.Register(map[string]string{
	// Why a strategy.
	"election.strategyOnly":       "strategy %s: asked by the only candidate %s",
	"election.strategyEvery":      "strategy %s: asked by every candidate",
	"election.strategyTop":        "strategy %s: asked by %s, at the highest binary version %s",
	"election.strategyFirst":      "strategy %s: first choice of every candidate",
	"election.strategySupersedes": "strategy %s: it supersedes every other preferred strategy",
	// kube-apiserver's message for a strategy conflict, and the v1alpha1 disagreement.
	"election.conflictError":    "candidates %s, %s at same binary version but received differing strategies %s, %s",
	"election.disagree":         "candidates disagree on the strategy: %s; %s",
	"election.prefers":          "%s prefers %s",
	"election.contradict":       "their preferences contradict each other",
	"election.supersedesItself": "%s follows itself, so it supersedes itself",
	"election.noRoot":           "no strategy supersedes all others (%s)",
	// Why a candidate wins.
	"election.skippedEmulation": "%s (emulationVersion %s does not parse)",
	"election.skippedBinary":    "%s (binaryVersion %s does not parse)",
	"election.skipped":          "; skipped %s",
	"election.noParsable":       "no candidate has parsable versions%s",
	"election.pickedOnly":       "picked %s: the only candidate (emulation %s, binary %s)%s",
	"election.picked":           "picked %s: %s%s",
	"election.whyEmulation":     "emulation %s < %s of %s",
	"election.whyBinary":        "emulation %s like %s, binary %s < %s",
	"election.whyCreated":       "same versions as %s (emulation %s, binary %s), created earlier (%s < %s)",
	"election.whyName":          "same versions and creation time as %s (emulation %s, binary %s), first by name",
	// Why an election is needed, or not.
	"election.noLease":       "the lease does not exist",
	"election.noRenewTime":   "the lease has no renewTime",
	"election.noDuration":    "the lease has no leaseDurationSeconds",
	"election.expired":       "the lease expired %s ago",
	"election.noHolder":      "the lease has no holder",
	"election.notRenewed":    "%s has not renewed for %s",
	"election.leftToOther":   "%s is left to another controller",
	"election.holderBest":    "holder %s is already the best candidate: %s",
	"election.holderNotBest": "holder %s is not the best candidate: %s",
	"election.notHandled":    "%s is not handled here: the lease gets no holder",
	"election.noAvailable":   "no available candidates",
	"election.noSuitable":    "could not find a suitable candidate: %s",
	"election.noCandidates":  "no candidates",
	"election.noPreference":  "no candidate prefers any strategy",
	// What an update changes.
	"election.strategyWas":      "strategy %s (was %s)",
	"election.none":             "none",
	"election.assignedNoHolder": "assigned %s (the lease had no holder)",
	"election.assignedExpired":  "assigned %s (the lease of %s expired)",
	"election.setPreferred":     "set preferredHolder %s (holder %s must step down)",
	"election.asWanted":         "the lease already is as the election wants",
	"election.changes":          "%s, %s",
	"election.because":          "%s: %s",
	// The controller's decisions.
	"election.noElection":      "no election: %s",
	"election.conflict":        "strategy conflict: %s; the lease is left alone until the candidates agree",
	"election.pinged":          "pinged %s: election needed because %s",
	"election.stillWaiting":    "; still waiting for %s",
	"election.noAnswerFrom":    "; no answer from %s",
	"election.waiting":         "waiting up to %s for %s to answer the ping",
	"election.noneAnswered":    "no candidates answered: %s did not answer the ping within %s",
	"election.created":         "created the lease with holder %s: %s",
	"election.createdStrategy": "created the lease with strategy %s and no holder: %s",
	"election.deleted":         "deleted candidate %s: %s",
	"election.gcNoRenewTime":   "it has no renewTime",
	"election.gcLastRenewed":   "it last renewed %s ago (more than %s)",
	"election.errPing":         "ping: %s",
	"election.retryPing":       "ping met a newer version, and is tried again: %s",
	"election.errCreate":       "create lease: %s",
	"election.errGet":          "get lease: %s",
	"election.errUpdate":       "update lease: %s",
})
