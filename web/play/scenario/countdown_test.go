package scenario

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/web/leasetest"
)

// countdown is what a lesson's page counts down for a member, in ms of the member's clock:
// its renew deadline while it leads, else the lease's expiry as it observed it (web/play/ui's
// memberView); false when it shows none.
func countdown(s candidate.Snapshot) (int64, bool) {
	switch {
	case s.State == candidate.StateStopped:
		return 0, false
	case s.Role == candidate.RoleLeader && !s.RenewDeadline.IsZero():
		if s.Faults.Paused && !s.RenewRound {
			return 0, false // the page holds it full while paused between rounds
		}
		return s.RenewDeadline.Sub(s.Now).Milliseconds(), true
	case !s.ObservedExpiry.IsZero():
		return s.ObservedExpiry.Sub(s.Now).Milliseconds(), true
	}
	return 0, false
}

// TestLessonCountdownsStayTrue: a lesson's page counts its members' countdowns down from the
// figures of the run's last change notice. Throughout network-partition, every 100 ms, what
// the page would show that way is within a second of each member's live figure: every change
// of a member's countdown (a follower's new observation of the lease too) is noticed.
func TestLessonCountdownsStayTrue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := Find("network-partition")
		srv := leasetest.Start(t)
		cfg := srv.Config()
		run, err := Start(t.Context(), sc, Options{Transport: cfg.Transport, BaseURL: cfg.Host, Namespace: "countdowns", Seed: 3, Speed: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer run.Stop()
		changed, unsubscribe := run.Subscribe()
		defer unsubscribe()

		type shown struct {
			left int64
			at   time.Time
		}
		page := map[string]shown{}
		notice := func() {
			now := time.Now()
			clear(page)
			for _, s := range run.State().Members {
				if left, ok := countdown(s.Snapshot); ok {
					page[s.Identity] = shown{left, now}
				}
			}
		}
		notice()
		limit := time.Now().Add(10 * time.Minute)
		checks := 0
		for time.Now().Before(limit) {
			st := run.State()
			if st.Step == len(sc.Steps)-1 && st.Ready {
				break
			}
			select {
			case <-changed:
				notice()
			default:
			}
			now := time.Now()
			for _, s := range st.Members {
				live, ok := countdown(s.Snapshot)
				p, onPage := page[s.Identity]
				if !ok || !onPage {
					continue
				}
				rate := 1.0
				if s.Faults.ClockRate > 0 {
					rate = s.Faults.ClockRate
				}
				projected := p.left - int64(float64(now.Sub(p.at).Milliseconds())*rate)
				if d := projected - live; d > 1000 || d < -1000 {
					t.Fatalf("step %d: the page shows %s's countdown at %d ms, its live figure is %d ms", st.Step+1, s.Identity, projected, live)
				}
				checks++
			}
			if st.Ready && st.Step+1 < len(sc.Steps) {
				time.Sleep(readerPause)
				nextAndReveal(t, run)
				continue
			}
			time.Sleep(100 * time.Millisecond)
		}
		if checks < 100 {
			t.Fatalf("only %d countdowns compared", checks)
		}
		t.Logf("%d countdowns compared", checks)
	})
}
