package templates

import "github.com/a-h/templ"

// ArenaRoom is the panel of a lesson whose cast is the room: how to join it (a link and its QR
// code), and the tabs on its lease, each with the instructor's fault buttons, and the faults
// for the whole room.
type ArenaRoom struct {
	// Lease is the lease the room runs for (namespace/name).
	Lease string
	// JoinURL opens a candidate tab on the lease with the lesson's timings; QRURL is its QR
	// code (PNG).
	JoinURL, QRURL string
	// Actions is the base URL of the panel's forms (…/fault, …/third, …/heal, …/simulate);
	// Seed the run's (the page's, roomFor).
	Actions, Seed string
	// MayFault shows the buttons: the instructor's, or anyone's on an open server (the
	// page's MayControl, roomFor).
	MayFault bool
	// CanSimulate offers a tab the server runs, while the run has simulated members left.
	CanSimulate bool
	// Count is how many tabs are on the lease, and Cut how many of them have their network
	// cut; Tabs are the first of them the panel lists (a large room's are not all listed).
	Count, Cut int
	Tabs       []ArenaTab
}

// More is how many tabs of the room the panel does not list.
func (r ArenaRoom) More() int { return r.Count - len(r.Tabs) }

// ArenaTab is one tab of the room.
type ArenaTab struct {
	// ID is the hub's id of the tab, which its fault buttons name.
	ID, Identity string
	// Owner is who opened it (a participant, or the lesson for a simulated tab); "" without
	// authentication.
	Owner string
	// State is its word (leader, follower, paused, partitioned, stopped); Stale that it
	// believes it leads while the record names another.
	State string
	Stale bool
	// Faults are its faults in the page's language.
	Faults []string
	// Paused, Partitioned and Stopped choose each button's command and its label, and so
	// does LatencyMs, the delay its slow network adds (0 for none).
	Paused, Partitioned, Stopped bool
	LatencyMs                    int64
}

// pressedAttr is a toggle button's aria-pressed; none for a button that is no toggle.
func pressedAttr(toggle, pressed bool) templ.Attributes {
	if !toggle {
		return nil
	}
	return templ.Attributes{"aria-pressed": boolStr(pressed)}
}

// roomFor is r on the page v: its buttons for whoever may run the lesson, for its seed.
func roomFor(r ArenaRoom, v Scenario) ArenaRoom {
	r.MayFault, r.Seed = v.MayControl, v.Seed
	return r
}
