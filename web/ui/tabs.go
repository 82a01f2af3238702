package ui

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"
)

const (
	// wsWriteTimeout bounds every WebSocket write: a stuck browser cannot hold a stream.
	wsWriteTimeout = 5 * time.Second
	// tabsMinInterval spaces the list updates a dashboard gets; changes in between coalesce.
	tabsMinInterval = 150 * time.Millisecond
	// wsReadLimit bounds one message from a browser.
	wsReadLimit = 64 << 10
)

// acceptWS upgrades to a WebSocket. The origin is checked: a browser must come from this
// very host (coder/websocket refuses any other Origin unless told otherwise).
func acceptWS(c echo.Context) (*websocket.Conn, error) {
	conn, err := websocket.Accept(c.Response(), c.Request(), &websocket.AcceptOptions{
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(wsReadLimit)
	return conn, nil
}

// wsWrite sends one text message with a timeout.
func wsWrite(ctx context.Context, conn *websocket.Conn, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, wsWriteTimeout)
	defer cancel()
	return conn.Write(ctx, websocket.MessageText, msg)
}

// tabMessage is what a candidate tab sends: {"type":"report","tab":{...}}.
type tabMessage struct {
	Type string  `json:"type"`
	Tab  TabInfo `json:"tab"`
}

// tabConnect is a candidate tab's stream: it reports its state, the hub sends it "hello" with
// its id and then the fault commands the instructor clicks on the dashboard.
func (u *UI) tabConnect(c echo.Context) error {
	conn, err := acceptWS(c)
	if err != nil {
		u.log.Debug("tab connect refused", slog.Any("error", err))
		return nil // Accept has answered
	}
	// The stream lives with the server, not with the hijacked request.
	ctx, cancel := context.WithCancel(u.opts.Context)
	defer cancel()
	t := u.hub.addTab(cancel)
	defer u.hub.removeTab(t)

	var wg sync.WaitGroup
	wg.Add(1)
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
	hello, _ := json.Marshal(map[string]string{"type": "hello", "id": t.id})
	t.send(hello)

	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			break
		}
		var m tabMessage
		if err := json.Unmarshal(data, &m); err != nil || m.Type != "report" {
			u.log.Debug("tab sent a bad message", slog.String("tab", t.id))
			continue
		}
		if err := u.hub.report(t, m.Tab); err != nil {
			u.log.Debug("tab report refused", slog.String("tab", t.id), slog.Any("error", err))
		}
	}
	cancel()
	wg.Wait()
	conn.Close(websocket.StatusNormalClosure, "")
	return nil
}

// errOnlyInstructor answers fault commands from a dashboard that may only watch.
var errOnlyInstructor = errors.New("only the instructor may inject faults into other tabs")

// watchMessage is what a dashboard sends: {"type":"command","tab":"id","command":{...}}.
type watchMessage struct {
	Type    string     `json:"type"`
	Tab     string     `json:"tab"`
	Command TabCommand `json:"command"`
}

// tabWatch is a dashboard's stream: the list of connected tabs whenever it changes (at most
// every tabsMinInterval), the election controller's latest decision about each lease whose
// decisions changed ("decisions": all known leases first, then only those that changed), and
// fault commands the other way.
func (u *UI) tabWatch(c echo.Context) error {
	conn, err := acceptWS(c)
	if err != nil {
		u.log.Debug("tab watch refused", slog.Any("error", err))
		return nil
	}
	ctx, cancel := context.WithCancel(u.opts.Context)
	defer cancel()
	w := u.hub.addWatcher()
	defer u.hub.removeWatcher(w)
	decided, stopDecided := u.dfeed.watch()
	defer stopDecided()
	mayCommand := u.opts.MayCommandTabs == nil || u.opts.MayCommandTabs(c.Request())

	// Replies to commands (errors only); bounded, dropped when the dashboard is not reading.
	replies := make(chan []byte, 8)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cancel()
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var m watchMessage
			if err := json.Unmarshal(data, &m); err != nil || m.Type != "command" {
				continue
			}
			cmdErr := errOnlyInstructor
			if mayCommand {
				cmdErr = u.hub.Command(m.Tab, m.Command)
			}
			if cmdErr != nil {
				reply, _ := json.Marshal(map[string]string{"type": "error", "tab": m.Tab, "error": cmdErr.Error()})
				select {
				case replies <- reply:
				default:
				}
			}
		}
	}()

	err = u.watchLoop(ctx, conn, w, decided, replies)
	cancel()
	wg.Wait()
	if err == nil || errors.Is(err, context.Canceled) {
		conn.Close(websocket.StatusNormalClosure, "")
	} else {
		conn.Close(websocket.StatusGoingAway, "write failed")
	}
	return nil
}

// watchLoop sends the list of tabs and the latest decisions at once, then after every change,
// spaced by tabsMinInterval.
func (u *UI) watchLoop(ctx context.Context, conn *websocket.Conn, w *hubWatcher, decided <-chan struct{}, replies <-chan []byte) error {
	if err := wsWrite(ctx, conn, u.hub.encodedTabs()); err != nil {
		return err
	}
	// The page was rendered with the latest decisions; these are for the leases whose
	// decisions may have changed since (all the feed knows of), if any.
	keys, cursor := u.dfeed.since(0)
	if len(keys) > 0 {
		if err := wsWrite(ctx, conn, u.decisionsMessage(keys)); err != nil {
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
			if err := wsWrite(ctx, conn, u.hub.encodedTabs()); err != nil {
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
			if err := wsWrite(ctx, conn, u.decisionsMessage(keys)); err != nil {
				return err
			}
			if err := pause(); err != nil {
				return err
			}
		}
	}
}
