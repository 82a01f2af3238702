//go:build !js

package wasm_test

import (
	"os"
	"os/exec"
	"path/filepath"
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
}

// TestBrowserBuildDependencies lists what GOOS=js GOARCH=wasm ./wasm/...
// links and fails on anything forbidden.
func TestBrowserBuildDependencies(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		if root := os.Getenv("GOROOT"); root != "" {
			goBin = filepath.Join(root, "bin", "go")
		} else {
			t.Fatal("the go command is neither on PATH nor in $GOROOT/bin: this test needs it to list the browser build")
		}
	}
	cmd := exec.Command(goBin, "list", "-deps", "./...")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list printed nothing")
	}
	sawCandidate := false
	for _, d := range deps {
		if d == "github.com/leaselab/leaselab/wasm/candidate" {
			sawCandidate = true
		}
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("the browser build reaches %s", d)
			}
		}
	}
	if !sawCandidate {
		t.Errorf("the candidate package is not in the browser build's dependencies: %q", deps)
	}
}
