package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
)

// reconnectDelay is how long a dashboard's stream waits before it connects again (live.js).
const reconnectDelay = 500 * time.Millisecond

// dashboard is one open dashboard page as it was before the dashboard's live part came as
// HTML over /ui/dashboard/watch: the JSON streams of the board's lease cards and feed and of
// the tab list, the namespaces' API watch and, for a participant, an API watch of the
// participant's leases over a WebSocket, as the lease page follows a lease. The JSON carries
// the times the delivery figures are taken from.
type dashboard struct {
	w          *workshopRun
	user       string
	token      string
	namespace  string // a participant's own; empty for the instructor
	instructor bool

	streams int           // how many streams connect
	ready   chan struct{} // a signal per stream, when it first connected
	failed  chan error

	mu      sync.Mutex
	cursors map[*leaseWrites]int // the writes of each lease the board showed
}

func (w *workshopRun) newDashboard(user, token, namespace string, instructor bool) *dashboard {
	d := &dashboard{w: w, user: user, token: token, namespace: namespace, instructor: instructor,
		streams: 3, cursors: map[*leaseWrites]int{}, failed: make(chan error, 4)}
	if namespace != "" {
		d.streams++
	}
	d.ready = make(chan struct{}, d.streams)
	return d
}

// awaitConnected waits until every stream of the dashboard has connected.
func (d *dashboard) awaitConnected(ctx context.Context) error {
	timer := time.NewTimer(time.Minute)
	defer timer.Stop()
	for range d.streams {
		select {
		case <-d.ready:
		case err := <-d.failed:
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return fmt.Errorf("its streams did not connect within a minute")
		}
	}
	return nil
}

// run follows the dashboard's streams until ctx ends.
func (d *dashboard) run(ctx context.Context) {
	var wg sync.WaitGroup
	// A participant's dashboard opens on the participant's namespace and follows its board
	// and tabs; the instructor's follows every namespace.
	board, tabs := "/ui/board/watch", "/ui/tabs/watch?changes=1"
	if d.namespace != "" {
		board += "?namespace=" + url.QueryEscape(d.namespace)
		tabs += "&namespace=" + url.QueryEscape(d.namespace)
	}
	wg.Go(func() { d.follow(ctx, "board", board, d.onBoard) })
	wg.Go(func() { d.follow(ctx, "tabs", tabs, d.onTabs) })
	wg.Go(func() { d.follow(ctx, "namespaces", "/api/v1/namespaces?watch=true&allowWatchBookmarks=true", nil) })
	if d.namespace != "" {
		path := "/apis/coordination.k8s.io/v1/namespaces/" + url.PathEscape(d.namespace) + "/leases?watch=true&allowWatchBookmarks=true"
		wg.Go(func() { d.follow(ctx, "lease watch", path, d.onLeaseEvent) })
	}
	wg.Wait()
}

// follow keeps one stream open, reconnecting as the page's scripts do, and hands each
// message to on (nil: read and dropped) with the time it arrived.
func (d *dashboard) follow(ctx context.Context, name, path string, on func(msg []byte, at time.Time)) {
	first := true
	var buf bytes.Buffer
	for ctx.Err() == nil {
		conn, err := d.w.dial(ctx, path, d.token)
		if err != nil {
			if first {
				d.failed <- fmt.Errorf("%s: %w", name, err)
				return
			}
			if ctx.Err() == nil {
				d.w.fail("dashboard", fmt.Errorf("dashboard of %s: %s: %w", d.user, name, err))
			}
			sleepUntil(ctx, time.Now().Add(reconnectDelay))
			continue
		}
		if first {
			d.ready <- struct{}{}
			first = false
		}
		for {
			_, r, err := conn.Reader(ctx)
			if err == nil {
				buf.Reset()
				_, err = buf.ReadFrom(r)
			}
			if err != nil {
				if ctx.Err() == nil {
					d.w.fail("dashboard", fmt.Errorf("dashboard of %s: %s: %w", d.user, name, err))
				}
				break
			}
			at := time.Now()
			if on != nil {
				on(buf.Bytes(), at)
			}
		}
		conn.CloseNow()
		sleepUntil(ctx, time.Now().Add(reconnectDelay))
	}
}

// onBoard matches the cards of a board message against the writes: a card shows the lease
// as of the write that last changed its record, whose commit time is its expiry less its
// duration; every write that started by then has reached this dashboard.
func (d *dashboard) onBoard(msg []byte, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	err := scanBoardCards(msg, func(c boardCard) {
		lw := d.w.leases[c.Namespace+"/"+c.Name]
		if lw == nil || c.ExpiresMs == 0 {
			return
		}
		committed := time.UnixMilli(c.ExpiresMs - c.DurationSeconds*1000 + 1).UnixNano()
		cursor := d.cursors[lw]
		lw.deliver(&cursor, committed, func(start int64) {
			if s := time.Unix(0, start); d.w.inWindow(s) {
				d.w.dashboard.add(at.Sub(s))
			}
		})
		d.cursors[lw] = cursor
	})
	if err != nil {
		d.w.fail("dashboard", fmt.Errorf("dashboard of %s: %w", d.user, err))
	}
}

// missing counts the writes started in [from, to) to the leases this dashboard follows that
// the board has not shown it.
func (d *dashboard) missing(from, to time.Time) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var n int64
	for key, lw := range d.w.leases {
		if d.follows(key) {
			n += lw.missing(d.cursors[lw], from.UnixNano(), to.UnixNano())
		}
	}
	return n
}

// follows says whether the dashboard's board shows the lease of key (namespace/name).
func (d *dashboard) follows(key string) bool {
	return d.namespace == "" || strings.HasPrefix(key, d.namespace+"/")
}

// tabList is what the instructor's dashboard needs of the tab list: who reported at which
// clock.
type tabList struct {
	Type string `json:"type"`
	Tabs []struct {
		Identity string `json:"identity"`
		Clock    int64  `json:"clock"`
	} `json:"tabs"`
}

// onTabs counts a message of the tab hub's stream and, on the instructor's dashboard, matches
// the tab list against the reports the tabs sent.
func (d *dashboard) onTabs(msg []byte, at time.Time) {
	if d.w.measure.Load() {
		d.w.tabBytes.Add(int64(len(msg)))
	}
	if !d.instructor {
		return
	}
	var m tabList
	if err := json.Unmarshal(msg, &m); err != nil {
		d.w.fail("dashboard", fmt.Errorf("dashboard of %s: tab list: %w", d.user, err))
		return
	}
	for _, info := range m.Tabs {
		if t := d.w.tabs[info.Identity]; t != nil {
			t.shown(info.Clock, at)
		}
	}
}

// onLeaseEvent times an event of a participant's lease watch from the renewTime its tab
// wrote.
func (d *dashboard) onLeaseEvent(msg []byte, at time.Time) {
	ev, err := scanWatchEvent(msg)
	if err != nil {
		d.w.fail("dashboard", fmt.Errorf("dashboard of %s: lease watch: %w", d.user, err))
		return
	}
	if !ev.renewTime.IsZero() && d.w.inWindow(ev.renewTime) {
		d.w.apiWatch.add(at.Sub(ev.renewTime))
	}
}
