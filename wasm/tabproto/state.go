package tabproto

import "strings"

// State is the one word that says how a tab is doing. The page shows it as the
// data-state of its #candidate element, which outside tests read: the values are a
// contract.
type State string

// States, in order of precedence: a stopped tab is "stopped" whatever its faults, and a
// paused one is "paused" even when also partitioned.
const (
	StateStopped     State = "stopped"
	StatePaused      State = "paused"
	StatePartitioned State = "partitioned"
	StateLeader      State = "leader"
	StateFollower    State = "follower"
)

// States returns every state a tab can be in, in the order a legend lists them.
func States() []State {
	return []State{StateLeader, StateFollower, StatePaused, StatePartitioned, StateStopped}
}

// Valid reports whether s is one of States.
func (s State) Valid() bool {
	switch s {
	case StateLeader, StateFollower, StatePaused, StatePartitioned, StateStopped:
		return true
	}
	return false
}

// Word is how a page names the state: "LEADER".
func (s State) Word() string { return strings.ToUpper(string(s)) }

// Role is what a tab's election algorithm believes: leader between acquiring and losing the
// lease (client-go's OnStartedLeading .. OnStoppedLeading), follower while trying to acquire
// it, none when stopped.
type Role string

// Roles.
const (
	RoleLeader   Role = "leader"
	RoleFollower Role = "follower"
	RoleNone     Role = ""
)
