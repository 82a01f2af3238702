//go:build !js

package wasm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// forbidden are packages the browser build must not reach: SQLite does not
// even compile for js, and the others cost megabytes of download.
var forbidden = []string{
	"modernc.org/sqlite",
	"github.com/labstack/echo",
	"github.com/a-h/templ",
	"k8s.io/api",
	"k8s.io/client-go",
	// net/http alone triples the download; the candidate uses fetch.
	"net/http",
	// The server's own packages: the browser shares only wasm/... with it.
	"github.com/leaselab/leaselab/web",
	"github.com/leaselab/leaselab/store",
	"github.com/leaselab/leaselab/templates",
	"github.com/leaselab/leaselab/cmd",
}

// TestBrowserBuildDependencies lists what GOOS=js GOARCH=wasm ./wasm/...
// links and fails on anything forbidden.
func TestBrowserBuildDependencies(t *testing.T) {
	deps := goList(t, []string{"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}, "-deps", "./...")
	for _, pkg := range []string{"github.com/leaselab/leaselab/wasm/candidate", "github.com/leaselab/leaselab/wasm/tabproto"} {
		if !slices.Contains(deps, pkg) {
			t.Errorf("%s is not in the browser build's dependencies: %q", pkg, deps)
		}
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("the browser build reaches %s", d)
			}
		}
	}
}

// TestTabProtocolStandardLibraryOnly: the tab protocol and the catalog of sentences are shared
// by the browser candidate and the server, so they import nothing but the standard library and
// each other (on either side).
func TestTabProtocolStandardLibraryOnly(t *testing.T) {
	for _, env := range [][]string{nil, {"GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0"}} {
		deps := goList(t, env, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./tabproto", "./said")
		if want := []string{"github.com/leaselab/leaselab/wasm/said", "github.com/leaselab/leaselab/wasm/tabproto"}; !slices.Equal(deps, want) {
			t.Errorf("%v: wasm/tabproto and wasm/said reach %q beyond the standard library", env, deps)
		}
	}
}

// goList runs go list with args in env (added to this process's) and returns its words.
func goList(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if root := os.Getenv("GOROOT"); root != "" {
			goBin = filepath.Join(root, "bin", "go")
		} else {
			t.Fatal("the go command is neither on PATH nor in $GOROOT/bin: this test needs it to list the browser build")
		}
	}
	cmd := exec.Command(goBin, append([]string{"list"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list %v: %v\n%s", args, err, stderr)
	}
	words := strings.Fields(string(out))
	if len(words) == 0 {
		t.Fatalf("go list %v printed nothing", args)
	}
	return words
}
