package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

// mustDial opens a WebSocket to path on srv, as a page of origin would.
func mustDial(tb testing.TB, ctx context.Context, srv *httptest.Server, path, origin string) *websocket.Conn {
	tb.Helper()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+path, &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {origin}},
	})
	if err != nil {
		tb.Fatalf("dial %s: %v", path, err)
	}
	tb.Cleanup(func() { c.CloseNow() })
	return c
}

func readJSON(tb testing.TB, ctx context.Context, c *websocket.Conn) map[string]any {
	tb.Helper()
	_, b, err := c.Read(ctx)
	if err != nil {
		tb.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("decode %s: %v", b, err)
	}
	return m
}

func writeJSON(tb testing.TB, ctx context.Context, c *websocket.Conn, v any) {
	tb.Helper()
	b, _ := json.Marshal(v)
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		tb.Fatalf("write: %v", err)
	}
}

// readTabs reads "tabs" messages until one satisfies ok.
func readTabs(tb testing.TB, ctx context.Context, c *websocket.Conn, ok func([]TabInfo) bool) []TabInfo {
	tb.Helper()
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			tb.Fatalf("read tabs: %v", err)
		}
		var m struct {
			Type string    `json:"type"`
			Tabs []TabInfo `json:"tabs"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			tb.Fatalf("decode %s: %v", b, err)
		}
		if m.Type == "tabs" && ok(m.Tabs) {
			return m.Tabs
		}
	}
}

func TestTabHub(t *testing.T) {
	tu := mustNewUI(t, t0)
	srv := httptest.NewServer(tu.echo)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	origin := srv.URL

	tab := mustDial(t, ctx, srv, "/ui/tabs/connect", origin)
	hello := readJSON(t, ctx, tab)
	id, _ := hello["id"].(string)
	if hello["type"] != "hello" || id == "" {
		t.Fatalf("hello: %v", hello)
	}
	writeJSON(t, ctx, tab, map[string]any{"type": "report", "tab": map[string]any{
		"identity": "tab-1", "namespace": "default", "lease": "demo", "state": "leader", "role": "leader",
		"faults": map[string]any{"paused": false}, "activeFaults": []string{}, "lastLog": map[string]any{"at": 1, "kind": "acquired", "text": "acquired"},
	}})

	dash := mustDial(t, ctx, srv, "/ui/tabs/watch", origin)
	tabs := readTabs(t, ctx, dash, func(ts []TabInfo) bool { return len(ts) == 1 })
	if got := tabs[0]; got.ID != id || got.Identity != "tab-1" || got.State != "leader" || got.LastLog.Text != "acquired" {
		t.Errorf("listed %+v", got)
	}

	// A command from the dashboard reaches the tab, as the worker message.
	writeJSON(t, ctx, dash, map[string]any{"type": "command", "tab": id, "command": map[string]any{"type": "clockOffset", "seconds": -3}})
	cmd := readJSON(t, ctx, tab)
	inner, _ := cmd["command"].(map[string]any)
	if cmd["type"] != "command" || inner["type"] != "clockOffset" || inner["seconds"] != -3.0 {
		t.Errorf("the tab got %v", cmd)
	}
	// Anything but a fault command is refused, and so is an unknown tab.
	writeJSON(t, ctx, dash, map[string]any{"type": "command", "tab": id, "command": map[string]any{"type": "start", "config": map[string]any{"baseURL": "http://evil.example"}}})
	if m := readJSON(t, ctx, dash); m["type"] != "error" || !strings.Contains(m["error"].(string), "unknown command") {
		t.Errorf("start command: %v", m)
	}
	writeJSON(t, ctx, dash, map[string]any{"type": "command", "tab": "nope", "command": map[string]any{"type": "pause"}})
	if m := readJSON(t, ctx, dash); m["type"] != "error" || !strings.Contains(m["error"].(string), "no such tab") {
		t.Errorf("unknown tab: %v", m)
	}

	// A report with an unknown state is dropped; a state change is listed.
	writeJSON(t, ctx, tab, map[string]any{"type": "report", "tab": map[string]any{"identity": "tab-1", "namespace": "default", "lease": "demo", "state": "king"}})
	writeJSON(t, ctx, tab, map[string]any{"type": "report", "tab": map[string]any{"identity": "tab-1", "namespace": "default", "lease": "demo", "state": "paused", "faults": map[string]any{"paused": true}}})
	readTabs(t, ctx, dash, func(ts []TabInfo) bool { return len(ts) == 1 && ts[0].State == "paused" && ts[0].Faults.Paused })

	// A closed tab leaves the list.
	tab.Close(websocket.StatusNormalClosure, "")
	readTabs(t, ctx, dash, func(ts []TabInfo) bool { return len(ts) == 0 })
}

func TestTabHubChecksOrigin(t *testing.T) {
	tu := mustNewUI(t, t0)
	srv := httptest.NewServer(tu.echo)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, path := range []string{"/ui/tabs/connect", "/ui/tabs/watch"} {
		_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+path, &websocket.DialOptions{
			HTTPHeader: http.Header{"Origin": {"http://evil.example"}},
		})
		if err == nil {
			t.Errorf("%s: a page of another origin connected", path)
			continue
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %v, want 403", path, err)
		}
	}
}

func TestTabHubDisconnectsSlowTab(t *testing.T) {
	h := NewHub(nil, nil)
	kicked := false
	tab := h.addTab(TabUser{}, func() { kicked = true })
	var err error
	for range tabQueue + 1 {
		err = h.Command(tab.id, "", tabproto.Command{Type: "pause"})
	}
	if err != ErrTabSlow || !kicked {
		t.Errorf("a tab that takes no commands: err %v, kicked %v", err, kicked)
	}
}

// TestTabHubReportsMode: a coordinated tab's versions, strategy and preferredHolder reach the
// dashboards' JSON as the tab reported them, the hub decides that a leader the server asks to
// step down is stepping down, and a plain tab is listed as plain whatever else it sent.
func TestTabHubReportsMode(t *testing.T) {
	tu := mustNewUI(t, t0)
	srv := httptest.NewServer(tu.echo)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	origin := srv.URL

	connect := func(tab map[string]any) *websocket.Conn {
		c := mustDial(t, ctx, srv, "/ui/tabs/connect", origin)
		if m := readJSON(t, ctx, c); m["type"] != "hello" {
			t.Fatalf("hello: %v", m)
		}
		writeJSON(t, ctx, c, map[string]any{"type": "report", "tab": tab})
		return c
	}
	old := connect(map[string]any{"identity": "tab-old", "namespace": "default", "lease": "sched", "state": "follower", "role": "follower", "holder": "tab-new",
		"coordinated": true, "binaryVersion": "1.36.0", "emulationVersion": "1.35.0", "strategy": "OldestEmulationVersion", "preferredHolder": "tab-old"})
	connect(map[string]any{"identity": "tab-new", "namespace": "default", "lease": "sched", "state": "leader", "role": "leader", "holder": "tab-new",
		"coordinated": true, "binaryVersion": "1.36.0", "emulationVersion": "1.36.0", "strategy": "OldestEmulationVersion", "preferredHolder": "tab-old"})
	connect(map[string]any{"identity": "tab-plain", "namespace": "default", "lease": "demo", "state": "leader", "role": "leader", "holder": "tab-plain",
		"binaryVersion": "1.36.0", "emulationVersion": "1.35.0", "strategy": "OldestEmulationVersion", "preferredHolder": "someone"})

	// The raw JSON, as programs read it.
	dash := mustDial(t, ctx, srv, "/ui/tabs/watch", origin)
	var byID map[string]map[string]any
	for {
		m := readJSON(t, ctx, dash)
		list, _ := m["tabs"].([]any)
		if m["type"] != "tabs" || len(list) != 3 {
			continue
		}
		byID = map[string]map[string]any{}
		for _, x := range list {
			tab := x.(map[string]any)
			byID[tab["identity"].(string)] = tab
		}
		break
	}
	want := map[string]map[string]any{
		"tab-old": {"coordinated": true, "binaryVersion": "1.36.0", "emulationVersion": "1.35.0", "strategy": "OldestEmulationVersion",
			"preferredHolder": "tab-old", "steppingDown": false},
		"tab-new": {"coordinated": true, "binaryVersion": "1.36.0", "emulationVersion": "1.36.0", "strategy": "OldestEmulationVersion",
			"preferredHolder": "tab-old", "steppingDown": true},
		"tab-plain": {"coordinated": false, "binaryVersion": "", "emulationVersion": "", "strategy": "", "preferredHolder": "", "steppingDown": false},
	}
	for id, fields := range want {
		got := byID[id]
		if got == nil {
			t.Errorf("%s not listed", id)
			continue
		}
		for k, v := range fields {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v", id, k, got[k], v)
			}
		}
	}

	// The server picks tab-old: it leads, and nobody is stepping down any more.
	writeJSON(t, ctx, old, map[string]any{"type": "report", "tab": map[string]any{"identity": "tab-old", "namespace": "default", "lease": "sched",
		"state": "leader", "role": "leader", "holder": "tab-old", "coordinated": true, "binaryVersion": "1.36.0", "emulationVersion": "1.35.0",
		"strategy": "OldestEmulationVersion"}})
	readTabs(t, ctx, dash, func(ts []TabInfo) bool {
		for _, tab := range ts {
			if tab.Identity == "tab-old" {
				return tab.State == "leader" && tab.Coordinated && tab.EmulationVersion == "1.35.0" && !tab.SteppingDown
			}
		}
		return false
	})
}

// TestTabInfoCleanBoundsMode: what a tab reports about its mode is bounded like the rest, and
// the hub, not the tab, decides who is stepping down.
func TestTabInfoCleanBoundsMode(t *testing.T) {
	h := NewHub(nil, nil)
	long := strings.Repeat("9", 1000)
	if err := h.report(h.addTab(TabUser{}, func() {}), tabproto.Report{Identity: "tab-1", Namespace: "a", State: "leader", Role: "leader", Holder: "tab-1",
		Coordinated: true, BinaryVersion: long, EmulationVersion: long, Strategy: long, PreferredHolder: long}); err != nil {
		t.Fatal(err)
	}
	// A tab cannot claim to step down: the hub decides.
	claim, err := tabproto.DecodeReport([]byte(`{"type":"report","tab":{"identity":"tab-2","namespace":"b","state":"leader","role":"leader","steppingDown":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.report(h.addTab(TabUser{}, func() {}), claim); err != nil {
		t.Fatal(err)
	}
	tabs := h.Tabs()
	if len(tabs) != 2 {
		t.Fatalf("tabs %+v", tabs)
	}
	info, plain := tabs[0], tabs[1]
	if len(info.BinaryVersion) != tabproto.MaxVersionLen || len(info.EmulationVersion) != tabproto.MaxVersionLen || len(info.Strategy) != tabproto.MaxVersionLen ||
		len(info.PreferredHolder) != tabproto.MaxIdentityLen {
		t.Errorf("lengths %d %d %d %d", len(info.BinaryVersion), len(info.EmulationVersion), len(info.Strategy), len(info.PreferredHolder))
	}
	if !info.SteppingDown {
		t.Error("a leader the server prefers another candidate to is not stepping down")
	}
	if plain.SteppingDown {
		t.Error("a plain tab is stepping down because it said so")
	}
}

// TestTabHubChanges: a dashboard that asks for the changes gets the whole list first, then only
// the tabs that reported and the ids of those that left; applied in order, the messages give
// the list an old dashboard gets whole.
func TestTabHubChanges(t *testing.T) {
	tu := mustNewUI(t, t0)
	srv := httptest.NewServer(tu.echo)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	report := func(c *websocket.Conn, identity, state string) {
		writeJSON(t, ctx, c, map[string]any{"type": "report", "tab": map[string]any{"identity": identity, "namespace": "default", "lease": "demo", "state": state}})
	}
	var tabs []*websocket.Conn
	for _, identity := range []string{"a", "b", "c"} {
		c := mustDial(t, ctx, srv, "/ui/tabs/connect", srv.URL)
		readJSON(t, ctx, c) // hello
		report(c, identity, "follower")
		tabs = append(tabs, c)
	}
	whole := mustDial(t, ctx, srv, "/ui/tabs/watch", srv.URL)
	readTabs(t, ctx, whole, func(ts []TabInfo) bool { return len(ts) == 3 })

	dash := mustDial(t, ctx, srv, "/ui/tabs/watch?changes=1", srv.URL)
	type message struct {
		Type string    `json:"type"`
		Tabs []TabInfo `json:"tabs"`
		Gone []string  `json:"gone"`
	}
	list := map[string]TabInfo{}
	byIdentity := func() map[string]string {
		out := map[string]string{}
		for _, ti := range list {
			out[ti.Identity] = string(ti.State)
		}
		return out
	}
	// apply reads messages until the list satisfies ok, and returns the last message.
	apply := func(ok func(map[string]string) bool) message {
		t.Helper()
		for {
			_, b, err := dash.Read(ctx)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			var m message
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			switch m.Type {
			case "tabs":
				clear(list)
			case "tabsChanged":
			default:
				continue
			}
			for _, ti := range m.Tabs {
				list[ti.ID] = ti
			}
			for _, id := range m.Gone {
				delete(list, id)
			}
			if ok(byIdentity()) {
				return m
			}
		}
	}
	first := apply(func(l map[string]string) bool { return len(l) == 3 })
	if first.Type != "tabs" {
		t.Fatalf("first message %q, want the whole list", first.Type)
	}

	report(tabs[1], "b", "leader")
	m := apply(func(l map[string]string) bool { return l["b"] == "leader" })
	if m.Type != "tabsChanged" || len(m.Tabs) != 1 || m.Tabs[0].Identity != "b" || len(m.Gone) != 0 {
		t.Errorf("after b's report: %+v", m)
	}

	tabs[2].Close(websocket.StatusNormalClosure, "")
	m = apply(func(l map[string]string) bool { return len(l) == 2 })
	if m.Type != "tabsChanged" || len(m.Gone) != 1 || len(m.Tabs) != 0 {
		t.Errorf("after c left: %+v", m)
	}
	if got := byIdentity(); got["a"] != "follower" || got["b"] != "leader" {
		t.Errorf("list %v", got)
	}
}

// TestHubFollowsOneNamespace: a dashboard that follows one namespace is woken for its tabs
// only, and is sent only them (the whole list and the changes, removals included); one that
// follows every namespace gets every tab.
func TestHubFollowsOneNamespace(t *testing.T) {
	h := NewHub(nil, nil)
	all, one := h.addWatcher("", i18n.EN), h.addWatcher("team-a", i18n.EN)
	woken := func(w *hubWatcher) bool {
		select {
		case <-w.notify:
			return true
		default:
			return false
		}
	}
	report := func(tab *hubTab, id, ns string) {
		t.Helper()
		if err := h.report(tab, tabproto.Report{Identity: id, Namespace: ns, Lease: "demo", State: "leader", Role: "leader", Holder: id}); err != nil {
			t.Fatal(err)
		}
	}
	identities := func(b []byte) string {
		t.Helper()
		var m struct {
			Tabs []TabInfo `json:"tabs"`
			Gone []string  `json:"gone"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, ti := range m.Tabs {
			ids = append(ids, ti.Identity)
		}
		return strings.Join(ids, ",") + " gone:" + strings.Join(m.Gone, ",")
	}
	a, b := h.addTab(TabUser{}, func() {}), h.addTab(TabUser{}, func() {})
	report(a, "tab-a", "team-a")
	if !woken(all) || !woken(one) {
		t.Fatal("a report in team-a woke not both dashboards")
	}
	_, v := h.encodedTabsAt("team-a", i18n.EN)
	report(b, "tab-b", "team-b")
	if !woken(all) || woken(one) {
		t.Fatal("a report in team-b: want only the dashboard of every namespace woken")
	}
	if got, _ := h.encodedTabsAt("team-a", i18n.EN); identities(got) != "tab-a gone:" {
		t.Errorf("team-a's list: %s", identities(got))
	}
	if got, _ := h.tabsChanged(v, "team-a", i18n.EN); identities(got) != " gone:" {
		t.Errorf("team-a's changes after team-b's report: %s", identities(got))
	}
	if got, _ := h.tabsChanged(v, "", i18n.EN); identities(got) != "tab-b gone:" {
		t.Errorf("every namespace's changes: %s", identities(got))
	}
	_, v = h.encodedTabsAt("", i18n.EN)
	h.removeTab(b)
	h.removeTab(a)
	if !woken(one) {
		t.Error("team-a's tab left and its dashboard was not woken")
	}
	if got, _ := h.tabsChanged(v, "team-a", i18n.EN); identities(got) != " gone:"+a.id {
		t.Errorf("team-a's changes after both left: %s", identities(got))
	}
	if got, _ := h.tabsChanged(v, "", i18n.EN); !strings.Contains(identities(got), a.id) || !strings.Contains(identities(got), b.id) {
		t.Errorf("every namespace's changes after both left: %s", identities(got))
	}
	if len(h.inNamespace) != 0 {
		t.Errorf("the namespaces' index keeps %d namespaces after every tab left", len(h.inNamespace))
	}
}

// TestHubWordsFaultsInTheDashboardsLanguage: a dashboard is sent each tab's faults in words of
// its own language, as the server words them from the faults, whatever words the tab sent; the
// whole list and the changes alike.
func TestHubWordsFaultsInTheDashboardsLanguage(t *testing.T) {
	h := NewHub(nil, nil)
	tab := h.addTab(TabUser{}, func() {})
	_, from := h.encodedTabsAt("", i18n.EN)
	if err := h.report(tab, tabproto.Report{Identity: "tab-1", Namespace: "default", Lease: "demo", State: "partitioned", Role: "follower",
		Faults: tabproto.Faults{Partition: tabproto.PartitionHang, LatencyMs: 1500}, ActiveFaults: []string{"whatever the tab said"}}); err != nil {
		t.Fatal(err)
	}
	words := func(b []byte) []string {
		t.Helper()
		var m struct {
			Tabs []TabInfo `json:"tabs"`
		}
		if err := json.Unmarshal(b, &m); err != nil || len(m.Tabs) != 1 {
			t.Fatalf("%s: %v", b, err)
		}
		return m.Tabs[0].ActiveFaults
	}
	for _, tc := range []struct {
		lang i18n.Lang
		want string
	}{
		{i18n.EN, "partitioned: requests hang|slow network: +1.5 s per request"},
		{i18n.ZH, "网络分区：请求挂起|慢速网络：每个请求 +1.5 s"},
	} {
		list, _ := h.encodedTabsAt("", tc.lang)
		changes, _ := h.tabsChanged(from, "default", tc.lang)
		for _, b := range [][]byte{list, changes} {
			if got := strings.Join(words(b), "|"); got != tc.want {
				t.Errorf("%s: %q, want %q", tc.lang, got, tc.want)
			}
		}
	}
}
