package timings_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leaselab/leaselab/web/lease/timings"
)

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name             string
		ld, rd, rp       time.Duration
		refused          string
		apiServer        string
		lds              int32
		crash, release   timings.Range
		attempts         int
		lastAttempt      time.Duration
		outage           time.Duration
		stops            time.Duration
		margin           time.Duration
		warnings         []string // codes, in order
		warningsInclude  []string // words the warnings' text must hold
		leaderWrites     float64
		followerReadsMax float64
	}{
		{
			name: "Kubernetes defaults", ld: 15 * time.Second, rd: 10 * time.Second, rp: 2 * time.Second,
			lds: 15, crash: timings.Range{Best: 13 * time.Second, Worst: ms(23800)}, release: timings.Range{Worst: ms(4400)},
			attempts: 5, lastAttempt: 10 * time.Second, outage: 8 * time.Second, stops: 12 * time.Second, margin: 3 * time.Second,
			leaderWrites: 0.5,
		},
		{
			// The playground's own defaults leave a one-second margin: thin, not too thin.
			name: "playground defaults", ld: 10 * time.Second, rd: 7 * time.Second, rp: 2 * time.Second,
			lds: 10, crash: timings.Range{Best: 8 * time.Second, Worst: ms(18800)}, release: timings.Range{Worst: ms(4400)},
			attempts: 4, lastAttempt: 8 * time.Second, outage: 6 * time.Second, stops: 9 * time.Second, margin: time.Second,
			leaderWrites: 0.5,
		},
		{
			// 10/3 is not a whole number of tries: the fourth falls at 9 s, inside the deadline.
			name: "retry period not dividing the deadline", ld: 20 * time.Second, rd: 10 * time.Second, rp: 3 * time.Second,
			lds: 20, crash: timings.Range{Best: 17 * time.Second, Worst: ms(33200)}, release: timings.Range{Worst: ms(6600)},
			attempts: 4, lastAttempt: 12 * time.Second, outage: 9 * time.Second, stops: 13 * time.Second, margin: 7 * time.Second,
		},
		{
			name: "renew deadline plus retry period reaches the lease", ld: 15 * time.Second, rd: 13 * time.Second, rp: 3 * time.Second,
			lds: 15, attempts: 5, lastAttempt: 15 * time.Second, outage: 12 * time.Second, stops: 16 * time.Second, margin: -time.Second,
			crash: timings.Range{Best: 12 * time.Second, Worst: ms(28200)}, release: timings.Range{Worst: ms(6600)},
			warnings: []string{timings.CodeTwoLeaders}, warningsInclude: []string{"for up to 1 s", "16 s after its last renewal"},
		},
		{
			name: "margin exactly zero", ld: 15 * time.Second, rd: 14 * time.Second, rp: time.Second,
			lds: 15, attempts: 14, lastAttempt: 14 * time.Second, outage: 13 * time.Second, stops: 15 * time.Second, margin: 0,
			crash: timings.Range{Best: 14 * time.Second, Worst: ms(19400)}, release: timings.Range{Worst: ms(2200)},
			warnings: []string{timings.CodeTwoLeaders},
		},
		{
			name: "thin margin", ld: 15 * time.Second, rd: 13 * time.Second, rp: ms(1500),
			lds: 15, attempts: 9, lastAttempt: ms(13500), outage: 12 * time.Second, stops: ms(14500), margin: ms(500),
			crash: timings.Range{Best: ms(13500), Worst: ms(21600)}, release: timings.Range{Worst: ms(3300)},
			warnings: []string{timings.CodeThinMargin}, warningsInclude: []string{"only 0.5 s before", "3%"},
		},
		{
			// client-go accepts 10.9 s > 10 s, but writes 10: the lease no longer outlasts the
			// leader's renew deadline.
			name: "fraction dropped below the renew deadline", ld: ms(10900), rd: 10 * time.Second, rp: 2 * time.Second,
			lds: 10, attempts: 5, lastAttempt: 10 * time.Second, outage: 8 * time.Second, stops: 12 * time.Second, margin: -2 * time.Second,
			crash: timings.Range{Best: 8 * time.Second, Worst: ms(18800)}, release: timings.Range{Worst: ms(4400)},
			warnings:        []string{timings.CodeTwoLeaders, timings.CodeNotWholeSeconds},
			warningsInclude: []string{"leaseDuration 10.9 s is written to the Lease as leaseDurationSeconds 10", "the lease lasts 10 s, not 10.9 s"},
		},
		{
			name: "sub-second playground", ld: ms(1500), rd: time.Second, rp: ms(500),
			lds: 1, attempts: 2, lastAttempt: time.Second, outage: ms(500), stops: ms(1500), margin: ms(-500),
			crash: timings.Range{Best: ms(500), Worst: ms(3200)}, release: timings.Range{Worst: ms(1100)},
			warnings: []string{timings.CodeTwoLeaders, timings.CodeNotWholeSeconds, timings.CodeFewRenewAttempts,
				timings.CodeShortRenewDeadline, timings.CodeBusyRetryPeriod},
			warningsInclude: []string{"Only 2 renew attempts", "2 writes a second"},
			leaderWrites:    2,
		},
		{
			name: "just above the jitter bound", ld: 15 * time.Second, rd: ms(2401), rp: 2 * time.Second,
			lds: 15, attempts: 2, lastAttempt: 4 * time.Second, outage: 2 * time.Second, stops: ms(4401), margin: ms(10599),
			crash: timings.Range{Best: 13 * time.Second, Worst: ms(23800)}, release: timings.Range{Worst: ms(4400)},
			warnings: []string{timings.CodeFewRenewAttempts, timings.CodeShortRenewDeadline},
		},
		{
			// OpenShift's "tolerate a minute of API-server downtime" settings.
			name: "long lease", ld: 137 * time.Second, rd: 107 * time.Second, rp: 26 * time.Second,
			lds: 137, attempts: 5, lastAttempt: 130 * time.Second, outage: 104 * time.Second, stops: 133 * time.Second, margin: 4 * time.Second,
			crash: timings.Range{Best: 111 * time.Second, Worst: ms(251400)}, release: timings.Range{Worst: ms(57200)},
			warnings: []string{timings.CodeSlowFailover}, warningsInclude: []string{"up to 251.4 s", "within 57.2 s"},
		},
		{
			name: "lease shorter than a second", ld: ms(900), rd: ms(500), rp: ms(200),
			apiServer: "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
		},
		{name: "lease equals deadline", ld: 10 * time.Second, rd: 10 * time.Second, rp: 2 * time.Second,
			refused: "leaseDuration must be greater than renewDeadline"},
		{name: "deadline equals the jitter bound", ld: 15 * time.Second, rd: ms(2400), rp: 2 * time.Second,
			refused: "renewDeadline must be greater than retryPeriod*JitterFactor"},
		{name: "zero retry period", ld: 15 * time.Second, rd: 10 * time.Second, rp: 0,
			refused: "retryPeriod must be greater than zero"},
		{name: "negative durations", ld: 0, rd: -1, rp: -time.Second,
			refused: "leaseDuration must be greater than zero"},
		{name: "all zero", refused: "leaseDuration must be greater than renewDeadline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := timings.Check(timings.Settings{LeaseDuration: tc.ld, RenewDeadline: tc.rd, RetryPeriod: tc.rp})
			if v.Refused != tc.refused || v.APIServerRefuses != tc.apiServer {
				t.Fatalf("refused %q, API server %q; want %q, %q", v.Refused, v.APIServerRefuses, tc.refused, tc.apiServer)
			}
			if !v.OK() {
				if v.Refusal() == "" || v.Figures() != nil || v.Warnings != nil || v.RenewAttempts != 0 {
					t.Errorf("a refused verdict has figures: %+v", v)
				}
				return
			}
			for _, c := range []struct {
				what      string
				got, want any
			}{
				{"leaseDurationSeconds", v.LeaseDurationSeconds, tc.lds},
				{"crash failover", v.CrashFailover, tc.crash},
				{"takeover after the last renewal", v.Takeover, timings.Range{Best: time.Duration(tc.lds) * time.Second, Worst: tc.crash.Worst}},
				{"release failover", v.ReleaseFailover, tc.release},
				{"renew attempts", v.RenewAttempts, tc.attempts},
				{"last renew attempt", v.LastRenewAttempt, tc.lastAttempt},
				{"outage ridden out", v.OutageRiddenOut, tc.outage},
				{"leader stops", v.LeaderStops, tc.stops},
				{"margin", v.Margin, tc.margin},
			} {
				if c.got != c.want {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
			if tc.leaderWrites != 0 && v.LeaderWritesPerSecond != tc.leaderWrites {
				t.Errorf("leader writes %v/s, want %v", v.LeaderWritesPerSecond, tc.leaderWrites)
			}
			if v.FollowerReadsPerSecond >= v.LeaderWritesPerSecond {
				t.Errorf("a follower reads %v/s, more than the leader writes (%v/s)", v.FollowerReadsPerSecond, v.LeaderWritesPerSecond)
			}
			var codes []string
			var text strings.Builder
			for _, w := range v.Warnings {
				codes = append(codes, w.Code)
				if w.Message == "" || w.Reason == "" || (w.Severity != timings.Danger && w.Severity != timings.Caution) {
					t.Errorf("warning %+v lacks a message, a reason or a severity", w)
				}
				text.WriteString(w.Message + " " + w.Reason + "\n")
			}
			if !slices.Equal(codes, tc.warnings) {
				t.Errorf("warnings %q, want %q\n%s", codes, tc.warnings, text.String())
			}
			for _, s := range tc.warningsInclude {
				if !strings.Contains(text.String(), s) {
					t.Errorf("the warnings do not say %q:\n%s", s, text.String())
				}
			}
			figs := v.Figures()
			if len(figs) == 0 {
				t.Fatal("no figures")
			}
			for _, f := range figs {
				if f.Key == "" || f.Label == "" || f.Value == "" || f.Detail == "" {
					t.Errorf("figure %+v is incomplete", f)
				}
			}
		})
	}
}

