package tabproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Report is what a tab says about itself: its identity and lease, its state, the lease
// holder it last observed, its faults and its newest decision.
type Report struct {
	Identity  string `json:"identity"`
	Namespace string `json:"namespace"`
	Lease     string `json:"lease"`
	State     State  `json:"state"`
	Role      Role   `json:"role"`
	Holder    string `json:"holder"`
	Faults    Faults `json:"faults"`
	// ActiveFaults are the faults in words ("slow network: +1.5 s per request").
	ActiveFaults []string `json:"activeFaults"`
	LastLog      LogLine  `json:"lastLog"`
	// Coordinated is true when the tab runs in Coordinated Leader Election mode; then
	// BinaryVersion, EmulationVersion and Strategy are what its LeaseCandidate declares, and
	// PreferredHolder is the server's spec.preferredHolder in the lease record it last read.
	// A plain tab has none of them.
	Coordinated      bool   `json:"coordinated"`
	BinaryVersion    string `json:"binaryVersion"`
	EmulationVersion string `json:"emulationVersion"`
	Strategy         string `json:"strategy"`
	PreferredHolder  string `json:"preferredHolder"`
	// Clock is the tab's own clock when it made the report, and RoleSince when its Role last
	// changed, Unix ms on the same clock: the server dates the role change by their
	// difference, as the report itself may wait a moment before it is sent.
	Clock     int64 `json:"clock"`
	RoleSince int64 `json:"roleSince"`
	// Native is true for a candidate that is not a browser tab: leaselab candidate (client-go's
	// leader election), which reports its view but takes no fault commands.
	Native bool `json:"native"`
	// Timers and Flights are for the stage: the candidate's running timers and its newest
	// requests on its lease (stage.go). Absent from tabs that do not send them.
	Timers  *Timers  `json:"timers,omitempty"`
	Flights []Flight `json:"flights,omitempty"`
}

// LogLine is the newest line of a tab's decision log.
type LogLine struct {
	At   int64  `json:"at"` // Unix ms on the tab's clock; 0 when the log is empty
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Msg, when set, is the same sentence as a message, for pages in another language.
	Msg *Msg `json:"msg,omitempty"`
}

// SteppingDown reports whether the tab is a coordinated leader, or holder, whom the server
// asks to step down for another candidate. The hub decides it from the report; the tab's own
// word is not taken for it.
func (r Report) SteppingDown() bool {
	return r.Coordinated && r.PreferredHolder != "" && r.PreferredHolder != r.Identity &&
		(r.Role == RoleLeader || r.Holder == r.Identity)
}

// Stale reports whether the tab believes it leads while the lease record it last read names
// another holder: a stale leader (StaleLeader). The hub decides it from the report.
func (r Report) Stale() bool { return StaleLeader(r.Role, r.Holder, r.Identity) }

// StaleLeader is the one rule for a stale leader: a candidate identity whose role is leader
// while the record it last read names another holder. client-go has no fencing, so such a
// leader acts on its belief until its renew deadline.
func StaleLeader(role Role, holder, identity string) bool {
	return role == RoleLeader && holder != "" && holder != identity
}

// Limits on what a tab may report; Clean cuts longer strings.
const (
	MaxIdentityLen = 253 // identities and holders
	MaxNameLen     = 253 // namespaces and lease names
	MaxTextLen     = 300 // the decision's text
	MaxFaults      = 8   // entries of ActiveFaults
	MaxFaultLen    = 100 // one entry of ActiveFaults
	MaxVersionLen  = 64  // versions and the strategy
	MaxWordLen     = 20  // role, partition mode, log kind
)

// Clean makes a report from a tab safe to keep and show: it refuses an unknown state, cuts
// every string to its limit (on a rune boundary, dropping invalid UTF-8), drops a pause's start
// (only the tab's own page is told it) and clears the coordinated fields of a plain tab.
func (r *Report) Clean() error {
	if !r.State.Valid() {
		return fmt.Errorf("unknown state %q", Cut(string(r.State), 40))
	}
	r.Identity = Cut(r.Identity, MaxIdentityLen)
	r.Namespace = Cut(r.Namespace, MaxNameLen)
	r.Lease = Cut(r.Lease, MaxNameLen)
	r.Holder = Cut(r.Holder, MaxIdentityLen)
	r.Role = Role(Cut(string(r.Role), MaxWordLen))
	r.Faults = r.Faults.clean()
	if len(r.ActiveFaults) > MaxFaults {
		r.ActiveFaults = r.ActiveFaults[:MaxFaults]
	}
	for i, f := range r.ActiveFaults {
		r.ActiveFaults[i] = Cut(f, MaxFaultLen)
	}
	if r.ActiveFaults == nil {
		r.ActiveFaults = []string{}
	}
	r.LastLog.Kind = Cut(r.LastLog.Kind, MaxWordLen)
	r.LastLog.Text = Cut(r.LastLog.Text, MaxTextLen)
	if m := r.LastLog.Msg; m != nil && m.clean(1) != nil {
		r.LastLog.Msg = nil // the text alone is shown
	}
	if r.Coordinated {
		r.BinaryVersion = Cut(r.BinaryVersion, MaxVersionLen)
		r.EmulationVersion = Cut(r.EmulationVersion, MaxVersionLen)
		r.Strategy = Cut(r.Strategy, MaxVersionLen)
		r.PreferredHolder = Cut(r.PreferredHolder, MaxIdentityLen)
	} else {
		r.BinaryVersion, r.EmulationVersion, r.Strategy, r.PreferredHolder = "", "", "", ""
	}
	r.cleanStage()
	return nil
}

// Cut cuts s to at most n bytes on a rune boundary, and drops invalid UTF-8: what the tab hub
// keeps of a string a browser sent.
func Cut(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Message types.
const (
	TypeHello   = "hello"
	TypeReport  = "report"
	TypeCommand = "command"
)

// reportMessage is a tab's report on the wire.
type reportMessage struct {
	Type string `json:"type"`
	Tab  Report `json:"tab"`
}

// ErrNotReport is DecodeReport's error for a message of another type.
var ErrNotReport = errors.New(`not a "report" message`)

// EncodeReport returns the message a tab sends to report r.
func EncodeReport(r Report) ([]byte, error) {
	return json.Marshal(reportMessage{Type: TypeReport, Tab: r})
}

// DecodeReport reads a message from a tab and returns its report, cleaned (see Clean). It
// returns a JSON syntax or type error, ErrNotReport, or Clean's error.
func DecodeReport(data []byte) (Report, error) {
	var m reportMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return Report{}, err
	}
	if m.Type != TypeReport {
		return Report{}, ErrNotReport
	}
	if err := m.Tab.Clean(); err != nil {
		return Report{}, err
	}
	return m.Tab, nil
}

// EncodeHello returns the hub's first message to a tab, with the id the hub gave it. Its keys
// come in the order the hub has always written them.
func EncodeHello(id string) []byte {
	b, _ := json.Marshal(struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}{id, TypeHello}) // a struct of two strings always encodes
	return b
}
