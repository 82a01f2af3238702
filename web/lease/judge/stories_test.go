package judge

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// history replays lease writes through ChangeOf, as the server's change log has them.
type history struct {
	changes []Change
	full    []Change
	// scale, when set, is the TimeScaleAnnotation every write carries.
	scale string
}

func (h *history) put(at time.Time, spec coordinationv1.LeaseSpec) {
	var prev *Change
	if n := len(h.full); n > 0 {
		prev = &h.full[n-1]
	}
	l := &coordinationv1.Lease{Spec: spec}
	if h.scale != "" {
		l.Annotations = map[string]string{TimeScaleAnnotation: h.scale}
	}
	c := ChangeOf(l, int64(len(h.full)+1), at, prev)
	h.full = append(h.full, c)
	h.changes = Compact(h.changes, c)
}

func spec(holder string, renew time.Time, d int32, transitions int32) coordinationv1.LeaseSpec {
	s := coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &d, LeaseTransitions: &transitions}
	if !renew.IsZero() {
		rt := metav1.NewMicroTime(renew)
		s.RenewTime = &rt
	}
	return s
}

func texts(told []Told) string {
	var s []string
	for _, t := range told {
		s = append(s, t.Kind+": "+t.Text)
	}
	return strings.Join(s, "\n")
}

// TestClockBehindIsOneTerm replays a leader whose clock runs 8 s behind the server's: with a
// 10 s lease renewed every 2 s (a little late, as timers are), its renewTime always looks
// nearly run out, but it never stopped writing. It is one term, and nothing expired.
func TestClockBehindIsOneTerm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h history
	s := 0.0
	for range 12 {
		s += 2 + rng.Float64()*0.6
		h.put(at(s), spec("tab-1", at(s-8), 10, 0))
	}
	now := at(s + 1)
	terms := Terms(h.changes, now)
	if got, want := termStrings(terms), "tab-1 "; len(terms) != 1 || !strings.HasPrefix(got, want) || terms[0].Ended != EndHeld {
		t.Fatalf("terms:\n%s\nwant one open term of tab-1", got)
	}
	if terms[0].Renewals != 11 {
		t.Errorf("renewals %d, want 11", terms[0].Renewals)
	}
	if got := texts(Tell("default/demo", terms)); strings.Contains(got, "expired") {
		t.Errorf("the feed tells an expiry:\n%s", got)
	}
	if st := Status(h.changes[len(h.changes)-1], now); st != StatusHeld {
		t.Errorf("status %s, want held", st)
	}
	// 3 s after the last write its record says it ran out (renewTime + 10 s on a clock 8 s
	// behind), but no candidate counts from renewTime: it is still held.
	later := at(s + 3)
	if last := h.full[len(h.full)-1]; !last.RecordExpiry().Before(later) || Status(last, later) != StatusHeld {
		t.Errorf("record expiry %v, status %s at %v; want a record run out and the lease held", last.RecordExpiry(), Status(last, later), later)
	}
	// Once it stops writing, it runs out leaseDurationSeconds after its last write.
	terms = Terms(h.changes, at(s+10))
	if len(terms) != 1 || terms[0].Ended != EndExpired || !terms[0].End.Equal(at(s+10)) {
		t.Errorf("after it stopped: %s", termStrings(terms))
	}
}

// TestStepDownForPreferredHolder replays a Coordinated Leader Election hand-over: the election
// controller names a preferredHolder, the leader stops renewing, and once the lease runs out by
// its record the controller writes the preferred candidate as holder. That is a step-down, not
// "expired: not renewed in time".
func TestStepDownForPreferredHolder(t *testing.T) {
	var h history
	strategy := coordinationv1.OldestEmulationVersion
	withCLE := func(s coordinationv1.LeaseSpec, preferred string) coordinationv1.LeaseSpec {
		s.Strategy = &strategy
		if preferred != "" {
			s.PreferredHolder = &preferred
		}
		return s
	}
	for s := 0.0; s <= 8; s += 2 {
		h.put(at(s), withCLE(spec("old", at(s), 10, 0), ""))
	}
	// The controller prefers "new": the record changes, the holder does not.
	h.put(at(9), withCLE(spec("old", at(8), 10, 0), "new"))
	// "old" no longer renews. At 18 its record has run out; the controller assigns "new".
	h.put(at(18.2), withCLE(spec("new", at(18.2), 10, 1), ""))
	for s := 20.2; s <= 24.2; s += 2 {
		h.put(at(s), withCLE(spec("new", at(s), 10, 1), ""))
	}
	terms := Terms(h.changes, at(25))
	if got, want := termStrings(terms), "old 0-18.2 stepped-down>new t0 r5\nnew 18.2-… t1 r3"; got != want {
		t.Errorf("terms:\n%s\nwant:\n%s", got, want)
	}
	told := texts(Tell("kube-system/sched", terms))
	want := "acquired: old acquired kube-system/sched (transitions 0)\n" +
		"stepped-down: old stepped down from kube-system/sched: the election controller prefers new\n" +
		"acquired: new acquired kube-system/sched (transitions 1)"
	if told != want {
		t.Errorf("feed:\n%s\nwant:\n%s", told, want)
	}

	// A holder that releases when asked to give way stepped down too.
	var r history
	r.put(at(0), withCLE(spec("old", at(0), 10, 0), ""))
	r.put(at(1), withCLE(spec("old", at(0), 10, 0), "new"))
	r.put(at(2), withCLE(spec("", time.Time{}, 10, 0), "new"))
	if got, want := termStrings(Terms(r.changes, at(3))), "old 0-2 stepped-down>new t0 r1"; got != want {
		t.Errorf("release when asked: %s, want %s", got, want)
	}
	// And one that just lets the lease run out, before the controller writes again.
	if got, want := termStrings(Terms(r.changes[:2], at(30))), "old 0-11 stepped-down>new t0 r1"; got != want {
		t.Errorf("run out when asked: %s, want %s", got, want)
	}

	// Read with the views: a holder that had crashed before the controller preferred another
	// did not step down; its lease ran out. One that was running and gave way did.
	crashed := []View{{Identity: "old", At: at(0.05), Leads: true, State: "leader"}, {Identity: "old", At: at(8.5), State: "stopped"}}
	if got, want := termStrings(TermsSeen(h.changes, crashed, at(25))), "old 0-18.2 expired>new t0 r5\nnew 18.2-… t1 r3"; got != want {
		t.Errorf("a crashed holder's terms:\n%s\nwant:\n%s", got, want)
	}
	if told := texts(Tell("kube-system/sched", TermsSeen(h.changes, crashed, at(25)))); strings.Contains(told, "stepped down") {
		t.Errorf("a crashed holder's feed says it stepped down:\n%s", told)
	}
	gaveWay := []View{{Identity: "old", At: at(0.05), Leads: true, State: "leader"}, {Identity: "old", At: at(9.1), State: "follower", Decision: "stepped-down"}}
	if got, want := termStrings(TermsSeen(h.changes, gaveWay, at(25))), "old 0-18.2 stepped-down>new t0 r5\nnew 18.2-… t1 r3"; got != want {
		t.Errorf("a holder that gave way:\n%s\nwant:\n%s", got, want)
	}
}

