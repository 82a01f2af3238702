package ui

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wireReport is a report byte for byte as play.js has always sent it: JSON.stringify of the
// object it builds from the candidate's snapshot, keys in its order.
const wireReport = `{"type":"report","tab":{"identity":"tab-1","namespace":"default","lease":"demo","state":"leader","role":"leader","holder":"tab-1",` +
	`"faults":{"paused":false,"partition":"hang","latencyMs":1500,"clockOffsetMs":-5000},` +
	`"activeFaults":["partitioned: requests hang","slow network: +1.5 s per request","clock 5 s behind"],` +
	`"lastLog":{"at":1767225600000,"kind":"renewed","text":"renewed"},` +
	`"coordinated":true,"binaryVersion":"1.36.0","emulationVersion":"1.35.0","strategy":"OldestEmulationVersion","preferredHolder":"tab-2"}}`

// wireTabs is the dashboards' list with that one tab, byte for byte as the hub has always
// written it; ID and CONNECTED stand for the tab's id and connection time.
const wireTabs = `{"type":"tabs","tabs":[{"id":"ID","identity":"tab-1","namespace":"default","lease":"demo","state":"leader","role":"leader","holder":"tab-1",` +
	`"faults":{"paused":false,"partition":"hang","latencyMs":1500,"clockOffsetMs":-5000},` +
	`"activeFaults":["partitioned: requests hang","slow network: +1.5 s per request","clock 5 s behind"],` +
	`"lastLog":{"at":1767225600000,"kind":"renewed","text":"renewed"},` +
	`"coordinated":true,"binaryVersion":"1.36.0","emulationVersion":"1.35.0","strategy":"OldestEmulationVersion","preferredHolder":"tab-2","clock":0,"roleSince":0,"native":false,` +
	`"steppingDown":true,"connectedAt":CONNECTED,"owner":""}]}`

// TestTabWireCompatible: the messages between a candidate tab and the hub are byte for byte
// what they have always been, so that a tab opened before an upgrade keeps talking to the new
// server, and a new tab to an old one.
func TestTabWireCompatible(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tu := mustNewUI(t, now)
	srv := httptest.NewServer(tu.echo)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	read := func(c *websocket.Conn) string {
		t.Helper()
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return string(b)
	}
	tab := mustDial(t, ctx, srv, "/ui/tabs/connect", srv.URL)
	hello := read(tab)
	const helloPrefix = `{"id":"`
	if len(hello) != len(helloPrefix)+16+len(`","type":"hello"}`) || hello[:len(helloPrefix)] != helloPrefix || hello[len(helloPrefix)+16:] != `","type":"hello"}` {
		t.Fatalf("hello: %s", hello)
	}
	id := hello[len(helloPrefix) : len(helloPrefix)+16]
	if err := tab.Write(ctx, websocket.MessageText, []byte(wireReport)); err != nil {
		t.Fatal(err)
	}

	dash := mustDial(t, ctx, srv, "/ui/tabs/watch", srv.URL)
	want := strings.Replace(wireTabs, `"id":"ID"`, `"id":"`+id+`"`, 1)
	want = strings.Replace(want, "CONNECTED", strconv.FormatInt(now.UnixMilli(), 10), 1)
	for {
		got := read(dash)
		if got == `{"type":"tabs","tabs":[]}` {
			continue // the report is not applied yet
		}
		if got != want {
			t.Fatalf("tabs:\n got %s\nwant %s", got, want)
		}
		break
	}

	// The commands a dashboard sends reach the tab as they always have.
	for _, tc := range []struct{ dashboard, tab string }{
		{`{"type":"command","tab":"` + id + `","command":{"type":"clockOffset","seconds":-3}}`, `{"type":"command","command":{"type":"clockOffset","seconds":-3}}`},
		{`{"type":"command","tab":"` + id + `","command":{"type":"partition","mode":"fail"}}`, `{"type":"command","command":{"type":"partition","mode":"fail"}}`},
		{`{"type":"command","tab":"` + id + `","command":{"type":"slow","latencyMs":2500}}`, `{"type":"command","command":{"type":"slow","latencyMs":2500}}`},
		{`{"type":"command","tab":"` + id + `","command":{"type":"pause"}}`, `{"type":"command","command":{"type":"pause"}}`},
	} {
		if err := dash.Write(ctx, websocket.MessageText, []byte(tc.dashboard)); err != nil {
			t.Fatal(err)
		}
		if got := read(tab); got != tc.tab {
			t.Errorf("command %s reached the tab as %s, want %s", tc.dashboard, got, tc.tab)
		}
	}
}
