package ui

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/labstack/echo/v4"
)

func TestStaticAssets(t *testing.T) {
	wasm := bytes.Repeat([]byte("\x00asm candidate "), 4096)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(wasm)
	zw.Close()
	fsys := fstest.MapFS{
		"static/app.css":                {Data: []byte(strings.Repeat("body { color: red }\n", 100))},
		"static/live.js":                {Data: []byte("'use strict';")},
		"static/wasm/.keep":             {},
		"static/wasm/candidate.wasm":    {Data: wasm},
		"static/wasm/candidate.wasm.gz": {Data: gz.Bytes()},
		"static/wasm/wasm_exec.js":      {Data: []byte("// go")},
	}
	a, err := loadAssets(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if a.urls.WasmMissing {
		t.Error("wasm reported missing")
	}
	if _, ok := a.files["wasm/.keep"]; ok {
		t.Error("the placeholder is served")
	}
	u := &pages{&reader{deps: &deps{assets: func() *assets { return a }}}}
	serve := func(target string, header map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		e := echo.New()
		e.GET("/static/*", u.static)
		e.ServeHTTP(w, r)
		return w
	}

	// The wasm: its type, the pre-compressed variant, a year of caching at the versioned URL.
	w := serve(a.urls.Wasm, map[string]string{"Accept-Encoding": "gzip, br"})
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/wasm" || w.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("wasm: %d %v", w.Code, w.Header())
	}
	if !bytes.Equal(w.Body.Bytes(), gz.Bytes()) {
		t.Error("the pre-compressed wasm was not served as it is")
	}
	if cc := w.Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("versioned URL: Cache-Control %q", cc)
	}
	if !strings.Contains(w.Header().Get("Vary"), "Accept-Encoding") {
		t.Error("no Vary: Accept-Encoding")
	}
	etag := w.Header().Get("ETag")

	// Without gzip, or with gzip refused, the plain bytes.
	for _, ae := range []string{"", "gzip;q=0", "identity"} {
		w = serve("/static/wasm/candidate.wasm", map[string]string{"Accept-Encoding": ae})
		if w.Header().Get("Content-Encoding") != "" || !bytes.Equal(w.Body.Bytes(), wasm) {
			t.Errorf("Accept-Encoding %q: got a compressed body", ae)
		}
		if cc := w.Header().Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("unversioned URL: Cache-Control %q", cc)
		}
	}
	if w := serve("/static/wasm/candidate.wasm", map[string]string{"If-None-Match": etag}); w.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: status %d", w.Code)
	}

	// Text assets are compressed on the fly, once; tiny ones are not worth it.
	w = serve(a.urls.CSS, map[string]string{"Accept-Encoding": "gzip"})
	if w.Header().Get("Content-Type") != "text/css; charset=utf-8" || w.Header().Get("Content-Encoding") != "gzip" {
		t.Errorf("css: %v", w.Header())
	}
	zr, err := gzip.NewReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); !bytes.Equal(b, fsys["static/app.css"].Data) {
		t.Error("css does not decompress to itself")
	}
	w = serve(a.urls.LiveJS, map[string]string{"Accept-Encoding": "gzip"})
	if w.Header().Get("Content-Type") != "text/javascript; charset=utf-8" || w.Header().Get("Content-Encoding") != "" {
		t.Errorf("small js: %v", w.Header())
	}
	for _, p := range []string{"/static/nope.js", "/static/../ui.go", "/static/wasm/.keep"} {
		if w := serve(p, nil); w.Code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, w.Code)
		}
	}

	// Embedded as its .gz alone (as committed), the candidate is served from it, and
	// decompressed for a client without gzip.
	delete(fsys, "static/wasm/candidate.wasm")
	a, err = loadAssets(fsys)
	if err != nil || a.urls.WasmMissing {
		t.Fatalf("the .gz alone: WasmMissing %v, err %v", a.urls.WasmMissing, err)
	}
	w = serve(a.urls.Wasm, map[string]string{"Accept-Encoding": "gzip"})
	if w.Code != http.StatusOK || w.Header().Get("Content-Encoding") != "gzip" || !bytes.Equal(w.Body.Bytes(), gz.Bytes()) {
		t.Errorf("the .gz alone, with gzip: %d %v", w.Code, w.Header())
	}
	w = serve(a.urls.Wasm, nil)
	if w.Code != http.StatusOK || w.Header().Get("Content-Encoding") != "" || !bytes.Equal(w.Body.Bytes(), wasm) {
		t.Errorf("the .gz alone, without gzip: %d %v, %d bytes", w.Code, w.Header(), w.Body.Len())
	}

	// Without a built candidate the page says so.
	delete(fsys, "static/wasm/candidate.wasm")
	delete(fsys, "static/wasm/candidate.wasm.gz")
	a, err = loadAssets(fsys)
	if err != nil || !a.urls.WasmMissing {
		t.Errorf("missing wasm: WasmMissing %v, err %v", a.urls.WasmMissing, err)
	}
	tu := mustNewUI(t, t0)
	tu.assets = func() *assets { return a }
	doc := tu.mustGetDoc(t, "/play?lease=demo", http.StatusOK)
	if got := text(doc.Find(`[data-testid=wasm-missing]`)); !strings.Contains(got, "candidate.wasm is not built: run make build") {
		t.Errorf("missing wasm message %q", got)
	}
}

