package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// dialAs opens a WebSocket to path on srv as a page of srv's origin whose request says it is
// user's (the X-Test-User header the test's TabUser reads).
func dialAs(tb testing.TB, ctx context.Context, srv *httptest.Server, path, user string) *websocket.Conn {
	tb.Helper()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+path, &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {srv.URL}, "X-Test-User": {user}},
	})
	if err != nil {
		tb.Fatalf("dial %s as %q: %v", path, user, err)
	}
	tb.Cleanup(func() { c.CloseNow() })
	return c
}

// workshopUsers is a TabUser as a workshop server has it: "instructor" may report any
// namespace, "participant-NN" only its own and arena, and no header means no authentication.
func workshopUsers(o *Options) {
	o.TabUser = func(r *http.Request) (TabUser, bool) {
		name := r.Header.Get("X-Test-User")
		switch {
		case name == "":
			return TabUser{}, false
		case name == "instructor":
			return TabUser{Name: name}, true
		}
		return TabUser{Name: name, Namespaces: []string{name, "arena"}}, true
	}
}

func report(identity, namespace, state, text string) map[string]any {
	return map[string]any{"type": "report", "tab": map[string]any{
		"identity": identity, "namespace": namespace, "lease": "demo", "state": state, "role": state,
		"lastLog": map[string]any{"at": 1, "kind": "note", "text": text},
	}}
}

// TestTabHubOwnsTabs: on a server with authentication a tab is listed under the name of the
// user who opened it, whatever it claims, and a participant's tab cannot report a namespace
// the participant may not write in (another participant's): the report is dropped.
func TestTabHubOwnsTabs(t *testing.T) {
	tu := mustNewUI(t, t0, workshopUsers)
	srv := httptest.NewServer(tu.echo)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// participant-01 claims to be participant-02's leader, then to be someone else.
	spoof := dialAs(t, ctx, srv, "/ui/tabs/connect", "participant-01")
	spoofID, _ := readJSON(t, ctx, spoof)["id"].(string)
	// The hub refuses the report itself, whenever it comes.
	tu.hub.mu.Lock()
	spoofTab := tu.hub.tabs[spoofID]
	tu.hub.mu.Unlock()
	if spoofTab == nil {
		t.Fatalf("tab %q not in the hub", spoofID)
	}
	if err := tu.hub.report(spoofTab, tabproto.Report{Identity: "participant-02-real", Namespace: "participant-02", State: "leader"}); !errors.Is(err, errTabNamespace) {
		t.Errorf("participant-01 reported a tab of participant-02: %v", err)
	}
	if listed := tu.hub.Tabs(); len(listed) != 0 {
		t.Errorf("after a refused report: listed %+v", listed)
	}
	// And over the socket.
	writeJSON(t, ctx, spoof, report("participant-02-real", "participant-02", "leader", "spoofed"))
	claim := report("participant-02-real", "arena", "follower", "in the arena")
	claim["tab"].(map[string]any)["owner"] = "participant-02"
	writeJSON(t, ctx, spoof, claim)
	own := dialAs(t, ctx, srv, "/ui/tabs/connect", "participant-01")
	readJSON(t, ctx, own)
	writeJSON(t, ctx, own, report("p1-tab", "participant-01", "leader", "mine"))
	// The instructor may run tabs anywhere.
	inst := dialAs(t, ctx, srv, "/ui/tabs/connect", "instructor")
	readJSON(t, ctx, inst)
	writeJSON(t, ctx, inst, report("teacher", "participant-02", "follower", "visiting"))

	dash := dialAs(t, ctx, srv, "/ui/tabs/watch", "instructor")
	tabs := readTabs(t, ctx, dash, func(ts []TabInfo) bool {
		for _, tab := range ts {
			if tab.Namespace == "participant-02" && tab.Owner != "instructor" {
				t.Fatalf("a tab of participant-02 listed: %+v", tab)
			}
		}
		return len(ts) == 3
	})
	got := map[string]string{}
	for _, tab := range tabs {
		got[tab.Identity] = tab.Namespace + " " + string(tab.State) + " by " + tab.Owner
	}
	want := map[string]string{
		"participant-02-real": "arena follower by participant-01",
		"p1-tab":              "participant-01 leader by participant-01",
		"teacher":             "participant-02 follower by instructor",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: listed as %q, want %q", id, got[id], w)
		}
	}

	// The owner is in the JSON programs read.
	raw := dialAs(t, ctx, srv, "/ui/tabs/watch", "participant-02")
	for {
		m := readJSON(t, ctx, raw)
		list, _ := m["tabs"].([]any)
		if m["type"] != "tabs" || len(list) != 3 {
			continue
		}
		owners := []string{}
		for _, x := range list {
			owners = append(owners, x.(map[string]any)["owner"].(string))
		}
		slices.Sort(owners)
		if strings.Join(owners, ",") != "instructor,participant-01,participant-01" {
			t.Errorf("owners in the JSON: %v", owners)
		}
		break
	}

	// The dashboard as the server renders it names the owners too.
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(page, []byte(`data-identity="p1-tab" data-state="leader" data-owner="participant-01"`)) ||
		!bytes.Contains(page, []byte(` · opened by participant-01</span>`)) {
		t.Errorf("the rendered tab rows do not name their owners:\n%s", page)
	}

	// Without authentication, as on an open loopback server, any namespace goes and no one owns
	// a tab.
	open := dialAs(t, ctx, srv, "/ui/tabs/connect", "")
	readJSON(t, ctx, open)
	writeJSON(t, ctx, open, report("anyone", "participant-02", "leader", "open"))
	readTabs(t, ctx, dash, func(ts []TabInfo) bool {
		return slices.ContainsFunc(ts, func(tab TabInfo) bool {
			return tab.Identity == "anyone" && tab.Namespace == "participant-02" && tab.Owner == ""
		})
	})
}

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// drain reads and drops what the hub sends a tab until c closes, and then sends c's close
// status to done. Reading lets Ping get its pong.
func drain(ctx context.Context, c *websocket.Conn) <-chan websocket.StatusCode {
	done := make(chan websocket.StatusCode, 1)
	go func() {
		for {
			if _, _, err := c.Read(ctx); err != nil {
				done <- websocket.CloseStatus(err)
				return
			}
		}
	}()
	return done
}

