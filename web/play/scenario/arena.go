package scenario

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/judge"
	"github.com/leaselab/leaselab/web/lease/views"
)

// This file is the lesson whose cast is the room: the candidate tabs that the participants
// open on one lease. Its run knows them only as they come (Options.Room, the server's tab
// hub); it sees them as members of its world by their identities, notes their role changes as
// events, and faults them through the room. Without a room (the tests, a server without a
// hub) the lesson's Cast plays the room, so that its claims are checked as every lesson's.

// Room is where a room lesson's candidates are: the tabs on its lease.
type Room interface {
	// Tabs are the tabs on the lease namespace/lease, each as it last reported.
	Tabs(namespace, lease string) []RoomTab
	// Command sends the tab id a fault command.
	Command(id string, cmd tabproto.Command) error
}

// RoomTab is one tab of the room as it last reported.
type RoomTab struct {
	// ID is the room's handle on the tab (the hub's id; without a room, the member's name).
	ID string
	// Name is what the lesson calls it: its identity (with its id's start when two tabs share
	// one).
	Name string
	tabproto.Report
}

// Crowd is what a run of a room lesson saw of the room's tabs, by name: the members of its
// world that are no member of its cast (RoomOf).
type Crowd struct {
	run  *Run
	tabs map[string]*roomTab
	// told is what each step done said of the room, as it was when the run went on from it.
	told []i18n.Text
}

// roomTab is one tab as the run last saw it.
type roomTab struct {
	RoomTab
	shown roomShown
	view  judge.View // the last belief recorded, for the run's own judge
}

// roomShown is what the lesson's page and conditions show of a tab: a change of it is a change
// of the run.
type roomShown struct {
	state  tabproto.State
	role   tabproto.Role
	holder string
	faults tabproto.Faults
}

// newRoom is the room of run r, in a room lesson; nil in any other, whose every method
// then does nothing.
func newRoom(r *Run) *Crowd {
	if !r.sc.Room {
		return nil
	}
	return &Crowd{run: r, tabs: map[string]*roomTab{}}
}

// RoomOf is the room of run r, in a room lesson; nil in any other.
func RoomOf(r *Run) *Crowd { return r.room }

// ErrRoomRealTime refuses a room lesson at any speed but 1: the room's tabs run on their own
// clocks, which no run can speed up.
var ErrRoomRealTime = errors.New("a lesson of the room runs at speed 1 only: the tabs run on their own clocks")

// read reads the room's tabs, named (nil without a room).
func (rm *Crowd) read() []RoomTab {
	if rm == nil || rm.run.opts.Room == nil {
		return nil
	}
	return named(rm.run.opts.Room.Tabs(rm.run.opts.Namespace, rm.run.sc.Lease))
}

// named names the tabs by their identities, the first to connect keeping its own, and sorts
// them by name.
func named(tabs []RoomTab) []RoomTab {
	seen := map[string]bool{}
	for i := range tabs {
		t := &tabs[i]
		t.Name = t.Identity
		if seen[t.Name] {
			t.Name += "-" + t.ID[:min(4, len(t.ID))]
		}
		seen[t.Name] = true
	}
	slices.SortFunc(tabs, func(a, b RoomTab) int { return strings.Compare(a.Name, b.Name) })
	return tabs
}

// seeLocked takes in the room's tabs as read now (with the run's lock held): a tab that came,
// changed its role or left is an event, each change of belief a view, and any change of what
// the page shows a change of the run. A tab that plays a member of the cast (seated on the same
// hub) is that member.
func (rm *Crowd) seeLocked(now time.Time, tabs []RoomTab) {
	if rm == nil || rm.run.opts.Room == nil {
		return
	}
	r := rm.run
	here := map[string]bool{}
	for _, t := range tabs {
		if m := r.members[t.Name]; m != nil && m.started {
			continue
		}
		here[t.Name] = true
		rm.seeTabLocked(now, t)
	}
	for name, t := range rm.tabs {
		if here[name] {
			continue
		}
		delete(rm.tabs, name)
		if t.Role != tabproto.RoleNone {
			r.addEventLocked(now, "role", name+" stopped")
		}
		r.views = append(r.views, judge.View{Identity: t.Identity, At: now, State: string(tabproto.StateStopped)})
		r.changedLocked()
	}
}