// TestObservedIgnoresOtherWrites: a write that leaves the election record alone (a label, an
// annotation) does not restart the hold, as client-go does not see a new record.
func TestObservedIgnoresOtherWrites(t *testing.T) {
	var h history
	h.put(at(0), spec("a", at(0), 10, 0))
	h.put(at(6), spec("a", at(0), 10, 0)) // same record
	last := h.full[1]
	if !last.Since().Equal(at(0)) || !last.Expiry().Equal(at(10)) {
		t.Errorf("since %v, expiry %v; want from 0", last.Since(), last.Expiry())
	}
	if st := Status(last, at(10)); st != StatusExpired {
		t.Errorf("status at 10: %s", st)
	}
	h.put(at(7), spec("a", at(7), 10, 0))
	if got := h.full[2].Expiry(); !got.Equal(at(17)) {
		t.Errorf("after a renewal, expiry %v", got)
	}
}

func TestRenewal(t *testing.T) {
	var h history
	h.put(at(0), spec("a", at(0), 10, 0))
	h.put(at(2), spec("a", at(2), 10, 0))   // renewal
	h.put(at(3), spec("a", at(2), 10, 0))   // same record: not a renewal
	h.put(at(20), spec("a", at(20), 10, 0)) // after it ran out: a new term, not a renewal
	h.put(at(21), spec("b", at(21), 10, 1)) // another holder
	want := []bool{true, false, false, false}
	for i, w := range want {
		if got := Renewal(h.full[i], h.full[i+1]); got != w {
			t.Errorf("change %d: renewal %v, want %v", i+1, got, w)
		}
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"tab-1", 15, "tab-1"},
		{"abcde", 5, "abcde"},  // exactly n characters: nothing cut
		{"abcdef", 5, "abcd…"}, // one more: cut, with the mark
		{"ééééé", 5, "ééééé"},  // characters, not bytes
		{"éééééé", 5, "éééé…"},
		{strings.Repeat("h", 1<<20), MaxShown, strings.Repeat("h", MaxShown-1) + "…"},
	} {
		if got := Cut(tc.s, tc.n); got != tc.want {
			t.Errorf("Cut(%.20q, %d) = %.20q, want %.20q", tc.s, tc.n, got, tc.want)
		}
	}
}

// TestTellRoles tells each change of a candidate's state once, with its first state.
func TestTellRoles(t *testing.T) {
	views := []View{
		{Identity: "alice", At: at(1), State: "follower"},
		{Identity: "alice", At: at(2), State: "leader", Leads: true},
		{Identity: "bob", At: at(2.5), State: "follower"},
		{Identity: "alice", At: at(3), State: "leader", Leads: true, Decision: "renewed"},
		{Identity: "alice", At: at(4), State: "paused", Leads: true, Faults: tabproto.Faults{Paused: true}},
		{Identity: "bob", At: at(9), State: "leader", Leads: true},
		{Identity: "alice", At: at(10), State: "stopped"},
	}
	got := texts(TellRoles("default/demo", views))
	want := strings.Join([]string{
		"role: alice follows on default/demo",
		"role: alice leads default/demo, as it sees it",
		"role: bob follows on default/demo",
		"role: alice was paused (a candidate of default/demo)",
		"role: bob leads default/demo, as it sees it",
		"role: alice stopped (a candidate of default/demo)",
	}, "\n")
	if got != want {
		t.Errorf("TellRoles:\n%s\nwant:\n%s", got, want)
	}
}
