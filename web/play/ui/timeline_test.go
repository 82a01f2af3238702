package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/web/lease/judge"
)

var t0 = time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// write is a change by holder at second s, renewing at s for d seconds.
func write(s float64, holder string, d int, transitions int32) judge.Change {
	return judge.Change{At: at(s), Holder: holder, Duration: time.Duration(d) * time.Second, Transitions: transitions}
}

// sampleTerms are tab-1's term taken over by tab-2, tab-2's that ran out before tab-1 took the
// lease again, and tab-1's released at 20 s; judged at 60 s.
func sampleTerms() []judge.Term {
	return judge.Terms([]judge.Change{
		write(0, "tab-1", 10, 0), write(2, "tab-1", 10, 0),
		write(5, "tab-2", 3, 1),
		write(12, "tab-1", 10, 2),
		{At: at(20), Duration: time.Second},
	}, at(60))
}

func TestLayoutTimeline(t *testing.T) {
	terms := sampleTerms()
	tl := layoutTimeline(terms, nil, at(60), tlMaxSpan)
	if len(tl.Lanes) != 2 || tl.Lanes[0].Identity != "tab-1" || tl.Lanes[1].Identity != "tab-2" {
		t.Fatalf("lanes %+v", tl.Lanes)
	}
	if n := len(tl.Lanes[0].Bars); n != 2 {
		t.Errorf("tab-1 has %d bars, want 2", n)
	}
	var kinds []string
	for _, m := range tl.Marks {
		kinds = append(kinds, m.Kind)
		if m.X < tl.LabelWidth || m.X > tl.NowX {
			t.Errorf("mark %s at x %v outside [%v, %v]", m.Kind, m.X, tl.LabelWidth, tl.NowX)
		}
	}
	if got := strings.Join(kinds, ","); got != "takeover,expired,released" {
		t.Errorf("marks %s, want takeover,expired,released", got)
	}
	for _, l := range tl.Lanes {
		for _, b := range l.Bars {
			if b.X < tl.LabelWidth || b.X+b.W > tl.NowX+2 || b.W <= 0 {
				t.Errorf("%s: bar [%v, %v] outside the plot", l.Identity, b.X, b.X+b.W)
			}
		}
	}
	if len(tl.Terms) != 3 || tl.Terms[0].EndedText != "released" || tl.Terms[2].EndedText != "taken over by tab-2" {
		t.Errorf("terms %+v", tl.Terms)
	}
	if len(tl.Ticks) == 0 || len(tl.Ticks) > 8 {
		t.Errorf("%d ticks", len(tl.Ticks))
	}

	// Terms that ended before the window are left out; the window is at most five minutes.
	tl = layoutTimeline(terms, nil, at(3600), tlMaxSpan)
	if len(tl.Lanes) != 0 || len(tl.Terms) != 0 || tl.Span != "5 min" {
		t.Errorf("an hour later: %d lanes, %d terms, span %s", len(tl.Lanes), len(tl.Terms), tl.Span)
	}
}

// TestTimelineMarkTitles: a mark's hover text says when the term ended, and, when the lease
// ran out before another took it, both when it expired and when the other took it.
func TestTimelineMarkTitles(t *testing.T) {
	terms := sampleTerms()
	tl := layoutTimeline(terms, nil, at(60), tlMaxSpan)
	var titles []string
	for _, m := range tl.Marks {
		titles = append(titles, m.Kind+": "+m.Title+" | "+m.TitleSays.Zh)
	}
	want := []string{
		"takeover: taken over by tab-2 at " + clockTime(at(5)) + " | 被 tab-2 接管，于 " + clockTime(at(5)),
		"expired: expired at " + clockTime(at(8)) + ", then tab-1 took it at " + clockTime(at(12)) +
			" | 于 " + clockTime(at(8)) + " 过期，之后 tab-1 于 " + clockTime(at(12)) + " 获得",
		"released: released at " + clockTime(at(20)) + " | 已释放，于 " + clockTime(at(20)),
	}
	if got := strings.Join(titles, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("mark titles:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestTimelineTicksFit: no axis label reaches past the drawing's edges, whatever the window
// (a label is about tlCharWidth a character wide, centred on its tick unless it says otherwise).
func TestTimelineTicksFit(t *testing.T) {
	for s := 0.0; s < 120; s += 0.25 {
		now := at(600 + s)
		for _, terms := range [][]judge.Term{nil, judge.Terms([]judge.Change{write(600+s-40, "a", 10, 0)}, now)} {
			tl := layoutTimeline(terms, nil, now, tlMaxSpan)
			for _, k := range tl.Ticks {
				w := tlCharWidth * float64(len(k.Label))
				left, right := k.X-w/2, k.X+w/2
				if k.Anchor == "end" {
					left, right = k.X-w, k.X
				}
				if left < tlLabelWidth-w/2 || right > tl.Width {
					t.Fatalf("now %s: the label %q at %.1f spans [%.1f, %.1f], outside [%v, %v]", now, k.Label, k.X, left, right, tlLabelWidth-w/2, tl.Width)
				}
			}
		}
	}
}
