package web_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web"
	"github.com/leaselab/leaselab/web/webtest"
)

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
	srv := webtest.Start(t, web.Config{Logger: logger, Store: st}, web.Screens{})
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