// startClockedHub serves a UI whose clock stands still until the test moves it, with a
// context for the test's sockets; both end with the test.
func startClockedHub(t *testing.T) (*testClock, *testUI, *httptest.Server, context.Context) {
	clock := &testClock{t: t0}
	tu := mustNewUI(t, t0, func(o *Options) { o.Now = clock.now })
	srv := httptest.NewServer(tu.echo)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return clock, tu, srv, ctx
}

// TestTabHubLimitsReports: while the server's clock stands still a tab's flood of reports
// changes the list at most reportBurst times, the newest report is kept and shown once the
// clock allows another, and a client that goes on flooding, or sends a report larger than any
// real one, is disconnected with a reason.
func TestTabHubLimitsReports(t *testing.T) {
	clock, tu, srv, ctx := startClockedHub(t)

	tab := mustDial(t, ctx, srv, "/ui/tabs/connect", srv.URL)
	readJSON(t, ctx, tab)
	closed := drain(ctx, tab)
	const n = floodBurst / 2
	for i := range n {
		state := "follower"
		if i == n-1 {
			state = "leader"
		}
		writeJSON(t, ctx, tab, report("tab-1", "default", state, fmt.Sprintf("#%d", i)))
	}
	// The pong comes after the hub has read every report before the ping; they are applied
	// apart from the reading, so wait for the first to show.
	if err := tab.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	var changes uint64
	poll.Until(t, 10*time.Second, "the reports change the list", func() (bool, string) {
		tu.hub.mu.Lock()
		defer tu.hub.mu.Unlock()
		changes = tu.hub.version
		return changes > 0, "no change yet"
	})
	if changes == 0 || changes > reportBurst {
		t.Errorf("%d reports at once changed the list %d times, want 1 to %d", n, changes, reportBurst)
	}
	clock.add(time.Second)
	dash := mustDial(t, ctx, srv, "/ui/tabs/watch", srv.URL)
	readTabs(t, ctx, dash, func(ts []TabInfo) bool {
		return len(ts) == 1 && ts[0].State == "leader" && ts[0].LastLog.Text == fmt.Sprintf("#%d", n-1)
	})
	tu.hub.mu.Lock()
	changes = tu.hub.version
	tu.hub.mu.Unlock()
	if changes > reportBurst+1 {
		t.Errorf("the list changed %d times, want at most %d", changes, reportBurst+1)
	}

	// Going on: the flood limit is reached and the hub closes the socket, saying why.
	for range 2 * floodBurst {
		if err := tab.Write(ctx, websocket.MessageText, []byte(`{"type":"report"}`)); err != nil {
			break // closed already
		}
	}
	if got := <-closed; got != websocket.StatusPolicyViolation {
		t.Errorf("a flooding tab: close status %v, want %v", got, websocket.StatusPolicyViolation)
	}

	// A report larger than any real one is refused.
	big := mustDial(t, ctx, srv, "/ui/tabs/connect", srv.URL)
	readJSON(t, ctx, big)
	bigClosed := drain(ctx, big)
	writeJSON(t, ctx, big, report("tab-2", "default", "leader", strings.Repeat("x", tabReadLimit)))
	if got := <-bigClosed; got != websocket.StatusMessageTooBig {
		t.Errorf("a huge report: close status %v, want %v", got, websocket.StatusMessageTooBig)
	}
}

