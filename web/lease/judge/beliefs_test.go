package judge

import (
	"reflect"
	"testing"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// TestBeliefs: a leader that is paused while another takes over believes, once it resumes,
// that it still leads (stale) until it reads the record; a stopped candidate's lane ends.
func TestBeliefs(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	vs := []View{
		{Identity: "bob", At: at(1), State: "follower", Holder: "alice"},
		{Identity: "alice", At: at(0), State: "leader", Leads: true, Holder: "alice"},
		{Identity: "alice", At: at(5), State: "paused", Leads: true, Faults: tabproto.Faults{Paused: true}, Holder: "alice"},
		{Identity: "alice", At: at(6), State: "paused", Leads: true, Faults: tabproto.Faults{Paused: true}, Holder: "alice"}, // same belief
		{Identity: "bob", At: at(20), State: "leader", Leads: true, Holder: "bob"},
		{Identity: "alice", At: at(30), State: "leader", Leads: true, Holder: "bob"},
		{Identity: "alice", At: at(32), State: "follower", Holder: "bob"},
		{Identity: "bob", At: at(40), State: "stopped"},
	}
	order, lanes := Beliefs(vs, at(2), at(50))
	if !reflect.DeepEqual(order, []string{"alice", "bob"}) {
		t.Fatalf("order %v", order)
	}
	type seg struct {
		b        string
		from, to int
	}
	got := func(id string) (out []seg) {
		for _, b := range lanes[id] {
			out = append(out, seg{b.Belief, int(b.From.Sub(t0) / time.Second), int(b.To.Sub(t0) / time.Second)})
		}
		return out
	}
	wantAlice := []seg{{"leading", 0, 5}, {"paused", 5, 30}, {"stale", 30, 32}, {"following", 32, 50}}
	if g := got("alice"); !reflect.DeepEqual(g, wantAlice) {
		t.Errorf("alice %v, want %v", g, wantAlice)
	}
	wantBob := []seg{{"following", 1, 20}, {"leading", 20, 40}}
	if g := got("bob"); !reflect.DeepEqual(g, wantBob) {
		t.Errorf("bob %v, want %v", g, wantBob)
	}
}
