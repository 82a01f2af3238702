// Package discovery serves the documents clients read to learn what the API server offers:
// /version, the legacy discovery documents (/api, /apis and one per group and group
// version), aggregated discovery (apidiscovery.k8s.io/v2 on /api and /apis), and the
// OpenAPI v2 and v3 documents, all derived from the served kinds and their Go types.
//
// Every document is built once and served from bytes, in the shapes and with the headers the
// real kube-apiserver uses, so that client-go discovery, kubectl (get, api-resources,
// explain, apply) and other unmodified clients work. The discovery documents are built by
// New; the OpenAPI documents, which take most of the time, in the background from New on,
// so that the server is ready before they are (a request for one waits for them).
package discovery

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"github.com/labstack/echo/v4"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/version"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/yaml"

	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/api/mediatype"
	"github.com/leaselab/leaselab/web/api/status"
)

// Media types this package produces.
const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"

	// aggregatedParams are the media type parameters that select aggregated discovery.
	aggregatedParams = ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

	openAPIV2Protobuf = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	openAPIV3Protobuf = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
)

// representations holds one document in each format it is served in.
type representations struct {
	json, yaml, protobuf []byte
	etag                 string // quoted; set only where the real server sends one
}

// openAPIDocument is an OpenAPI document as JSON and as gnostic protobuf. hash is the
// upper-case hex SHA-512 of the JSON, which is also its entity tag.
type openAPIDocument struct {
	json, protobuf []byte
	hash           string
}

// Handler serves the discovery, version and OpenAPI documents. It is safe for concurrent
// use.
type Handler struct {
	version    []byte
	core       *apiGroup                   // nil when no core kind is served
	legacy     map[string]*representations // by path, without trailing slash; /api is built per request
	aggregated map[string]*representations // "/api" and "/apis"
	v3Keys     []string                    // index keys of the v3 documents: "api/v1", "apis/coordination.k8s.io/v1"
	openAPI    func() (*openAPIDocuments, error)
	modTime    time.Time
}

// openAPIDocuments are the OpenAPI v2 document, the v3 index and one v3 document per group
// version.
type openAPIDocuments struct {
	v2      *openAPIDocument
	v3Index *openAPIDocument
	v3      map[string]*openAPIDocument // by index key
}

// New builds the discovery documents for the served kinds; the OpenAPI documents are built on
// the first request for them, or by BuildOpenAPI. scheme must know the Go types of every served kind and list kind in every
// served version; structural returns the structured-merge-diff schema of those types (list
// and map semantics), nil for the one client-go ships for the built-in types; info is what
// /version reports.
// It returns an error when the kinds are inconsistent (a resource served twice in a group
// version, a kind without versions) or a type is missing from the scheme.
func New(ks []*kinds.Kind, scheme *runtime.Scheme, structural func() (*smdschema.Schema, error), info version.Info) (*Handler, error) {
	core, named, err := groupKinds(ks)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	h := &Handler{
		core:       core,
		legacy:     map[string]*representations{},
		aggregated: map[string]*representations{},
		modTime:    time.Now().UTC().Truncate(time.Second),
	}
	if h.version, err = json.MarshalIndent(info, "", "  "); err != nil {
		return nil, fmt.Errorf("discovery: encode version: %w", err)
	}

	var coreGroups []*apiGroup
	if core != nil {
		coreGroups = []*apiGroup{core}
		for _, v := range core.versions {
			if err := h.addLegacy(groupVersionPrefix("", v), apiResourceListDoc(core, v)); err != nil {
				return nil, err
			}
		}
	}
	if err := h.addLegacy("/apis", apiGroupListDoc(named)); err != nil {
		return nil, err
	}
	for _, g := range named {
		doc := apiGroupDoc(g, true)
		if err := h.addLegacy("/apis/"+g.name, &doc); err != nil {
			return nil, err
		}
		for _, v := range g.versions {
			if err := h.addLegacy(groupVersionPrefix(g.name, v), apiResourceListDoc(g, v)); err != nil {
				return nil, err
			}
		}
	}
	for p, groups := range map[string][]*apiGroup{"/api": coreGroups, "/apis": named} {
		r, err := encodeDiscovery(aggregatedDoc(groups))
		if err != nil {
			return nil, fmt.Errorf("discovery: encode aggregated %s: %w", p, err)
		}
		r.etag = strconv.Quote(hashOf(r.json))
		h.aggregated[p] = r
	}

	groups := append(coreGroups, named...)
	for _, g := range groups {
		for _, v := range g.versions {
			// The routes name every type: a type missing from the scheme fails here, not
			// later in the background.
			if _, err := groupVersionRoutes(scheme, g, v); err != nil {
				return nil, fmt.Errorf("discovery: %w", err)
			}
			h.v3Keys = append(h.v3Keys, v3Key(g, v))
		}
	}
	h.openAPI = sync.OnceValues(func() (*openAPIDocuments, error) {
		docs, err := buildOpenAPI(scheme, ks, structural, info, groups)
		if err != nil {
			return nil, fmt.Errorf("discovery: %w", err)
		}
		return docs, nil
	})
	return h, nil
}

