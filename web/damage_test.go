package web_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web"
)

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
	s := mustNew(t, web.Config{Logger: logger, Store: db})
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
