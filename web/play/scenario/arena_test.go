package scenario

import (
	"regexp"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// TestArenaTellsWhatTheRoomDid: played by its simulated room, the room lesson keeps its claims
// (play checks them), and each step's narration ends with what the room's tabs did, by name:
// who froze and who took over how long after, how long the woken leader believed it led, whom
// the cut took and what its leader did, and what the whole room came to; in Chinese too, with
// no English sentence left.
func TestArenaTellsWhatTheRoomDid(t *testing.T) {
	sc := Find("arena")
	synctest.Test(t, func(t *testing.T) {
		run, evs := play(t, sc, 1)
		notes := map[string]string{}
		run.mu.Lock()
		for k, v := range run.notes {
			notes[k] = v
		}
		run.mu.Unlock()
		frozen, cut, leader := notes[notedFrozen], notes[notedCut], notes[notedCutLeader]
		if frozen == "" || leader == "" || !strings.Contains(cut, leader) || len(strings.Split(cut, ",")) != AThird(len(sc.Cast)) {
			t.Fatalf("noted %v; events:\n%s", notes, eventList(evs))
		}
		successor, _, _ := holderAfter(run.worldLocked(run.clock.Now()), run.started, frozen)
		for i, want := range []*regexp.Regexp{
			regexp.MustCompile(`Tabs on the lease: \d; the leader: ` + frozen + `\.$`),
			regexp.MustCompile(successor + ` took over \d+\.\d s after ` + frozen + ` froze\.$`),
			regexp.MustCompile(frozen + ` woke believing it led, and stepped down \d+\.\d s later; at most 2 tabs believed they led at once\.$`),
			regexp.MustCompile(`2 of 5 tabs lost their network: \w+ and \w+\. The leader ` + leader + ` stepped down \d+\.\d s after the cut, and \w+ took over \d+\.\d s after it\.$`),
			regexp.MustCompile(`Tabs that took part: 5; changes of holder: 2; split brains the checker found: 1\.$`),
		} {
			said := RoomOf(run).Narration(i)
			if !want.MatchString(said.En) {
				t.Errorf("step %d says:\n%s\nwant it to end with %s", i+1, said.En, want)
			}
			if !strings.HasPrefix(said.En, sc.Steps[i].Say.En) || !strings.HasPrefix(said.Zh, sc.Steps[i].Say.Zh) || said.Zh == sc.Steps[i].Say.Zh {
				t.Errorf("step %d: the room's part is not after the narration in both languages: %+v", i+1, said)
			}
			if m := englishRun.FindString(strings.TrimPrefix(said.Zh, sc.Steps[i].Say.Zh)); m != "" {
				t.Errorf("step %d: English left in the Chinese: %q in %q", i+1, m, said.Zh)
			}
		}
	})
}

// TestArenaHealEndsWhateverTheRoomDid: the heal step ends once one tab leads and the record
// names it, and each cut-off tab still in the room follows, has been stopped by its
// participant, or is that leader; never while a cut-off tab is still partitioned.
func TestArenaHealEndsWhateverTheRoomDid(t *testing.T) {
	until := arenaHeal().Until
	follower := candidate.Snapshot{State: candidate.StateFollower, Role: candidate.RoleFollower}
	leader := candidate.Snapshot{State: candidate.StateLeader, Role: candidate.RoleLeader}
	stopped := candidate.Snapshot{State: candidate.StateStopped}
	cutOff := candidate.Snapshot{State: candidate.StatePartitioned, Role: candidate.RoleFollower}
	for _, c := range []struct {
		name    string
		holder  string
		members map[string]candidate.Snapshot
		want    bool
	}{
		{"the cut-off tabs follow", "dan", map[string]candidate.Snapshot{"dan": leader, "bob": follower, "carol": follower}, true},
		{"one is still cut off", "dan", map[string]candidate.Snapshot{"dan": leader, "bob": follower, "carol": cutOff}, false},
		{"one was stopped by its participant", "dan", map[string]candidate.Snapshot{"dan": leader, "bob": follower, "carol": stopped}, true},
		{"one left the room", "dan", map[string]candidate.Snapshot{"dan": leader, "bob": follower}, true},
		{"one took the lease after the holder left", "carol", map[string]candidate.Snapshot{"bob": follower, "carol": leader}, true},
		{"two believe they lead", "dan", map[string]candidate.Snapshot{"dan": leader, "bob": leader, "carol": follower}, false},
	} {
		w := World{Lease: heldBy(c.holder), Members: c.members, Notes: map[string]string{notedCut: "bob,carol"}}
		if got := until(&w); got != c.want {
			t.Errorf("%s: the heal step is done: %v, want %v", c.name, got, c.want)
		}
	}
}
