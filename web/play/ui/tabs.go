package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

const (
	// wsWriteTimeout bounds every WebSocket write: a stuck browser cannot hold a stream.
	wsWriteTimeout = 5 * time.Second
	// tabsMinInterval spaces the list updates a dashboard gets; changes in between coalesce.
	tabsMinInterval = 150 * time.Millisecond
	// tabReadLimit bounds one report from a candidate tab: a real one is under 4 KiB, even
	// with every string at the length the hub keeps.
	tabReadLimit = 16 << 10
	// watchReadLimit bounds one command from a dashboard: a real one is under 200 bytes.
	watchReadLimit = 4 << 10

	// A candidate tab reports at most four times a second (play.js); the hub takes up to
	// reportRate reports a second from one tab, reportBurst at once. Reports beyond that
	// coalesce: the newest waits until the tab may report again, the older ones are dropped.
	// Dashboards' fault commands have the same limit.
	reportRate  = 20
	reportBurst = 10
	// A client that sends more than floodRate messages a second (floodBurst at once) is
	// flooding: the hub closes its socket with StatusPolicyViolation.
	floodRate  = 100
	floodBurst = 200
	// retryMin spaces the retries of a report waiting for the limit.
	retryMin = 10 * time.Millisecond
)

// floodReason is the close reason of a flooding client.
//
//said:english a WebSocket close reason, read by developers
var floodReason = fmt.Sprintf("too many messages: at most %d a second", reportRate)

// closeFlooded closes a flooding client's socket with the reason, before the stream's context
// ends: a write cut short by the context would drop the connection without a close frame.
func closeFlooded(conn *websocket.Conn) {
	conn.Close(websocket.StatusPolicyViolation, floodReason)
}

// acceptWS upgrades to a WebSocket whose messages may be at most readLimit bytes (a longer
// one closes it with StatusMessageTooBig). The origin is checked: a browser must come from
// this very host (coder/websocket refuses any other Origin unless told otherwise).
func acceptWS(c echo.Context, readLimit int64) (*websocket.Conn, error) {
	conn, err := websocket.Accept(c.Response(), c.Request(), &websocket.AcceptOptions{
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(readLimit)
	return conn, nil
}

// wsWrite sends one text message with a timeout.
func wsWrite(ctx context.Context, conn *websocket.Conn, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, wsWriteTimeout)
	defer cancel()
	return conn.Write(ctx, websocket.MessageText, msg)
}

// tokenBucket is a rate limit on the server's clock: rate tokens a second, at most burst at
// once (golang.org/x/time/rate, as the per-identity limits of web/api/auth).
type tokenBucket struct{ l *rate.Limiter }

func newTokenBucket(r float64, burst int, now time.Time) *tokenBucket {
	l := rate.NewLimiter(rate.Limit(r), burst)
	l.AllowN(now, 0) // start the clock at now, with a full bucket
	return &tokenBucket{l: l}
}

// take takes a token at now and returns 0, or, when there is none, how long until there is
// one (without taking it).
func (b *tokenBucket) take(now time.Time) time.Duration {
	if b.l.AllowN(now, 1) {
		return 0
	}
	r := b.l.ReserveN(now, 1)
	defer r.CancelAt(now)
	return r.DelayFrom(now)
}

// latestMessage holds the newest message not handled yet; a newer one replaces it.
type latestMessage struct {
	mu    sync.Mutex
	data  []byte
	ready chan struct{} // one signal: a message is waiting
}

func newLatestMessage() *latestMessage { return &latestMessage{ready: make(chan struct{}, 1)} }

func (l *latestMessage) put(data []byte) {
	l.mu.Lock()
	l.data = data
	l.mu.Unlock()
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

func (l *latestMessage) take() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	data := l.data
	l.data = nil
	return data
}

// putBack returns a message taken too early, unless a newer one came meanwhile.
func (l *latestMessage) putBack(data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.data == nil {
		l.data = data
	}
}

// tabConnect is a candidate tab's stream: it reports its state, the hub sends it "hello" with
// its id and then the fault commands the instructor clicks on the dashboard. On a server with
// authentication the tab is listed as its user's, and a participant's tab may report only the
// namespaces the participant may write in. Reports are rate-limited (the newest one is kept
// for when the tab may report again); a client flooding the hub is disconnected.
func (u *tabScreen) tabConnect(c echo.Context) error {
	if u.opts.Replay != nil {
		return u.refuseTab(c)
	}
	var owner TabUser
	if u.opts.TabUser != nil {
		owner, _ = u.opts.TabUser(c.Request())
	}
	conn, err := acceptWS(c, tabReadLimit)
	if err != nil {
		u.log.Debug("tab connect refused", slog.Any("error", err))
		return nil // Accept has answered
	}
	// The stream lives with the server, not with the hijacked request.
	ctx, cancel := context.WithCancel(u.opts.Context)
	defer cancel()
	t := u.hub.addTab(owner, cancel)
	defer u.hub.removeTab(t)

	reports := newLatestMessage()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				return
			case msg := <-t.out:
				if err := wsWrite(ctx, conn, msg); err != nil {
					return
				}
			}
		}
	}()
	go func() {
		defer wg.Done()
		u.applyReports(ctx, t, reports)
	}()
	t.send(tabproto.EncodeHello(t.id))

	flood := newTokenBucket(floodRate, floodBurst, u.opts.Now())
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			break
		}
		if flood.take(u.opts.Now()) > 0 {
			u.log.Debug("tab flooding the hub: disconnected", slog.String("tab", t.id), slog.String("user", owner.Name))
			closeFlooded(conn)
			break
		}
		reports.put(data)
	}
	cancel()
	wg.Wait()
	conn.Close(websocket.StatusNormalClosure, "") // a no-op after closeFlooded
	return nil
}

