package judge

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/leaselab/leaselab/wasm/said"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

// story is a recorded history of one lease: the server's changes and the candidates' views.
type story struct {
	h     history
	views []View
}

// hold has holder write the lease every 2 s from second from to second to (both included),
// for a lease of d seconds, its renewTime on a clock off by offset.
func (s *story) hold(holder string, from, to float64, d, transitions int32, offset time.Duration) {
	for t := from; t <= to; t += 2 {
		s.h.put(at(t), spec(holder, at(t).Add(offset), d, transitions))
	}
}

// release has the holder clear holderIdentity at second t.
func (s *story) release(t float64, d, transitions int32) {
	s.h.put(at(t), spec("", time.Time{}, d, transitions))
}

// see records views.
func (s *story) see(views ...View) { s.views = append(s.views, views...) }

// lead is a view of id believing it leads at second s.
func lead(s float64, id string, opts ...func(*View)) View {
	v := View{Identity: id, At: at(s), Leads: true, State: "leader"}
	for _, o := range opts {
		o(&v)
	}
	return v
}

// follow is a view of id not believing it leads at second s.
func follow(s float64, id string, opts ...func(*View)) View {
	v := View{Identity: id, At: at(s), State: "follower"}
	for _, o := range opts {
		o(&v)
	}
	return v
}

func paused(v *View)      { v.Faults.Paused, v.State = true, "paused" }
func partitioned(v *View) { v.Faults.Partition, v.State = tabproto.PartitionHang, "partitioned" }
func stopped(v *View)     { v.State = "stopped" }
func deadConn(v *View)    { v.Faults.DeadConnection = true }

func slow(d time.Duration) func(*View) {
	return func(v *View) { v.Faults.LatencyMs = d.Milliseconds() }
}
func offset(d time.Duration) func(*View) {
	return func(v *View) { v.Faults.ClockOffsetMs = d.Milliseconds() }
}
func rate(r float64) func(*View)      { return func(v *View) { v.Faults.ClockRate = r } }
func loss(percent int) func(*View)    { return func(v *View) { v.Faults.LossPercent = percent } }
func decided(kind string) func(*View) { return func(v *View) { v.Decision = kind } }
func holding(id string) func(*View)   { return func(v *View) { v.Holder = id } }

// sortedViews orders views by At, as the server hands them over.
func sortedViews(views []View) []View {
	views = slices.Clone(views)
	slices.SortStableFunc(views, func(a, b View) int { return a.At.Compare(b.At) })
	return views
}

// overlapString is a compact form of an overlap: "17-25.4 alice,bob stale alice paused".
func overlapString(o Overlap) string {
	end := "…"
	if !o.End.IsZero() {
		end = fmt.Sprint(o.End.Sub(t0).Seconds())
	}
	return fmt.Sprintf("%v-%s %s stale %s %s", o.Start.Sub(t0).Seconds(), end,
		strings.Join(o.Identities, ","), strings.Join(o.Stale, ","), o.Cause)
}

