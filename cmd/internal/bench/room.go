package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// The room's lease: in the arena, the namespace every participant of a workshop may write (as
// the server's auth.ArenaNamespace; this package reaches the server over HTTP only).
const (
	roomNamespace = "arena"
	roomLease     = "room"
)

// stageRV reads the record's resourceVersion off the stage's picture (templates/stage.templ).
var stageRV = regexp.MustCompile(`data-testid="stage-rv"[^>]*>resourceVersion (\d+)<`)

// roomWrites are the room lease's successful writes while measuring, by the resourceVersion
// each produced, with when its PUT started: the stage's picture is matched against them.
type roomWrites struct {
	mu      sync.Mutex
	pending map[int64]time.Time
}

func (r *roomWrites) add(rv int64, start time.Time) {
	r.mu.Lock()
	if r.pending == nil {
		r.pending = map[int64]time.Time{}
	}
	r.pending[rv] = start
	r.mu.Unlock()
}

// shown takes the stage showing resourceVersion rv at at: every write up to it has arrived.
func (r *roomWrites) shown(rv int64, at time.Time, s *samples) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for v, start := range r.pending {
		if v <= rv {
			s.add(at.Sub(start))
			delete(r.pending, v)
		}
	}
}

// missing counts the writes that started in [from, to) and never reached the stage.
func (r *roomWrites) missing(from, to time.Time) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for _, start := range r.pending {
		if !start.Before(from) && start.Before(to) {
			n++
		}
	}
	return n
}

// resourceVersion reads metadata.resourceVersion off a Lease as the API returned it; 0 when
// it has none.
func resourceVersion(body []byte) int64 {
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &l) != nil {
		return 0
	}
	rv, _ := strconv.ParseInt(l.Metadata.ResourceVersion, 10, 64)
	return rv
}

// followStage is the projector: the room lease's stage, which says over /stage/watch that the
// picture changed and then fetches it (/stage/live), as stage.js does. Each picture's
// resourceVersion delivers the writes up to it.
func (w *workshopRun) followStage(ctx context.Context, connected chan<- error) {
	q := "?namespace=" + roomNamespace + "&lease=" + roomLease
	conn, err := w.dial(ctx, "/stage/watch"+q, w.cfg.Instructor)
	connected <- err
	if err != nil {
		return
	}
	defer conn.CloseNow()
	for {
		if _, _, err := conn.Read(ctx); err != nil {
			if ctx.Err() == nil {
				w.fail("stage", fmt.Errorf("stage watch: %w", err))
			}
			return
		}
		rv, err := w.fetchStage(ctx, "/stage/live"+q)
		if err != nil {
			if ctx.Err() == nil {
				w.fail("stage", err)
			}
			continue
		}
		if rv > 0 {
			w.room.shown(rv, time.Now(), &w.stage)
		}
	}
}

// fetchStage fetches the stage's picture and returns the resourceVersion it shows (0: none).
func (w *workshopRun) fetchStage(ctx context.Context, path string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.cfg.URL+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+w.cfg.Instructor)
	resp, err := w.ws.Do(req)
	if err != nil {
		return 0, fmt.Errorf("stage picture: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("stage picture: %d %v", resp.StatusCode, err)
	}
	m := stageRV.FindSubmatch(body)
	if m == nil {
		return 0, nil
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}

// awaitRoom waits until every tab of the room is a candidate (it has reported) and one leads.
func (w *workshopRun) awaitRoom(ctx context.Context, all []*simTab) error {
	deadline := time.Now().Add(w.cfg.LeaseDuration + 2*time.Minute)
	for _, t := range all {
		if err := t.awaitStarted(ctx, deadline); err != nil {
			return fmt.Errorf("tab %s: %w", t.identity, err)
		}
	}
	for {
		for _, t := range all {
			if t.wasLeader.Load() {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("none of the %d candidates took the lease %s/%s", len(all), roomNamespace, roomLease)
		}
		if !sleepUntil(ctx, time.Now().Add(50*time.Millisecond)) {
			return ctx.Err()
		}
	}
}
