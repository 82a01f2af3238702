package bench

import (
	"bufio"
	"net"
	"net/http"
	"time"
)

// directGrace is how long a direct exchange may outlast its context's deadline.
const directGrace = 5 * time.Second

// directConn is one worker's HTTP/1.1 connection to a plain-HTTP server: the request is
// written and the response read on the worker's goroutine, where net/http's Transport hands
// each request to a writing and a reading goroutine of the connection; with the load generator
// on the server's cores, those hand-offs are most of its CPU per request. The wire is the same.
type directConn struct {
	addr      string
	userAgent string
	conn      net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
}

// roundTrip sends req on the connection, dialling it first if needed, and reads the response
// head. The caller reads the whole body, then calls done.
func (d *directConn) roundTrip(req *http.Request) (*http.Response, error) {
	if d.conn == nil {
		conn, err := (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext(req.Context(), "tcp", d.addr)
		if err != nil {
			return nil, err
		}
		d.conn, d.br, d.bw = conn, bufio.NewReader(conn), bufio.NewWriter(conn)
	}
	// A dead server cannot hold the worker past its context's deadline by more than the grace
	// that lets an exchange in flight at the deadline finish (and be discarded by the caller).
	deadline, ok := req.Context().Deadline()
	if ok {
		deadline = deadline.Add(directGrace)
	}
	d.conn.SetDeadline(deadline)
	if d.userAgent != "" {
		req.Header.Set("User-Agent", d.userAgent)
	}
	err := req.Write(d.bw)
	if err == nil {
		err = d.bw.Flush()
	}
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(d.br, req)
	}
	if err != nil {
		d.close()
		return nil, err
	}
	return resp, nil
}

// done keeps the connection for the next request unless the exchange failed or the server
// closes it.
func (d *directConn) done(resp *http.Response, err error) {
	if err != nil || resp.Close {
		d.close()
	}
}

// close drops the connection; the next request dials a new one.
func (d *directConn) close() {
	if d.conn != nil {
		d.conn.Close()
		d.conn = nil
	}
}
