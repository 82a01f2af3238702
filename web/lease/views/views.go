// Package views keeps every candidate's own view of its lease — its role, whether it believes
// it leads, the holder it last read, its faults and its newest decision — beside the lease's
// change log in the store, and reads it back for the split-brain checker (judge.Overlaps).
//
// Each candidate of a lease is one object of the store's internal resource Resource, in the
// lease's namespace, named "<lease>/<identity>"; each change of note is one change of that
// object. The views thus live in the same change log as the leases: the same compaction
// window bounds them, and backups and exports carry them. The API never serves them.
package views

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// Resource is the store resource that holds the views.
const Resource = "candidateviews.leaselab.dev"

// Where a view comes from.
const (
	SourceTab      = "tab"      // a browser candidate tab
	SourceNative   = "native"   // leaselab candidate, client-go's leader election
	SourceScenario = "scenario" // a candidate a scenario runs inside the server
)

// Record is one view as stored: the JSON of a Resource object and of a recording's lines.
type Record struct {
	Identity  string `json:"identity"`
	Namespace string `json:"namespace"`
	Lease     string `json:"lease"`
	Source    string `json:"source"`
	// Owner is the signed-in user who opened the tab, on a server with tokens.
	Owner string `json:"owner,omitempty"`
	// State is the candidate's one word (tabproto.State); Role what its algorithm believes
	// (leader, follower or "" when stopped); Leads whether it believes it leads; Stale whether
	// it does while the record it last read names another holder (Holder).
	State  string `json:"state"`
	Role   string `json:"role"`
	Leads  bool   `json:"leads"`
	Stale  bool   `json:"stale"`
	Holder string `json:"holder"`
	// Faults are the faults in effect, under their names in the report ("paused", "partition",
	// "latencyMs", "clockOffsetMs", "clockRate", ...), as views have always been stored.
	tabproto.Faults
	// ActiveFaults are the faults in the candidate's own words, for the screens.
	ActiveFaults []string `json:"activeFaults,omitempty"`
	// Decision and DecisionText are the candidate's newest decision.
	Decision     string `json:"decision,omitempty"`
	DecisionText string `json:"decisionText,omitempty"`
	// DecisionMsg is DecisionText as the candidate said it as a message, when it did.
	DecisionMsg *tabproto.Msg `json:"decisionMsg,omitempty"`
	// Coordinated and the rest are the candidate's Coordinated Leader Election mode, as its
	// report gave them (tabproto.Report); absent for a plain candidate.
	Coordinated      bool   `json:"coordinated,omitempty"`
	BinaryVersion    string `json:"binaryVersion,omitempty"`
	EmulationVersion string `json:"emulationVersion,omitempty"`
	Strategy         string `json:"strategy,omitempty"`
	PreferredHolder  string `json:"preferredHolder,omitempty"`
	Native           bool   `json:"native,omitempty"`
	// ClockMs is the candidate's own clock when it reported and RoleSinceMs when its role last
	// changed, on that clock; ReceivedMs is the server's clock on receipt; AtMs is when, on
	// the server's clock, this view began: the receipt, less how long before it the
	// candidate's role changed when this report is of a role change. All Unix ms.
	ClockMs     int64 `json:"clockMs,omitempty"`
	RoleSinceMs int64 `json:"roleSinceMs,omitempty"`
	ReceivedMs  int64 `json:"receivedMs"`
	AtMs        int64 `json:"atMs"`
}

// MaxReportDelay bounds how long before its receipt a report may date a role change: a tab
// reports within a fraction of a second, and a clock the server cannot check must not move a
// belief far into the past.
const MaxReportDelay = 5 * time.Second

