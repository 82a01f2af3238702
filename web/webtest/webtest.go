// Package webtest starts a whole leaselab web server for tests outside cmd/leaselab: the one
// web.New builds for `leaselab serve`, served on 127.0.0.1:0 until the test ends. The test opens
// the store (web does not import the SQLite implementation) and gives it in the configuration.
package webtest

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/web"
)

// Server is a web server serving on 127.0.0.1.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:port.
	URL string
	// Addr is the address it listens on.
	Addr string
	// Server is the web server itself.
	Server *web.Server
	// Close shuts the server down, waiting up to five seconds for requests in flight; the test's
	// cleanup calls it too. It does not close the store.
	Close func()
}

// Start builds the server from cfg and serves it until the test ends. It fails the test when
// the server cannot be built or cannot listen, and when it does not shut down cleanly.
func Start(tb testing.TB, cfg web.Config) *Server {
	tb.Helper()
	srv, err := web.New(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("web server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Shutdown(context.Background())
		tb.Fatalf("listen: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	s := &Server{URL: "http://" + ln.Addr().String(), Addr: ln.Addr().String(), Server: srv}
	s.Close = sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			tb.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			tb.Errorf("serve: %v", err)
		}
	})
	tb.Cleanup(s.Close)
	return s
}
