package scenario

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leaselab/leaselab/web/judge"
	"github.com/leaselab/leaselab/web/leasetest"
)

// readerPause is how long after a step is done the tests take Next.
const readerPause = 250 * time.Millisecond

// play runs sc to its end inside the test's bubble, taking Next as soon as each step is done,
// and returns the run (stopped) and its events.
func play(t *testing.T, sc *Scenario, seed uint64) (*Run, []Event) {
	t.Helper()
	srv := leasetest.Start(t)
	cfg := srv.Config()
	var run *Run
	opts := Options{
		Transport: cfg.Transport,
		BaseURL:   cfg.Host,
		Namespace: "scenario-" + sc.Name,
		Seed:      seed,
		Overlaps: func(_ context.Context, ns, lease string, views []judge.View) ([]judge.Overlap, error) {
			return srv.Overlaps(ns, lease, views...), nil
		},
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
	return run, run.Events()
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
