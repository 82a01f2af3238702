package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestWSSinkWatchdog checks the stuck-write watchdog of WebSocket watches: a write younger than
// wsWriteTimeout is left alone, an older one closes the connection, and a closed sink's
// watchdog stops.
func TestWSSinkWatchdog(t *testing.T) {
	accepted := make(chan *wsSink, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		accepted <- newWSSink(c, false)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dial := func() (*websocket.Conn, *wsSink) {
		t.Helper()
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return c, <-accepted
	}

	c, s := dial()
	defer c.CloseNow()
	s.writing.Store(time.Now().Add(-wsWriteTimeout / 2).UnixNano())
	s.check()
	s.writing.Store(0)
	if err := s.send([]byte("still open")); err != nil {
		t.Fatalf("send after a young write: %v", err)
	}
	if _, msg, err := c.Read(ctx); err != nil || string(msg) != "still open" {
		t.Fatalf("read %q, %v", msg, err)
	}
	s.writing.Store(time.Now().Add(-wsWriteTimeout).UnixNano())
	s.check()
	readCtx, stop := context.WithTimeout(ctx, 3*time.Second)
	defer stop()
	if _, _, err := c.Read(readCtx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the connection of a stuck write is still open: %v", err)
	}

	c2, s2 := dial()
	defer c2.CloseNow()
	go c2.Read(ctx) // answers the close handshake
	s2.close()
	s2.check()
	if s2.watchdog.Load().Stop() {
		t.Error("the watchdog of a closed sink is still armed")
	}
}