// applyReports hands a tab's reports to the hub, at most reportRate a second: a report that
// comes too soon waits for the next token, and a newer one replaces it meanwhile.
func (u *tabScreen) applyReports(ctx context.Context, t *hubTab, reports *latestMessage) {
	limit := newTokenBucket(reportRate, reportBurst, u.opts.Now())
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	waiting := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-reports.ready:
		case <-retry.C:
			waiting = false
		}
		if waiting {
			continue // the retry comes, for this report or a newer one
		}
		data := reports.take()
		if data == nil {
			continue
		}
		if wait := limit.take(u.opts.Now()); wait > 0 {
			reports.putBack(data)
			retry.Reset(max(wait, retryMin))
			waiting = true
			continue
		}
		r, err := tabproto.DecodeReport(data)
		if err == nil {
			err = u.hub.report(t, r)
		}
		if err != nil {
			u.log.Debug("tab report refused", slog.String("tab", t.id), slog.Any("error", err))
		}
	}
}

// errOnlyInstructor answers fault commands from a dashboard that may only watch: one without
// a signed-in user where the server lets only the instructor command.
var errOnlyInstructor = errors.New("only the instructor may inject faults into other tabs")

// errTooManyCommands answers a dashboard sending more than reportRate commands a second.
var errTooManyCommands = fmt.Errorf("too many commands: at most %d a second", reportRate)

// watchMessage is what a dashboard sends: {"type":"command","tab":"id","command":{...}}.
type watchMessage struct {
	Type    string           `json:"type"`
	Tab     string           `json:"tab"`
	Command tabproto.Command `json:"command"`
}

// tabWatch is the hub's stream for programs (the dashboard follows /ui/dashboard/watch): the
// list of connected tabs whenever it changes (at most every tabsMinInterval; with ?changes=1
// only what changed, after the first list), the election controller's latest decision about
// each lease whose decisions changed ("decisions": all known leases first, then only those
// that changed), and fault commands the other way.
func (u *tabScreen) tabWatch(c echo.Context) error {
	conn, err := acceptWS(c, watchReadLimit)
	if err != nil {
		u.log.Debug("tab watch refused", slog.Any("error", err))
		return nil
	}
	lang := i18n.FromContext(c.Request().Context()) // the dashboard's: the decisions are in it
	ctx, cancel := context.WithCancel(u.opts.Context)
	defer cancel()
	w := u.hub.addWatcher(c.QueryParam("namespace"), lang)
	defer u.hub.removeWatcher(w)
	decided, stopDecided := u.dfeed.watch()
	defer stopDecided()

	// Replies to commands (errors only); bounded, dropped when the dashboard is not reading.
	replies := make(chan []byte, 8)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cancel()
		u.obeyDashboard(ctx, c.Request(), conn, replies)
	}()

	err = u.watchLoop(ctx, lang, conn, w, c.QueryParam("changes") == "1", decided, replies)
	cancel()
	wg.Wait()
	if err == nil || errors.Is(err, context.Canceled) {
		conn.Close(websocket.StatusNormalClosure, "")
	} else {
		conn.Close(websocket.StatusGoingAway, "write failed")
	}
	return nil
}

