package web_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web"
	"github.com/leaselab/leaselab/web/api/front"
	"github.com/leaselab/leaselab/web/play/ui"
	"github.com/leaselab/leaselab/web/webtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// startOpen serves a server without tokens, as on loopback.
func startOpen(tb testing.TB, cfg web.Config) *webtest.Server {
	tb.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() }) // after the server's own cleanup
	cfg.Logger, cfg.Store = logger, db
	return webtest.Start(tb, cfg)
}

// mustNew builds a server without an election controller.
func mustNew(tb testing.TB, cfg web.Config) *web.Server {
	tb.Helper()
	s, err := web.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

const testLeases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"

// TestOpenServerRefusesWebPages: without tokens anyone on loopback may write, so a web page in
// the user's browser must not: a cross-site write and a request naming another host (DNS
// rebinding) are refused, while programs (no Origin, no Sec-Fetch-Site) and the server's own
// pages are served.
func TestOpenServerRefusesWebPages(t *testing.T) {
	srv := startOpen(t, web.Config{})
	do := func(method, path, body, host string, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	lease := func(name string) string { return `{"metadata":{"name":"` + name + `"},"spec":{"holderIdentity":"a"}}` }

	if code, body := do(http.MethodPost, testLeases, lease("from-kubectl"), ""); code != http.StatusCreated {
		t.Errorf("a program's create: %d %s", code, body)
	}
	if code, body := do(http.MethodPost, testLeases, lease("from-page"), "", "Origin", srv.URL, "Sec-Fetch-Site", "same-origin"); code != http.StatusCreated {
		t.Errorf("the server's own page: %d %s", code, body)
	}
	if code, body := do(http.MethodPost, testLeases, lease("evil"), "", "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden || !strings.Contains(body, "cross-origin") {
		t.Errorf("a cross-site write: %d %s", code, body)
	}
	if code, body := do(http.MethodGet, testLeases, "", "rebind.evil.example:80"); code != http.StatusMisdirectedRequest || !strings.Contains(body, "localhost") {
		t.Errorf("another host: %d %s", code, body)
	}
	for _, host := range []string{"localhost:8080", "127.0.0.1", "[::1]:8080", "app.localhost:1"} {
		if code, body := do(http.MethodGet, testLeases, "", host); code != http.StatusOK {
			t.Errorf("host %s: %d %s", host, code, body)
		}
	}
	if code, body := do(http.MethodGet, testLeases+"/evil", "", ""); code != http.StatusNotFound {
		t.Errorf("the refused write was stored: %d %s", code, body)
	}
}

// TestBodyReadTimeout: a client that announces a body and sends only part of it loses its
// connection once the body read timeout passes, instead of holding it forever.
func TestBodyReadTimeout(t *testing.T) {
	srv := startOpen(t, web.Config{Config: front.Config{BodyReadTimeout: 200 * time.Millisecond}})
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "POST "+testLeases+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"metadata\":"); err != nil {
		t.Fatal(err)
	}
	// The liveness bound is generous: the server gives up after 200 ms.
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("the server still waits for the body")
		}
		return // closed without an answer: the connection is freed
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Errorf("status %d for a body that never came", resp.StatusCode)
	}
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("the connection stays open")
		}
	}
}

