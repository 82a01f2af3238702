//go:build !js

package candidate_test

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

// firstLog returns the oldest log entry of kind containing substr, and whether there is one.
func firstLog(c *candidate.Candidate, kind candidate.LogKind, substr string) (candidate.LogEntry, bool) {
	log := c.Snapshot().Log
	for i := len(log) - 1; i >= 0; i-- {
		if e := log[i]; e.Kind == kind && strings.Contains(e.Text, substr) {
			return e, true
		}
	}
	return candidate.LogEntry{}, false
}

// A follower's request into a network that drops packets ends at the request timeout (the
// renew deadline, as Kubernetes components set their leader-election client's), and the
// follower tries again; it does not wait for ever.
func TestRunHangingPartitionFollowerTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t)
		r.start(testConfig("tab-a"))
		time.Sleep(time.Second)
		b := r.start(testConfig("tab-b"))
		time.Sleep(5 * time.Second)

		b.Partition(candidate.PartitionHang)
		cut := b.Snapshot().Now
		// The next try starts within a retry period plus its jitter; its read hangs until the timeout.
		time.Sleep(candidate.DefaultRetryPeriod*22/10 + candidate.DefaultRenewDeadline + time.Second)
		e, ok := firstLog(b, candidate.LogError, "request timeout")
		if !ok {
			dumpLog(t, b)
			t.Fatal("the hung read did not time out")
		}
		if !strings.Contains(e.Text, "no answer within the 7 s request timeout") {
			t.Errorf("log: %q", e.Text)
		}
		// The timeout is a message of its own, which a Chinese page reads in Chinese.
		if zh := e.Msg.In("zh"); !strings.Contains(zh, "在 7 s 的请求超时内没有应答") {
			t.Errorf("log in Chinese: %q", zh)
		}
		if took := e.At.Sub(cut); took < candidate.DefaultRenewDeadline || took > candidate.DefaultRetryPeriod*22/10+candidate.DefaultRenewDeadline {
			t.Errorf("timed out %s after the partition", took)
		}
		// And it keeps trying, a timeout each time.
		time.Sleep(2 * (candidate.DefaultRetryPeriod*22/10 + candidate.DefaultRenewDeadline))
		if e, _ := firstLog(b, candidate.LogError, "request timeout"); e.Count < 2 {
			dumpLog(t, b)
			t.Errorf("tries after the first timeout: %d", e.Count)
		}
		if snap := b.Snapshot(); snap.State != candidate.StatePartitioned || snap.Faults.Partition != candidate.PartitionHang {
			t.Errorf("b: %v", snap)
		}
		b.Heal()
		time.Sleep(10 * time.Second)
		if snap := b.Snapshot(); snap.State != candidate.StateFollower || snap.Holder != "tab-a" {
			t.Errorf("after heal: %v", snap)
		}
	})
}

// A partition that fails fast (connection refused) fails each request at once: the leader
// tries every retry period until its renew deadline, then gives up leading.
func TestRunFailingPartition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t)
		a := r.start(testConfig("tab-a"))
		time.Sleep(time.Second)
		b := r.start(testConfig("tab-b"))
		time.Sleep(5 * time.Second)

		a.Partition(candidate.PartitionFail)
		if got := tabproto.Words(a.Snapshot().Faults.Describe(), "en"); len(got) != 1 || got[0] != "partitioned: requests fail" {
			t.Errorf("faults in words: %q", got)
		}
		time.Sleep(candidate.DefaultRetryPeriod + 100*time.Millisecond)
		e, ok := firstLog(a, candidate.LogError, candidate.ErrPartitioned.Error())
		if !ok {
			dumpLog(t, a)
			t.Fatal("the refused renewal is not logged")
		}
		if strings.Contains(e.Text, "cut off") || strings.Contains(e.Text, "timeout") {
			t.Errorf("a failing partition waited: %q", e.Text)
		}
		time.Sleep(candidate.DefaultRenewDeadline)
		if snap := a.Snapshot(); snap.Role == candidate.RoleLeader {
			t.Fatalf("a still leads past its renew deadline: %v", snap)
		}
		if !logHas(a, candidate.LogLost, "renew deadline passed") {
			dumpLog(t, a)
			t.Error("a did not say it stopped leading")
		}
		time.Sleep(candidate.DefaultLeaseDuration)
		if b.Snapshot().State != candidate.StateLeader {
			t.Errorf("b: %v", b.Snapshot())
		}
	})
}

