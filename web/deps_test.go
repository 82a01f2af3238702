package web_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDependencyDirections keeps the layering rules of docs/architecture.md true: web sees the store only
// through store.Interface (never the SQLite implementation), templates sees view models (and
// the tab protocol's states) only, the tab protocol shared with the browser sees nothing of the
// server, and nothing but cmd wires the program together. Test files are not listed: tests may start
// the real store.
//
// web/leasetest is the one package under web that wires a server, for other modules' tests, as
// cmd does for people: it opens the SQLite store itself. What it pulls into a user's test
// binary is kept to the API: not the browser screens, their templates and embedded assets (the
// browser candidate's wasm among them), nor the browser candidate, nor the browser tests' tools.
// Of wasm/ it may reach the tab protocol, whose Faults are the one shape of a tab's faults the
// judge reads, and the one catalog of sentences (wasm/said); both are standard library only.
func TestDependencyDirections(t *testing.T) {
	const leasetest = "github.com/leaselab/leaselab/web/leasetest"
	var notLeasetest []string
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != leasetest {
			notLeasetest = append(notLeasetest, p)
		}
	}
	for _, tc := range []struct {
		name      string
		pkgs      []string
		forbidden []string
	}{
		{"every package but web/leasetest", notLeasetest, []string{"github.com/leaselab/leaselab/store/sqlite", "modernc.org/sqlite", "github.com/leaselab/leaselab/cmd"}},
		{"web/leasetest", []string{"./leasetest"}, []string{"github.com/leaselab/leaselab/cmd", "github.com/leaselab/leaselab/web/play/ui",
			"github.com/leaselab/leaselab/templates", "github.com/leaselab/leaselab/wasm/candidate", "github.com/leaselab/leaselab/wasm/cmd", "github.com/a-h/templ",
			"github.com/chromedp", "github.com/PuerkitoBio/goquery", "k8s.io/kubectl", "k8s.io/cli-runtime"}},
		// Templates may know the tab protocol's states, not the browser candidate.
		{"templates", []string{"../templates"}, []string{"github.com/leaselab/leaselab/store", "github.com/leaselab/leaselab/web", "github.com/labstack/echo",
			"github.com/leaselab/leaselab/wasm/candidate"}},
		// The tab protocol is shared with the browser: standard library only (wasm/deps_test.go
		// checks it all), and certainly nothing of the server's.
		{"wasm/tabproto", []string{"../wasm/tabproto"}, []string{"github.com/leaselab/leaselab/web", "github.com/leaselab/leaselab/store",
			"github.com/leaselab/leaselab/templates", "github.com/labstack/echo", "github.com/a-h/templ", "k8s.io"}},
		{"store", []string{"../store/..."}, []string{"github.com/leaselab/leaselab/web", "github.com/labstack/echo"}},
	} {
		out, err := exec.Command("go", append([]string{"list", "-deps"}, tc.pkgs...)...).Output()
		if err != nil {
			t.Fatalf("go list -deps (%s): %v", tc.name, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 5 {
			t.Fatalf("go list -deps (%s) listed only %v", tc.name, deps)
		}
		for _, d := range deps {
			for _, f := range tc.forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s depends on %s", tc.name, d)
				}
			}
		}
	}
}

// TestWings keeps the four wings of web/ one-way (docs/architecture.md): the API server (web/api)
// knows nothing of leases as a story; the lease domain (web/lease) reads the API's kinds and
// nothing else of it; the playground (web/play) stands on both; the test kit (web/leasetest)
// takes the API and the lease domain, never the playground. Only web itself, which wires the
// whole server, and the test helpers stand above them all.
func TestWings(t *testing.T) {
	const web = "github.com/leaselab/leaselab/web"
	for _, w := range []struct {
		wing    string
		allowed []string // what under web/ the wing's packages may import, beside their own wing
	}{
		{"api", nil},
		{"lease", []string{"api/kinds"}},
		{"play", []string{"api", "lease"}},
		{"leasetest", []string{"api", "lease"}},
	} {
		out, err := exec.Command("go", "list", "-deps", "./"+w.wing+"/...").Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s/...: %v", w.wing, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 5 {
			t.Fatalf("go list -deps ./%s/... listed only %v", w.wing, deps)
		}
	dep:
		for _, d := range deps {
			rest, ok := strings.CutPrefix(d, web)
			if !ok || (rest != "" && rest[0] != '/') {
				continue
			}
			rest = strings.TrimPrefix(rest, "/")
			for _, a := range append([]string{w.wing}, w.allowed...) {
				if rest == a || strings.HasPrefix(rest, a+"/") {
					continue dep
				}
			}
			t.Errorf("web/%s depends on %s, outside what its wing may use (%v)", w.wing, d, w.allowed)
		}
	}
}

// TestSizes keeps functions short enough to read at once, types small enough to have one job and
// the binary's own package small: no function in web/ or cmd/ over 80 lines and no type there
// with more than 40 methods (test files and templ's generated *_templ.go aside), and package
// main of cmd/leaselab at most 1,600 lines, the rest in packages with one job (cmd/internal/...).
func TestSizes(t *testing.T) {
	const maxFuncLines, maxMethods, maxMainLines = 80, 40, 1600
	fset := token.NewFileSet()
	// Methods per type, keyed by the type's package directory and name as the repository shows them.
	methods := map[string]int{}
	// The roots as the test sees them from web/, and as the repository names them.
	for root, shown := range map[string]string{".": "web", "../cmd": "cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); name == "testdata" || path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, "_templ.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && len(fn.Recv.List) == 1 {
					rel, _ := filepath.Rel(root, filepath.Dir(path))
					methods[filepath.Join(shown, rel)+"."+receiverName(fn.Recv.List[0].Type)]++
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				name := "a function literal"
				switch fn := n.(type) {
				case *ast.FuncDecl:
					name = fn.Name.Name
				case *ast.FuncLit:
				default:
					return true
				}
				from, to := fset.Position(n.Pos()), fset.Position(n.End())
				if lines := to.Line - from.Line + 1; lines > maxFuncLines {
					rel, _ := filepath.Rel(root, from.Filename)
					t.Errorf("%s:%d: %s is %d lines, more than %d", filepath.Join(shown, rel), from.Line, name, lines, maxFuncLines)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", root, err)
		}
	}
	for typ, n := range methods {
		if n > maxMethods {
			t.Errorf("%s has %d methods, more than %d: split it into types with one job each", typ, n, maxMethods)
		}
	}
	files, err := filepath.Glob("../cmd/leaselab/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("package main's files: %v %v", files, err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(b, []byte("\n"))
	}
	if total > maxMainLines {
		t.Errorf("package main of cmd/leaselab is %d lines (test files aside), more than %d: move a piece with one job into cmd/internal", total, maxMainLines)
	}
}

// receiverName returns the name of a method's receiver type: T for T, *T, T[P] and *T[P].
func receiverName(x ast.Expr) string {
	for {
		switch e := x.(type) {
		case *ast.StarExpr:
			x = e.X
		case *ast.IndexExpr:
			x = e.X
		case *ast.IndexListExpr:
			x = e.X
		case *ast.ParenExpr:
			x = e.X
		case *ast.Ident:
			return e.Name
		default:
			return "?"
		}
	}
}
