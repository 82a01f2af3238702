package logrepeat

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRepeatedErrorsAreFolded: a thousand identical failures make two lines, the first and a
// count; other errors and lower levels pass.
func TestRepeatedErrorsAreFolded(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := NewHandler(slog.NewTextHandler(&out, nil), func() time.Time { return now })
	log := slog.New(h)
	disk := errors.New("database or disk is full (13)")
	for i := range 1000 {
		log.Error("request", slog.String("path", "/apis/x"), slog.Int("n", i), slog.Any("error", disk))
	}
	log.Error("request", slog.Any("error", errors.New("something else")))
	log.Info("request", slog.Any("error", disk))
	if n := strings.Count(out.String(), "disk is full"); n != 2 {
		t.Fatalf("%d lines about the full disk before the window ended, want 2 (one error, one info):\n%s", n, out.String())
	}
	now = now.Add(Window)
	h.Flush(context.Background())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "repeated 999 times in 10s") || !strings.Contains(last, "n=999") {
		t.Errorf("summary %q", last)
	}
	// A new window starts with a written line again.
	log.Error("request", slog.Any("error", disk))
	if got := strings.Count(out.String(), "disk is full"); got != 4 {
		t.Errorf("%d lines after the window, want 4:\n%s", got, out.String())
	}
}

// TestFailedRequestsAreFolded: the access log's warning for each failed request, which has a
// status but no error, folds by its status.
func TestFailedRequestsAreFolded(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	log := slog.New(NewHandler(slog.NewTextHandler(&out, nil), func() time.Time { return now }))
	for i := range 500 {
		log.Warn("request", slog.String("path", "/apis/x/"+strconv.Itoa(i)), slog.Int("status", 500))
	}
	log.Warn("request", slog.String("path", "/apis/y"), slog.Int("status", 503))
	if n := strings.Count(out.String(), "level=WARN"); n != 2 {
		t.Fatalf("%d lines for 500 failed requests of one status and one of another, want 2:\n%s", n, out.String())
	}
}
