package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/apiserver"
	"github.com/leaselab/leaselab/web/api/kinds"
)

// sampleUA is the User-Agent of the recorded samples; the field manager of a write without a
// fieldManager parameter is its text before the "/": "peer-samples".
const sampleUA = "peer-samples/v1.0 (linux/amd64)"

const (
	leasesPath     = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
	candidatesPath = "/apis/coordination.k8s.io/v1beta1/namespaces/default/leasecandidates"
	tableAccept    = "application/json;as=Table;v=v1;g=meta.k8s.io"
)

// testAPI is the API server on a SQLite store in a temporary directory, served by an
// httptest server on 127.0.0.1 through Echo, as cmd/leaselab wires it.
type testAPI struct {
	URL     string
	Handler http.Handler // the Echo router, to serve requests in process
	DB      *sqlite.DB
	Reg     *kinds.Registry
}

// MustStartAPI starts a test API server and stops it at cleanup. Background compaction is
// off unless opts asks for it; tests call DB.Compact themselves.
func MustStartAPI(tb testing.TB, opts sqlite.Options) *testAPI {
	tb.Helper()
	return MustStartAPIWith(tb, opts, apiserver.Options{})
}

// MustStartAPIWith is MustStartAPI with the API server's options (its Context is the test's).
func MustStartAPIWith(tb testing.TB, opts sqlite.Options, apiOpts apiserver.Options) *testAPI {
	tb.Helper()
	var w io.Writer = io.Discard
	if os.Getenv("LEASELAB_TEST_LOG") != "" {
		w = os.Stderr
	}
	logger := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.CompactInterval == 0 {
		opts.CompactInterval = -1
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "leaselab.db"), opts, logger)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	ctx, cancel := context.WithCancel(context.Background())
	apiOpts.Context = ctx
	api, err := apiserver.New(logger, reg, db, apiOpts)
	if err != nil {
		cancel()
		db.Close()
		tb.Fatalf("new api server: %v", err)
	}
	e := echo.New()
	e.HideBanner = true
	api.Register(e)
	srv := httptest.NewServer(e)
	tb.Cleanup(func() {
		cancel() // ends the watches first, so that Close does not wait for them
		srv.Close()
		if err := db.Close(); err != nil {
			tb.Errorf("close store: %v", err)
		}
	})
	return &testAPI{URL: srv.URL, Handler: e, DB: db, Reg: reg}
}

// response is one complete HTTP response.
type response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// Do sends a request with the samples' User-Agent and returns the whole response. header is a
// list of name, value pairs; a User-Agent among them replaces the default. Every response must
// carry a Content-Type.
func (a *testAPI) Do(tb testing.TB, method, path, body string, header ...string) response {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	return a.DoReader(tb, method, path, rd, header...)
}

// DoReader is Do with a body from a reader.
func (a *testAPI) DoReader(tb testing.TB, method, path string, body io.Reader, header ...string) response {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, a.URL+path, body)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("User-Agent", sampleUA)
	setHeaders(tb, req.Header, header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: read body: %v", method, path, err)
	}
	if resp.Header.Get("Content-Type") == "" {
		tb.Errorf("%s %s: %d response without a Content-Type", method, path, resp.StatusCode)
	}
	return response{Code: resp.StatusCode, Header: resp.Header, Body: b}
}

func setHeaders(tb testing.TB, h http.Header, pairs []string) {
	tb.Helper()
	if len(pairs)%2 != 0 {
		tb.Fatalf("odd header list %q", pairs)
	}
	for i := 0; i < len(pairs); i += 2 {
		h.Set(pairs[i], pairs[i+1])
	}
}

// MustCreate posts a JSON object and fails the test unless it was created; it returns the
// created object's resourceVersion.
func (a *testAPI) MustCreate(tb testing.TB, collection, body string) string {
	tb.Helper()
	r := a.Do(tb, http.MethodPost, collection, body, "Content-Type", "application/json")
	WantCode(tb, r, http.StatusCreated)
	return objectRV(tb, r.Body)
}