// The default delay of the slow-network fault makes a difference at the default timings: a
// leader whose every request takes it loses the lease, where one a step shorter keeps it.
func TestRunSlowDefaultLosesTheLease(t *testing.T) {
	def := candidate.Timings{LeaseDuration: candidate.DefaultLeaseDuration, RenewDeadline: candidate.DefaultRenewDeadline,
		RetryPeriod: candidate.DefaultRetryPeriod}.SlowLatency()
	if def != 8*time.Second {
		t.Fatalf("default delay at 10/7/2 s: %s", def)
	}
	for _, tc := range []struct {
		d    time.Duration
		lose bool
	}{{def, true}, {6 * time.Second, false}} {
		synctest.Test(t, func(t *testing.T) {
			r := newRunner(t)
			a := r.start(testConfig("tab-a"))
			time.Sleep(time.Second)
			b := r.start(testConfig("tab-b"))
			// Half-way between two of the leader's renewals (at 0, 2, 4, 6 s): a renewal in
			// flight when the network slows comes back half a delay late and, a success,
			// starts its next round only then, which would move the loss by up to 4 s
			// depending on which of that instant's goroutines ran first.
			time.Sleep(5*time.Second + 500*time.Millisecond)
			a.SetLatency(tc.d)
			slowed := time.Now()
			var lostAfter time.Duration
			for time.Since(slowed) < time.Minute && lostAfter == 0 {
				time.Sleep(100 * time.Millisecond)
				if a.Snapshot().Role != candidate.RoleLeader {
					lostAfter = time.Since(slowed)
				}
			}
			switch {
			case tc.lose && lostAfter == 0:
				t.Errorf("%s: the leader kept the lease", tc.d)
			case tc.lose && lostAfter > candidate.DefaultRetryPeriod+candidate.DefaultRenewDeadline+time.Second:
				t.Errorf("%s: the leader lost the lease only after %s", tc.d, lostAfter)
			case !tc.lose && lostAfter != 0:
				t.Errorf("%s: the leader lost the lease after %s", tc.d, lostAfter)
			}
			if tc.lose {
				time.Sleep(candidate.DefaultLeaseDuration + candidate.DefaultRetryPeriod*22/10)
				if b.Snapshot().State != candidate.StateLeader {
					t.Errorf("%s: b did not take over: %v", tc.d, b.Snapshot())
				}
			}
		})
	}
}

func TestSlowLatencyAndEffect(t *testing.T) {
	for _, tc := range []struct {
		rd, want time.Duration
	}{
		{7 * time.Second, 8 * time.Second},
		{2 * time.Second, 3 * time.Second},
		{1500 * time.Millisecond, 2 * time.Second},
		{9500 * time.Millisecond, 10 * time.Second},
		{30 * time.Second, candidate.MaxSlowLatency},
	} {
		if got := (candidate.Timings{RenewDeadline: tc.rd}).SlowLatency(); got != tc.want {
			t.Errorf("renew deadline %s: default delay %s, want %s", tc.rd, got, tc.want)
		}
	}
	if s := candidate.SlowSteps; s[0] != candidate.MinSlowLatency || s[len(s)-1] != candidate.MaxSlowLatency {
		t.Errorf("steps %v", s)
	}
	tm := candidate.Timings{LeaseDuration: 10 * time.Second, RenewDeadline: 7 * time.Second, RetryPeriod: 2 * time.Second}
	for _, tc := range []struct {
		d    time.Duration
		want []string
	}{
		{0, nil},
		{4 * time.Second, []string{"takes 4 s, within the 7 s renew deadline", "keeps the lease", "takes 8 s"}},
		{7 * time.Second, []string{"cut off", "gives up leading"}},
		{8 * time.Second, []string{"takes 8 s, not less than the 7 s renew deadline", "gives up leading", "takes 16 s"}},
	} {
		got := tm.LatencyEffect(tc.d)
		if tc.want == nil && got != "" {
			t.Errorf("%s: %q", tc.d, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.d, got, w)
			}
		}
	}
	// The effect is a message: the same English, and a Chinese of its own.
	if m := tm.LatencyEffectSays(8 * time.Second); m.In("en") != tm.LatencyEffect(8*time.Second) ||
		!strings.Contains(m.In("zh"), "不短于 7 s 的续约期限") || !strings.Contains(m.In("zh"), "需要 16 s") {
		t.Errorf("effect as a message: %q / %q", m.In("en"), m.In("zh"))
	}
	if m := tm.LatencyEffectSays(0); !m.IsZero() {
		t.Errorf("no delay: %+v", m)
	}
	var te *candidate.TimeoutError
	if err := error(&candidate.TimeoutError{After: 7 * time.Second}); !errors.As(err, &te) || err.Error() != "no answer within the 7 s request timeout" {
		t.Errorf("%v", err)
	}
}
