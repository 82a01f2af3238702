package inprocess

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
)

// flushSize is how much a handler may write before the response starts streaming without
// a flush, as a server's buffer fills up.
const flushSize = 32 << 10

// errClosed is what a handler's writes return once the client closed the response body.
var errClosed = errors.New("inprocess: the client closed the response body")

// responseWriter is the http.ResponseWriter of one in-process request. The handler writes
// into pending; the first flush (or a full buffer) sends the header and turns the response
// into a stream, whose bytes travel through a pipe as each flush makes them visible. A
// response the handler completes without flushing is handed over whole, with its length.
//
// The handler's goroutine alone writes, as with any server; ready (closed once) hands the
// response over to RoundTrip.
type responseWriter struct {
	req    *http.Request // the client's request, for the response
	head   bool
	header http.Header // what the handler sets
	sent   http.Header // header as it was at WriteHeader
	code   int         // 0 until WriteHeader

	pending bytes.Buffer
	stream  bool // the header was sent: pending goes to pw
	pr      *io.PipeReader
	pw      *io.PipeWriter
	werr    error // the first failed write to the pipe

	ready chan struct{}
	resp  *http.Response
	err   error
}

var (
	_ http.ResponseWriter = (*responseWriter)(nil)
	_ http.Flusher        = (*responseWriter)(nil)
)

func newResponseWriter(req *http.Request, head bool) *responseWriter {
	pr, pw := io.Pipe()
	return &responseWriter{req: req, head: head, header: http.Header{}, pr: pr, pw: pw, ready: make(chan struct{})}
}

func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader fixes the status and the header. Informational statuses are not passed on.
func (w *responseWriter) WriteHeader(code int) {
	if w.code != 0 || code < 200 {
		return
	}
	w.code = code
	w.sent = w.header.Clone() // later changes have no effect, as on a server
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.werr != nil {
		return 0, w.werr
	}
	if w.head || !bodyAllowed(w.code) {
		return len(b), nil
	}
	w.pending.Write(b)
	if w.pending.Len() >= flushSize {
		if err := w.FlushError(); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// Flush sends what was written to the client.
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError sends what was written to the client, waiting until it reads it; it fails once
// the client has closed the body or its request's context is done.
func (w *responseWriter) FlushError() error {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.stream {
		w.stream = true
		w.hand(w.response(&body{pr: w.pr}, -1), nil)
	}
	if w.werr != nil {
		return w.werr
	}
	if w.pending.Len() == 0 {
		return nil
	}
	_, err := w.pw.Write(w.pending.Bytes())
	w.pending.Reset()
	if err != nil {
		w.werr = err
	}
	return err
}

// finish completes the response when the handler has returned; err, when set, fails it.
func (w *responseWriter) finish(err error) {
	if !w.stream {
		if err != nil {
			w.hand(nil, err)
			return
		}
		if w.code == 0 {
			w.WriteHeader(http.StatusOK)
		}
		b := bytes.Clone(w.pending.Bytes())
		if !w.head && w.sent.Get("Content-Length") == "" && bodyAllowed(w.code) {
			w.sent.Set("Content-Length", strconv.Itoa(len(b)))
		}
		w.hand(w.response(io.NopCloser(bytes.NewReader(b)), int64(len(b))), nil)
		return
	}
	if err == nil {
		err = w.FlushError()
	}
	if err == nil || errors.Is(err, errClosed) {
		w.pw.Close()
		return
	}
	w.pw.CloseWithError(err)
}

// abandon ends a response RoundTrip gave up waiting for: the handler's writes fail from now on.
func (w *responseWriter) abandon(err error) { w.pr.CloseWithError(err) }

// hand passes the response, or the error, to RoundTrip.
func (w *responseWriter) hand(resp *http.Response, err error) {
	w.resp, w.err = resp, err
	close(w.ready)
}

// response is the client's view of the response with body; length -1 is unknown (a stream).
func (w *responseWriter) response(rc io.ReadCloser, length int64) *http.Response {
	h := w.sent
	resp := &http.Response{
		Status:     strconv.Itoa(w.code) + " " + http.StatusText(w.code),
		StatusCode: w.code,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        h,
		Body:          rc,
		ContentLength: length,
		Request:       w.req,
	}
	if length < 0 {
		if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil {
			resp.ContentLength = n
		} else {
			resp.TransferEncoding = []string{"chunked"}
		}
		h.Del("Transfer-Encoding")
	}
	if w.head {
		resp.Body = http.NoBody
	}
	return resp
}

// body is a streamed response body. Closing it makes the handler's writes fail, which ends a
// watch; its request's context ending does the same through the handler.
type body struct{ pr *io.PipeReader }

func (b *body) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *body) Close() error {
	b.pr.CloseWithError(errClosed)
	return nil
}

func bodyAllowed(code int) bool {
	return code != http.StatusNoContent && code != http.StatusNotModified && (code < 100 || code > 199)
}