// BuildOpenAPI builds the OpenAPI documents now, unless they were built, so that the first
// request for them does not wait (it takes longer than the rest of the start-up). A server
// calls it in the background as it starts.
func (h *Handler) BuildOpenAPI() { h.openAPI() }

func (h *Handler) addLegacy(p string, doc runtime.Object) error {
	r, err := encodeDiscovery(doc)
	if err != nil {
		return fmt.Errorf("discovery: encode %s: %w", p, err)
	}
	h.legacy[p] = r
	return nil
}

// buildOpenAPI builds the OpenAPI v2 document, one v3 document per group version and the
// v3 index.
func buildOpenAPI(scheme *runtime.Scheme, ks []*kinds.Kind, structural func() (*smdschema.Schema, error), info version.Info, groups []*apiGroup) (*openAPIDocuments, error) {
	var smd *smdschema.Schema
	if structural != nil {
		var err error
		if smd, err = structural(); err != nil {
			return nil, fmt.Errorf("openapi: structural schema: %w", err)
		}
	} else {
		smd = structuralSchema(scheme, ks)
	}
	b := &openAPIBuilder{scheme: scheme, smd: smd, infoVersion: openAPIInfoVersion(info)}
	swagger, err := b.v2(groups)
	if err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}
	docs := &openAPIDocuments{v3: map[string]*openAPIDocument{}}
	if docs.v2, err = encodeOpenAPI(swagger, func(j []byte) (proto.Message, error) { return openapiv2.ParseDocument(j) }); err != nil {
		return nil, fmt.Errorf("openapi v2: %w", err)
	}

	type indexEntry struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	index := struct {
		Paths map[string]indexEntry `json:"paths"`
	}{Paths: map[string]indexEntry{}}
	for _, g := range groups {
		for _, v := range g.versions {
			doc, err := b.v3(g, v)
			if err != nil {
				return nil, fmt.Errorf("openapi v3 %s: %w", g.groupVersion(v), err)
			}
			key := v3Key(g, v)
			d, err := encodeOpenAPI(doc, func(j []byte) (proto.Message, error) { return openapiv3.ParseDocument(j) })
			if err != nil {
				return nil, fmt.Errorf("openapi v3 %s: %w", key, err)
			}
			docs.v3[key] = d
			index.Paths[key] = indexEntry{ServerRelativeURL: v3URL(key, d.hash)}
		}
	}
	j, err := json.Marshal(index)
	if err != nil {
		return nil, fmt.Errorf("openapi v3 index: %w", err)
	}
	docs.v3Index = &openAPIDocument{json: j, hash: hashOf(j)}
	return docs, nil
}

// v3Key is the v3 index key of group version v of g: "api/v1", "apis/coordination.k8s.io/v1".
func v3Key(g *apiGroup, v string) string {
	return strings.TrimPrefix(groupVersionPrefix(g.name, v), "/")
}

// v3URL is where the v3 document key is served, with the hash that makes it cacheable.
func v3URL(key, hash string) string {
	return path.Join("/openapi/v3", key) + "?hash=" + hash
}

func hashOf(b []byte) string {
	return fmt.Sprintf("%X", sha512.Sum512(b))
}

// encodeOpenAPI encodes an OpenAPI document as JSON and converts that to its gnostic
// protobuf form with parse.
func encodeOpenAPI(doc any, parse func([]byte) (proto.Message, error)) (*openAPIDocument, error) {
	j, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode json: %w", err)
	}
	msg, err := parse(j)
	if err != nil {
		return nil, fmt.Errorf("convert to protobuf: %w", err)
	}
	pb, err := proto.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("encode protobuf: %w", err)
	}
	return &openAPIDocument{json: j, protobuf: pb, hash: hashOf(j)}, nil
}

// encodeDiscovery encodes a discovery document as JSON (with the trailing newline of the
// real server's encoder), YAML and Kubernetes protobuf.
func encodeDiscovery(obj runtime.Object) (*representations, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return nil, err
	}
	// The protobuf envelope needs the apiVersion the JSON of core documents leaves out.
	obj = obj.DeepCopyObject()
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Version == "" {
		gvk.Version = "v1"
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(nil, nil).Encode(obj, &pb); err != nil {
		return nil, err
	}
	return &representations{json: append(j, '\n'), yaml: y, protobuf: pb.Bytes()}, nil
}

