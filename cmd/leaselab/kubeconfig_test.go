package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/cmd/internal/access"
)

// TestKubeconfigNamesTheAnnouncedServer: without --server, the kubeconfig names the URL the
// server on --db (./leaselab.db by default) announced; with no server to name it says what to
// give instead of guessing an address.
func TestKubeconfigNamesTheAnnouncedServer(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "leaselab.db")
	kubeconfig := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"kubeconfig"}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	if code, out, errOut := kubeconfig("--db", db); code == 0 || !strings.Contains(errOut, "no database at "+db) || !strings.Contains(errOut, "--server") {
		t.Errorf("a missing database: exit %d\n%s%s", code, out, errOut)
	}
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := kubeconfig("--db", db); code == 0 || !strings.Contains(errOut, "no server has announced its URL") {
		t.Errorf("a database no server announced: exit %d\n%s%s", code, out, errOut)
	}
	if err := os.WriteFile(access.URLPath(db), []byte("http://127.0.0.1:18080\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := kubeconfig("--db", db); code != 0 || !strings.Contains(out, "server: http://127.0.0.1:18080") {
		t.Errorf("the announced URL: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := kubeconfig("--db", db, "--server", "http://example.test:1"); code != 0 || !strings.Contains(out, "server: http://example.test:1") {
		t.Errorf("--server wins: exit %d\n%s%s", code, out, errOut)
	}
}
