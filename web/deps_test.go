package web_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyDirections keeps the layering of DESIGN.md true: web sees the store only
// through store.Interface (never the SQLite implementation), templates sees view models (and
// the tab protocol's states) only, the tab protocol shared with the browser sees nothing of the
// server, and nothing but cmd wires the program together. Test files are not listed: tests may start
// the real store.
func TestDependencyDirections(t *testing.T) {
	for _, tc := range []struct {
		pkgs      string
		forbidden []string
	}{
		{"./...", []string{"github.com/leaselab/leaselab/store/sqlite", "modernc.org/sqlite", "github.com/leaselab/leaselab/cmd"}},
		// Templates may know the tab protocol's states, not the browser candidate.
		{"../templates", []string{"github.com/leaselab/leaselab/store", "github.com/leaselab/leaselab/web", "github.com/labstack/echo",
			"github.com/leaselab/leaselab/wasm/candidate"}},
		// The tab protocol is shared with the browser: standard library only (wasm/deps_test.go
		// checks it all), and certainly nothing of the server's.
		{"../wasm/tabproto", []string{"github.com/leaselab/leaselab/web", "github.com/leaselab/leaselab/store",
			"github.com/leaselab/leaselab/templates", "github.com/labstack/echo", "github.com/a-h/templ", "k8s.io"}},
		{"../store/...", []string{"github.com/leaselab/leaselab/web", "github.com/labstack/echo"}},
	} {
		out, err := exec.Command("go", "list", "-deps", tc.pkgs).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", tc.pkgs, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 5 {
			t.Fatalf("go list -deps %s listed only %v", tc.pkgs, deps)
		}
		for _, d := range deps {
			for _, f := range tc.forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s depends on %s", tc.pkgs, d)
				}
			}
		}
	}
}