func TestFiguresReadAsTheVerdict(t *testing.T) {
	v := timings.Check(timings.KubernetesDefaults)
	got := map[string]string{}
	for _, f := range v.Figures() {
		got[f.Key] = f.Value + " | " + f.Detail
	}
	for key, want := range map[string]string{
		timings.FigureCrashFailover:   "13 to 23.8 s | A follower takes the lease 15 s after it last saw it change, at its next try (tries come 2 s to 4.4 s apart).",
		timings.FigureReleaseFailover: "0 to 4.4 s",
		timings.FigureRenewAttempts:   "5 | When a renewal fails the leader tries again every 2 s until the round's deadline, 10 s after it began: at 0, 2, 4, 6, 8 s",
		timings.FigureOutage:          "up to 10 s | Its last try comes 10 s after its last renewal (an outage of 8 s is ridden out whenever it begins). If that try fails too, it stops leading 12 s after",
		timings.FigureMargin:          "3 s to spare | A leader that cannot renew leads up to 12 s after its last renewal; a follower may take the lease 15 s after it. A follower's clock may run 25% fast",
		timings.FigureLease:           "leaseDurationSeconds: 15",
		timings.FigureLoad:            "leader 0.5/s, follower 0.31/s",
	} {
		if !strings.HasPrefix(got[key], want) {
			t.Errorf("%s:\n got %s\nwant %s…", key, got[key], want)
		}
	}

	// Many tries are cut short in the sentence.
	v = timings.Check(timings.Settings{LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second, RetryPeriod: time.Second})
	for _, f := range v.Figures() {
		if f.Key == timings.FigureRenewAttempts && (f.Value != "20" || !strings.Contains(f.Detail, "at 0, 1, 2, 3, 4, …, 19 s")) {
			t.Errorf("renew attempts: %+v", f)
		}
	}
	// Two leaders read as such in the margin.
	v = timings.Check(timings.Settings{LeaseDuration: 15 * time.Second, RenewDeadline: 13 * time.Second, RetryPeriod: 3 * time.Second})
	for _, f := range v.Figures() {
		if f.Key == timings.FigureMargin && (f.Value != "none: up to 1 s of two leaders" || !strings.Contains(f.Detail, "even when every clock keeps perfect time")) {
			t.Errorf("margin: %+v", f)
		}
	}
}

