package ui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/coder/websocket"

	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/leasetest"
	"github.com/leaselab/leaselab/web/play/scenario"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// startRoomTabs runs n browser candidates (wasm/candidate, natively) on the arena's lease
// against srv, each seated on the hub as a participant's tab is: it reports every change, and
// obeys the fault commands the hub forwards. They stop when ctx ends; wait waits for them.
func startRoomTabs(t *testing.T, ctx context.Context, hub *Hub, srv *leasetest.Server, n int) (wait func()) {
	t.Helper()
	cfg := srv.Config()
	var wg sync.WaitGroup
	for i := range n {
		c, err := candidate.New(candidate.Config{BaseURL: cfg.Host, Namespace: scenario.ArenaNamespace, LeaseName: "arena",
			Identity: fmt.Sprintf("tab-%02x", 0xa0+i), LeaseDuration: 10 * time.Second, RenewDeadline: 7 * time.Second, RetryPeriod: 2 * time.Second},
			candidate.Options{Transport: candidate.HTTPTransport{Client: &http.Client{Transport: cfg.Transport}}})
		if err != nil {
			t.Fatal(err)
		}
		user := fmt.Sprintf("participant-%02d", i)
		seat := hub.Enter(TabUser{Name: user, Namespaces: []string{user, scenario.ArenaNamespace}}, func(cmd tabproto.Command) error {
			if err := cmd.Validate(); err != nil {
				return err
			}
			return c.Obey(cmd)
		})
		changed, unsubscribe := c.Subscribe()
		wg.Add(2)
		go func() { defer wg.Done(); c.Run(ctx) }()
		go func() {
			defer wg.Done()
			defer seat.Leave()
			defer unsubscribe()
			for {
				seat.Report(c.Snapshot().Report())
				select {
				case <-ctx.Done():
					return
				case <-changed:
				}
			}
		}()
		time.Sleep(700 * time.Millisecond) // one after another, as a room opens the link
	}
	return wg.Wait
}

