package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web"
)

// panicLog is the HTTP server's error log; net/http recovers a handler's panic and logs it
// there, so the fuzz target looks for it.
type panicLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (p *panicLog) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.Write(b)
}

func (p *panicLog) panicked() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.buf.String(); strings.Contains(s, "panic") {
		return s
	}
	return ""
}

// wsPeer is one WebSocket to the server, its incoming messages read and dropped.
type wsPeer struct {
	c     *websocket.Conn
	first chan []byte
}

func dialWS(tb testing.TB, base, path string, protocols ...string) *wsPeer {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+path, &websocket.DialOptions{Subprotocols: protocols})
	if err != nil {
		tb.Fatalf("dial %s: %v", path, err)
	}
	c.SetReadLimit(1 << 20)
	p := &wsPeer{c: c, first: make(chan []byte, 1)}
	go func() {
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			select {
			case p.first <- b:
			default:
			}
		}
	}()
	return p
}

// FuzzWebSocketMessages sends any message on each WebSocket the server reads from: a candidate
// tab's report stream, the dashboard's command stream and an API watch. The server must neither
// panic nor stop answering.
func FuzzWebSocketMessages(f *testing.F) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlite.Open(context.Background(), filepath.Join(f.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		f.Fatal(err)
	}
	s := mustNew(f, web.Config{Logger: logger, Store: db, CoordinatedLeaderElection: true})
	pl := &panicLog{}
	srv := httptest.NewUnstartedServer(s.Handler())
	srv.Config.ErrorLog = log.New(pl, "", 0)
	srv.Start()
	f.Cleanup(func() {
		s.Shutdown(context.Background())
		srv.Close()
		db.Close()
	})

	const (
		tabPath   = "/ui/tabs/connect"
		watchPath = "/ui/tabs/watch"
		apiPath   = "/apis/coordination.k8s.io/v1/namespaces/default/leases?watch=true"
	)
	tab := dialWS(f, srv.URL, tabPath)
	var hello struct{ ID string }
	select {
	case b := <-tab.first:
		json.Unmarshal(b, &hello)
	case <-time.After(5 * time.Second):
		f.Fatal("no hello from the tab hub")
	}
	peers := map[string]*wsPeer{tabPath: tab, watchPath: dialWS(f, srv.URL, watchPath), apiPath: dialWS(f, srv.URL, apiPath, "leaselab.watch")}

	for _, m := range []string{
		`{"type":"report","tab":{"identity":"tab-1","namespace":"default","lease":"demo","state":"leader","role":"leader","holder":"tab-1","faults":{"paused":true,"partition":"hang","latencyMs":100,"clockOffsetMs":-5000},"activeFaults":["paused"],"lastLog":{"at":1,"text":"acquired"}}}`,
		`{"type":"report","tab":{"state":"` + strings.Repeat("x", 300) + `","connectedAt":-1}}`,
		`{"type":"command","tab":"` + hello.ID + `","command":{"type":"pause"}}`,
		`{"type":"command","tab":"` + hello.ID + `","command":{"type":"partition","mode":"hang"}}`,
		`{"type":"command","tab":"` + hello.ID + `","command":{"type":"slow","latencyMs":1e308}}`,
		`{"type":"command","tab":"` + hello.ID + `","command":{"type":"clockOffset","seconds":-1e-300}}`,
		`{"type":"command","tab":"nope","command":{"type":"crash"}}`,
		`{"type":"report","tab":null}`,
		`{"type":"command"}`,
		`[]`, `null`, `{"type":1}`, "\xff\xfe", ``,
	} {
		f.Add(m)
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	f.Fuzz(func(t *testing.T, msg string) {
		for path, p := range peers {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err := p.c.Write(ctx, websocket.MessageText, []byte(msg))
			cancel()
			if err != nil {
				// The server may close a socket (a message over its read limit): open another.
				p.c.CloseNow()
				if path == apiPath {
					peers[path] = dialWS(t, srv.URL, path, "leaselab.watch")
				} else {
					peers[path] = dialWS(t, srv.URL, path)
				}
			}
		}
		if s := pl.panicked(); s != "" {
			t.Fatalf("message %q: the server panicked: %s", msg, s)
		}
		resp, err := hc.Get(srv.URL + "/healthz")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("message %q: the server stopped answering: %v", msg, err)
		}
		resp.Body.Close()
	})
}
