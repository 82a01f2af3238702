package bench

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies: the load generator reaches a server only over HTTP, as any client of any
// cluster does, so it links neither leaselab's server nor its store (its tests start both).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 5 {
		t.Fatalf("go list -deps listed only %v", deps)
	}
	for _, d := range deps {
		for _, f := range []string{"github.com/leaselab/leaselab/web", "github.com/leaselab/leaselab/store", "modernc.org/sqlite", "github.com/labstack/echo"} {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("the load generator depends on %s", d)
			}
		}
	}
}
