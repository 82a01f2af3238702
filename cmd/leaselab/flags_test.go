package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParseFlagsWord: a command's one word (bench's workload, backup's path) may come before,
// between or after the flags, and every flag is parsed wherever the word is.
func TestParseFlagsWord(t *testing.T) {
	for _, args := range [][]string{
		{"renew", "--clients", "8", "--duration", "2s"},
		{"--clients", "8", "renew", "--duration", "2s"},
		{"--clients", "8", "--duration", "2s", "renew"},
	} {
		fs := newFlagSet("bench", "", "", io.Discard)
		clients := fs.Int("clients", 1, "")
		duration := fs.Duration("duration", 0, "")
		word, err := parseFlagsWord(fs, args)
		if err != nil || word != "renew" || *clients != 8 || duration.Seconds() != 2 {
			t.Errorf("%q: word %q clients %d duration %v err %v", args, word, *clients, *duration, err)
		}
	}
	for _, args := range [][]string{
		{"renew", "contend"},
		{"--clients", "8", "renew", "contend"},
		{"--clients"},
	} {
		fs := newFlagSet("bench", "", "", io.Discard)
		fs.Int("clients", 1, "")
		if _, err := parseFlagsWord(fs, args); !errors.Is(err, errUsage) {
			t.Errorf("%q: err %v, want a usage error", args, err)
		}
	}
	// Commands without a word reject one.
	fs := newFlagSet("serve", "", "", io.Discard)
	fs.Int("port", 1, "")
	if err := parseFlags(fs, []string{"--port", "2", "extra"}); !errors.Is(err, errUsage) {
		t.Errorf("parseFlags with a word: %v", err)
	}
}

// TestServeBadAddr: an address without a port is reported as such, before the database file
// is created, and not as a refusal to serve without authentication.
func TestServeBadAddr(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "bogus", "127.0.0.1:http-alt-nope"} {
		db := filepath.Join(t.TempDir(), "leaselab.db")
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"serve", "--addr", addr, "--db", db}, &out, &errOut)
		if code != 1 || !strings.Contains(errOut.String(), fmt.Sprintf("--addr %q", addr)) || strings.Contains(errOut.String(), "refusing") {
			t.Errorf("serve --addr %s: exit %d, %s", addr, code, errOut.String())
		}
		if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("serve --addr %s created the database: %v", addr, err)
		}
	}
	var errOut bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1", "--db", filepath.Join(t.TempDir(), "db")}, io.Discard, &errOut); !strings.Contains(errOut.String(), "missing port in address") {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
	if code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--public-url", "lab.example:8443", "--db", filepath.Join(t.TempDir(), "db")}, io.Discard, &errOut); code != 1 || !strings.Contains(errOut.String(), "--public-url") {
		t.Errorf("serve --public-url without a scheme: exit %d, %s", code, errOut.String())
	}
}

// TestCommandLineSmallCases: help for a command, --version, and values that cannot work are
// refused with a message naming them.
func TestCommandLineSmallCases(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
		not  string // must not be printed
	}{
		{[]string{"help", "serve"}, 0, "Usage: leaselab serve", ""},
		{[]string{"help"}, 0, "  replay       serve a recording", ""},
		{[]string{"help", "replay"}, 0, "Usage: leaselab replay [flags] FILE", ""},
		{[]string{"replay"}, 2, "FILE is required", ""},
		{[]string{"export", "--lease", "x"}, 1, "add --history", ""},
		{[]string{"export", "--history", "--lease", "x"}, 1, "a lease needs its namespace", ""},
		{[]string{"export", "--history", "--after", "3"}, 1, "--after does not go with --history", ""},
		{[]string{"--version"}, 0, "leaselab ", ""},
		{[]string{"-v"}, 0, "serves Kubernetes API", ""},
		{[]string{"bench", "fight"}, 2, `unknown workload "fight"`, ""},
		{[]string{"bench", "watch", "--websocket-share", "2"}, 1, "--websocket-share", ""},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--workshop", "-2", "--db", filepath.Join(t.TempDir(), "db")}, 1, "--workshop -2", ""},
		{[]string{"version", "--help"}, 0, "Usage: leaselab version", "Flags:"},
		{[]string{"backup", "--db", filepath.Join(t.TempDir(), "db"), existing}, 1, "leaselab backup: " + existing + " already exists", "backup: backup:"},
	} {
		var out bytes.Buffer
		code := run(context.Background(), tc.args, &out, &out)
		if code != tc.code || !strings.Contains(out.String(), tc.want) || tc.not != "" && strings.Contains(out.String(), tc.not) {
			t.Errorf("%q: exit %d, want %d with %q:\n%s", tc.args, code, tc.code, tc.want, out.String())
		}
	}
}

// TestHelpGoesToStdout: help that was asked for is printed on stdout, so that it can be paged
// or searched; a usage error's stays on stderr.
func TestHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{{"serve", "--help"}, {"help", "serve"}, {"bench", "workshop", "-h"}, {"kubeconfig", "-help"}, {"--help"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "Usage: leaselab") || stderr.Len() > 0 {
			t.Errorf("%q: exit %d\nstdout: %s\nstderr: %s", args, code, stdout.String(), stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--no-such-flag"}, &stdout, &stderr); code != 2 || stdout.Len() > 0 || !strings.Contains(stderr.String(), "Run 'leaselab serve --help'") {
		t.Errorf("a bad flag: exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
}

// TestBadFlagValues: a bad value gets one line that says what is wanted, and a pointer to the
// help, not the whole usage; nothing is created before the flags are known good.
func TestBadFlagValues(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "never.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"timings", "--lease-duration", "10x"}, "want a duration such as 10s"},
		{[]string{"serve", "--db", db, "--tls", "maybe"}, `--tls "maybe": want on, off or auto`},
		{[]string{"serve", "--db", db, "--log-level", "loud"}, `--log-level "loud": want debug, info, warn or error`},
		{[]string{"serve", "--db", db, "--log-format", "xml"}, `--log-format "xml": want text or json`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") > 2 {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant one line with %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("bad flags left %d files behind, the first %s", len(entries), entries[0].Name())
	}
	// Plain seconds are a duration too, as in a tab's URL.
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"timings", "--lease-duration", "10", "--renew-deadline", "7", "--retry-period", "2"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "leaseDuration 10s, renewDeadline 7s") {
		t.Errorf("durations in plain seconds: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}

// TestFailedStartLeavesNoFiles: a start that fails because the port is taken leaves no new
// database (nor its companions) behind, and leaves an existing one alone.
func TestFailedStartLeavesNoFiles(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	cfg := serveConfig{addr: busy.Addr().String(), db: filepath.Join(dir, "fresh.db"), compactKeep: 100, compactMaxAge: time.Hour, coordinated: true}
	logger := slog.New(slog.DiscardHandler)
	if rs, err := startServer(context.Background(), cfg, logger); err == nil {
		rs.Close()
		t.Fatal("started on a port in use")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("a failed start left %v", names)
	}
	// An existing database stays.
	cfg.addr = "127.0.0.1:0"
	rs, err := startServer(context.Background(), cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	rs.Close()
	cfg.addr = busy.Addr().String()
	if rs, err := startServer(context.Background(), cfg, logger); err == nil {
		rs.Close()
		t.Fatal("started on a port in use")
	}
	if _, err := os.Stat(cfg.db); err != nil {
		t.Errorf("the existing database after a failed start: %v", err)
	}
}
