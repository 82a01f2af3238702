// Package logrepeat folds repeated warnings and errors in a log: the first of a burst is
// written, the rest are counted, and the count is written when the burst's window ends. A full
// disk fails every write the same way; without it the log fills with thousands of identical
// lines a second.
package logrepeat

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Window is how long identical error records are folded after the first one is written.
const Window = 10 * time.Second

// Handler folds repeated records: a warning or error with the same message and the same
// "error" attribute (or, without one, the same "status" attribute: a failed request) as one
// written less than Window ago is counted instead of written, and the count is written when
// the window ends, as "... (repeated N times in 10s)".
type Handler struct {
	next slog.Handler
	now  func() time.Time
	seen *repeatState
}

type repeatState struct {
	mu      sync.Mutex
	windows map[string]*WindowState
}

type WindowState struct {
	start    time.Time
	repeated int
	record   slog.Record
}

// NewHandler returns a Handler that writes to next, its windows timed by now. Run (or Flush)
// writes the counts of the windows that end without another record.
func NewHandler(next slog.Handler, now func() time.Time) *Handler {
	return &Handler{next: next, now: now, seen: &repeatState{windows: map[string]*WindowState{}}}
}

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(as), now: h.now, seen: h.seen}
}

func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), now: h.now, seen: h.seen}
}

func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.next.Handle(ctx, r)
	}
	var errText, status string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "error":
			errText = a.Value.String()
			return false
		case "status":
			status = "status " + a.Value.String()
		}
		return true
	})
	if errText == "" {
		errText = status
	}
	if errText == "" {
		return h.next.Handle(ctx, r)
	}
	key := r.Level.String() + "\x00" + r.Message + "\x00" + errText
	now := h.now()
	h.seen.mu.Lock()
	flush := h.seen.endedLocked(now)
	w, folding := h.seen.windows[key]
	if folding {
		w.repeated++
		w.record = r.Clone()
	} else {
		h.seen.windows[key] = &WindowState{start: now}
	}
	h.seen.mu.Unlock()
	for _, w := range flush {
		h.writeSummary(ctx, w)
	}
	if folding {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// writeSummary writes the last folded record with the number of repeats.
func (h *Handler) writeSummary(ctx context.Context, w *WindowState) {
	r := slog.NewRecord(w.record.Time, w.record.Level, fmt.Sprintf("%s (repeated %d times in %s)", w.record.Message, w.repeated, Window), 0)
	w.record.Attrs(func(a slog.Attr) bool { r.AddAttrs(a); return true })
	_ = h.next.Handle(ctx, r)
}

// Run writes the counts of the windows that have ended every Window until ctx ends, then
// those of every window: a burst that stops is still counted.
func (h *Handler) Run(ctx context.Context) {
	t := time.NewTicker(Window)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			h.Flush(context.Background())
			return
		case <-t.C:
			h.Flush(ctx)
		}
	}
}

// Flush writes the summaries of the windows that have ended.
func (h *Handler) Flush(ctx context.Context) {
	h.seen.mu.Lock()
	flush := h.seen.endedLocked(h.now())
	h.seen.mu.Unlock()
	for _, w := range flush {
		h.writeSummary(ctx, w)
	}
}

// endedLocked forgets the windows that have ended at now and returns those that folded
// records, to be summarised.
func (s *repeatState) endedLocked(now time.Time) []*WindowState {
	var ended []*WindowState
	for k, w := range s.windows {
		if now.Sub(w.start) >= Window {
			delete(s.windows, k)
			if w.repeated > 0 {
				ended = append(ended, w)
			}
		}
	}
	return ended
}