// TestTabHubLimitsCommands: a dashboard's commands beyond reportBurst at once are refused until
// the clock allows more, and a dashboard that floods the hub is disconnected with a reason.
func TestTabHubLimitsCommands(t *testing.T) {
	clock, _, srv, ctx := startClockedHub(t)

	dash := mustDial(t, ctx, srv, "/ui/tabs/watch", srv.URL)
	readTabs(t, ctx, dash, func([]TabInfo) bool { return true })
	command := func() string {
		writeJSON(t, ctx, dash, map[string]any{"type": "command", "tab": "nope", "command": map[string]any{"type": "pause"}})
		for {
			if m := readJSON(t, ctx, dash); m["type"] == "error" {
				return m["error"].(string)
			}
		}
	}
	for i := range reportBurst {
		if got := command(); !strings.Contains(got, "no such tab") {
			t.Fatalf("command %d: %q", i, got)
		}
	}
	if got := command(); !strings.Contains(got, "too many commands") {
		t.Errorf("command %d at once: %q, want too many commands", reportBurst+1, got)
	}
	clock.add(time.Second)
	if got := command(); !strings.Contains(got, "no such tab") {
		t.Errorf("a command a second later: %q", got)
	}

	closed := make(chan websocket.StatusCode, 1)
	go func() {
		for {
			if _, _, err := dash.Read(ctx); err != nil {
				closed <- websocket.CloseStatus(err)
				return
			}
		}
	}()
	for range floodBurst + 1 {
		if err := dash.Write(ctx, websocket.MessageText, []byte(`{}`)); err != nil {
			break
		}
	}
	if got := <-closed; got != websocket.StatusPolicyViolation {
		t.Errorf("a flooding dashboard: close status %v, want %v", got, websocket.StatusPolicyViolation)
	}
}

// TestTokenBucket: burst tokens at once, then rate a second; a clock going back refills nothing.
func TestTokenBucket(t *testing.T) {
	b := newTokenBucket(20, 10, t0)
	for i := range 10 {
		if wait := b.take(t0); wait != 0 {
			t.Fatalf("token %d of the burst: wait %v", i, wait)
		}
	}
	for _, tc := range []struct {
		at   time.Duration
		want time.Duration
	}{
		{0, 50 * time.Millisecond},
		{20 * time.Millisecond, 30 * time.Millisecond},
		{50 * time.Millisecond, 0},
		{50 * time.Millisecond, 50 * time.Millisecond},
		{-time.Hour, 50 * time.Millisecond},
		{time.Hour, 0},
	} {
		if got := b.take(t0.Add(tc.at)); (got - tc.want).Abs() > time.Millisecond {
			t.Errorf("take at %v: wait %v, want %v", tc.at, got, tc.want)
		}
	}
	// A long pause refills the burst, no more.
	n := 0
	for b.take(t0.Add(time.Hour)) == 0 {
		n++
	}
	if n != 9 {
		t.Errorf("after an hour %d more tokens, want 9 (the burst less the one taken)", n)
	}
}

// TestParticipantsCommandTheirOwnTabs: over the wire, a participant's dashboard sends fault
// commands to the tabs the participant opened, and its commands to another participant's tab
// are refused with the reason; the instructor's reach every tab.
func TestParticipantsCommandTheirOwnTabs(t *testing.T) {
	tu := mustNewUI(t, t0, workshopUsers, func(o *Options) {
		o.MayCommandTabs = func(r *http.Request) bool { return r.Header.Get("X-Test-User") == "instructor" }
	})
	srv := httptest.NewServer(tu.echo)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	tabs := map[string]*websocket.Conn{}
	ids := map[string]string{}
	for _, owner := range []string{"participant-01", "participant-02"} {
		c := dialAs(t, ctx, srv, "/ui/tabs/connect", owner)
		ids[owner], _ = readJSON(t, ctx, c)["id"].(string)
		writeJSON(t, ctx, c, report("tab-"+owner, owner, "leader", "leading"))
		tabs[owner] = c
	}
	dash := dialAs(t, ctx, srv, "/ui/tabs/watch", "participant-01")
	readTabs(t, ctx, dash, func(ts []TabInfo) bool { return len(ts) == 2 })
	command := func(c *websocket.Conn, tab string) {
		writeJSON(t, ctx, c, map[string]any{"type": "command", "tab": tab, "command": map[string]any{"type": "pause"}})
	}
	// Another participant's tab: refused, and the tab is not told.
	command(dash, ids["participant-02"])
	for {
		m := readJSON(t, ctx, dash)
		if m["type"] != "error" {
			continue
		}
		if got, _ := m["error"].(string); got != ErrNotYours.Error() || m["tab"] != ids["participant-02"] {
			t.Errorf("participant-01 pausing participant-02's tab: %v", m)
		}
		break
	}
	// Their own: the tab gets the command.
	command(dash, ids["participant-01"])
	if m := readJSON(t, ctx, tabs["participant-01"]); m["type"] != "command" || m["from"] != "participant-01" {
		t.Errorf("participant-01's own tab got %v, want the command, from participant-01", m)
	}
	// The instructor's reach participant-02's tab, which had been told nothing before.
	inst := dialAs(t, ctx, srv, "/ui/tabs/watch", "instructor")
	readTabs(t, ctx, inst, func(ts []TabInfo) bool { return len(ts) == 2 })
	command(inst, ids["participant-02"])
	// The tab is told who sent it: its page says so.
	if m := readJSON(t, ctx, tabs["participant-02"]); m["type"] != "command" || m["from"] != "instructor" {
		t.Errorf("participant-02's tab got %v after the instructor's command, want the command, from instructor", m)
	}
}
