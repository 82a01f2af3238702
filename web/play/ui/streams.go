package ui

import (
	"context"
	"strconv"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"
)

// outbox is the bounded queue of messages to one follower of a stream (a dashboard, a program
// following the board): one that falls boardQueue messages behind is dropped, dropped closes,
// and it reconnects to a fresh stream.
type outbox struct {
	msgs chan []byte
	// dropped is closed when the follower fell behind and was dropped.
	dropped chan struct{}
}

func newOutbox() outbox {
	return outbox{msgs: make(chan []byte, boardQueue), dropped: make(chan struct{})}
}

// offer queues msg; false when the follower is too far behind, and dropped now.
func (o outbox) offer(msg []byte) bool {
	select {
	case o.msgs <- msg:
		return true
	default:
		o.drop()
		return false
	}
}

// drop drops the follower: the stream ended for it.
func (o outbox) drop() { close(o.dropped) }

// changeStream is a WebSocket that tells a page that what it shows changed, as {"v":n} with n
// counting up; the page then fetches it. It lives with the server, not with the hijacked
// request, and ignores what the page sends.
type changeStream struct {
	ctx  context.Context
	conn *websocket.Conn
	n    uint64
}

// openChangeStream accepts c's upgrade; ok is false when it failed (Accept has answered).
// cancel ends the stream's context.
func (p *pages) openChangeStream(c echo.Context) (s *changeStream, cancel context.CancelFunc, ok bool) {
	conn, err := acceptWS(c, 1024)
	if err != nil {
		return nil, nil, false
	}
	ctx, cancel := context.WithCancel(p.opts.Context)
	return &changeStream{ctx: conn.CloseRead(ctx), conn: conn}, cancel, true
}

// tell says that something changed; an error when the page is gone.
func (s *changeStream) tell() error {
	s.n++
	return wsWrite(s.ctx, s.conn, []byte(`{"v":`+strconv.FormatUint(s.n, 10)+`}`))
}

// end closes the stream normally (the server is stopping, or the page went).
func (s *changeStream) end() { s.conn.Close(websocket.StatusNormalClosure, "") }