// MustDo sends a request and fails the test unless it answered code; it returns the
// resourceVersion of the object in the answer, if any.
func (a *testAPI) MustDo(tb testing.TB, code int, method, path, body string, header ...string) string {
	tb.Helper()
	r := a.Do(tb, method, path, body, header...)
	WantCode(tb, r, code)
	return objectRV(tb, r.Body)
}

func objectRV(tb testing.TB, b []byte) string {
	tb.Helper()
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		tb.Fatalf("decode %s: %v", b, err)
	}
	return o.Metadata.ResourceVersion
}

// WantCode fails the test unless r has the status code.
func WantCode(tb testing.TB, r response, code int) {
	tb.Helper()
	if r.Code != code {
		tb.Fatalf("status %d, want %d; body:\n%s", r.Code, code, r.Body)
	}
}

// WantBody fails the test unless r has the status code, Content-Type application/json and
// exactly the body want.
func WantBody(tb testing.TB, r response, code int, want string) {
	tb.Helper()
	WantCode(tb, r, code)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type %q, want application/json", ct)
	}
	if string(r.Body) != want {
		tb.Errorf("body:\n%q\nwant:\n%q", r.Body, want)
	}
}

// volatile matches the values that differ between two runs of the same request.
var volatile = regexp.MustCompile(`"(uid|creationTimestamp|time|resourceVersion)":"[^"]*"`)

// normalize replaces uids, timestamps and resourceVersions with "X", so that a response can be
// compared byte for byte with a recorded one.
func normalize(b []byte) string {
	return volatile.ReplaceAllString(string(b), `"$1":"X"`)
}

// leaseJSON is the samples' lease body with another name and holder.
func leaseJSON(name, holder string) string {
	return fmt.Sprintf(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":%q,"namespace":"default","labels":{"app":"peer-sample"}},"spec":{"holderIdentity":%q,"leaseDurationSeconds":15,"acquireTime":"2026-01-02T03:04:05.000000Z","renewTime":"2026-01-02T03:04:05.000000Z","leaseTransitions":0}}`, name, holder)
}

// leaseWithLabel is a small lease with one label.
func leaseWithLabel(name, key, value string) string {
	return fmt.Sprintf(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":%q,"labels":{%q:%q}},"spec":{"holderIdentity":"h"}}`, name, key, value)
}

const candidateJSON = `{"apiVersion":"coordination.k8s.io/v1beta1","kind":"LeaseCandidate","metadata":{"name":"sample-candidate"},"spec":{"leaseName":"sample-component","binaryVersion":"1.36.0","emulationVersion":"1.36.0","strategy":"OldestEmulationVersion","renewTime":"2026-01-02T03:04:05.000000Z","pingTime":"2026-01-02T03:04:05.000000Z"}}`

// decodeStatus decodes a Status body.
func decodeStatus(tb testing.TB, b []byte) metav1.Status {
	tb.Helper()
	var st metav1.Status
	if err := json.Unmarshal(b, &st); err != nil {
		tb.Fatalf("decode Status %s: %v", b, err)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" {
		tb.Fatalf("not a Status: %s", b)
	}
	return st
}

// watchStream is a running chunked HTTP watch.
type watchStream struct {
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

// MustWatch starts a watch request and fails the test unless it was accepted with a chunked
// 200. The stream is closed at cleanup, and after 15 s at the latest.
func (a *testAPI) MustWatch(tb testing.TB, path string, header ...string) *watchStream {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL+path, nil)
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	req.Header.Set("User-Agent", sampleUA)
	setHeaders(tb, req.Header, header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		tb.Fatalf("watch %s: %v", path, err)
	}
	w := &watchStream{resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	tb.Cleanup(w.Close)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		tb.Fatalf("watch %s: status %d: %s", path, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("watch Content-Type %q, want application/json", ct)
	}
	if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		tb.Errorf("watch Transfer-Encoding %q, want chunked", resp.TransferEncoding)
	}
	return w
}

// Close ends the watch.
func (w *watchStream) Close() {
	w.cancel()
	w.resp.Body.Close()
}

// Next returns the next raw frame, its trailing newline included.
func (w *watchStream) Next(tb testing.TB) []byte {
	tb.Helper()
	line, err := w.r.ReadBytes('\n')
	if err != nil {
		tb.Fatalf("read watch frame: %v (got %q)", err, line)
	}
	return line
}

// NextEvent returns the next frame decoded.
func (w *watchStream) NextEvent(tb testing.TB) event {
	tb.Helper()
	return decodeEvent(tb, w.Next(tb))
}

// WantEnd fails the test unless the stream ends (the server closes it) within d.
func (w *watchStream) WantEnd(tb testing.TB, d time.Duration) {
	tb.Helper()
	done := make(chan error, 1)
	go func() {
		b, err := io.ReadAll(w.r)
		if err == nil && len(b) > 0 {
			err = fmt.Errorf("unexpected frames %q", b)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			tb.Fatalf("watch did not end cleanly: %v", err)
		}
	case <-time.After(d):
		w.Close()
		tb.Fatalf("watch still open after %v", d)
	}
}

// event is one decoded watch event; Object keeps its raw bytes.
type event struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
	raw    []byte
}

// objectMeta is the part of an object the tests look at.
type objectMeta struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name            string            `json:"name"`
		ResourceVersion string            `json:"resourceVersion"`
		Annotations     map[string]string `json:"annotations"`
		Labels          map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		HolderIdentity *string `json:"holderIdentity"`
	} `json:"spec"`
}

