package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// BenchmarkStageFrames measures how smoothly Chromium draws the stage of one lease with n
// candidates reporting over the tab protocol (each every two seconds, with a request): the
// 95th percentile of the time between animation frames over five seconds (frame-p95-ms; 33 ms
// is 30 frames a second), and how many times a second the page fetched the picture anew and
// patched it in (swaps/s). Run with: go test ./cmd/leaselab -run '^$' -bench BenchmarkStageFrames -benchtime 1x
func BenchmarkStageFrames(b *testing.B) {
	for _, n := range []int{3, 100, 1000} {
		b.Run("candidates="+strconv.Itoa(n), func(b *testing.B) { benchmarkStage(b, n) })
	}
}

func benchmarkStage(b *testing.B, n int) {
	holdBrowserSlot(b)
	ts := mustStartServer(b, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reportAsTab(ctx, b, ts.URL, i, n)
		}()
	}
	browser := mustStartBrowser(b)
	stage, _ := openBrowserTab(b, browser, ts.URL+"/stage?namespace=room&lease=stage")
	poll.Until(b, 2*time.Minute, fmt.Sprintf("the stage draws %d candidates", n), func() (bool, string) {
		s, _ := browserEval(stage, `String(document.querySelectorAll('[data-testid=stage-candidate]').length + [...document.querySelectorAll('[data-testid=stage-crowd]')].reduce((a, c) => a + +c.dataset.count, 0))`)
		return s == strconv.Itoa(n), s
	})
	for range 3 {
		start := time.Now()
		resp, err := http.Get(ts.URL + "/stage/live?namespace=room&lease=stage")
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.Logf("fragment: %d bytes in %v", len(body), time.Since(start))
	}
	b.ResetTimer()
	for range b.N {
		s, err := browserEval(stage, `(() => { window.frames_ = []; window.swaps_ = 0; let last = performance.now();
			const tick = (t) => { window.frames_.push(t - last); last = t; if (window.frames_.length < 100000) requestAnimationFrame(tick); };
			requestAnimationFrame(tick);
			document.addEventListener('ll:swapped', () => window.swaps_++);
			return 'ok'; })()`)
		if err != nil || s != "ok" {
			b.Fatalf("measure: %q %v", s, err)
		}
		time.Sleep(5 * time.Second)
		s, err = browserEval(stage, `JSON.stringify({ frames: window.frames_.slice(1), swaps: window.swaps_ })`)
		if err != nil {
			b.Fatal(err)
		}
		var m struct {
			Frames []float64
			Swaps  int
		}
		if err := json.Unmarshal([]byte(s), &m); err != nil || len(m.Frames) < 10 {
			b.Fatalf("frames: %v %s", err, s[:min(len(s), 200)])
		}
		sort.Float64s(m.Frames)
		b.ReportMetric(m.Frames[len(m.Frames)*95/100], "frame-p95-ms")
		b.ReportMetric(m.Frames[len(m.Frames)/2], "frame-p50-ms")
		b.ReportMetric(float64(m.Swaps)/5, "swaps/s")
	}
}

// reportAsTab is candidate i of n of the lease room/stage, as the tab hub sees a tab: it
// reports every two seconds (i leads when it is 0), each time with a request that just
// ended.
func reportAsTab(ctx context.Context, tb testing.TB, base string, i, n int) {
	u, _ := url.Parse(base)
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	u.Path = "/ui/tabs/connect"
	conn, _, err := websocket.Dial(ctx, u.String(), nil)
	if err != nil {
		if ctx.Err() == nil {
			tb.Errorf("tab %d: %v", i, err)
		}
		return
	}
	defer conn.CloseNow()
	go func() { // the hub's commands and pings
		for {
			if _, _, err := conn.Read(ctx); err != nil {
				return
			}
		}
	}()
	id := fmt.Sprintf("phone-%04d", i)
	time.Sleep(time.Duration(i) * 2 * time.Second / time.Duration(n)) // spread over the period
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for seq := uint64(1); ; seq++ {
		now := time.Now().UnixMilli()
		r := tabproto.Report{Identity: id, Namespace: "room", Lease: "stage", State: tabproto.StateFollower, Role: tabproto.RoleFollower,
			Holder: "phone-0000", Clock: now, ActiveFaults: []string{},
			Timers:  &tabproto.Timers{ExpiresInMs: 15000, RetryInMs: 2000, LeaseMs: 15000, RenewDeadlineMs: 10000, RetryPeriodMs: 2000},
			Flights: []tabproto.Flight{{ID: seq, Verb: "GET", StartMs: now - 40, EndMs: now - 5, Outcome: "200"}}}
		if i == 0 {
			r.State, r.Role, r.Timers.RenewByMs = tabproto.StateLeader, tabproto.RoleLeader, 10000
			r.Flights[0].Verb = "PUT"
		}
		msg, _ := json.Marshal(map[string]any{"type": "report", "tab": r})
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := conn.Write(wctx, websocket.MessageText, msg)
		cancel()
		if err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
