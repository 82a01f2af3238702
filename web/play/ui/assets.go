package ui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/templates"
)

// staticFS holds the scripts, the stylesheet and the candidate: static/wasm/candidate.wasm.gz,
// candidate.wasm.br and wasm_exec.js from the same GOROOT, all committed (`make wasm` writes
// them, and make test checks that they are current), so that `go install` gives the whole
// playground. A file embedded only as its .gz is served from it, and decompressed for the rare
// client that takes no gzip; its .br, a quarter smaller, goes to the clients that take br
// (browsers do over HTTPS: a workshop's phones).
//
//go:embed all:static
var staticFS embed.FS

// asset is one embedded file, ready to serve.
type asset struct {
	name  string
	body  []byte // nil until plain() decompresses it, for an asset embedded only as its .gz
	ctype string
	etag  string // quoted content hash
	hash  string // short hash for URLs

	gzOnce sync.Once
	gz     []byte // pre-compressed variant; nil when compression does not pay
	br     []byte // Brotli variant, when one was embedded

	plainOnce sync.Once
}

// assets are every embedded file by name (relative to static/), and the versioned URLs the
// templates use.
type assets struct {
	files map[string]*asset
	urls  templates.Assets
}

var contentTypes = map[string]string{
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".wasm": "application/wasm",
	".json": "application/json",
	".html": "text/html; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
	".png":  "image/png",
}

// compressible lists the types worth compressing.
var compressible = map[string]bool{".css": true, ".js": true, ".svg": true, ".wasm": true, ".json": true, ".html": true, ".txt": true}

func loadAssets(fsys fs.FS) (*assets, error) {
	a := &assets{files: map[string]*asset{}}
	sub, err := fs.Sub(fsys, "static")
	if err != nil {
		return nil, err
	}
	pregz, prebr := map[string][]byte{}, map[string][]byte{}
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		base := path.Base(p)
		if strings.HasPrefix(base, ".") {
			return nil // placeholders
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".gz") {
			pregz[strings.TrimSuffix(p, ".gz")] = b
			return nil
		}
		if strings.HasSuffix(p, ".br") {
			prebr[strings.TrimSuffix(p, ".br")] = b
			return nil
		}
		a.files[p] = newAsset(p, b, nil)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for name, gz := range pregz {
		f := a.files[name]
		if f == nil {
			f = newAsset(name, nil, gz)
			a.files[name] = f
		}
		f.gzOnce.Do(func() { f.gz = gz })
	}
	for name, br := range prebr {
		// Only beside a file that is there (as itself or its .gz), which serves the others.
		if f := a.files[name]; f != nil {
			f.br = br
		}
	}
	a.urls = templates.Assets{
		CSS:        a.url("app.css"),
		Icon:       a.url("icon.svg"),
		LiveJS:     a.url("live.js"),
		Dashboard:  a.url("dashboard.js"),
		LeaseJS:    a.url("lease.js"),
		ScrubJS:    a.url("scrub.js"),
		PlayJS:     a.url("play.js"),
		ScenarioJS: a.url("scenario.js"),
		StageJS:    a.url("stage.js"),
		TimingsJS:  a.url("timings.js"),
		FollowJS:   a.url("follow.js"),
		ArenaJS:    a.url("arena.js"),
		WorkerJS:   a.url("worker.js"),
		WasmExec:   a.url("wasm/wasm_exec.js"),
		Wasm:       a.url("wasm/candidate.wasm"),
	}
	a.urls.WasmMissing = a.files["wasm/candidate.wasm"] == nil || a.files["wasm/wasm_exec.js"] == nil
	return a, nil
}

// newAsset is the asset name with its body, or with only its gzip variant (body nil): its
// hash is of whichever bytes it came as.
func newAsset(name string, body, gz []byte) *asset {
	sum := sha256.Sum256(body)
	if body == nil {
		sum = sha256.Sum256(gz)
	}
	h := hex.EncodeToString(sum[:])
	ctype := contentTypes[path.Ext(name)]
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	return &asset{name: name, body: body, ctype: ctype, etag: `"` + h[:32] + `"`, hash: h[:16]}
}

// plain returns the uncompressed body, decompressing the gzip variant on first use when only
// that was embedded.
func (f *asset) plain() []byte {
	f.plainOnce.Do(func() {
		if f.body != nil {
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(f.gz))
		if err != nil {
			return
		}
		f.body, _ = io.ReadAll(zr)
	})
	return f.body
}

// url is the versioned URL of an asset: the content hash in the query makes it safe to cache
// forever. A missing asset gets its plain URL (and a 404).
func (a *assets) url(name string) string {
	f := a.files[name]
	if f == nil {
		return "/static/" + name
	}
	return "/static/" + name + "?v=" + f.hash
}

// gzipped returns the compressed variant, compressing on first use when none was embedded.
func (f *asset) gzipped() []byte {
	f.gzOnce.Do(func() {
		if f.body == nil || !compressible[path.Ext(f.name)] || len(f.body) < 512 {
			return
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(f.body)
		zw.Close()
		if buf.Len() < len(f.body) {
			f.gz = buf.Bytes()
		}
	})
	return f.gz
}

// static serves an embedded asset: the right Content-Type, the gzip variant when the client
// accepts it, an ETag, and a year of caching when the URL carries the current hash.
func (u *pages) static(c echo.Context) error {
	name := strings.TrimPrefix(path.Clean("/"+c.Param("*")), "/")
	f := u.assets().files[name]
	if f == nil {
		return c.String(http.StatusNotFound, "not found\n")
	}
	r := c.Request()
	h := c.Response().Header()
	h.Set("Content-Type", f.ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", f.etag)
	h.Add("Vary", "Accept-Encoding")
	if r.URL.Query().Get("v") == f.hash {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	if name == "worker.js" {
		// A dedicated worker runs under its script's policy: let it compile the candidate.
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'")
	}
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, f.etag) {
		return c.NoContent(http.StatusNotModified)
	}
	var body []byte
	if f.br != nil && accepts(r, "br") {
		body = f.br
		h.Set("Content-Encoding", "br")
	} else if accepts(r, "gzip") {
		if gz := f.gzipped(); gz != nil {
			body = gz
			h.Set("Content-Encoding", "gzip")
		}
	}
	if body == nil {
		body = f.plain()
	}
	if r.Method == http.MethodHead {
		h.Set("Content-Length", itoa(len(body)))
		return c.NoContent(http.StatusOK)
	}
	return c.Blob(http.StatusOK, f.ctype, body)
}