// obeyDashboard reads what a dashboard sends on conn until it closes or ctx ends: fault
// commands for candidate tabs, forwarded as the user who made r may (every tab, with
// MayCommandTabs; else the tabs the user opened), at most reportRate a second. Each refused
// command is answered on replies ({"type":"error","tab":..., "error":...}), dropped when the
// dashboard does not read them. A dashboard that floods the hub is disconnected.
func (u *tabScreen) obeyDashboard(ctx context.Context, r *http.Request, conn *websocket.Conn, replies chan<- []byte) {
	mayCommand := u.opts.MayCommandTabs == nil || u.opts.MayCommandTabs(r)
	// Whoever may not command every tab still commands the tabs they opened themselves.
	var self string
	if u.opts.TabUser != nil {
		if tu, ok := u.opts.TabUser(r); ok {
			self = tu.Name
		}
	}
	flood := newTokenBucket(floodRate, floodBurst, u.opts.Now())
	limit := newTokenBucket(reportRate, reportBurst, u.opts.Now())
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		now := u.opts.Now()
		if flood.take(now) > 0 {
			u.log.Debug("dashboard flooding the hub: disconnected")
			closeFlooded(conn)
			return
		}
		var m watchMessage
		if err := json.Unmarshal(data, &m); err != nil || m.Type != "command" {
			continue
		}
		cmdErr := errOnlyInstructor
		switch {
		case u.opts.Replay != nil:
			cmdErr = errors.New(u.opts.Replay.Refusal())
		case limit.take(now) > 0:
			cmdErr = errTooManyCommands
		case mayCommand:
			cmdErr = u.hub.Command(m.Tab, self, m.Command)
		case self != "":
			cmdErr = u.hub.CommandOwn(self, m.Tab, m.Command)
		}
		if cmdErr != nil {
			reply, _ := json.Marshal(map[string]string{"type": "error", "tab": m.Tab, "error": cmdErr.Error()})
			select {
			case replies <- reply:
			default:
			}
		}
	}
}

// watchLoop sends the list of tabs and the latest decisions at once, then after every change,
// spaced by tabsMinInterval. With changes, what changed in the list follows the first list
// ("tabsChanged": the tabs that reported and the ids of those that left), instead of the whole
// list every time: with hundreds of tabs in a room, the whole list to every dashboard several
// times a second is most of what the server sends.
func (u *tabScreen) watchLoop(ctx context.Context, lang i18n.Lang, conn *websocket.Conn, w *hubWatcher, changes bool, decided <-chan struct{}, replies <-chan []byte) error {
	list, version := u.hub.encodedTabsAt(w.namespace, w.lang)
	if err := wsWrite(ctx, conn, list); err != nil {
		return err
	}
	// The page was rendered with the latest decisions; these are for the leases whose
	// decisions may have changed since (all the feed knows of), if any.
	keys, cursor := u.dfeed.since(0)
	if len(keys) > 0 {
		if err := wsWrite(ctx, conn, u.decisionsMessage(keys, lang)); err != nil {
			return err
		}
	}
	pause := func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(tabsMinInterval):
			return nil
		}
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case r := <-replies:
			if err := wsWrite(ctx, conn, r); err != nil {
				return err
			}
		case <-w.notify:
			var msg []byte
			if changes {
				msg, version = u.hub.tabsChanged(version, w.namespace, w.lang)
			} else {
				msg = u.hub.encodedTabs(w.namespace, w.lang)
			}
			if err := wsWrite(ctx, conn, msg); err != nil {
				return err
			}
			if err := pause(); err != nil {
				return err
			}
		case <-decided:
			keys, cursor = u.dfeed.since(cursor)
			if len(keys) == 0 {
				continue
			}
			if err := wsWrite(ctx, conn, u.decisionsMessage(keys, lang)); err != nil {
				return err
			}
			if err := pause(); err != nil {
				return err
			}
		}
	}
}
