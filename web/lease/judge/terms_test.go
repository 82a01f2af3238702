package judge

import (
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// write is a change by holder at second s, renewing at s for d seconds.
func write(s float64, holder string, d int, transitions int32) Change {
	c := Change{At: at(s), Holder: holder, Duration: time.Duration(d) * time.Second, Transitions: transitions}
	if holder != "" {
		c.RenewTime = at(s)
	}
	return c
}

func deleted(s float64) Change { return Deletion(0, at(s)) }

// termString is a compact form of a term for comparisons: "tab-1 0-5 takeover>tab-2 r2".
func termString(t Term) string {
	end := "…"
	if !t.End.IsZero() {
		end = fmt.Sprint(t.End.Sub(t0).Seconds())
	}
	s := fmt.Sprintf("%s %v-%s", t.Holder, t.Start.Sub(t0).Seconds(), end)
	if t.Ended != "" {
		s += " " + t.Ended
	}
	if t.Next != "" {
		s += ">" + t.Next
	}
	return fmt.Sprintf("%s t%d r%d", s, t.Transitions, t.Renewals)
}

func termStrings(terms []Term) string {
	var s []string
	for _, t := range terms {
		s = append(s, termString(t))
	}
	return strings.Join(s, "\n")
}

func TestTerms(t *testing.T) {
	tests := []struct {
		name    string
		changes []Change
		now     float64
		want    []string
	}{
		{
			name:    "no changes",
			changes: nil,
			now:     10,
			want:    nil,
		},
		{
			name:    "created without a holder",
			changes: []Change{write(0, "", 0, 0)},
			now:     10,
			want:    nil,
		},
		{
			name:    "held and renewed",
			changes: []Change{write(0, "tab-1", 10, 0), write(2, "tab-1", 10, 0), write(4, "tab-1", 10, 0)},
			now:     5,
			want:    []string{"tab-1 0-… t0 r2"},
		},
		{
			name:    "last term expired before now",
			changes: []Change{write(0, "tab-1", 10, 0), write(2, "tab-1", 10, 0)},
			now:     30,
			want:    []string{"tab-1 0-12 expired t0 r1"},
		},
		{
			name: "takeover before expiry",
			changes: []Change{
				write(0, "tab-1", 10, 0), write(2, "tab-1", 10, 0),
				write(5, "tab-2", 10, 1),
			},
			now:  6,
			want: []string{"tab-1 0-5 takeover>tab-2 t0 r1", "tab-2 5-… t1 r0"},
		},
		{
			name: "expiry, then another holder",
			changes: []Change{
				write(0, "tab-1", 3, 0), write(1, "tab-1", 3, 0),
				write(6, "tab-2", 3, 1),
			},
			now:  7,
			want: []string{"tab-1 0-4 expired>tab-2 t0 r1", "tab-2 6-… t1 r0"},
		},
		{
			name: "release, then another holder",
			changes: []Change{
				write(0, "tab-1", 10, 0),
				{At: at(3), Holder: "", Duration: time.Second},
				write(3.5, "tab-2", 10, 1),
			},
			now:  4,
			want: []string{"tab-1 0-3 released t0 r0", "tab-2 3.5-… t1 r0"},
		},
		{
			name: "deleted while held",
			changes: []Change{
				write(0, "tab-1", 10, 0), deleted(2),
				write(3, "tab-2", 10, 0),
			},
			now:  4,
			want: []string{"tab-1 0-2 deleted t0 r0", "tab-2 3-… t0 r0"},
		},
		{
			name: "deleted after it expired",
			changes: []Change{
				write(0, "tab-1", 2, 0), deleted(5),
			},
			now:  6,
			want: []string{"tab-1 0-2 expired t0 r0"},
		},
		{
			name: "a paused holder writes again after its lease ran out",
			changes: []Change{
				write(0, "tab-1", 3, 0), write(1, "tab-1", 3, 0),
				write(8, "tab-1", 3, 0),
			},
			now:  9,
			want: []string{"tab-1 0-4 expired>tab-1 t0 r1", "tab-1 8-… t0 r0"},
		},
		{
			name: "renewTime from a clock ahead changes nothing: the hold counts from the write",
			changes: []Change{
				{At: at(0), Holder: "tab-1", RenewTime: at(30), Duration: 3 * time.Second},
				write(5, "tab-2", 3, 1),
			},
			now:  6,
			want: []string{"tab-1 0-3 expired>tab-2 t0 r0", "tab-2 5-… t1 r0"},
		},
		{
			name: "no renewTime: the commit time stands in",
			changes: []Change{
				{At: at(0), Holder: "tab-1", Duration: 3 * time.Second},
			},
			now:  5,
			want: []string{"tab-1 0-3 expired t0 r0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Terms(tt.changes, at(tt.now))
			var gs []string
			for _, g := range got {
				gs = append(gs, termString(g))
			}
			if strings.Join(gs, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("terms:\n%s\nwant:\n%s", strings.Join(gs, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestCompactKeepsTerms checks that folding renewals changes nothing but the number of
// changes kept.
func TestCompactKeepsTerms(t *testing.T) {
	var full []Change
	for i := range 20 {
		full = append(full, write(float64(i), "tab-1", 3, 0))
	}
	full = append(full, write(30, "tab-1", 3, 0), write(31, "tab-1", 3, 0)) // after a gap
	for i := range 10 {
		full = append(full, write(32+float64(i)/2, "tab-2", 3, 1))
	}
	full = append(full, Change{At: at(40), Duration: time.Second})
	full = append(full, deleted(41))
	var compact []Change
	for _, c := range full {
		compact = Compact(compact, c)
	}
	if len(compact) >= len(full)/3 {
		t.Errorf("compacted to %d of %d changes", len(compact), len(full))
	}
	now := at(50)
	want, got := Terms(full, now), Terms(compact, now)
	if len(want) != len(got) {
		t.Fatalf("compacted terms %v, want %v", got, want)
	}
	for i := range want {
		if termString(want[i]) != termString(got[i]) {
			t.Errorf("term %d: %s, want %s", i, termString(got[i]), termString(want[i]))
		}
	}
}

// TestAppend: a change log read write by write through Append gives the changes (and so the
// terms) that ChangeOf and Compact give, a write that leaves the election record as it was
// keeps the hold's start, and a deletion ends the term.
func TestAppend(t *testing.T) {
	lease := func(holder string, renew float64, transitions int32) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(holder),
			LeaseDurationSeconds: ptr.To[int32](10),
			RenewTime:            &metav1.MicroTime{Time: at(renew)},
			LeaseTransitions:     ptr.To(transitions),
		}}
	}
	labelled := lease("a", 4, 0)
	labelled.Labels = map[string]string{"x": "y"}
	var changes []Change
	changes = Append(changes, lease("a", 0, 0), 1, at(0))
	changes = Append(changes, lease("a", 2, 0), 2, at(2))
	changes = Append(changes, lease("a", 4, 0), 3, at(4))
	changes = Append(changes, labelled, 4, at(5)) // the same record: the hold counts from 4
	changes = Append(changes, lease("b", 30, 1), 5, at(30))
	changes = Append(changes, nil, 6, at(32))
	if len(changes) != 4 {
		t.Errorf("%d changes, want 4 (a's middle writes folded): %+v", len(changes), changes)
	}
	if got := changes[1].Since(); !got.Equal(at(4)) {
		t.Errorf("a's last change counts from %v, want %v", got, at(4))
	}
	got := termStrings(Terms(changes, at(40)))
	want := "a 0-14 expired>b t0 r3\nb 30-32 deleted t1 r0"
	if got != want {
		t.Errorf("terms:\n%s\nwant:\n%s", got, want)
	}
}
