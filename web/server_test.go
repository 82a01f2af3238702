package web_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web"
	"github.com/leaselab/leaselab/web/webtest"
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
	return webtest.Start(tb, cfg, web.Screens{})
}

// mustNew builds a server without an election controller.
func mustNew(tb testing.TB, cfg web.Config) *web.Server {
	tb.Helper()
	a, err := web.NewAPI(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := web.New(a, web.Screens{})
	if err != nil {
		a.Close()
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
	srv := startOpen(t, web.Config{BodyReadTimeout: 200 * time.Millisecond})
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
	s := mustNew(t, web.Config{Logger: logger, Store: db})
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
// in-process request, reused for a screen's route with more parameters, panics (the lease
// page, a card's Delete). web.New refuses to add the screens after the API served a request.
func TestScreensBeforeTheFirstRequest(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	a, err := web.NewAPI(web.Config{Logger: logger, Store: db})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	resp, err := a.Transport().RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := web.New(a, web.Screens{}); err == nil || !strings.Contains(err.Error(), "before the screens' routes") {
		t.Errorf("web.New after an in-process request: %v, want a refusal", err)
	}
}
