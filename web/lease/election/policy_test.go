package election_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/web/api/kinds/coordinationv1alpha1"
	"github.com/leaselab/leaselab/web/lease/election"
)

// t0 is the test's "now".
var t0 = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

const (
	oev    = coordinationv1.OldestEmulationVersion
	custom = coordinationv1.CoordinatedLeaseStrategy("example.com/custom")
)

// cand builds a candidate for lease "demo", created at t0-1h+created, that renewed at
// t0+renewed (nil renewTime when renewed is nil) and was pinged at t0+pinged (nil: never).
type candOpt func(*election.Candidate)

func cand(name, binary, emulation string, opts ...candOpt) *election.Candidate {
	c := &coordinationv1beta1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))},
		Spec: coordinationv1beta1.LeaseCandidateSpec{
			LeaseName:        "demo",
			BinaryVersion:    binary,
			EmulationVersion: emulation,
			Strategy:         oev,
			RenewTime:        &metav1.MicroTime{Time: t0},
		},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

func created(d time.Duration) candOpt {
	return func(c *election.Candidate) { c.CreationTimestamp = metav1.NewTime(t0.Add(-time.Hour + d)) }
}

func renewed(d time.Duration) candOpt {
	return func(c *election.Candidate) { c.Spec.RenewTime = &metav1.MicroTime{Time: t0.Add(d)} }
}

func noRenew() candOpt { return func(c *election.Candidate) { c.Spec.RenewTime = nil } }

func pinged(d time.Duration) candOpt {
	return func(c *election.Candidate) { c.Spec.PingTime = &metav1.MicroTime{Time: t0.Add(d)} }
}

func strategy(s coordinationv1.CoordinatedLeaseStrategy) candOpt {
	return func(c *election.Candidate) { c.Spec.Strategy = s }
}

// prefers makes the candidate one written through LeaseCandidate v1alpha1 with these
// preferredStrategies, as leaselab stores it.
func prefers(list ...coordinationv1.CoordinatedLeaseStrategy) candOpt {
	return func(c *election.Candidate) {
		a := coordinationv1alpha1.FromV1beta1(c)
		a.Spec.PreferredStrategies = list
		*c = coordinationv1alpha1.ToV1beta1(&a)
	}
}

func forLease(name string) candOpt { return func(c *election.Candidate) { c.Spec.LeaseName = name } }

// lease builds Lease default/demo held by holder ("" for an empty holder, "-" for nil) that
// renewed at t0+renewed with a 5s duration.
type leaseOpt func(*coordinationv1.Lease)

func lease(holder string, renewedAt time.Duration, opts ...leaseOpt) *coordinationv1.Lease {
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default"},
		Spec: coordinationv1.LeaseSpec{
			LeaseDurationSeconds: ptr.To[int32](5),
			RenewTime:            &metav1.MicroTime{Time: t0.Add(renewedAt)},
			Strategy:             ptr.To(oev),
		},
	}
	if holder != "-" {
		l.Spec.HolderIdentity = ptr.To(holder)
	}
	for _, o := range opts {
		o(l)
	}
	return l
}