// decodeEvent decodes a frame: one JSON object and a newline. Every event object must carry
// kind and apiVersion, since client-go decodes it without a type hint.
func decodeEvent(tb testing.TB, frame []byte) event {
	tb.Helper()
	if !bytes.HasSuffix(frame, []byte("\n")) || bytes.Count(frame, []byte("\n")) != 1 {
		tb.Fatalf("frame is not one line ending in a newline: %q", frame)
	}
	var ev event
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		tb.Fatalf("decode frame %q: %v", frame, err)
	}
	ev.raw = frame
	m := ev.Meta(tb)
	if m.Kind == "" || m.APIVersion == "" {
		tb.Fatalf("event object without kind or apiVersion: %s", frame)
	}
	return ev
}

// Meta decodes the event object's kind and metadata.
func (ev event) Meta(tb testing.TB) objectMeta {
	tb.Helper()
	var m objectMeta
	if err := json.Unmarshal(ev.Object, &m); err != nil {
		tb.Fatalf("decode event object %s: %v", ev.Object, err)
	}
	return m
}

// WantEvent fails the test unless ev has the type and is about the object name, at
// resourceVersion rv unless rv is empty; it returns the object's metadata.
func WantEvent(tb testing.TB, ev event, typ, name, rv string) objectMeta {
	tb.Helper()
	m := ev.Meta(tb)
	if ev.Type != typ || m.Metadata.Name != name || rv != "" && m.Metadata.ResourceVersion != rv {
		tb.Fatalf("event %s %s@%s, want %s %s@%s: %s", ev.Type, m.Metadata.Name, m.Metadata.ResourceVersion, typ, name, rv, ev.raw)
	}
	return m
}

// volatileYAML matches the YAML lines of values that differ between runs.
var volatileYAML = regexp.MustCompile(`(?m)^(\s*(?:uid|creationTimestamp|time|resourceVersion)): .*$`)

// normalizeYAML is normalize for YAML bodies.
func normalizeYAML(b []byte) string {
	return volatileYAML.ReplaceAllString(string(b), "$1: X")
}
