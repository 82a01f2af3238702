package ui

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// TestPlayTimings: the candidate tab's settings drawer shows the calculator's verdict on the
// tab's durations, as typed: its figures, its warnings told by word and severity, the chart, or
// client-go's reason for refusing them.
func TestPlayTimings(t *testing.T) {
	tu := mustNewUI(t, t0)
	for _, tc := range []struct {
		query    string
		status   int
		settings string
		figures  map[string]string // data-testid → value
		warnings []string          // code/severity, in order
		overlap  bool
		refused  string
		none     bool
	}{
		{query: "lease=demo", status: http.StatusOK, settings: "lease 10 s · renew deadline 7 s · retry period 2 s",
			figures: map[string]string{"timing-crash-failover": "8 to 18.8\u00a0s", "timing-renew-attempts": "4", "timing-margin": "1\u00a0s to spare",
				"timing-lease-duration-seconds": "leaseDurationSeconds: 10"}},
		{query: "lease=demo&leaseDuration=15&renewDeadline=13&retryPeriod=3", status: http.StatusOK,
			figures:  map[string]string{"timing-margin": "none: up to 1\u00a0s of two leaders"},
			warnings: []string{"two-leaders/danger"}, overlap: true},
		{query: "lease=demo&leaseDuration=3&renewDeadline=2&retryPeriod=0.5", status: http.StatusOK,
			warnings: []string{"thin-margin/caution", "short-renew-deadline/caution", "busy-retry-period/caution"}},
		// The playground refuses a fraction of a second; the calculator says what client-go would do.
		{query: "lease=demo&leaseDuration=10.5&renewDeadline=7&retryPeriod=2", status: http.StatusUnprocessableEntity,
			figures: map[string]string{"timing-lease-duration-seconds": "leaseDurationSeconds: 10"}, warnings: []string{"not-whole-seconds/caution"}},
		{query: "lease=demo&leaseDuration=10&renewDeadline=10", status: http.StatusUnprocessableEntity,
			refused: "client-go refuses these settings: leaseDuration must be greater than renewDeadline"},
		{query: "lease=demo&leaseDuration=0.9&renewDeadline=0.5&retryPeriod=0.2", status: http.StatusUnprocessableEntity,
			refused: "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"},
		{query: "lease=demo&retryPeriod=soon", status: http.StatusUnprocessableEntity, none: true},
	} {
		t.Run(tc.query, func(t *testing.T) {
			doc := tu.mustGetDoc(t, "/play?"+tc.query, tc.status)
			panel := doc.Find(`details[data-testid=settings] [data-testid=timings]`)
			if tc.none {
				if panel.Length() != 0 {
					t.Errorf("a calculator for durations that are not numbers: %s", text(panel))
				}
				return
			}
			if panel.Length() != 1 {
				t.Fatalf("%d timings panels in the settings drawer", panel.Length())
			}
			if tc.settings != "" && text(panel.Find(`[data-testid=timings-settings]`)) != tc.settings {
				t.Errorf("settings %q, want %q", text(panel.Find(`[data-testid=timings-settings]`)), tc.settings)
			}
			refused := text(panel.Find(`[data-testid=timings-refused]`))
			if tc.refused != "" {
				if !strings.Contains(refused, tc.refused) || panel.Find(`[data-testid=timings-chart]`).Length() != 0 {
					t.Errorf("refused %q, want %q and no figures", refused, tc.refused)
				}
				return
			}
			if refused != "" {
				t.Fatalf("refused: %s", refused)
			}
			for id, want := range tc.figures {
				if got := text(panel.Find(`[data-testid=` + id + `] .timing-value`)); got != want {
					t.Errorf("%s = %q, want %q", id, got, want)
				}
				if panel.Find(`[data-testid=`+id+`]`).AttrOr("title", "") == "" {
					t.Errorf("%s has no explanation", id)
				}
			}
			var warnings []string
			panel.Find(`[data-testid=timings-warnings] li`).Each(func(_ int, li *goquery.Selection) {
				warnings = append(warnings, li.AttrOr("data-code", "")+"/"+li.AttrOr("data-severity", ""))
				word := strings.ToUpper(li.AttrOr("data-severity", ""))
				if !strings.Contains(text(li.Find(`.timing-severity`)), word) || li.Find(`.timing-severity svg`).Length() != 1 || text(li.Find(`.timing-reason`)) == "" {
					t.Errorf("warning %q: not told by word %s, icon and reason", text(li), word)
				}
			})
			if strings.Join(warnings, " ") != strings.Join(tc.warnings, " ") {
				t.Errorf("warnings %q, want %q", warnings, tc.warnings)
			}
			if ok := panel.Find(`[data-testid=timings-ok]`).Length() == 1; ok != (len(tc.warnings) == 0) {
				t.Errorf("no-warnings line shown: %v, with %d warnings", ok, len(tc.warnings))
			}
			chart := panel.Find(`[data-testid=timings-chart]`)
			if chart.AttrOr("aria-label", "") == "" || chart.Find(`.tc-lead`).Length() != 1 || chart.Find(`.tc-try`).Length() == 0 {
				h, _ := goquery.OuterHtml(chart)
				t.Errorf("chart: %s", h)
			}
			if got := chart.Find(`.tc-overlap`).Length() == 1; got != tc.overlap {
				t.Errorf("two leaders drawn: %v, want %v", got, tc.overlap)
			}
			// The axis labels run from 0 to the end, far enough apart to be read on a phone.
			var at []float64
			chart.Find(`.tc-tick`).Each(func(_ int, tick *goquery.Selection) {
				f, _ := strconv.ParseFloat(strings.TrimSuffix(tick.AttrOr("x", ""), "%"), 64)
				at = append(at, f)
			})
			if len(at) < 3 || at[0] != 0 || at[len(at)-1] != 100 {
				t.Errorf("axis ticks at %v%%", at)
			}
			for i := 1; i < len(at); i++ {
				if at[i]-at[i-1] < 12 {
					t.Errorf("axis ticks at %v%%: too close", at)
				}
			}
			for _, sel := range []string{`.tc-lead`, `.tc-take`, `.tc-wait`} {
				w := strings.TrimSuffix(chart.Find(sel).AttrOr("width", ""), "%")
				if f, err := strconv.ParseFloat(w, 64); err != nil || f <= 0 || f > 100 {
					t.Errorf("%s width %q", sel, w)
				}
			}
		})
	}
}
