package main

import (
	"errors"
	"io"
	"testing"
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