func TestOverlaps(t *testing.T) {
	strategy := coordinationv1.OldestEmulationVersion
	cle := func(s coordinationv1.LeaseSpec, preferred string) coordinationv1.LeaseSpec {
		s.Strategy = &strategy
		if preferred != "" {
			s.PreferredHolder = &preferred
		}
		return s
	}
	// handOver is a Coordinated Leader Election hand-over: alice holds, the election
	// controller prefers bob at 9, alice stops renewing, and once her record has run out the
	// controller names bob at 18.2.
	handOver := func(s *story) {
		for t := 0.0; t <= 8; t += 2 {
			s.h.put(at(t), cle(spec("alice", at(t), 10, 0), ""))
		}
		s.h.put(at(9), cle(spec("alice", at(8), 10, 0), "bob"))
		for t := 18.2; t <= 24.2; t += 2 {
			s.h.put(at(t), cle(spec("bob", at(t), 10, 1), ""))
		}
		s.see(lead(0.05, "alice"), follow(0.1, "bob"), lead(18.3, "bob"))
	}
	tests := []struct {
		name  string
		story func(s *story)
		now   float64
		want  []string
		// text holds what the first overlap's Text must contain.
		text []string
	}{
		{
			// alice leads, then pauses for longer than the lease (10 s from her write at 6).
			// bob acquires at 17. alice resumes at 25 still believing, tries to renew, sees
			// bob and steps down at 25.4.
			name: "GC pause",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 17, 29, 10, 1, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), lead(6.5, "alice", paused),
					lead(17.05, "bob"), lead(25, "alice"), follow(25.4, "alice", decided("lost")))
			},
			now:  30,
			want: []string{"17-25.4 alice,bob stale alice paused"},
			text: []string{"alice and bob both believed they led ns/x for 8.4 s (14:00:17.0 to 14:00:25.4): alice was paused and did not see bob take over."},
		},
		{
			// As above, and carol, whose clock runs ahead, believes she leads too from 21 to
			// 23: one interval of three believers, carol only for part of it.
			name: "GC pause, and a third believer who joins late",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 17, 29, 10, 1, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), follow(0.1, "carol"), lead(6.5, "alice", paused),
					lead(17.05, "bob"), lead(21, "carol", offset(30*time.Second)), follow(23, "carol", offset(30*time.Second)),
					lead(25, "alice"), follow(25.4, "alice", decided("lost")))
			},
			now:  30,
			want: []string{"17-25.4 alice,bob,carol stale alice,carol paused"},
			text: []string{"alice, bob and carol all believed they led ns/x for 8.4 s (14:00:17.0 to 14:00:25.4), carol only from 14:00:21.0: alice was paused"},
		},
		{
			// As above, but alice, running again at 25, reads that bob holds the lease and
			// still believes she leads until her renew deadline ends it at 32.
			name: "GC pause, then a stale leader that had seen the holder",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 17, 33, 10, 1, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), lead(6.5, "alice", paused),
					lead(17.05, "bob"), lead(25, "alice", holding("bob")), follow(32, "alice", decided("lost")))
			},
			now:  34,
			want: []string{"17-32 alice,bob stale alice paused"},
			text: []string{"alice and bob both believed they led ns/x for 15.0 s (14:00:17.0 to 14:00:32.0): alice was paused and did not see bob take over; " +
				"alice ran again by 14:00:25.0 and read that bob held the lease, yet went on believing it led for another 7.0 s."},
		},
		{
			// The GC pause of a lesson run at 2x: its writers count 10 s where the server
			// counts 5, and the lengths are told on their clock as on the server's.
			name: "GC pause at 2x",
			story: func(s *story) {
				s.h.scale = "2"
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 12, 29, 10, 1, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), lead(6.5, "alice", paused),
					lead(12.05, "bob"), lead(25, "alice", holding("bob")), follow(28.5, "alice", decided("lost")))
			},
			now:  30,
			want: []string{"12-28.5 alice,bob stale alice paused"},
			text: []string{"for 33.0 s of its candidates' clock (16.5 s of the server's)", "went on believing it led for another 7.0 s of its candidates' clock (3.5 s of the server's)"},
		},
		{
			// Two leaders frozen one after the other: alice pauses at 6.5, bob takes over at
			// 17 and pauses at 21, carol takes over at 31; alice and bob run again at 35 and
			// 36, each still believing, and each learns better 0.4 s later.
			name: "two GC pauses, one after the other",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 17, 20, 10, 1, 0)
				s.hold("carol", 31, 39, 10, 2, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), follow(0.1, "carol"), lead(6.5, "alice", paused),
					lead(17.05, "bob"), lead(21, "bob", paused), lead(31.05, "carol"),
					lead(35, "alice"), follow(35.4, "alice", decided("lost")), lead(36, "bob"), follow(36.4, "bob", decided("lost")))
			},
			now:  40,
			want: []string{"17-36.4 alice,bob,carol stale alice,bob paused"},
			text: []string{"alice was paused and did not see bob take over; and bob was paused and did not see carol take over."},
		},
		{
			// As above, but bob's report dates his belief 50 ms before the write that made
			// him the holder (a report's dating is approximate; the run's clocks may be fast):
			// he led only once that write succeeded, so no disagreement begins with alice as
			// the holder and bob missed carol's takeover, not alice's.
			name: "two GC pauses, the second leader's belief dated before its write",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 17, 20, 10, 1, 0)
				s.hold("carol", 31, 39, 10, 2, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), follow(0.1, "carol"), lead(6.5, "alice", paused),
					lead(16.95, "bob"), lead(21, "bob", paused), lead(30.9, "carol"),
					lead(35, "alice"), follow(35.4, "alice", decided("lost")), lead(36, "bob"), follow(36.4, "bob", decided("lost")))
			},
			now:  40,
			want: []string{"17-36.4 alice,bob,carol stale alice,bob paused"},
			text: []string{"alice was paused and did not see bob take over; and bob was paused and did not see carol take over."},
		},
		{
			// Someone with kubectl writes mallory, who is no candidate, into the record at 5,
			// while alice's hold runs to 14; alice learns of it when she renews at 6.
			name: "a writer that is not a candidate takes the lease over",
			story: func(s *story) {
				s.hold("alice", 0, 4, 10, 0, 0)
				s.h.put(at(5), spec("mallory", at(5), 10, 1))
				s.see(lead(0.05, "alice"), follow(6, "alice", decided("lost")))
			},
			now:  7,
			want: []string{"5-6 alice,mallory stale alice unknown"},
			text: []string{"alice believed it led ns/x for 1.0 s (14:00:05.0 to 14:00:06.0) while the record named mallory: " +
				"another writer, not a candidate (kubectl, say, or a program of its own), wrote mallory into the record before alice's hold ran out; alice sees it at its next renewal, yet, as client-go does, goes on leading until its renew deadline passes."},
		},
		{
			name: "GC pause, still lasting at now",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 17, 21, 10, 1, 0)
				s.see(lead(0.05, "alice"), lead(6.5, "alice", paused), lead(17.05, "bob"))
			},
			now:  22,
			want: []string{"17-… alice,bob stale alice paused"},
			text: []string{"for 5.0 s so far (since 14:00:17.0)", "alice", "bob take over"},
		},
		{
			// alice is partitioned (requests hang) from 7. Her renew round began at 8 with a
			// renewDeadline of 9.5 s of the 10 s lease, so she believes until 17.5; bob took
			// over at 16.2, once her write at 6 had run out.
			name: "partition",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 16.2, 20.2, 10, 1, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), lead(7, "alice", partitioned),
					lead(16.3, "bob"), follow(17.5, "alice", partitioned))
			},
			now:  21,
			want: []string{"16.2-17.5 alice,bob stale alice partitioned"},
			text: []string{"alice and bob both believed", "1.3 s", "alice was cut off from the server and did not see bob take over"},
		},
		{
			// alice's connection dies at 7 without a word; her elector waits for her renewal
			// until her client finds the connection dead at 37, long past her renew deadline,
			// while bob took over at 16.2.
			name: "dead connection",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 16.2, 36.2, 10, 1, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), lead(7, "alice", deadConn),
					lead(16.3, "bob"), follow(37, "alice"))
			},
			now:  38,
			want: []string{"16.2-37 alice,bob stale alice dead-connection"},
			text: []string{"alice's connection to the server had died without a word", "did not see bob take over"},
		},
		{
			// alice's network adds 3 s to each round trip: she learns at 19.5 that bob took
			// over at 16.2.
			name: "slow network",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 16.2, 20.2, 10, 1, 0)
				s.see(lead(0.05, "alice"), lead(5, "alice", slow(3*time.Second)),
					lead(16.3, "bob"), follow(19.5, "alice", slow(3*time.Second)))
			},
			now:  21,
			want: []string{"16.2-19.5 alice,bob stale alice slow-network"},
			text: []string{"alice and bob", "3.3 s", "alice's network added 3.0 s to each round trip, so it saw bob take over late"},
		},
		{
			// alice's network loses half of her requests from 5: her renewals hang until her
			// renew round's deadline cuts them off, and she believes until 17.5, while bob
			// took over at 16.2.
			name: "packet loss",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 16.2, 20.2, 10, 1, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), lead(5, "alice", loss(50)),
					lead(16.3, "bob"), follow(17.5, "alice", loss(50), decided("lost")))
			},
			now:  21,
			want: []string{"16.2-17.5 alice,bob stale alice loss"},
			text: []string{"alice and bob both believed", "1.3 s", "alice's network lost 50% of its requests, each hanging until it timed out, so it saw bob take over late"},
		},
		{
			// Loss on a slow network: the lost requests come before the slow ones; a partition
			// before both.
			name: "packet loss on a slow network",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 16.2, 20.2, 10, 1, 0)
				s.h.put(at(30), spec("carol", at(30), 10, 2))
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), lead(5, "alice", loss(10), slow(3*time.Second)),
					lead(16.3, "bob"), follow(19.5, "alice", loss(90), slow(3*time.Second)),
					lead(26, "bob", partitioned, loss(30)), lead(30.1, "carol"), follow(33, "bob", partitioned, loss(30), decided("lost")))
			},
			now:  34,
			want: []string{"16.2-19.5 alice,bob stale alice loss", "30-33 bob,carol stale bob partitioned"},
			text: []string{"alice's network lost 90% of its requests"},
		},
		{
			// alice's clock runs 30 s behind, so her renewTime looks 30 s old to the election
			// controller, which reads the record's times: it names bob at 6.5 while alice is
			// renewing. alice believes until her renew deadline, 7 s after her round began at 8.
			name: "clock behind: the holder's record reads as run out",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, -30*time.Second)
				s.hold("bob", 6.5, 14.5, 10, 1, 0)
				s.see(lead(0.05, "alice", offset(-30*time.Second)), lead(6.6, "bob"),
					follow(15, "alice", offset(-30*time.Second), decided("lost")))
			},
			now:  16,
			want: []string{"6.5-15 alice,bob stale alice clock-offset"},
			text: []string{"alice and bob both believed", "8.5 s", "alice's clock ran 30.0 s behind the server's"},
		},
		{
			// bob's clock runs 30 s ahead. Judging alice's renewTime by it, her hold has run
			// out, and bob starts leading at 5 before its own write lands; the write fails
			// on a conflict at 7 and it steps back.
			name: "clock ahead: a candidate believes while another holds",
			story: func(s *story) {
				s.hold("alice", 0, 12, 10, 0, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob", offset(30*time.Second)),
					lead(5, "bob", offset(30*time.Second)), follow(7, "bob", offset(30*time.Second), decided("conflict")))
			},
			now:  13,
			want: []string{"5-7 alice,bob stale bob clock-offset"},
			text: []string{"alice and bob both believed", "2.0 s", "bob's clock ran 30.0 s ahead of the server's"},
		},
		{
			// alice's clock runs at half speed; partitioned at 6, she counts her 7 s renew
			// deadline on it (14 real seconds) while bob takes the lease at 16 real seconds.
			// The partition alone would have been safe: the slow clock is the cause.
			name: "clock slow: the renew deadline outlasts the lease",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 16, 18, 10, 1, 0)
				s.see(lead(0.05, "alice", rate(0.5)), lead(6, "alice", rate(0.5), partitioned),
					lead(16.1, "bob"), follow(20, "alice", rate(0.5), partitioned, decided("lost")))
			},
			now:  21,
			want: []string{"16-20 alice,bob stale alice clock-drift"},
			text: []string{"alice and bob both believed", "4.0 s", "alice's clock ran slow (0.50× the real rate)"},
		},
		{
			// The same without the partition: alice's slow clock alone is the cause.
			name: "clock slow, no other fault",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 16, 18, 10, 1, 0)
				s.see(lead(0.05, "alice", rate(0.5)), lead(16.1, "bob"), follow(20, "alice", rate(0.5), decided("lost")))
			},
			now:  21,
			want: []string{"16-20 alice,bob stale alice clock-drift"},
			text: []string{"alice and bob both believed", "alice's clock ran slow (0.50× the real rate)"},
		},
		{
			// A leader whose clock runs 8 s behind keeps renewing: its renewTime looks old,
			// but the record names it all along.
			name: "clock behind, still renewing",
			story: func(s *story) {
				s.hold("alice", 0, 28, 10, 0, -8*time.Second)
				s.see(lead(0.05, "alice", offset(-8*time.Second)), follow(0.1, "bob"))
			},
			now:  30,
			want: nil,
		},
		{
			// alice's tab is closed at 7: its last view says stopped, with the role it had.
			// bob acquires after her lease ran out.
			name: "crash",
			story: func(s *story) {
				s.hold("alice", 0, 6, 10, 0, 0)
				s.hold("bob", 16.5, 20.5, 10, 1, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), lead(7, "alice", stopped), lead(16.6, "bob"))
			},
			now:  21,
			want: nil,
		},
		{
			// alice releases at 10; her report of stepping down reaches the server 100 ms
			// after the write. bob acquires 2 s later.
			name: "clean release",
			story: func(s *story) {
				s.hold("alice", 0, 8, 10, 0, 0)
				s.release(10, 10, 0)
				s.hold("bob", 12, 16, 10, 1, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), follow(10.1, "alice", decided("released")), lead(12.05, "bob"))
			},
			now:  17,
			want: nil,
		},
		{
			// alice releases at 10 (ReleaseOnCancel) while her work goes on for 3 s more.
			name: "release while still working",
			story: func(s *story) {
				s.hold("alice", 0, 8, 10, 0, 0)
				s.release(10, 10, 0)
				s.hold("bob", 14, 16, 10, 1, 0)
				s.see(lead(0.05, "alice"), follow(0.1, "bob"), follow(13, "alice"), lead(14.05, "bob"))
			},
			now:  17,
			want: []string{"10-13 alice stale alice released"},
			text: []string{"alice believed it led ns/x for 3.0 s (14:00:10.0 to 14:00:13.0) after releasing it: the record named nobody."},
		},
		{
			name: "election controller hand-over",
			story: func(s *story) {
				handOver(s)
				s.see(follow(9.5, "alice", decided("stepped-down")))
			},
			now:  25,
			want: nil,
		},
		{
			name: "election controller hand-over, the old holder still believing",
			story: func(s *story) {
				handOver(s)
				s.see(follow(20.2, "alice"))
			},
			now:  25,
			want: []string{"18.2-20.2 alice,bob stale alice unknown"},
			text: []string{"alice and bob both believed", "2.0 s", "nothing alice recorded explains it"},
		},
		{
			// dave (a writer that reports no views) takes the lease over at 5; alice, who
			// held it, is partitioned and believes until 9, and bob and carol believe they
			// lead for a while too.
			name: "three believers, the record naming a fourth",
			story: func(s *story) {
				s.hold("alice", 0, 4, 10, 0, 0)
				s.hold("dave", 5, 11, 10, 1, 0)
				s.see(lead(0.05, "alice"), lead(4.5, "alice", partitioned), lead(5.5, "bob"), lead(6, "carol"),
					follow(8, "bob"), follow(8, "carol"), follow(9, "alice", partitioned))
			},
			now:  12,
			want: []string{"5-9 alice,bob,carol,dave stale alice,bob,carol partitioned"},
			text: []string{"alice, bob and carol all believed they led ns/x for 4.0 s", "while the record named dave", "did not see dave take over"},
		},
		{
			// bob's belief flickers on late reports: two disagreements 100 ms apart are one.
			name: "flicker within the grace is one overlap",
			story: func(s *story) {
				s.hold("alice", 0, 10, 10, 0, 0)
				s.see(lead(0.05, "alice"), lead(5, "bob"), follow(5.2, "bob"), lead(5.3, "bob"), follow(5.5, "bob"))
			},
			now:  11,
			want: []string{"5-5.5 alice,bob stale bob unknown"},
			text: []string{"0.5 s"},
		},
		{
			name: "a deletion leaves no holder",
			story: func(s *story) {
				s.hold("alice", 0, 4, 10, 0, 0)
				s.h.changes = append(s.h.changes, deleted(5))
				s.see(lead(0.05, "alice"), follow(7, "alice"))
			},
			now:  8,
			want: []string{"5-7 alice stale alice deleted"},
			text: []string{"alice believed it led ns/x for 2.0 s (14:00:05.0 to 14:00:07.0) after the lease was deleted: " +
				"the lease was deleted while alice held it, and a holder finds that out only at its next renewal."},
		},
		{
			// As client-go does, alice's next renewal finds no lease and creates it again;
			// her clock had been set to run fast, which is not why she believed.
			name: "a deletion under the holder, then its renewal",
			story: func(s *story) {
				s.hold("alice", 0, 4, 10, 0, 0)
				s.h.changes = append(s.h.changes, deleted(5))
				s.hold("alice", 6.5, 8.5, 10, 0, 0)
				s.see(lead(0.05, "alice", func(v *View) { v.Faults.ClockRate = 1.25 }))
			},
			now:  9,
			want: []string{"5-6.5 alice stale alice deleted"},
		},
		{
			// The lease is deleted while bob holds it; alice, paused from before, still believes.
			name: "a deletion under another holder",
			story: func(s *story) {
				s.hold("alice", 0, 4, 10, 0, 0)
				s.hold("bob", 15, 17, 10, 1, 0)
				s.h.changes = append(s.h.changes, deleted(18))
				s.see(lead(0.05, "alice"), lead(4.5, "alice", paused), lead(15.05, "bob"), follow(18.1, "bob"))
			},
			now:  19,
			want: []string{"15-… alice,bob stale alice,bob paused"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s story
			tt.story(&s)
			views := sortedViews(s.views)
			got := Overlaps("ns/x", s.h.changes, views, at(tt.now))
			var gs []string
			for _, o := range got {
				gs = append(gs, overlapString(o))
			}
			if strings.Join(gs, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("overlaps:\n%s\nwant:\n%s", strings.Join(gs, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, w := range tt.text {
				if !strings.Contains(got[0].Text, w) {
					t.Errorf("text %q does not say %q", got[0].Text, w)
				}
			}
			for _, o := range got {
				if o.Advice == "" || strings.Contains(o.Advice+o.AdviceSays.In(said.ZH), "%!") || o.Cause != CauseUnknown && o.Advice == overlapAdviceSays(CauseUnknown).English() {
					t.Errorf("advice for %s: %q", o.Cause, o.Advice)
				}
				for _, id := range o.Believers {
					if !strings.Contains(o.Text, id) {
						t.Errorf("text %q does not name believer %s", o.Text, id)
					}
				}
			}
			// Views handed over identity by identity, not by time, give the same verdict.
			byIdentity := slices.Clone(views)
			slices.SortStableFunc(byIdentity, func(a, b View) int { return cmp.Compare(a.Identity, b.Identity) })
			again := Overlaps("ns/x", s.h.changes, byIdentity, at(tt.now))
			if !slices.EqualFunc(got, again, func(a, b Overlap) bool { return overlapString(a) == overlapString(b) && a.Text == b.Text }) {
				t.Errorf("with views by identity: %v", again)
			}
		})
	}
}

// TestOverlapsHolder checks the fields the compact form leaves out.
func TestOverlapsHolder(t *testing.T) {
	var s story
	s.hold("alice", 0, 6, 10, 0, 0)
	s.hold("bob", 17, 29, 10, 1, 0)
	s.see(lead(0.05, "alice"), lead(6.5, "alice", paused), lead(17.05, "bob"), follow(25.4, "alice"))
	got := Overlaps("ns/x", s.h.changes, sortedViews(s.views), at(30))
	if len(got) != 1 {
		t.Fatalf("%d overlaps, want 1", len(got))
	}
	o := got[0]
	if o.Holder != "bob" || strings.Join(o.Believers, ",") != "alice,bob" {
		t.Errorf("holder %q, believers %v; want bob and alice,bob", o.Holder, o.Believers)
	}
	if l := o.Length(at(100)); l != 8400*time.Millisecond {
		t.Errorf("length %v, want 8.4s", l)
	}
	if !strings.Contains(o.Advice, "fencing token") || !strings.Contains(o.Advice, "os.Exit") {
		t.Errorf("advice for a pause: %q", o.Advice)
	}
	// Up to a moment before bob acquired, nothing disagreed; a moment after, less than the
	// grace has passed.
	if got := Overlaps("ns/x", s.h.changes, sortedViews(s.views), at(17.1)); len(got) != 0 {
		t.Errorf("100 ms into it: %v", got)
	}
}

// TestOverlapsLongIdentity: the text cuts identities as the screens do.
func TestOverlapsLongIdentity(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	var s story
	s.hold(long, 0, 10, 10, 0, 0)
	s.see(lead(0.05, long), lead(3, "bob"), follow(5, "bob"))
	got := Overlaps("ns/x", s.h.changes, s.views, at(11))
	if len(got) != 1 || got[0].Identities[0] != "bob" || got[0].Identities[1] != long {
		t.Fatalf("overlaps %d", len(got))
	}
	if text := got[0].Text; len(text) > 4*MaxShown || !strings.Contains(text, Shown(long)) {
		t.Errorf("text of %d bytes: %.200q", len(text), text)
	}
}

func TestOverlapsBetween(t *testing.T) {
	overlaps := []Overlap{
		{Start: at(1), End: at(2)},
		{Start: at(5), End: at(8)},
		{Start: at(20)}, // still lasting
	}
	for _, tc := range []struct {
		from, to float64
		want     []float64 // starts
	}{
		{0, 0.5, nil},
		{0, 1, []float64{1}},
		{2, 5, []float64{1, 5}},
		{6, 7, []float64{5}},
		{9, 19, nil},
		{9, 30, []float64{20}},
		{100, 200, []float64{20}},
	} {
		var starts []float64
		for _, o := range OverlapsBetween(overlaps, at(tc.from), at(tc.to)) {
			starts = append(starts, o.Start.Sub(t0).Seconds())
		}
		if !slices.Equal(starts, tc.want) {
			t.Errorf("[%v, %v]: %v, want %v", tc.from, tc.to, starts, tc.want)
		}
	}
}

// BenchmarkOverlaps judges 10,000 changes and 2,000 views: five candidates take turns in
// terms of twenty writes, each reporting when it starts to lead, the one before stepping down
// 100 ms into the next term (every fourth time 2 s in, an overlap), and two more reporting
// that they follow.
func BenchmarkOverlaps(b *testing.B) {
	ids := []string{"alice", "bob", "carol", "dave", "erin"}
	var changes []Change
	var views []View
	var prev *Change
	for i := range 10_000 {
		s := float64(i) * 0.5
		term := i / 20
		holder := ids[term%len(ids)]
		c := ChangeOf(&coordinationv1.Lease{Spec: spec(holder, at(s), 10, int32(term))}, int64(i+1), at(s), prev)
		changes = append(changes, c)
		prev = &changes[len(changes)-1]
		if i%20 != 0 {
			continue
		}
		views = append(views, lead(s+0.05, holder))
		if term > 0 {
			late := 0.1
			if term%4 == 0 {
				late = 2
			}
			views = append(views, follow(s+late, ids[(term-1)%len(ids)]))
		}
		views = append(views, follow(s+3, ids[(term+2)%len(ids)]), follow(s+4, ids[(term+3)%len(ids)]))
	}
	views = sortedViews(views)
	now := at(5000)
	if got := len(Overlaps("ns/x", changes, views, now)); got != 124 {
		b.Fatalf("%d overlaps, want 124", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		Overlaps("ns/x", changes, views, now)
	}
}

// TestDisagreeing reads each candidate's latest view: a believer the holder does not name
// disagrees; a stopped one does not, nor one that has since stepped back.
func TestDisagreeing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		views  []View
		holder string
		want   bool
	}{
		{"the holder leads", []View{{Identity: "a", Leads: true}}, "a", false},
		{"another believes", []View{{Identity: "a", Leads: true}, {Identity: "b", Leads: true}}, "a", true},
		{"it stepped back since", []View{{Identity: "b", Leads: true}, {Identity: "b"}}, "a", false},
		{"stopped", []View{{Identity: "b", Leads: true, State: "stopped"}}, "a", false},
		{"nobody holds it", []View{{Identity: "b", Leads: true}}, "", true},
	} {
		if got := Disagreeing(tc.views, tc.holder); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSplitBrainBegunNamesAnotherThanTheHolder: the line that opens a split brain names a
// believer the record did not name then, never the holder of that moment (Stale spans the
// whole interval: alice, holding at the start, was stale once bob took over).
func TestSplitBrainBegunNamesAnotherThanTheHolder(t *testing.T) {
	o := Overlap{Identities: []string{"alice", "bob", "carol"}, Believers: []string{"alice", "carol"}, Stale: []string{"alice", "carol"},
		Holder: "alice", Start: t0, End: t0.Add(5 * time.Second)}
	lines := TellOverlaps("demo", []Overlap{o})
	if len(lines) == 0 || lines[0].Text != "split brain: carol believes it leads demo while alice holds it" {
		t.Fatalf("the opening line: %+v", lines)
	}
}

// TestSplitBrainBegunAfterDeletion: a split brain that begins with the lease deleted under its
// holder says so, rather than that the record names nobody, as after a release.
func TestSplitBrainBegunAfterDeletion(t *testing.T) {
	var s story
	s.hold("alice", 0, 4, 10, 0, 0)
	s.h.changes = append(s.h.changes, deleted(5))
	s.see(lead(0.05, "alice"), follow(7, "alice"))
	lines := TellOverlaps("ns/x", Overlaps("ns/x", s.h.changes, sortedViews(s.views), at(8)))
	if len(lines) == 0 || lines[0].Text != "split brain: alice believes it leads ns/x, which was deleted" {
		t.Fatalf("the opening line: %+v", lines)
	}
}

// TestClockInLocalTime: a sentence says its times in the server's local time, as the screens'
// other times and a browser on the same machine show them.
func TestClockInLocalTime(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.FixedZone("UTC+8", 8*3600)
	if got := clock(t0.Add(42886 * time.Millisecond)); got != "22:00:42.9" {
		t.Errorf("14:00:42.886 UTC in UTC+8: %s, want 22:00:42.9", got)
	}
}

// TestClockRounds: an instant in a sentence is rounded to its tenth, as the screens' times
// beside it read: 14:00:42.886 is .9, not .8.
func TestClockRounds(t *testing.T) {
	for ms, want := range map[int]string{42886: "14:00:42.9", 42849: "14:00:42.8", 59960: "14:01:00.0"} {
		if got := clock(t0.Add(time.Duration(ms) * time.Millisecond)); got != want {
			t.Errorf("%d ms: %s, want %s", ms, got, want)
		}
	}
}

// TestLongSplitBrainInMinutes: a split brain of 100 s or more is told in minutes and seconds.
func TestLongSplitBrainInMinutes(t *testing.T) {
	var s story
	s.hold("alice", 0, 4, 10, 0, 0)
	s.h.changes = append(s.h.changes, deleted(5))
	s.see(lead(0.05, "alice"), follow(116.3, "alice"))
	o := Overlaps("ns/x", s.h.changes, sortedViews(s.views), at(120))
	if len(o) != 1 || !strings.Contains(o[0].Text, "for 1 min 51 s (14:00:05.0 to 14:01:56.3)") {
		t.Fatalf("overlaps: %+v", o)
	}
}

// TestEveryBelieverHasItsCause: three believe they lead at once: bob holds, alice was paused and
// carol's clock ran fast. The sentence gives both stale believers their causes, not only the
// first one's.
func TestEveryBelieverHasItsCause(t *testing.T) {
	var s story
	s.hold("alice", 0, 6, 10, 0, 0)
	s.hold("bob", 17, 29, 10, 1, 0)
	s.see(lead(0.05, "alice"), lead(6.5, "alice", paused), follow(0.5, "carol", rate(2)),
		lead(17.05, "bob"), lead(18, "carol", rate(2), holding("bob")), follow(24, "carol", rate(2)), follow(25.4, "alice"))
	got := Overlaps("ns/x", s.h.changes, sortedViews(s.views), at(30))
	if len(got) != 1 || strings.Join(got[0].Stale, ",") != "alice,carol" {
		t.Fatalf("overlaps %v", got)
	}
	text := got[0].Text
	for _, want := range []string{"alice was paused", "carol's clock ran fast"} {
		if !strings.Contains(text, want) {
			t.Errorf("the sentence does not say %q: %s", want, text)
		}
	}
}

// TestEveryCauseNamed: erin, whose clock runs at 2x, takes the lease 4 s before dave's ran out,
// while dave, cut off, still believes he leads: the sentence names both causes, dave's
// partition and erin's fast clock.
func TestEveryCauseNamed(t *testing.T) {
	var s story
	s.hold("dave", 0, 6, 10, 0, 0) // his lease runs out at 16 s
	s.hold("erin", 12, 20, 10, 1, 0)
	s.see(lead(0.05, "dave"), follow(0.5, "erin", rate(2)), lead(7, "dave", partitioned),
		lead(12.05, "erin", rate(2)), follow(17, "dave", partitioned))
	got := Overlaps("ns/x", s.h.changes, sortedViews(s.views), at(30))
	if len(got) != 1 {
		t.Fatalf("overlaps %v", got)
	}
	text := got[0].Text
	for _, want := range []string{"dave was cut off", "erin took the lease 4.0 s before dave's ran out, its clock running fast (2.00× the real rate)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the sentence does not say %q: %s", want, text)
		}
	}
}
