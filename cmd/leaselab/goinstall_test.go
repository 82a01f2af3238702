package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoInstallIsTheWholePlayground: a clean clone built with the go command alone (as `go
// install` builds it, without make) serves the browser candidate: the compressed candidate and
// wasm_exec.js are committed.
func TestGoInstallIsTheWholePlayground(t *testing.T) {
	t.Parallel()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("the test needs the project's git checkout: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", strings.TrimSpace(string(root)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	bin := filepath.Join(t.TempDir(), "leaselab")
	// -trimpath, as release builds use: the clone's compiled packages no longer depend on
	// where it was cloned, so that the next run finds them in the build cache (25 s of a
	// 2-core machine's time without it, on every run). Linked without the symbol table and
	// debug information, as release builds are too: with the packages in the build cache, the
	// build then took 4.8 and 5.3 CPU-seconds against 7.3 and 7.8 (two interleaved pairs).
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/leaselab")
	build.Dir = clone
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in a clean clone: %v\n%s", err, out)
	}
	serve := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "x.db"), "--log-level", "warn")
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	var url string
	lines := bufio.NewScanner(out)
	for url == "" && lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), "serving on "); ok {
			url, _, _ = strings.Cut(rest, " ")
		}
	}
	go io.Copy(io.Discard, out)
	if url == "" {
		t.Fatal("the server built from the clone did not start")
	}

	req, _ := http.NewRequest(http.MethodGet, url+"/static/wasm/candidate.wasm", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Content-Type") != "application/wasm" {
		t.Fatalf("candidate.wasm: %d %v", resp.StatusCode, resp.Header)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 4)
	if _, err := io.ReadFull(zr, head); err != nil || !bytes.Equal(head, []byte("\x00asm")) {
		t.Fatalf("candidate.wasm does not begin as WebAssembly: %q %v", head, err)
	}
	page, err := http.Get(url + "/play?lease=demo")
	if err != nil {
		t.Fatal(err)
	}
	defer page.Body.Close()
	if b, _ := io.ReadAll(page.Body); strings.Contains(string(b), "wasm-missing") {
		t.Error("/play says the candidate is not built")
	}
}

// TestReleaseTarget: make release builds a static binary for each of linux, darwin and windows
// on amd64 and arm64, the browser candidate embedded, and their checksums (what make would run;
// the builds themselves take minutes, so they are left to the release).
func TestReleaseTarget(t *testing.T) {
	cmd := exec.Command("make", "-n", "release", "VERSION=v0.0.0-test")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n release: %v\n%s", err, out)
	}
	plan := string(out)
	for _, want := range []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64",
		"-trimpath", "main.version=v0.0.0-test", "./cmd/leaselab", "sha256sum leaselab-* > SHA256SUMS"} {
		if !strings.Contains(plan, want) {
			t.Errorf("make -n release does not say %q:\n%s", want, plan)
		}
	}
}
