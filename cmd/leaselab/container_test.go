package main

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestContainerImage reads the image definition as an engine would, without one: the final
// stage runs as nonroot with /data created and owned by that user before it is declared a volume
// (a new volume takes the ownership of the directory it is mounted on), the server's database
// lives there, and the build context leaves out what a checkout may hold that must not go in
// (build output, databases and their companions, node_modules).
func TestContainerImage(t *testing.T) {
	stages := dockerStages(t, "../../Dockerfile")
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and a final one", len(stages))
	}
	final := stages[len(stages)-1]
	var copied, volume, user, cmd int = -1, -1, -1, -1
	for i, in := range final {
		f := strings.Fields(in)
		switch {
		case f[0] == "COPY" && slices.Contains(f, "/data") && slices.ContainsFunc(f, func(s string) bool {
			return s == "--chown=65532:65532" || s == "--chown=nonroot:nonroot"
		}):
			copied = i
		case f[0] == "VOLUME" && slices.Contains(f, "/data"):
			volume = i
		case f[0] == "USER" && (f[1] == "nonroot:nonroot" || f[1] == "nonroot" || f[1] == "65532:65532"):
			user = i
		case f[0] == "CMD" && strings.Contains(in, "/data/"):
			cmd = i
		}
	}
	if copied < 0 || volume < 0 || copied > volume {
		t.Errorf("/data is not created owned by nonroot before VOLUME /data (copy at %d, volume at %d): %q", copied, volume, final)
	}
	if user < 0 || !strings.Contains(final[0], "nonroot") {
		t.Errorf("the final stage does not run as nonroot: %q", final)
	}
	if cmd < 0 {
		t.Errorf("the server's database is not in /data: %q", final)
	}

	ignore := dockerIgnore(t, "../../.dockerignore")
	for _, p := range []string{"bin/leaselab", "leaselab.db", "leaselab.db-wal", "leaselab.db.url", "x.test",
		"cmd/leaselab/testdata/clients/js/node_modules/@kubernetes/client-node/package.json", "dist/SHA256SUMS"} {
		if !ignored(ignore, p) {
			t.Errorf(".dockerignore lets %s into the build", p)
		}
	}
	for _, p := range []string{"go.mod", "Makefile", "web/play/ui/static/wasm/candidate.wasm.gz", "cmd/leaselab/main.go", ".git/HEAD"} {
		if ignored(ignore, p) {
			t.Errorf(".dockerignore leaves %s out of the build, which needs it", p)
		}
	}
}

// dockerStages are a Dockerfile's instructions, one slice a stage (FROM first), with
// continuation lines joined and comments dropped.
func dockerStages(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stages [][]string
	line := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(s, "\\"); ok {
			line += cont + " "
			continue
		}
		line += s
		if strings.HasPrefix(strings.ToUpper(line), "FROM ") {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], line)
		}
		line = ""
	}
	return stages
}

// dockerIgnore is a .dockerignore's patterns.
func dockerIgnore(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, strings.TrimSuffix(l, "/"))
		}
	}
	return out
}

// ignored says whether path (slash-separated, from the context's root) is left out by patterns,
// as the builder matches them: a pattern matches the path or one of its parent directories.
func ignored(patterns []string, path string) bool {
	for _, p := range patterns {
		for dir := path; dir != "." && dir != "/"; dir = filepath.Dir(dir) {
			if ok, _ := filepath.Match(p, dir); ok {
				return true
			}
		}
	}
	return false
}
