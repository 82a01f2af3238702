package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// TestTimingsPage: /timings draws three incidents and the verdict at the sliders' values, its
// live part (/timings/live) is the same component, a choice client-go refuses shows client-go's
// reason and no incidents, and a value that is not a duration is a 400 that names it.
func TestTimingsPage(t *testing.T) {
	tu := mustNewUI(t, time.Now())
	doc := tu.mustGetDoc(t, "/timings?leaseDuration=15&renewDeadline=10s&retryPeriod=2", 200)
	if v, _ := doc.Find(`input[type=range][name=renewDeadline]`).Attr("value"); v != "10" {
		t.Errorf("renewDeadline slider at %q, want 10", v)
	}
	for _, name := range []string{"leaseDuration", "renewDeadline", "retryPeriod"} {
		if doc.Find(`input[type=range][name=`+name+`]`).Length() != 1 {
			t.Errorf("no slider named %s", name)
		}
	}
	if n := doc.Find(`[data-testid=timings-incident]`).Length(); n != 3 {
		t.Errorf("%d incidents drawn, want a crash, a release and a pause", n)
	}
	crash := doc.Find(`[data-testid=timings-incident][data-kind=crash]`).Text()
	if !strings.Contains(crash, "13\u00a0s to 23.8\u00a0s") {
		t.Errorf("crash at 15/10/2: %q", crash)
	}
	// The chart under the incidents runs on their axis: the same ticks at the same places.
	ticks := func(sel string) string {
		var out []string
		doc.Find(sel + ` text.tc-tick`).Each(func(_ int, s *goquery.Selection) {
			x, _ := s.Attr("x")
			out = append(out, s.Text()+"@"+x)
		})
		return strings.Join(out, " ")
	}
	if a, b := ticks(`[data-testid=timings-incidents]`), ticks(`[data-testid=timings-chart]`); a == "" || a != b {
		t.Errorf("the incidents' axis %q and the chart's %q differ", a, b)
	}
	if href, _ := doc.Find(`[data-testid=timings-play]`).Attr("href"); !strings.Contains(href, "renewDeadline=10") || !strings.HasPrefix(href, "/play?") {
		t.Errorf("the link to a tab: %q", href)
	}
	live := tu.mustGetDoc(t, "/timings/live?leaseDuration=10&renewDeadline=10&retryPeriod=2", 200)
	if got := live.Find(`#timings-live [data-testid=timings-refused]`).Text(); !strings.Contains(got, "leaseDuration must be greater than renewDeadline") {
		t.Errorf("refused: %q", got)
	}
	if live.Find(`[data-testid=timings-incident]`).Length() != 0 {
		t.Error("incidents drawn for settings client-go refuses")
	}
	bad := tu.mustGetDoc(t, "/timings/live?retryPeriod=often", 400)
	if got := bad.Find(`[data-testid=timings-problem]`).Text(); !strings.Contains(got, "retryPeriod must be a number of seconds") {
		t.Errorf("a bad value: %q", got)
	}
}
