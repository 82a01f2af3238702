//go:build !js

package candidate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
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

// TestNetworkLoss: a network that loses 50 % of the requests loses about half of them, the
// same ones for the same seed and others for another; a lost request never reaches the server
// and ends when its context does, at its timeout, where a delivered one is answered at once.
func TestNetworkLoss(t *testing.T) {
	const n, timeout = 400, 7 * time.Second
	lost := func(seed uint64) []int {
		var out []int
		synctest.Test(t, func(t *testing.T) {
			served := 0
			next := candidate.TransportFunc(func(ctx context.Context, req *candidate.Request) (*candidate.Response, error) {
				served++
				return &candidate.Response{StatusCode: 200}, nil
			})
			net := candidate.NewNetwork(next, candidate.SystemClock{})
			net.SetLoss(50, rand.New(rand.NewPCG(seed, 42)).Float64)
			if f := net.Faults(); f.LossPercent != 50 {
				t.Errorf("the network's faults: %+v", f)
			}
			req := &candidate.Request{Method: "GET", URL: "http://x/"}
			for i := range n {
				ctx, cancel := context.WithTimeout(t.Context(), timeout)
				before, start := served, time.Now()
				_, err := net.RoundTrip(ctx, req)
				cancel()
				took := time.Since(start)
				switch {
				case served == before:
					out = append(out, i)
					if !errors.Is(err, context.DeadlineExceeded) || took != timeout {
						t.Errorf("request %d, lost: %v after %s, want its timeout after %s", i, err, took, timeout)
					}
				case err != nil || took != 0:
					t.Errorf("request %d, delivered: %v after %s", i, err, took)
				}
			}
		})
		return out
	}
	a, again, other := lost(1), lost(1), lost(2)
	// Binomial(400, 0.5): a standard deviation of 10 requests.
	if len(a) < n/2-40 || len(a) > n/2+40 {
		t.Errorf("lost %d of %d requests at 50 %%", len(a), n)
	}
	if !slices.Equal(a, again) {
		t.Errorf("the same seed lost other requests: %v, then %v", a[:min(10, len(a))], again[:min(10, len(again))])
	}
	if slices.Equal(a, other) {
		t.Error("another seed lost the same requests")
	}
}

// TestRunPacketLoss: a follower whose network loses half of its requests (SetLoss, as a
// tab's L key and a lesson's step set it) says so, keeps following, and about half of its
// reads never reach the server: each of those ends at the request timeout (the renew
// deadline), as in a hanging partition, and the follower tries again. A run with the same seed
// loses the same reads at the same instants.
func TestRunPacketLoss(t *testing.T) {
	type result struct {
		served, timedOut int
		log              []string
	}
	run := func(seed uint64) (res result) {
		synctest.Test(t, func(t *testing.T) {
			srv := newLeaseServer(time.Now)
			// A holder that is no candidate, with a long hold: the follower only reads.
			srv.put(t, testNS, testLease, fmt.Sprintf(`{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"demo"},`+
				`"spec":{"holderIdentity":"ghost","leaseDurationSeconds":3600,"renewTime":%q}}`, time.Now().UTC().Format(candidate.RFC3339Micro)))
			var served atomic.Int32
			next := srv.transport()
			counted := candidate.TransportFunc(func(ctx context.Context, req *candidate.Request) (*candidate.Response, error) {
				served.Add(1)
				return next.RoundTrip(ctx, req)
			})
			r := rand.New(rand.NewPCG(seed, 42))
			c, err := candidate.New(testConfig("tab-b"), candidate.Options{Transport: counted, Rand: r.Float64, LogLimit: 100_000})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := c.Obey(tabproto.Command{Type: tabproto.CommandLoss, LossPercent: new(50)}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = c.Run(ctx)
			}()
			time.Sleep(15 * time.Minute)
			cancel()
			<-done

			s := c.Snapshot()
			if s.State != candidate.StateFollower || s.Holder != "ghost" || s.Faults.LossPercent != 50 {
				t.Errorf("after 15 min of loss: %v, faults %+v", s, s.Faults)
			}
			if got := tabproto.Words(s.Faults.Describe(), "zh"); !slices.Equal(got, []string{"丢包：50% 的请求丢失"}) {
				t.Errorf("faults in Chinese: %q", got)
			}
			if r := s.Report(); r.Faults.LossPercent != 50 || !slices.Equal(r.ActiveFaults, []string{"packet loss: 50% of requests lost"}) {
				t.Errorf("report: %+v, %q", r.Faults, r.ActiveFaults)
			}
			if !logHas(c, candidate.LogFault, "packet loss: 50% of my requests are lost") {
				dumpLog(t, c)
				t.Error("the log does not say the loss began")
			}
			res.served = int(served.Load())
			for i := len(s.Log) - 1; i >= 0; i-- {
				e := s.Log[i]
				if e.Kind == candidate.LogError {
					if !strings.Contains(e.Text, "no answer within the 7 s request timeout") {
						t.Errorf("error %q: not a lost request's timeout", e.Text)
					}
					res.timedOut += e.Count
				}
				res.log = append(res.log, fmt.Sprintf("%s %s %s ×%d", e.At.Sub(start), e.Kind, e.Text, e.Count))
			}
		})
		return res
	}
	a := run(7)
	tries := a.served + a.timedOut
	if tries < 100 || a.timedOut < tries*3/10 || a.timedOut > tries*7/10 {
		t.Errorf("%d of %d reads lost at 50 %% loss", a.timedOut, tries)
	}
	if again := run(7); !slices.Equal(again.log, a.log) || again.served != a.served {
		t.Errorf("the same seed ran otherwise:\n%s\nthen\n%s", strings.Join(a.log, "\n"), strings.Join(again.log, "\n"))
	}
}
