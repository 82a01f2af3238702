package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// repeatWindow is how long identical error records are folded after the first one is written.
const repeatWindow = 10 * time.Second

// repeatHandler folds repeated records: a warning or error with the same message and the same
// "error" attribute (or, without one, the same "status" attribute: a failed request) as one
// written less than repeatWindow ago is counted instead of written, and the count is written
// when the window ends, as "... (repeated N times in 10s)". A full disk fails every write the
// same way; without this it fills the log with thousands of identical lines a second.
type repeatHandler struct {
	next slog.Handler
	now  func() time.Time
	seen *repeatState
}

type repeatState struct {
	mu      sync.Mutex
	windows map[string]*repeatWindowState
}

type repeatWindowState struct {
	start    time.Time
	repeated int
	record   slog.Record
}

func newRepeatHandler(next slog.Handler, now func() time.Time) *repeatHandler {
	return &repeatHandler{next: next, now: now, seen: &repeatState{windows: map[string]*repeatWindowState{}}}
}

func (h *repeatHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *repeatHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &repeatHandler{next: h.next.WithAttrs(as), now: h.now, seen: h.seen}
}

func (h *repeatHandler) WithGroup(name string) slog.Handler {
	return &repeatHandler{next: h.next.WithGroup(name), now: h.now, seen: h.seen}
}

func (h *repeatHandler) Handle(ctx context.Context, r slog.Record) error {
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
		h.seen.windows[key] = &repeatWindowState{start: now}
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
func (h *repeatHandler) writeSummary(ctx context.Context, w *repeatWindowState) {
	r := slog.NewRecord(w.record.Time, w.record.Level, fmt.Sprintf("%s (repeated %d times in %s)", w.record.Message, w.repeated, repeatWindow), 0)
	w.record.Attrs(func(a slog.Attr) bool { r.AddAttrs(a); return true })
	_ = h.next.Handle(ctx, r)
}

// flushRepeats writes the summaries of the windows that have ended, so that a burst that stops
// is still counted; serve calls it every repeatWindow.
func (h *repeatHandler) flushRepeats(ctx context.Context) {
	h.seen.mu.Lock()
	flush := h.seen.endedLocked(h.now())
	h.seen.mu.Unlock()
	for _, w := range flush {
		h.writeSummary(ctx, w)
	}
}

// endedLocked forgets the windows that have ended at now and returns those that folded
// records, to be summarised.
func (s *repeatState) endedLocked(now time.Time) []*repeatWindowState {
	var ended []*repeatWindowState
	for k, w := range s.windows {
		if now.Sub(w.start) >= repeatWindow {
			delete(s.windows, k)
			if w.repeated > 0 {
				ended = append(ended, w)
			}
		}
	}
	return ended
}