// Register adds the GET routes of every document to e.
func (h *Handler) Register(e *echo.Echo) {
	get := func(p string, fn echo.HandlerFunc) {
		e.GET(p, fn)
		e.GET(p+"/", fn)
	}
	get("/version", h.serveVersion)
	get("/api", h.serveAPI)
	get("/apis", h.serveAPIs)
	paths := make([]string, 0, len(h.legacy))
	for p := range h.legacy {
		if p != "/apis" {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		doc := h.legacy[p]
		get(p, func(c echo.Context) error { return h.serveDiscovery(c, static(doc), nil) })
	}
	e.GET("/openapi/v2", h.serveOpenAPIV2)
	get("/openapi/v3", h.serveOpenAPIV3Index)
	for _, key := range h.v3Keys {
		get("/openapi/v3/"+key, func(c echo.Context) error { return h.serveOpenAPIV3(c, key) })
	}
}

func (h *Handler) serveVersion(c echo.Context) error {
	w := c.Response()
	setNoCache(w.Header())
	w.Header().Set("Content-Type", mediaJSON)
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(h.version)
	return err
}

// serveAPI serves /api: aggregated discovery of the core group, or the legacy APIVersions
// document, which names the address the client reached the server at and so is the one
// document built per request.
func (h *Handler) serveAPI(c echo.Context) error {
	return h.serveDiscovery(c, func(r *http.Request) (*representations, error) {
		host := r.Host
		if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && host == "" {
			host = addr.String()
		}
		return encodeDiscovery(apiVersionsDoc(h.core, host))
	}, h.aggregated["/api"])
}

func (h *Handler) serveAPIs(c echo.Context) error {
	return h.serveDiscovery(c, static(h.legacy["/apis"]), h.aggregated["/apis"])
}

func static(doc *representations) func(*http.Request) (*representations, error) {
	return func(*http.Request) (*representations, error) { return doc, nil }
}

// serveDiscovery writes the legacy document or, when the client asks for it and there is
// one, the aggregated document, in the format the Accept header prefers.
func (h *Handler) serveDiscovery(c echo.Context, legacy func(*http.Request) (*representations, error), aggregated *representations) error {
	w, r := c.Response(), c.Request()
	w.Header().Add("Vary", "Accept")
	format, useAggregated, ok := negotiateDiscovery(r.Header.Get("Accept"), aggregated != nil)
	if !ok {
		return fail(c, status.NotAcceptable(mediaJSON, mediaYAML, mediaProtobuf))
	}
	var doc *representations
	params := ""
	if useAggregated {
		doc, params = aggregated, aggregatedParams
		// Like the real server: clients may cache aggregated discovery and revalidate it.
		w.Header().Set("Cache-Control", "public")
		w.Header().Set("ETag", doc.etag)
		if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, doc.etag) {
			w.WriteHeader(http.StatusNotModified)
			return nil
		}
	} else {
		var err error
		if doc, err = legacy(r); err != nil {
			return fmt.Errorf("discovery %s: %w", r.URL.Path, err)
		}
		setNoCache(w.Header())
	}
	body := doc.json
	contentType := mediaJSON
	switch format {
	case mediaYAML:
		body, contentType = doc.yaml, mediaYAML
	case mediaProtobuf:
		body, contentType = doc.protobuf, mediaProtobuf
	}
	w.Header().Set("Content-Type", contentType+params)
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
}

// discoveryFormats are the media types discovery documents are served as, in the order
// wildcards pick them.
var discoveryFormats = []string{mediaJSON, mediaYAML, mediaProtobuf}

// negotiateDiscovery picks the media type and the kind of document for an Accept header.
// A clause with g, v or as parameters asks for a conversion: only aggregated discovery
// v2 (offered only where aggregatedAvailable) is served; any other conversion, such as
// the v2beta1 the real server no longer serves either, is passed over for the next clause.
// ok is false when no clause can be served.
func negotiateDiscovery(accept string, aggregatedAvailable bool) (mediaType string, aggregated, ok bool) {
	for _, m := range mediatype.ParseAccept(accept) {
		for _, f := range discoveryFormats {
			typ, subtype, _ := strings.Cut(f, "/")
			if !m.Matches(typ, subtype) {
				continue
			}
			g, v, as := m.Params["g"], m.Params["v"], m.Params["as"]
			if g == "" && v == "" && as == "" {
				return f, false, true
			}
			// profile=nopeer asks to leave out peer servers' resources; there are none.
			if profile := m.Params["profile"]; aggregatedAvailable &&
				g == "apidiscovery.k8s.io" && v == "v2" && as == "APIGroupDiscoveryList" &&
				(profile == "" || profile == "nopeer") {
				return f, true, true
			}
			break
		}
	}
	return "", false, false
}