// TestArenaRunsWithTheHubsTabs: the room lesson plays with the tabs the hub has on its lease
// as its cast (six browser candidates seated as participants' tabs): it freezes the tab that
// leads through the hub, another takes over, the woken one steps down, a third of the room
// (two tabs, the leader among them) has its network cut and healed; every claim holds, the
// narration names the tabs that did it, and the lesson's own cast never joins.
func TestArenaRunsWithTheHubsTabs(t *testing.T) {
	sc := scenario.Find("arena")
	synctest.Test(t, func(t *testing.T) {
		srv := leasetest.Start(t)
		hub := NewHub(slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
		ctx, cancel := context.WithCancel(t.Context())
		wait := startRoomTabs(t, ctx, hub, srv, 6)
		defer wait()
		defer cancel()
		cfg := srv.Config()
		run, err := scenario.Start(ctx, sc, scenario.Options{Transport: cfg.Transport, BaseURL: cfg.Host, Namespace: scenario.ArenaNamespace,
			Seed: 1, Room: hubRoom{hub}})
		if err != nil {
			t.Fatal(err)
		}
		defer run.Stop()
		playRoom(t, run, len(sc.Steps))
		if err := run.Outcome(); err != nil {
			t.Errorf("the claims: %v\nevents:\n%s", err, events(run))
		}
		if n := len(hub.TabsIn(scenario.ArenaNamespace)); n != 6 {
			t.Errorf("%d tabs on the hub, want the room's 6 and none of the lesson's cast", n)
		}
		says := func(i int) string { return scenario.RoomOf(run).Narration(i).En }
		took := regexp.MustCompile(`(tab-a\d) took over (\d+\.\d) s after (tab-a\d) froze\.$`).FindStringSubmatch(says(1))
		if took == nil || took[1] == took[3] {
			t.Fatalf("step 2 says: %s\nevents:\n%s", says(1), events(run))
		}
		for i, want := range []string{
			`Tabs on the lease: 6; the leader: ` + took[3] + `.`,
			took[3] + ` woke believing it led, and stepped down `,
			`2 of 6 tabs lost their network: `,
			`Tabs that took part: 6; changes of holder: 2; split brains the checker found: 1.`,
		} {
			if step := []int{0, 2, 3, 4}[i]; !strings.Contains(says(step), want) {
				t.Errorf("step %d says: %s\nwant: %s", step+1, says(step), want)
			}
		}
		if cut := regexp.MustCompile(`The leader (tab-a\d) stepped down`).FindStringSubmatch(says(3)); cut == nil || cut[1] != took[1] {
			t.Errorf("step 4 says: %s\nwant the cut-off leader %s to step down", says(3), took[1])
		}
	})
}

// playRoom takes Next a moment after each step is done, until the last one is.
func playRoom(t *testing.T, run *scenario.Run, steps int) {
	t.Helper()
	changed, unsubscribe := run.Subscribe()
	defer unsubscribe()
	limit := time.Now().Add(5 * time.Minute)
	for st := run.State(); st.Step < steps-1 || !st.Ready; st = run.State() {
		if time.Now().After(limit) {
			t.Fatalf("stuck at step %d; events:\n%s", st.Step+1, events(run))
		}
		if st.Ready {
			time.Sleep(250 * time.Millisecond)
			if err := run.Next(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		select {
		case <-changed:
		case <-time.After(time.Second):
		}
	}
}

func events(run *scenario.Run) string {
	var b strings.Builder
	for _, e := range run.Events() {
		fmt.Fprintln(&b, e)
	}
	return b.String()
}

// roomReport is a tab's report on the arena's lease.
func roomReport(identity, state string) map[string]any {
	return map[string]any{"type": "report", "tab": map[string]any{
		"identity": identity, "namespace": scenario.ArenaNamespace, "lease": "arena", "state": state, "role": state,
		"lastLog": map[string]any{"at": 1, "kind": "note", "text": "joined"},
	}}
}

// TestArenaPanelInWorkshop: in workshop mode the room lesson's page lists the participants'
// tabs on the arena's lease, with its join link and QR code, to everyone; only the instructor
// gets the fault buttons, and only the instructor's faults reach a tab (from the instructor,
// as the tab's page says), one tab's or a random third's; a participant's are refused, and a
// lesson that is not the room's has no room.
func TestArenaPanelInWorkshop(t *testing.T) {
	tu := mustNewUI(t, t0, workshopUsers, func(o *Options) {
		o.MayCommandTabs = func(r *http.Request) bool { return r.Header.Get("X-Test-User") == "instructor" }
	})
	srv := httptest.NewServer(tu.echo)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tabs := map[string]*websocket.Conn{}
	for _, owner := range []string{"participant-01", "participant-02"} {
		c := dialAs(t, ctx, srv, "/ui/tabs/connect", owner)
		id, _ := readJSON(t, ctx, c)["id"].(string)
		writeJSON(t, ctx, c, roomReport("tab-"+owner[len(owner)-2:], "follower"))
		tabs[id] = c
	}
	poll.Until(t, 5*time.Second, "both tabs on the hub", func() (bool, string) {
		n := len(tu.hub.TabsIn(scenario.ArenaNamespace))
		return n == 2, fmt.Sprint(n)
	})
	as := func(user, method, path string, form url.Values) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		req.Header.Set("X-Test-User", user)
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		return tu.do(t, req)
	}
	for user, buttons := range map[string]int{"participant-01": 0, "instructor": 1} {
		doc, err := goquery.NewDocumentFromReader(as(user, http.MethodGet, "/scenarios/arena", nil).Body)
		if err != nil {
			t.Fatal(err)
		}
		room := doc.Find(`[data-testid="room"]`)
		if room.AttrOr("data-tabs", "") != "2" || doc.Find(`[data-testid="room-tab"]`).Length() != 2 ||
			room.Find(`[data-testid="room-join"]`).AttrOr("href", "") != "/play?namespace=arena&lease=arena&leaseDuration=10&renewDeadline=7&retryPeriod=2" {
			t.Errorf("%s: the room's panel: %s", user, room.Text())
		}
		if n := room.Find(`[data-testid="fault-third"]`).Length(); n != buttons || room.Find(`[data-testid="fault-pause"]`).Length() != 2*buttons {
			t.Errorf("%s is offered %d random-third buttons, want %d", user, n, buttons)
		}
	}
	var first string
	for id := range tabs {
		first = id
	}
	if w := as("participant-01", http.MethodPost, "/scenarios/arena/room/fault", url.Values{"tab": {first}, "cmd": {"pause"}}); w.Code != http.StatusForbidden {
		t.Errorf("a participant's fault of a room's tab: %d", w.Code)
	}
	if w := as("participant-01", http.MethodPost, "/scenarios/arena/room/third", nil); w.Code != http.StatusForbidden {
		t.Errorf("a participant's random third: %d", w.Code)
	}
	if w := as("instructor", http.MethodPost, "/scenarios/arena/room/fault", url.Values{"tab": {first}, "cmd": {"pause"}}); w.Code != http.StatusSeeOther {
		t.Fatalf("the instructor's fault: %d %s", w.Code, w.Body)
	}
	if m := readJSON(t, ctx, tabs[first]); m["type"] != "command" || m["from"] != "instructor" || m["command"].(map[string]any)["type"] != "pause" {
		t.Errorf("the tab got %v, want the instructor's pause", m)
	}
	if w := as("instructor", http.MethodPost, "/scenarios/arena/room/third", nil); w.Code != http.StatusSeeOther {
		t.Fatalf("the instructor's random third: %d %s", w.Code, w.Body)
	}
	got := make(chan string, len(tabs))
	for _, c := range tabs {
		go func() {
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			_, b, err := c.Read(rctx) // a tab that was not cut is told nothing: its read times out
			if err != nil || !strings.Contains(string(b), `"partition"`) {
				b = nil
			}
			got <- string(b)
		}()
	}
	cut := 0
	for range tabs {
		if <-got != "" {
			cut++
		}
	}
	if cut != scenario.AThird(2) {
		t.Errorf("%d of 2 tabs were cut off, want %d", cut, scenario.AThird(2))
	}
	if w := as("instructor", http.MethodGet, "/scenarios/arena/room/qr", nil); w.Code != http.StatusOK || w.Header().Get("Content-Type") != "image/png" {
		t.Errorf("the join link's QR code: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if w := as("instructor", http.MethodPost, "/scenarios/leader-crash/room/third", nil); w.Code != http.StatusNotFound {
		t.Errorf("a random third of a lesson that is not the room's: %d", w.Code)
	}
}

// TestArenaPanelOfALargeRoom: the panel of a room larger than it lists counts every tab, lists
// the ones the lesson is about first (the leader, a paused one), and says how many more follow.
func TestArenaPanelOfALargeRoom(t *testing.T) {
	tu := mustNewUI(t, t0)
	const n = maxRoomRows + 5
	for i := range n {
		rep := tabproto.Report{Identity: fmt.Sprintf("tab-%04d", i), Namespace: scenario.ArenaNamespace, Lease: "arena",
			State: tabproto.StateFollower, Role: tabproto.RoleFollower, Holder: "tab-0052"}
		switch i {
		case n - 1:
			rep.State, rep.Role = tabproto.StateLeader, tabproto.RoleLeader
		case n - 2:
			rep.State, rep.Faults.Paused = tabproto.StatePaused, true
		}
		tu.hub.Enter(TabUser{}, func(tabproto.Command) error { return nil }).Report(rep)
	}
	doc := tu.mustGetDoc(t, "/scenarios/arena/live", http.StatusOK)
	room := doc.Find(`[data-testid="room"]`)
	rows := room.Find(`[data-testid="room-tab"]`)
	if room.AttrOr("data-tabs", "") != fmt.Sprint(n) || rows.Length() != maxRoomRows {
		t.Fatalf("the panel counts %s tabs and lists %d, want %d and %d", room.AttrOr("data-tabs", ""), rows.Length(), n, maxRoomRows)
	}
	first := rows.Slice(0, 2).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-identity", "") })
	if !slices.Contains(first, fmt.Sprintf("tab-%04d", n-1)) || !slices.Contains(first, fmt.Sprintf("tab-%04d", n-2)) {
		t.Errorf("the panel lists first %v, want the leader and the paused tab", first)
	}
	if more := room.Find(`[data-testid="room-more"]`).Text(); !strings.Contains(more, "and 5 more tabs") {
		t.Errorf("the panel says %q of the tabs it does not list", more)
	}
}