// FromReport is the view a tab's (cleaned) report gives, received at received. prevRole is the
// role of the candidate's previous view ("" when none): only a role change is dated back.
func FromReport(r tabproto.Report, source string, received time.Time, prevRole string) Record {
	rec := Record{
		Identity: r.Identity, Namespace: r.Namespace, Lease: r.Lease, Source: source,
		State: string(r.State), Role: string(r.Role), Holder: r.Holder,
		Leads:        r.Role == tabproto.RoleLeader && r.State != tabproto.StateStopped,
		Faults:       r.Faults,
		ActiveFaults: r.ActiveFaults,
		Decision:     r.LastLog.Kind, DecisionText: r.LastLog.Text, DecisionMsg: r.LastLog.Msg,
		Coordinated: r.Coordinated, BinaryVersion: r.BinaryVersion, EmulationVersion: r.EmulationVersion,
		Strategy: r.Strategy, PreferredHolder: r.PreferredHolder, Native: r.Native,
		ClockMs: r.Clock, RoleSinceMs: r.RoleSince,
		ReceivedMs: received.UnixMilli(), AtMs: received.UnixMilli(),
	}
	rec.Stale = rec.Leads && r.Holder != "" && r.Holder != r.Identity
	if string(r.Role) != prevRole && r.Clock > 0 && r.RoleSince > 0 && r.RoleSince <= r.Clock {
		// How long ago the role changed, on the candidate's clock: a clock running at another
		// rate counts that many of its milliseconds for each of the server's.
		ago := float64(r.Clock - r.RoleSince)
		if rate := r.Faults.ClockRate; rate > 0 {
			ago /= rate
		}
		rec.AtMs -= min(int64(ago), MaxReportDelay.Milliseconds())
	}
	return rec
}

// Gone is the view of a candidate that went away (its tab closed, its process ended) at at.
func Gone(identity, namespace, lease, source string, at time.Time) Record {
	ms := at.UnixMilli()
	return Record{Identity: identity, Namespace: namespace, Lease: lease, Source: source,
		State: string(tabproto.StateStopped), ReceivedMs: ms, AtMs: ms}
}

// notable is what makes a view worth a change in the log: a renewal that only moves the
// decision's time is not.
type notable struct {
	state, role, holder, decision string
	leads, stale                  bool
	faults                        tabproto.Faults
}

func (r Record) notable() notable {
	return notable{r.State, r.Role, r.Holder, r.Decision, r.Leads, r.Stale, r.Faults}
}

// View is the record as the judge reads it.
func (r Record) View() judge.View {
	return judge.View{
		Identity: r.Identity, At: time.UnixMilli(r.AtMs), Leads: r.Leads, State: r.State, Holder: r.Holder,
		Faults: r.Faults, Decision: r.Decision,
	}
}

// Report is the record as a tab's report: what the screens draw of a candidate as it was.
func (r Record) Report() tabproto.Report {
	return tabproto.Report{
		Identity: r.Identity, Namespace: r.Namespace, Lease: r.Lease,
		State: tabproto.State(r.State), Role: tabproto.Role(r.Role), Holder: r.Holder,
		Faults:       r.Faults,
		ActiveFaults: r.ActiveFaults,
		LastLog:      tabproto.LogLine{At: r.ClockMs, Kind: r.Decision, Text: r.DecisionText, Msg: r.DecisionMsg},
		Coordinated:  r.Coordinated, BinaryVersion: r.BinaryVersion, EmulationVersion: r.EmulationVersion,
		Strategy: r.Strategy, PreferredHolder: r.PreferredHolder, Native: r.Native,
	}
}

// Dated is r with a date: a view without one (atMs unset, which no server writes, as it dates
// every view on receipt) began at the latest when it was recorded, at commit, and is dated so
// rather than in 1970, where it would stretch every time range back.
func (r Record) Dated(commit time.Time) Record {
	if r.AtMs <= 0 {
		r.AtMs = commit.UnixMilli()
	}
	return r
}

// RecordOf decodes a stored view (an object of Resource).
func RecordOf(o store.Object) (Record, error) {
	r, err := decode(o.Value)
	if err != nil {
		return Record{}, fmt.Errorf("candidate view %s/%s: %w", o.Namespace, o.Name, err)
	}
	return r, nil
}

// Name is the store name of a candidate's views of a lease.
func Name(lease, identity string) string { return lease + "/" + identity }

func decode(b []byte) (Record, error) {
	var r Record
	err := json.Unmarshal(b, &r)
	return r, err
}