// fail answers err as a Status (web/api/status).
func fail(c echo.Context, err error) error {
	status.Write(c.Response(), c.Request(), err, status.Discovery)
	return nil
}

// openAPIFormat is one way an OpenAPI document can be asked for.
type openAPIFormat struct {
	typ, subtype string
	contentType  string // what is sent back
	protobuf     bool
}

func openAPIFormats(version string) []openAPIFormat {
	pb := "com.github.proto-openapi.spec." + version
	sent := "application/" + pb + ".v1.0+protobuf"
	return []openAPIFormat{
		{"application", "json", mediaJSON, false},
		{"application", pb + ".v1.0+protobuf", sent, true},
		// The spelling client-go's OpenAPISchema() asks for.
		{"application", pb + "@v1.0+protobuf", sent, true},
	}
}

// negotiateOpenAPI picks the representation of an OpenAPI document; ok is false when the
// Accept header allows none.
func negotiateOpenAPI(accept, version string) (openAPIFormat, bool) {
	for _, m := range mediatype.ParseAccept(accept) {
		for _, f := range openAPIFormats(version) {
			if m.Matches(f.typ, f.subtype) {
				return f, true
			}
		}
	}
	return openAPIFormat{}, false
}

// serveOpenAPIDocument writes doc in the negotiated format. http.ServeContent answers
// conditional requests (If-None-Match against the ETag, If-Modified-Since) and ranges.
func (h *Handler) serveOpenAPIDocument(c echo.Context, version string, doc *openAPIDocument, headers func(http.Header)) error {
	w, r := c.Response(), c.Request()
	w.Header().Add("Vary", "Accept")
	f, ok := negotiateOpenAPI(r.Header.Get("Accept"), version)
	if !ok {
		return fail(c, status.NotAcceptable(mediaJSON, openAPIFormats(version)[1].contentType))
	}
	body := doc.json
	if f.protobuf {
		body = doc.protobuf
	}
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("ETag", strconv.Quote(doc.hash))
	if headers != nil {
		headers(w.Header())
	} else {
		setNoCache(w.Header())
	}
	http.ServeContent(w, r, "", h.modTime, bytes.NewReader(body))
	return nil
}

// waitOpenAPI waits for the OpenAPI documents; if they could not be built, it writes a 500
// Status and returns nil.
func (h *Handler) waitOpenAPI(c echo.Context) (*openAPIDocuments, error) {
	docs, err := h.openAPI()
	if err != nil {
		return nil, fail(c, status.Internal(err.Error()))
	}
	return docs, nil
}

func (h *Handler) serveOpenAPIV2(c echo.Context) error {
	docs, err := h.waitOpenAPI(c)
	if docs == nil {
		return err
	}
	return h.serveOpenAPIDocument(c, "v2", docs.v2, nil)
}

func (h *Handler) serveOpenAPIV3Index(c echo.Context) error {
	w, r := c.Response(), c.Request()
	docs, err := h.waitOpenAPI(c)
	if docs == nil {
		return err
	}
	setNoCache(w.Header())
	w.Header().Set("Content-Type", mediaJSON)
	w.Header().Set("ETag", strconv.Quote(docs.v3Index.hash))
	http.ServeContent(w, r, "", h.modTime, bytes.NewReader(docs.v3Index.json))
	return nil
}

// serveOpenAPIV3 serves one group version's v3 document. The index links to it with a
// ?hash= of its content: a current hash makes the response cacheable for good, a stale
// one is redirected to the current URL, as the real server does.
func (h *Handler) serveOpenAPIV3(c echo.Context, key string) error {
	docs, err := h.waitOpenAPI(c)
	if docs == nil {
		return err
	}
	doc := docs.v3[key]
	hash := c.Request().URL.Query().Get("hash")
	if hash == "" {
		return h.serveOpenAPIDocument(c, "v3", doc, nil)
	}
	if hash != doc.hash {
		return c.Redirect(http.StatusMovedPermanently, v3URL(key, doc.hash))
	}
	return h.serveOpenAPIDocument(c, "v3", doc, func(hd http.Header) {
		hd.Set("Cache-Control", "public, immutable")
		hd.Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat))
	})
}