func names(cs []*election.Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func TestResolveStrategy(t *testing.T) {
	tests := []struct {
		name    string
		cands   []*election.Candidate
		want    coordinationv1.CoordinatedLeaseStrategy
		reason  string
		wantErr string
	}{
		{
			name:   "one candidate",
			cands:  []*election.Candidate{cand("a", "1.36.0", "1.36.0")},
			want:   oev,
			reason: "strategy OldestEmulationVersion: asked by the only candidate a",
		},
		{
			name:   "all agree",
			cands:  []*election.Candidate{cand("a", "1.36.0", "1.36.0"), cand("b", "1.35.0", "1.35.0")},
			want:   oev,
			reason: "strategy OldestEmulationVersion: asked by every candidate",
		},
		{
			name:   "highest binary version decides",
			cands:  []*election.Candidate{cand("a", "1.35.0", "1.35.0"), cand("b", "1.37.0", "1.36.0", strategy(custom)), cand("c", "1.36.0", "1.36.0")},
			want:   custom,
			reason: "strategy example.com/custom: asked by b, at the highest binary version 1.37.0",
		},
		{
			name:   "lenient versions: v1.37 is 1.37.0 and beats 1.36.9",
			cands:  []*election.Candidate{cand("a", "1.36.9", "1.36.0"), cand("b", "v1.37", "1.36.0", strategy(custom))},
			want:   custom,
			reason: "strategy example.com/custom: asked by b, at the highest binary version 1.37.0",
		},
		{
			name:   "an unparsable binary version counts as 0.0.0",
			cands:  []*election.Candidate{cand("a", "banana", "1.36.0", strategy(custom)), cand("b", "0.0.1", "0.0.1")},
			want:   oev,
			reason: "strategy OldestEmulationVersion: asked by b, at the highest binary version 0.0.1",
		},
		{
			name:    "same binary version, different strategies: conflict",
			cands:   []*election.Candidate{cand("b", "1.36.0", "1.36.0", strategy(custom)), cand("a", "1.36.0", "1.35.0")},
			wantErr: `candidates "a", "b" at same binary version but received differing strategies OldestEmulationVersion, example.com/custom`,
		},
		{
			name:    "conflict at the top despite agreement below",
			cands:   []*election.Candidate{cand("a", "1.35.0", "1.35.0"), cand("b", "1.36.0", "1.36.0"), cand("c", "1.36", "1.36.0", strategy(custom))},
			wantErr: `candidates "b", "c" at same binary version but received differing strategies OldestEmulationVersion, example.com/custom`,
		},
		{
			name:   "a disagreement among older binaries is settled by the newest",
			cands:  []*election.Candidate{cand("a", "1.35.0", "1.35.0"), cand("b", "1.35.0", "1.35.0", strategy(custom)), cand("c", "1.36.0", "1.36.0")},
			want:   oev,
			reason: "strategy OldestEmulationVersion: asked by c, at the highest binary version 1.36.0",
		},
		{
			name:    "no candidates",
			wantErr: "no candidates",
		},
		// With a v1alpha1 candidate among them, v1alpha1's rules decide, over every list.
		{
			name:   "v1alpha1: every list starts with the same strategy",
			cands:  []*election.Candidate{cand("a", "1.31.0", "1.31.0", prefers(oev, custom)), cand("b", "1.31.0", "1.31.0", prefers(oev))},
			want:   oev,
			reason: "strategy OldestEmulationVersion: first choice of every candidate",
		},
		{
			name:   "v1alpha1: [Y, X] against [X] gives Y",
			cands:  []*election.Candidate{cand("a", "1.31.0", "1.31.0", prefers(custom, oev)), cand("b", "1.31.0", "1.31.0", prefers(oev))},
			want:   custom,
			reason: "strategy example.com/custom: it supersedes every other preferred strategy",
		},
		{
			name:   "v1alpha1 [Y, X] against a v1beta1 candidate with X, at a higher binary version",
			cands:  []*election.Candidate{cand("a", "1.31.0", "1.31.0", prefers(custom, oev)), cand("b", "1.36.0", "1.36.0")},
			want:   custom,
			reason: "strategy example.com/custom: it supersedes every other preferred strategy",
		},
		{
			name:    "v1alpha1: [X, Y] against [Y, X] is a user error",
			cands:   []*election.Candidate{cand("a", "1.31.0", "1.31.0", prefers(oev, custom)), cand("b", "1.31.0", "1.31.0", prefers(custom, oev))},
			wantErr: "candidates disagree on the strategy: a prefers [OldestEmulationVersion, example.com/custom], b prefers [example.com/custom, OldestEmulationVersion]; their preferences contradict each other",
		},
		{
			name:    "v1alpha1: [X] against [Y] has no first strategy",
			cands:   []*election.Candidate{cand("a", "1.31.0", "1.31.0", prefers(oev)), cand("b", "1.36.0", "1.36.0", strategy(custom))},
			wantErr: "candidates disagree on the strategy: a prefers [OldestEmulationVersion], b prefers [example.com/custom]; no strategy supersedes all others ([OldestEmulationVersion, example.com/custom])",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := election.ResolveStrategy(tt.cands)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				var ce *election.ConflictError
				var de *election.StrategyDisagreementError
				switch {
				case strings.HasPrefix(tt.wantErr, "candidates disagree") && !errors.As(err, &de):
					t.Errorf("err is %T, want *StrategyDisagreementError", err)
				case strings.HasPrefix(tt.wantErr, "candidates \"") && !errors.As(err, &ce):
					t.Errorf("err is %T, want *ConflictError", err)
				}
				if strings.HasPrefix(tt.wantErr, "candidates") != election.IsStrategyConflict(err) {
					t.Errorf("IsStrategyConflict(%v) = %v", err, election.IsStrategyConflict(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Strategy != tt.want || got.Reason != tt.reason {
				t.Errorf("got %q (%q), want %q (%q)", got.Strategy, got.Reason, tt.want, tt.reason)
			}
		})
	}
}

func TestPickOldestEmulationVersion(t *testing.T) {
	tests := []struct {
		name   string
		cands  []*election.Candidate
		want   string // "" for no winner
		reason string
	}{
		{
			name:   "lowest emulation version wins",
			cands:  []*election.Candidate{cand("cand-a", "1.36.0", "1.36.0"), cand("cand-b", "1.36.0", "1.35.0"), cand("cand-c", "1.37.0", "1.36.0")},
			want:   "cand-b",
			reason: "picked cand-b: emulation 1.35.0 < 1.36.0 of cand-a",
		},
		{
			name:   "emulation compares numerically, not as text",
			cands:  []*election.Candidate{cand("a", "1.10.0", "1.10.0"), cand("b", "1.9.0", "1.9.0")},
			want:   "b",
			reason: "picked b: emulation 1.9.0 < 1.10.0 of a",
		},
		{
			name:   "then lowest binary version",
			cands:  []*election.Candidate{cand("a", "1.36.0", "1.35.0"), cand("b", "1.35.0", "1.35.0")},
			want:   "b",
			reason: "picked b: emulation 1.35.0 like a, binary 1.35.0 < 1.36.0",
		},
		{
			name:   "then oldest candidate",
			cands:  []*election.Candidate{cand("a", "1.36.0", "1.36.0", created(2*time.Second)), cand("b", "1.36.0", "1.36.0", created(time.Second))},
			want:   "b",
			reason: "picked b: same versions as a (emulation 1.36.0, binary 1.36.0), created earlier (2026-03-04T11:00:01Z < 2026-03-04T11:00:02Z)",
		},
		{
			name:   "then first by name",
			cands:  []*election.Candidate{cand("b", "1.36.0", "1.36.0"), cand("a", "1.36.0", "1.36.0")},
			want:   "a",
			reason: "picked a: same versions and creation time as b (emulation 1.36.0, binary 1.36.0), first by name",
		},
		{
			name:   "lenient parsing: v1.35 is 1.35.0",
			cands:  []*election.Candidate{cand("a", "1.36.0", "1.36.0"), cand("b", "v1.36", "v1.35")},
			want:   "b",
			reason: "picked b: emulation 1.35.0 < 1.36.0 of a",
		},
		{
			name:   "unparsable versions are skipped",
			cands:  []*election.Candidate{cand("a", "1.36.0", "old"), cand("b", "1.36.0", "1.36.0"), cand("c", "x", "1.30.0")},
			want:   "b",
			reason: `picked b: the only candidate (emulation 1.36.0, binary 1.36.0); skipped a (emulationVersion "old" does not parse), c (binaryVersion "x" does not parse)`,
		},
		{
			name:   "an empty emulation version does not parse",
			cands:  []*election.Candidate{cand("a", "1.36.0", "")},
			reason: `no candidate has parsable versions; skipped a (emulationVersion "" does not parse)`,
		},
		{
			name:   "no candidates",
			reason: "no candidate has parsable versions",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := election.PickOldestEmulationVersion(tt.cands)
			got := ""
			if p.Winner != nil {
				got = p.Winner.Name
			}
			if got != tt.want || p.Reason != tt.reason {
				t.Errorf("got %q (%q), want %q (%q)", got, p.Reason, tt.want, tt.reason)
			}
		})
	}
}

func TestAdmissibleAndExpiry(t *testing.T) {
	tm := election.DefaultTiming()
	all := []*election.Candidate{
		cand("c", "1.36.0", "1.36.0", renewed(-29*time.Minute)),
		cand("a", "1.36.0", "1.36.0"),
		cand("old", "1.36.0", "1.36.0", renewed(-31*time.Minute)),
		cand("never", "1.36.0", "1.36.0", noRenew()),
		cand("other", "1.36.0", "1.36.0", forLease("elsewhere")),
	}
	ok, expired := election.Admissible(all, "demo", t0, tm)
	if got := strings.Join(names(ok), ","); got != "a,c" {
		t.Errorf("admissible = %s, want a,c", got)
	}
	if got := strings.Join(names(expired), ","); got != "never,old" {
		t.Errorf("expired = %s, want never,old", got)
	}

	for _, tt := range []struct {
		name string
		l    *coordinationv1.Lease
		want bool
	}{
		{"fresh", lease("a", -4*time.Second), false},
		{"at the limit", lease("a", -5*time.Second), false},
		{"past the limit", lease("a", -5*time.Second-time.Microsecond), true},
		{"no renewTime", lease("a", 0, func(l *coordinationv1.Lease) { l.Spec.RenewTime = nil }), true},
		{"no duration", lease("a", 0, func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = nil }), true},
	} {
		if got := election.LeaseExpired(tt.l, t0); got != tt.want {
			t.Errorf("LeaseExpired(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestElectionNeeded(t *testing.T) {
	tm := election.DefaultTiming()
	a := cand("a", "1.36.0", "1.36.0")
	b := cand("b", "1.36.0", "1.35.0")
	tests := []struct {
		name    string
		cands   []*election.Candidate
		lease   *coordinationv1.Lease
		needed  bool
		best    string
		reason  string
		wantErr bool
	}{
		{name: "missing lease", cands: []*election.Candidate{a}, needed: true, reason: "the lease does not exist"},
		{name: "expired lease", cands: []*election.Candidate{a}, lease: lease("a", -7*time.Second), needed: true, reason: "the lease expired 2s ago"},
		{name: "no renewTime", cands: []*election.Candidate{a}, lease: lease("a", 0, func(l *coordinationv1.Lease) { l.Spec.RenewTime = nil }), needed: true, reason: "the lease has no renewTime"},
		{name: "no duration", cands: []*election.Candidate{a}, lease: lease("a", 0, func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = nil }), needed: true, reason: "the lease has no leaseDurationSeconds"},
		{name: "nil holder", cands: []*election.Candidate{a}, lease: lease("-", 0), needed: true, reason: "the lease has no holder"},
		{name: "empty holder", cands: []*election.Candidate{a}, lease: lease("", 0), needed: true, reason: "the lease has no holder"},
		{
			name:  "a candidate not renewed for 15 minutes forces an election",
			cands: []*election.Candidate{a, cand("z", "1.36.0", "1.36.0", renewed(-16*time.Minute))},
			lease: lease("a", 0), needed: true, reason: "z has not renewed for 15m0s",
		},
		{
			name:  "holder is the best",
			cands: []*election.Candidate{a, b}, lease: lease("b", 0), best: "b",
			reason: "holder b is already the best candidate: picked b: emulation 1.35.0 < 1.36.0 of a",
		},
		{
			name:  "a better candidate than the holder",
			cands: []*election.Candidate{a, b}, lease: lease("a", 0), needed: true, best: "b",
			reason: "holder a is not the best candidate: picked b: emulation 1.35.0 < 1.36.0 of a",
		},
		{
			name:  "a holder that is no candidate",
			cands: []*election.Candidate{a}, lease: lease("someone", 0), needed: true, best: "a",
			reason: "holder someone is not the best candidate: picked a: the only candidate (emulation 1.36.0, binary 1.36.0)",
		},
		{
			name:  "custom strategy is left alone",
			cands: []*election.Candidate{cand("a", "1.36.0", "1.36.0", strategy(custom))}, lease: lease("x", 0),
			reason: "strategy example.com/custom: asked by the only candidate a is left to another controller",
		},
		{
			name:  "no parsable versions",
			cands: []*election.Candidate{cand("a", "1.36.0", "?")}, lease: lease("x", 0),
			reason: `no candidate has parsable versions; skipped a (emulationVersion "?" does not parse)`,
		},
		{
			name:  "strategy conflict: no election",
			cands: []*election.Candidate{a, cand("c", "1.36.0", "1.36.0", strategy(custom))}, lease: lease("a", 0), wantErr: true,
			reason: `candidates "a", "c" at same binary version but received differing strategies OldestEmulationVersion, example.com/custom`,
		},
		{
			name:  "a conflict does not stop an election of an expired lease",
			cands: []*election.Candidate{a, cand("c", "1.36.0", "1.36.0", strategy(custom))}, lease: lease("a", -10*time.Second), needed: true,
			reason: "the lease expired 5s ago",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			need, err := election.ElectionNeeded(tt.cands, tt.lease, t0, tm)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			best := ""
			if need.Best != nil {
				best = need.Best.Name
			}
			if need.Needed != tt.needed || need.Reason != tt.reason || best != tt.best {
				t.Errorf("got needed=%v best=%q %q, want needed=%v best=%q %q", need.Needed, best, need.Reason, tt.needed, tt.best, tt.reason)
			}
		})
	}
}

func TestPingState(t *testing.T) {
	const ed = 5 * time.Second
	tests := []struct {
		name string
		c    *election.Candidate
		want election.PingState
	}{
		{"renewed just now, never pinged", cand("a", "1", "1"), election.PingFresh},
		{"renewed 4s ago", cand("a", "1", "1", renewed(-4*time.Second)), election.PingFresh},
		{"renewed 5s ago, never pinged", cand("a", "1", "1", renewed(-5*time.Second)), election.PingNeeded},
		{"stale, never pinged", cand("a", "1", "1", renewed(-time.Minute)), election.PingNeeded},
		{"pinged 1s ago, not answered", cand("a", "1", "1", renewed(-time.Minute), pinged(-time.Second)), election.PingWaiting},
		{"pinged 1s ago, answered", cand("a", "1", "1", renewed(-500*time.Millisecond), pinged(-time.Second)), election.PingFresh},
		{"pinged 1s ago, answered at the same instant", cand("a", "1", "1", renewed(-time.Second), pinged(-time.Second)), election.PingFresh},
		{"pinged 10s ago, answered, stale again", cand("a", "1", "1", renewed(-9*time.Second), pinged(-10*time.Second)), election.PingNeeded},
		{"pinged 10s ago, never answered: not pinged again", cand("a", "1", "1", renewed(-time.Minute), pinged(-10*time.Second)), election.PingUnanswered},
		{"no renewTime is never pinged", cand("a", "1", "1", noRenew()), election.PingUnanswered},
		{"no renewTime with an old ping", cand("a", "1", "1", noRenew(), pinged(-10*time.Second)), election.PingUnanswered},
		{"no renewTime with a young ping", cand("a", "1", "1", noRenew(), pinged(-time.Second)), election.PingWaiting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := election.PingStateOf(tt.c, t0, ed); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}

	cands := []*election.Candidate{
		cand("fresh", "1", "1"),
		cand("stale", "1", "1", renewed(-time.Minute)),
		cand("waiting", "1", "1", renewed(-time.Minute), pinged(-time.Second)),
		cand("silent", "1", "1", renewed(-time.Minute), pinged(-10*time.Second)),
	}
	p := election.PlanPings(cands, t0, ed)
	if got := strings.Join(names(p.ToPing), ","); got != "stale" {
		t.Errorf("ToPing = %s", got)
	}
	if strings.Join(p.Waiting, ",") != "waiting" || strings.Join(p.Fresh, ",") != "fresh" || strings.Join(p.Unanswered, ",") != "silent" {
		t.Errorf("plan = %+v", p)
	}
	if p.CanVote() {
		t.Error("CanVote with a ping to send and one waiting")
	}
	if !election.PlanPings([]*election.Candidate{cands[0], cands[3]}, t0, ed).CanVote() {
		t.Error("cannot vote with one fresh and one silent candidate")
	}
	if got := strings.Join(names(election.Acked(cands, t0, ed)), ","); got != "fresh" {
		t.Errorf("Acked = %s, want fresh (the silent one did not answer)", got)
	}

	// On a fake clock, a candidate answers at the instant of the ping and the controller looks
	// again one election duration later, to the nanosecond: the answer counts.
	answered := cand("answered", "1", "1", renewed(-ed), pinged(-ed))
	silent := cand("silent", "1", "1", renewed(-time.Minute), pinged(-ed))
	if p := election.PlanPings([]*election.Candidate{answered, silent}, t0, ed); !p.CanVote() {
		t.Errorf("cannot vote one election duration after the ping: %+v", p)
	}
	if got := strings.Join(names(election.Acked([]*election.Candidate{answered, silent}, t0, ed)), ","); got != "answered" {
		t.Errorf("Acked one election duration after the ping = %q, want answered", got)
	}
	if got := names(election.Acked([]*election.Candidate{cand("late", "1", "1", renewed(-ed-time.Nanosecond))}, t0, ed)); len(got) != 0 {
		t.Errorf("Acked past the bound = %v, want none", got)
	}
}

func TestDesiredLease(t *testing.T) {
	tm := election.DefaultTiming()
	d, err := election.DesiredLease([]*election.Candidate{cand("cand-a", "1.36.0", "1.36.0"), cand("cand-b", "1.36.0", "1.35.0")}, tm)
	if err != nil || d.Holder == nil || *d.Holder != "cand-b" || d.Strategy != oev || d.LeaseDurationSeconds != 5 ||
		d.Reason != "picked cand-b: emulation 1.35.0 < 1.36.0 of cand-a" {
		t.Errorf("OldestEmulationVersion: %+v, %v", d, err)
	}
	d, err = election.DesiredLease([]*election.Candidate{cand("a", "1.36.0", "1.36.0", strategy(custom))}, tm)
	if err != nil || d.Holder != nil || d.Strategy != custom {
		t.Errorf("custom strategy gets no holder: %+v, %v", d, err)
	}
	_, err = election.DesiredLease([]*election.Candidate{cand("a", "1.36.0", "1.36.0"), cand("b", "1.36.0", "1.36.0", strategy(custom))}, tm)
	var ce *election.ConflictError
	if !errors.As(err, &ce) || ce.First != "a" || ce.Second != "b" {
		t.Errorf("conflict: %v", err)
	}
	if _, err := election.DesiredLease(nil, tm); err == nil || err.Error() != "no available candidates" {
		t.Errorf("none acked: %v", err)
	}
	if _, err := election.DesiredLease([]*election.Candidate{cand("a", "1.36.0", "x")}, tm); err == nil {
		t.Error("no parsable versions: no error")
	}

	l := election.NewLease("ns", "demo", election.Desired{Strategy: oev, Holder: ptr.To("a"), LeaseDurationSeconds: 5}, t0)
	if l.Namespace != "ns" || *l.Spec.HolderIdentity != "a" || *l.Spec.Strategy != oev || *l.Spec.LeaseDurationSeconds != 5 ||
		!l.Spec.RenewTime.Time.Equal(t0) || l.Spec.AcquireTime != nil || l.Spec.PreferredHolder != nil {
		t.Errorf("NewLease = %+v", l.Spec)
	}
	if l := election.NewLease("ns", "demo", election.Desired{Strategy: custom, LeaseDurationSeconds: 5}, t0); l.Spec.HolderIdentity != nil {
		t.Errorf("NewLease without holder = %+v", l.Spec)
	}
}

func TestPlanLeaseUpdate(t *testing.T) {
	want := func(h string) election.Desired {
		return election.Desired{Strategy: oev, Holder: ptr.To(h), LeaseDurationSeconds: 5, Reason: "picked " + h}
	}
	withAcquire := func(l *coordinationv1.Lease) {
		l.Spec.AcquireTime = &metav1.MicroTime{Time: t0.Add(-time.Hour)}
		l.Spec.LeaseDurationSeconds = ptr.To[int32](15)
	}
	tests := []struct {
		name      string
		existing  *coordinationv1.Lease
		desired   election.Desired
		action    election.Action
		strategy  bool
		holder    string // expected holder after ("-" for nil)
		preferred string // expected preferredHolder after ("" for nil)
		reason    string
	}{
		{
			name: "nil holder: assign", existing: lease("-", -time.Second), desired: want("b"),
			action: election.ActionAssign, holder: "b", reason: "assigned b (the lease had no holder): picked b",
		},
		{
			name: "empty holder (released): assign", existing: lease("", 0, withAcquire), desired: want("b"),
			action: election.ActionAssign, holder: "b", reason: "assigned b (the lease had no holder): picked b",
		},
		{
			name: "expired with another holder: assign", existing: lease("a", -time.Minute, withAcquire), desired: want("b"),
			action: election.ActionAssign, holder: "b", reason: "assigned b (the lease of a expired): picked b",
		},
		{
			name: "valid with another holder: preferredHolder", existing: lease("a", 0, withAcquire), desired: want("b"),
			action: election.ActionPrefer, holder: "a", preferred: "b", reason: "set preferredHolder b (holder a must step down): picked b",
		},
		{
			name: "preferredHolder already set: nothing", existing: lease("a", 0, func(l *coordinationv1.Lease) { l.Spec.PreferredHolder = ptr.To("b") }), desired: want("b"),
			holder: "a", preferred: "b", reason: "the lease already is as the election wants",
		},
		{
			name: "expired with the same holder: nothing", existing: lease("b", -time.Minute), desired: want("b"),
			holder: "b", reason: "the lease already is as the election wants",
		},
		{
			name: "strategy missing: set with the holder", existing: lease("-", 0, func(l *coordinationv1.Lease) { l.Spec.Strategy = nil }), desired: want("b"),
			action: election.ActionAssign, strategy: true, holder: "b",
			reason: "strategy OldestEmulationVersion (was none), assigned b (the lease had no holder): picked b",
		},
		{
			name: "custom strategy with a nil holder: strategy only, no crash", existing: lease("-", 0),
			desired:  election.Desired{Strategy: custom, LeaseDurationSeconds: 5, Reason: "custom"},
			strategy: true, holder: "-", reason: "strategy example.com/custom (was OldestEmulationVersion): custom",
		},
		{
			name: "custom strategy with an empty holder: strategy only", existing: lease("", 0),
			desired:  election.Desired{Strategy: custom, LeaseDurationSeconds: 5, Reason: "custom"},
			strategy: true, holder: "", reason: "strategy example.com/custom (was OldestEmulationVersion): custom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.existing.DeepCopy()
			u := election.PlanLeaseUpdate(tt.existing, tt.desired, t0)
			if u.Action != tt.action || u.StrategyChanged != tt.strategy || u.Reason != tt.reason {
				t.Errorf("got action %v strategy %v %q, want %v %v %q", u.Action, u.StrategyChanged, u.Reason, tt.action, tt.strategy, tt.reason)
			}
			if !equalLease(before, tt.existing) {
				t.Error("PlanLeaseUpdate changed its input")
			}
			after := u.Lease
			if after == nil {
				if tt.action != election.ActionNone || tt.strategy {
					t.Fatal("no updated lease")
				}
				after = tt.existing
			}
			holder := "-"
			if after.Spec.HolderIdentity != nil {
				holder = *after.Spec.HolderIdentity
			}
			preferred := ""
			if after.Spec.PreferredHolder != nil {
				preferred = *after.Spec.PreferredHolder
			}
			if holder != tt.holder || preferred != tt.preferred {
				t.Errorf("holder %q preferred %q, want %q %q", holder, preferred, tt.holder, tt.preferred)
			}
			if tt.action == election.ActionAssign {
				s := after.Spec
				if s.AcquireTime != nil || *s.LeaseDurationSeconds != 5 || !s.RenewTime.Time.Equal(t0) || s.PreferredHolder != nil {
					t.Errorf("assigned lease = %+v", s)
				}
			}
		})
	}
}

func equalLease(a, b *coordinationv1.Lease) bool {
	return a.String() == b.String()
}

func TestResolvePreferredStrategies(t *testing.T) {
	const (
		x = coordinationv1.CoordinatedLeaseStrategy("example.com/x")
		y = coordinationv1.CoordinatedLeaseStrategy("example.com/y")
		z = coordinationv1.CoordinatedLeaseStrategy("example.com/z")
	)
	list := func(name string, s ...coordinationv1.CoordinatedLeaseStrategy) election.PreferredStrategies {
		return election.PreferredStrategies{Candidate: name, Strategies: s}
	}
	tests := []struct {
		name    string
		lists   []election.PreferredStrategies
		want    coordinationv1.CoordinatedLeaseStrategy
		reason  string
		wantErr string
	}{
		{
			name:   "every list starts with X",
			lists:  []election.PreferredStrategies{list("a", x), list("b", x, y), list("c", x, z)},
			want:   x,
			reason: "strategy example.com/x: first choice of every candidate",
		},
		{
			name:   "[Y, X] against [X]: Y supersedes X",
			lists:  []election.PreferredStrategies{list("a", x), list("b", y, x)},
			want:   y,
			reason: "strategy example.com/y: it supersedes every other preferred strategy",
		},
		{
			name:   "a chain through three lists",
			lists:  []election.PreferredStrategies{list("a", z), list("b", y, z), list("c", x, y)},
			want:   x,
			reason: "strategy example.com/x: it supersedes every other preferred strategy",
		},
		{
			name:   "empty lists take no part",
			lists:  []election.PreferredStrategies{list("a"), list("b", oev)},
			want:   oev,
			reason: "strategy OldestEmulationVersion: first choice of every candidate",
		},
		{
			name:    "[X, Y] against [Y, X]: a user error",
			lists:   []election.PreferredStrategies{list("b", y, x), list("a", x, y)},
			wantErr: "candidates disagree on the strategy: a prefers [example.com/x, example.com/y], b prefers [example.com/y, example.com/x]; their preferences contradict each other",
		},
		{
			name:    "no common first strategy",
			lists:   []election.PreferredStrategies{list("a", x), list("b", y)},
			wantErr: "candidates disagree on the strategy: a prefers [example.com/x], b prefers [example.com/y]; no strategy supersedes all others ([example.com/x, example.com/y])",
		},
		{
			name:    "[X, X]: X supersedes itself, as 1.31 read it",
			lists:   []election.PreferredStrategies{list("a", x), list("b", x, x)},
			wantErr: "candidates disagree on the strategy: a prefers [example.com/x], b prefers [example.com/x, example.com/x]; example.com/x follows itself, so it supersedes itself",
		},
		{
			name:    "nothing preferred",
			lists:   []election.PreferredStrategies{list("a")},
			wantErr: "no candidate prefers any strategy",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := election.ResolvePreferredStrategies(tt.lists)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Strategy != tt.want || got.Reason != tt.reason {
				t.Errorf("got %q (%q), want %q (%q)", got.Strategy, got.Reason, tt.want, tt.reason)
			}
		})
	}
}