// TestShutdownClosesFreshConnections: a connection that has not sent a request (browsers open
// them ahead of need) does not hold shutdown up; net/http alone waits five seconds for it.
func TestShutdownClosesFreshConnections(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := mustNew(t, web.Config{Config: front.Config{Logger: logger, Store: db}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A request on another connection makes sure the server has accepted the idle one.
	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v (waiting for a connection without a request)", err)
	}
	if err := <-served; err != nil {
		t.Errorf("serve: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("the fresh connection is still open")
	}
}

// TestScreensBeforeTheFirstRequest: Echo gives each pooled request context room for the path
// parameters of the routes it has when the context is made, so a context made by an early
// in-process request, reused for a screen's route with more parameters, would panic (the lease
// page, a card's Delete). web.New adds every route before anything can send a request: the
// server's first in-process request leaves a context that serves the lease page.
func TestScreensBeforeTheFirstRequest(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := mustNew(t, web.Config{Config: front.Config{Logger: logger, Store: db}})
	defer s.Shutdown(context.Background())
	for _, path := range []string{"/healthz", "/leases/default/a", "/ui/leases/default/a/delete"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		resp, err := s.Transport().RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode >= http.StatusInternalServerError {
			t.Errorf("%s in process: %s", path, resp.Status)
		}
	}
}

// TestAuthWords: the workshop's own pages get the language the screens would choose, their
// catalog's words in it, the switch to the other and, for ?lang=, the cookie keeping it.
func TestAuthWords(t *testing.T) {
	r := httptest.NewRequest("GET", "/join?token=t&lang=zh", nil)
	w := web.AuthWords(r)
	if w.Lang != "zh" || w.HTMLLang != "zh-CN" || w.T("auth.join.title") != "加入" ||
		w.Switch != "/join?lang=en&token=t" || w.Keep == nil || w.Keep.Value != "zh" {
		t.Errorf("?lang=zh: %+v, title %q", w, w.T("auth.join.title"))
	}
	r = httptest.NewRequest("GET", "/workshop", nil)
	r.Header.Set("Accept-Language", "fr, en;q=0.5")
	if w := web.AuthWords(r); w.Lang != "en" || w.T("auth.ws.title") != "Workshop" || w.Keep != nil {
		t.Errorf("Accept-Language fr, en: %+v", w)
	}
}

// TestDamagedStoreIsNotReady: once a request finds the database damaged, /readyz turns red and
// says which check failed, and the request's 500 is logged with its cause.
func TestDamagedStoreIsNotReady(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	path := filepath.Join(t.TempDir(), "leaselab.db")
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := mustNew(t, web.Config{Config: front.Config{Logger: logger, Store: db}})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	defer s.Shutdown(context.Background())

	ctx := context.Background()
	value := bytes.Repeat([]byte("x"), 900)
	for i := range 400 {
		if _, err := db.Create(ctx, store.Key{Resource: "leases.coordination.k8s.io", Namespace: "default", Name: fmt.Sprintf("l%05d", i)}, value); err != nil {
			t.Fatal(err)
		}
	}
	if code, _ := get(t, srv.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("readyz before the damage: %d", code)
	}
	current, _, err := db.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	watch, err := http.Get(fmt.Sprintf("%s/apis/coordination.k8s.io/v1/namespaces/default/leases?watch=1&resourceVersion=%d", srv.URL, current))
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Body.Close()
	streamed := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(watch.Body)
		streamed <- string(b)
	}()
	// Move every page into the main file, then write junk into its middle.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5, 0x13, 0x7f}, 7000), fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	db.Create(ctx, store.Key{Resource: "leases.coordination.k8s.io", Namespace: "default", Name: "after"}, []byte("{}"))

	if code, body := get(t, srv.URL+"/apis/coordination.k8s.io/v1/leases"); code != http.StatusInternalServerError {
		t.Fatalf("list over a damaged file: %d %s", code, body)
	}
	code, body := get(t, srv.URL+"/readyz")
	if code != http.StatusInternalServerError || !strings.Contains(body, "[-]store") {
		t.Errorf("readyz after the damage: %d %q", code, body)
	}
	// Writes are refused with a Status that says why, and the open watch ends with an ERROR.
	for i := range 3 {
		resp, err := http.Post(srv.URL+"/apis/coordination.k8s.io/v1/namespaces/default/leases", "application/json",
			strings.NewReader(fmt.Sprintf(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"late-%d"}}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(b), `"kind":"Status"`) || !strings.Contains(string(b), "damaged") {
			t.Errorf("create %d on a damaged store: %d %s; want a 500 Status saying the storage is damaged", i, resp.StatusCode, b)
		}
	}
	select {
	case got := <-streamed:
		if !strings.Contains(got, `"type":"ERROR"`) || strings.Contains(got, "late-") {
			t.Errorf("the open watch streamed %q; want an ERROR event and none of the refused writes", got)
		}
	case <-time.After(time.Minute):
		t.Error("the open watch did not end after the damage")
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "database damaged") {
		t.Errorf("logs do not say the database is damaged at error level:\n%s", l)
	}
}

func get(tb testing.TB, url string) (int, string) {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sampleMethodNotAllowed is kube-apiserver's answer to a method it has no route for on a path
// it knows (samples/lease-method-not-allowed-405.http).
const sampleMethodNotAllowed = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}`

// do sends a request with an optional Accept header and returns the whole answer.
func do(tb testing.TB, method, url, accept string) (int, http.Header, string) {
	tb.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestUnknownMethods: a method Echo's router does not know (FOO) gets the same 405 Status as one
// it knows but the API has no verb for (PROPFIND, TRACE), as kube-apiserver answers any method
// its router has no route for; elsewhere too, never Echo's own {"message":...}.
func TestUnknownMethods(t *testing.T) {
	srv := startOpen(t, web.Config{})
	for _, m := range []string{"FOO", "PROPFIND", "TRACE", "CONNECT"} {
		code, h, body := do(t, m, srv.URL+testLeases, "")
		if code != http.StatusMethodNotAllowed || h.Get("Content-Type") != "application/json" || strings.TrimSpace(body) != sampleMethodNotAllowed {
			t.Errorf("%s %s: %d %q %s", m, testLeases, code, h.Get("Content-Type"), body)
		}
	}
	for _, path := range []string{"/", "/version", "/healthz", "/workshop"} {
		code, h, body := do(t, "FOO", srv.URL+path, "")
		if code != http.StatusMethodNotAllowed && code != http.StatusNotFound || !strings.HasPrefix(body, `{"kind":"Status","apiVersion":"v1"`) ||
			h.Get("Content-Type") != "application/json" {
			t.Errorf("FOO %s: %d %q %s", path, code, h.Get("Content-Type"), body)
		}
	}
}

// failingStore fails every Revision once failing is set: the screens then have nothing to show.
type failingStore struct {
	store.Interface
	failing atomic.Bool
}

func (s *failingStore) Revision(ctx context.Context) (int64, int64, error) {
	if s.failing.Load() {
		return 0, 0, errors.New("the disk is on fire")
	}
	return s.Interface.Revision(ctx)
}

// TestScreenErrors: a screen that fails is answered with the screens' error page to a browser
// and with a Status to anything else, never with Echo's {"message":"Internal Server Error"}.
func TestScreenErrors(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := &failingStore{Interface: db}
	srv := webtest.Start(t, web.Config{Config: front.Config{Logger: logger, Store: st}})
	st.failing.Store(true)

	code, h, body := do(t, http.MethodGet, srv.URL+"/leases/default/a", "text/html,application/xhtml+xml")
	if code != http.StatusInternalServerError || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, "<html") {
		t.Errorf("lease page: %d %q %s", code, h.Get("Content-Type"), body)
	}
	code, _, body = do(t, http.MethodGet, srv.URL+"/leases/default/a/live", "text/html")
	if code != http.StatusInternalServerError || !strings.Contains(body, `data-testid="error-message"`) || !strings.Contains(body, "the disk is on fire") {
		t.Errorf("lease page's fragment: %d %s", code, body)
	}
	for _, path := range []string{"/leases/default/a", "/leases/default/a/live"} {
		code, h, body := do(t, http.MethodGet, srv.URL+path, "")
		isStatus := h.Get("Content-Type") == "application/json" && strings.HasPrefix(body, `{"kind":"Status","apiVersion":"v1"`)
		isPage := strings.HasPrefix(h.Get("Content-Type"), "text/html") && strings.Contains(body, "<html")
		if code != http.StatusInternalServerError || !isStatus && !isPage {
			t.Errorf("%s: %d %q %s", path, code, h.Get("Content-Type"), body)
		}
	}
}

// TestReplayRefusesWrites: a replay answers every request that could change something, on any
// path, with kube-apiserver's 405 MethodNotAllowed Status naming the recording; reads pass.
func TestReplayRefusesWrites(t *testing.T) {
	replay := &ui.Replay{File: "class.jsonl", From: time.Unix(100, 0), To: time.Unix(200, 0), FirstRevision: 1, LastRevision: 9, Changes: 9}
	srv := startOpen(t, web.Config{Replay: replay})
	for _, tc := range []struct{ method, path, kind, group string }{
		{http.MethodPost, testLeases, "leases", "coordination.k8s.io"},
		{http.MethodPut, testLeases + "/x", "leases", "coordination.k8s.io"},
		{http.MethodPatch, testLeases + "/x", "leases", "coordination.k8s.io"},
		{http.MethodDelete, "/api/v1/namespaces/default", "namespaces", ""},
		{http.MethodPost, "/ui/leases", "", ""},
		{http.MethodPost, "/ui/leases/default/x/delete", "", ""},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var st metav1.Status
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusMethodNotAllowed || st.Reason != metav1.StatusReasonMethodNotAllowed || st.Kind != "Status" ||
			!strings.Contains(st.Message, `replays the recording "class.jsonl"`) || resp.Header.Get("Allow") != "GET, HEAD, OPTIONS" {
			t.Errorf("%s %s: %d %v %+v", tc.method, tc.path, resp.StatusCode, err, st)
			continue
		}
		if tc.kind != "" && (st.Details == nil || st.Details.Kind != tc.kind || st.Details.Group != tc.group) {
			t.Errorf("%s %s: details %+v", tc.method, tc.path, st.Details)
		}
	}
	for _, path := range []string{"/healthz", testLeases, "/"} {
		if code, body := get(t, srv.URL+path); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
}

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
	s := mustNew(f, web.Config{Config: front.Config{Logger: logger, Store: db, CoordinatedLeaderElection: true}})
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