// TestExtremeDurations: centuries are valid input; nothing wraps around or panics.
func TestExtremeDurations(t *testing.T) {
	for _, s := range []timings.Settings{
		{LeaseDuration: math.MaxInt64, RenewDeadline: math.MaxInt64 - 1, RetryPeriod: math.MaxInt64 / 2},
		{LeaseDuration: math.MaxInt64, RenewDeadline: math.MaxInt64 / 2, RetryPeriod: 1},
		{LeaseDuration: 100 * 365 * 24 * time.Hour, RenewDeadline: 50 * 365 * 24 * time.Hour, RetryPeriod: time.Hour},
		{LeaseDuration: 3, RenewDeadline: 2, RetryPeriod: 1},
	} {
		v := timings.Check(s)
		if !v.OK() {
			continue
		}
		for _, d := range []time.Duration{v.CrashFailover.Best, v.CrashFailover.Worst, v.ReleaseFailover.Worst, v.LastRenewAttempt, v.LeaderStops} {
			if d < 0 {
				t.Errorf("%+v: a negative figure in %+v", s, v)
			}
		}
		_ = v.Figures()
	}
}

// TestRefusalIsClientGos: for many settings, the calculator refuses exactly what client-go's
// NewLeaderElector refuses, with its very message.
func TestRefusalIsClientGos(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: "http://127.0.0.1:1"}) // never called
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: "default", Name: "timings"},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "timings-test"},
	}
	clientGo := func(s timings.Settings) string {
		_, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: s.LeaseDuration, RenewDeadline: s.RenewDeadline, RetryPeriod: s.RetryPeriod,
			Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
			Name:      "timings-test",
		})
		if err != nil {
			return err.Error()
		}
		return ""
	}

	// Every triple of the values around the boundaries, then random ones near them.
	values := []time.Duration{math.MinInt64, -2 * time.Second, -1, 0, 1, 2, 5, ms(1), ms(999), time.Second, ms(1200),
		ms(1500), 2 * time.Second, ms(2400) - 1, ms(2400), ms(2400) + 1, 10 * time.Second, 15 * time.Second,
		math.MaxInt64 / 12 * 10, math.MaxInt64}
	var settings []timings.Settings
	for _, ld := range values {
		for _, rd := range values {
			for _, rp := range values {
				settings = append(settings, timings.Settings{LeaseDuration: ld, RenewDeadline: rd, RetryPeriod: rp})
			}
		}
	}
	rng := rand.New(rand.NewPCG(16, 5))
	near := func(d time.Duration) time.Duration { return d + time.Duration(rng.Int64N(2001)-1000) }
	for range 20000 {
		rp := time.Duration(rng.Int64N(int64(5*time.Second))) - time.Second
		rd := near(time.Duration(1.2 * float64(rp)))
		if rng.IntN(3) == 0 {
			rd = time.Duration(rng.Int64N(int64(20 * time.Second)))
		}
		ld := near(rd)
		if rng.IntN(3) == 0 {
			ld = time.Duration(rng.Int64N(int64(30*time.Second))) - time.Second
		}
		settings = append(settings, timings.Settings{LeaseDuration: ld, RenewDeadline: rd, RetryPeriod: rp})
	}

	refused := 0
	for _, s := range settings {
		want := clientGo(s)
		if got := timings.Check(s).Refused; got != want {
			t.Errorf("%+v: refused %q, client-go %q", s, got, want)
		}
		if want != "" {
			refused++
		}
	}
	if refused == 0 || refused == len(settings) {
		t.Fatalf("%d of %d settings refused: the sample does not tell", refused, len(settings))
	}
	t.Logf("%d settings, %d refused by client-go", len(settings), refused)
}
