package scenario

import (
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
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
