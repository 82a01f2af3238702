package leasetest

import (
	"context"
	"fmt"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// History returns the holder terms of a Lease, oldest first, from every change the server
// committed to it: who held it, from when to when (on the server's clock), how each term ended
// (released, expired, taken over, stepped down for the election controller's preferred holder,
// deleted) and leaseTransitions as each began. The dashboard's timeline shows the same terms
// (web/lease/judge.Terms). A term still held has a zero End. It fails the test when the store cannot
// be read; call it from the test's goroutine.
func (s *Server) History(namespace, name string) []Term {
	s.tb.Helper()
	return judge.Terms(s.changes(namespace, name), time.Now())
}

// Overlaps returns the split-brain intervals of a Lease up to now (web/lease/judge.Overlaps): when
// some candidate believed it led while another did, or while the record named another holder
// or nobody. The server's record names one holder at a time, so what candidates believed must
// come from views, which the test records (Views); without views there are none.
// RequireNoOverlap also checks the record alone. It fails the test when the store cannot be
// read.
func (s *Server) Overlaps(namespace, name string, views ...View) []Overlap {
	s.tb.Helper()
	return judge.Overlaps(namespace+"/"+name, s.changes(namespace, name), s.withFaults(views), time.Now())
}

// RequireNoOverlap fails tb, and stops it, when two holders of a Lease may have overlapped:
//   - in the record, a holder took the Lease over before the previous holder's hold had run
//     out (a term that History says ended by takeover): client-go's candidates wait for the
//     hold to run out, so one that did not either counts time otherwise or was forced in, and
//     the previous holder could still believe it led;
//   - in views, the candidates' own account of what they believed (Views), two believed they
//     led at once, or one believed while the record named another (Overlaps).
//
// A clean release, expiry or hand-over by the election controller is no overlap.
func (s *Server) RequireNoOverlap(tb testing.TB, namespace, name string, views ...View) {
	tb.Helper()
	lease := namespace + "/" + name
	changes := s.changes(namespace, name)
	now := time.Now()
	failed := false
	for _, t := range judge.Terms(changes, now) {
		if t.Ended == judge.EndTakeover {
			failed = true
			tb.Errorf("leasetest: %s took %s over at %s while %s's hold had not run out (it held it since %s)",
				t.Next, lease, t.End.Format(time.RFC3339Nano), t.Holder, t.Start.Format(time.RFC3339Nano))
		}
	}
	for _, o := range judge.Overlaps(lease, changes, s.withFaults(views), now) {
		failed = true
		tb.Errorf("leasetest: split brain: %s", o.Text)
	}
	if failed {
		tb.FailNow()
	}
}

// changes reads the changes of a Lease from the store's change log, compacted (judge.Append).
func (s *Server) changes(namespace, name string) []judge.Change {
	s.tb.Helper()
	k := s.api.Registry().Lookup(coordinationv1.GroupName, "v1", "leases")
	evs, err := s.db.History(context.Background(), store.Key{Resource: k.StorageResource(), Namespace: namespace, Name: name}, 0)
	if err != nil {
		s.tb.Fatalf("leasetest: history of lease %s/%s: %v", namespace, name, err)
	}
	var changes []judge.Change
	for _, ev := range evs {
		var l *coordinationv1.Lease // nil: deleted
		if ev.Type != store.Deleted {
			obj, err := s.api.Registry().DecodeStored(k, ev.Object.Value, ev.Object.Revision)
			if err != nil {
				s.tb.Fatalf("leasetest: history of lease %s/%s: %v", namespace, name, err)
			}
			if l, _ = obj.(*coordinationv1.Lease); l == nil {
				s.tb.Fatalf("leasetest: history of lease %s/%s: stored a %T", namespace, name, obj)
			}
		}
		changes = judge.Append(changes, l, ev.Object.Revision, ev.Time)
	}
	return changes
}

// withFaults is views with the faults the kit put on each candidate's client (Hang, Fail, Slow;
// the client named as the candidate's identity) at each view's moment, where the view records
// none of its own: the judge names them as causes of a split brain.
func (s *Server) withFaults(views []View) []View {
	out := make([]View, len(views))
	for i, v := range views {
		if v.Faults == (tabproto.Faults{}) {
			v.Faults = s.faults.at(v.Identity, v.At)
		}
		out[i] = v
	}
	return out
}

// Views records what candidates believe about their own leadership, on the test's clock, for
// Overlaps and RequireNoOverlap: the server's record cannot show a candidate that goes on
// believing it leads after another took over. The zero value is ready to use; it is safe for
// concurrent use.
type Views struct {
	mu    sync.Mutex
	views []judge.View
}

// Leading records that identity believes it leads from now on (leads), or no longer.
func (v *Views) Leading(identity string, leads bool) {
	state := "leader"
	if !leads {
		state = "stopped"
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.views = append(v.views, judge.View{Identity: identity, At: time.Now(), Leads: leads, State: state})
}

// Callbacks returns cb recording identity's belief first: it leads from OnStartedLeading, no
// longer from OnStoppedLeading. Either of cb's may be nil.
func (v *Views) Callbacks(identity string, cb leaderelection.LeaderCallbacks) leaderelection.LeaderCallbacks {
	return leaderelection.LeaderCallbacks{
		OnStartedLeading: func(ctx context.Context) {
			v.Leading(identity, true)
			if cb.OnStartedLeading != nil {
				cb.OnStartedLeading(ctx)
			}
		},
		OnStoppedLeading: func() {
			v.Leading(identity, false)
			if cb.OnStoppedLeading != nil {
				cb.OnStoppedLeading()
			}
		},
		OnNewLeader: cb.OnNewLeader,
	}
}

// List returns the views recorded so far, oldest first.
func (v *Views) List() []View {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]judge.View(nil), v.views...)
}

// String lists the views, one per line, for a test's failure message.
func (v *Views) String() string {
	var out string
	for _, w := range v.List() {
		out += fmt.Sprintf("%s %s leads=%t\n", w.At.Format(time.RFC3339Nano), w.Identity, w.Leads)
	}
	return out
}