// seeTabLocked takes in one tab's report.
func (rm *Crowd) seeTabLocked(now time.Time, t RoomTab) {
	r := rm.run
	seen := rm.tabs[t.Name]
	if seen == nil {
		seen = &roomTab{shown: roomShown{role: "-"}}
		rm.tabs[t.Name] = seen
	}
	seen.RoomTab = t
	shown := roomShown{state: t.State, role: t.Role, holder: t.Holder, faults: t.Faults}
	if shown == seen.shown {
		return
	}
	if shown.role != seen.shown.role {
		role := string(t.Role)
		if role == "" {
			role = "stopped"
		}
		r.dropRoleLocked(now, t.Name)
		r.addEventLocked(now, "role", t.Name+" "+role)
	}
	seen.shown = shown
	v := views.FromReport(t.Report, views.SourceTab, now, "").View()
	v.At = now
	if seen.view.Identity == "" || !sameBelief(seen.view, v) {
		seen.view = v
		r.views = append(r.views, v)
	}
	r.changedLocked()
	r.poke() // it may have written: read the lease
}

// addToLocked puts the room's tabs among the world's members, as their reports say.
func (rm *Crowd) addToLocked(w *World) {
	if rm == nil {
		return
	}
	for name, t := range rm.tabs {
		w.Members[name] = candidate.Snapshot{Identity: t.Identity, Namespace: t.Namespace, Lease: t.Lease, State: t.State,
			Role: t.Role, Holder: t.Holder, Stale: t.Stale(), Faults: t.Faults}
	}
}

// Room lists the room's tabs as the step begins, by name: the tabs on the lesson's lease, or,
// without a room, the members of the cast that play it.
func (a *Actions) Room() []RoomTab {
	r := a.run
	if r.opts.Room != nil {
		return r.room.read()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []RoomTab
	for _, id := range r.memberIDs() {
		if m := r.members[id]; m.started {
			out = append(out, RoomTab{ID: id, Name: id, Report: m.cand.Snapshot().Report()})
		}
	}
	return out
}

// Fault sends tab a fault command: through the room, or to the member that plays it. A tab
// that left meanwhile is no error: the room changes as the lesson plays.
func (a *Actions) Fault(tab RoomTab, cmd tabproto.Command) {
	r := a.run
	var err error
	if r.opts.Room != nil {
		err = r.opts.Room.Command(tab.ID, cmd)
	} else if c := r.member(tab.ID); c != nil {
		if err = cmd.Validate(); err == nil {
			err = c.Obey(cmd)
		}
	}
	if err != nil {
		r.log.Info("room fault not delivered", slog.String("tab", tab.Name), slog.String("command", cmd.Type), slog.Any("error", err))
	}
}

// Pick returns n of tabs at random, by the run's seed.
func (a *Actions) Pick(tabs []RoomTab, n int) []RoomTab {
	a.run.mu.Lock()
	stream := uint64(a.run.step) // another stream for each step that picks
	a.run.mu.Unlock()
	rnd := rand.New(rand.NewPCG(a.run.opts.Seed, 0xa7e+stream))
	out := slices.Clone(tabs)
	rnd.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out[:min(n, len(out))]
}

// AThird is how many of n tabs make about a third of them: at least one, and never all.
func AThird(n int) int {
	if n < 2 {
		return 0
	}
	return max(1, (n+1)/3)
}

// Narration is step i's narration: what it says, and what the room's tabs did, as the run saw
// them until it went on from the step (until now, for the current step).
func (rm *Crowd) Narration(i int) i18n.Text {
	r := rm.run
	st := r.sc.Steps[i]
	if st.Tell == nil {
		return st.Say
	}
	r.mu.Lock()
	var told i18n.Text
	if i < len(rm.told) {
		told = rm.told[i]
	} else {
		told = st.Tell(r.worldLocked(r.clock.Now()))
	}
	r.mu.Unlock()
	if told.IsZero() {
		return st.Say
	}
	return i18n.Concat(st.Say, i18n.Text{En: " "}, told)
}

// keepToldLocked keeps what the current step says of the room as the run goes on from it.
func (rm *Crowd) keepToldLocked(now time.Time) {
	if rm == nil {
		return
	}
	r := rm.run
	var told i18n.Text
	if tell := r.sc.Steps[r.step].Tell; tell != nil {
		told = tell(r.worldLocked(now))
	}
	rm.told = append(rm.told[:min(r.step, len(rm.told))], told)
}

// CanSimulate reports whether a member of the cast has not joined yet (Simulate).
func (rm *Crowd) CanSimulate() bool {
	r := rm.run
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.members {
		if !m.started {
			return true
		}
	}
	return false
}

// Simulate brings in the next member of the cast that has not joined, as a tab of the room
// that the server runs: a room lesson can be played with a room too small. It returns the
// member's name, and false when every member has joined.
func (rm *Crowd) Simulate() (string, bool) {
	r := rm.run
	r.mu.Lock()
	var next string
	for _, id := range r.memberIDs() {
		if !r.members[id].started {
			next = id
			break
		}
	}
	r.mu.Unlock()
	if next == "" {
		return "", false
	}
	r.join(next)
	return next, true
}