func TestPagesAreCompressed(t *testing.T) {
	tu := mustNewUI(t, t0)
	r := httptest.NewRequest(http.MethodGet, "/play?lease=demo", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	w := tu.do(t, r)
	if w.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("page not compressed: %v", w.Header())
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	zr, err := gzip.NewReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(zr)
	if !bytes.Contains(b, []byte(`id="candidate"`)) {
		t.Error("the compressed page is not the page")
	}
}

// TestBrotliAsset: the candidate's embedded .br goes to clients that take br, the .gz to the
// others, and the plain bytes to a client that takes neither.
func TestBrotliAsset(t *testing.T) {
	wasm := bytes.Repeat([]byte("\x00asm candidate "), 4096)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(wasm)
	zw.Close()
	br := []byte("brotli bytes as make wasm writes them")
	fsys := fstest.MapFS{
		"static/wasm/candidate.wasm.gz": {Data: gz.Bytes()},
		"static/wasm/candidate.wasm.br": {Data: br},
		"static/wasm/wasm_exec.js":      {Data: []byte("// go")},
		"static/orphan.js.br":           {Data: br},
	}
	a, err := loadAssets(fsys)
	if err != nil || a.urls.WasmMissing {
		t.Fatalf("WasmMissing %v, err %v", a.urls.WasmMissing, err)
	}
	u := &pages{&reader{deps: &deps{assets: func() *assets { return a }}}}
	e := echo.New()
	e.GET("/static/*", u.static)
	for _, tc := range []struct {
		accept, encoding string
		body             []byte
	}{
		{"gzip, deflate, br, zstd", "br", br},
		{"br", "br", br},
		{"gzip, br;q=0", "gzip", gz.Bytes()},
		{"gzip, deflate", "gzip", gz.Bytes()},
		{"identity", "", wasm},
	} {
		r := httptest.NewRequest(http.MethodGet, a.urls.Wasm, nil)
		r.Header.Set("Accept-Encoding", tc.accept)
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		if w.Code != http.StatusOK || w.Header().Get("Content-Encoding") != tc.encoding || !bytes.Equal(w.Body.Bytes(), tc.body) {
			t.Errorf("Accept-Encoding %q: %d, Content-Encoding %q, %d bytes; want %q, %d bytes",
				tc.accept, w.Code, w.Header().Get("Content-Encoding"), w.Body.Len(), tc.encoding, len(tc.body))
		}
		if w.Header().Get("Content-Type") != "application/wasm" || !strings.Contains(w.Header().Get("Vary"), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: %v", tc.accept, w.Header())
		}
	}
	if _, ok := a.files["orphan.js"]; ok {
		t.Error("a .br without its file is served")
	}
}
