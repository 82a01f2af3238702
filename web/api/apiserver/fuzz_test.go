package apiserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/apiserver"
	"github.com/leaselab/leaselab/web/api/kinds"
)

// The fuzz targets drive the whole API handler (routing, decoding, validation, patching,
// selectors, continue tokens, resourceVersion parameters, the store) in-process. The property
// of every one: no panic, a well-formed answer, and no 5xx but those the real server answers
// too (documented500).

// fzAPI is the API handler on a SQLite store in a temporary directory.
type fzAPI struct{ h http.Handler }

func fzStart(tb testing.TB) *fzAPI {
	tb.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		tb.Fatal(err)
	}
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	ctx, cancel := context.WithCancel(context.Background())
	api, err := apiserver.New(logger, reg, db, apiserver.Options{Context: ctx})
	if err != nil {
		tb.Fatal(err)
	}
	e := echo.New()
	api.Register(e)
	tb.Cleanup(func() {
		cancel()
		db.Close()
	})
	a := &fzAPI{h: e}
	a.mustDo(tb, http.StatusCreated, http.MethodPost, fzLeases, "application/json", []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"seed","labels":{"app":"fuzz"}},"spec":{"holderIdentity":"a","leaseDurationSeconds":10}}`))
	for i := 0; i < 3; i++ {
		a.mustDo(tb, http.StatusCreated, http.MethodPost, fzLeases, "application/json", []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l`+strconv.Itoa(i)+`"}}`))
	}
	return a
}

const fzLeases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"

// do serves one request; a watch gets a context that ends after 10ms, so that it starts and ends.
func (a *fzAPI) do(method, target, contentType string, body []byte) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://leaselab"+target, rd)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "fuzz/v0")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if strings.Contains(target, "watch=") {
		ctx, cancel := context.WithTimeout(req.Context(), 10*time.Millisecond)
		defer cancel()
		req = req.WithContext(ctx)
	}
	rec := httptest.NewRecorder()
	func() {
		defer func() {
			if v := recover(); v != nil {
				// Reported as a 500 whose message carries the panic and its stack, so that the
				// property fails it with the input that caused it.
				rec = httptest.NewRecorder()
				rec.Code = http.StatusInternalServerError
				b, _ := json.Marshal(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Code: 500,
					Message: fmt.Sprintf("panic: %v\n%s", v, debug.Stack())})
				rec.Body.Write(b)
			}
		}()
		a.h.ServeHTTP(rec, req)
	}()
	return rec
}

func (a *fzAPI) mustDo(tb testing.TB, code int, method, target, contentType string, body []byte) []byte {
	tb.Helper()
	rec := a.do(method, target, contentType, body)
	if rec.Code != code {
		tb.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// fzCheck is the property every answer must have.
func fzCheck(t *testing.T, method, target string, body []byte, rec *httptest.ResponseRecorder) metav1.Status {
	t.Helper()
	var st metav1.Status
	if rec.Code < 200 || rec.Code > 599 {
		t.Fatalf("%s %s %q: status %d", method, target, body, rec.Code)
	}
	if rec.Code < 300 {
		return st
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != rec.Code {
		t.Fatalf("%s %s %q: %d with a body that is not its Status: %s", method, target, body, rec.Code, rec.Body)
	}
	// A watch whose context ended before it started streaming is a 504 (the harness's doing).
	watchTimeout := rec.Code == http.StatusGatewayTimeout && st.Reason == metav1.StatusReasonTimeout && strings.Contains(target, "watch=")
	if rec.Code >= 500 && !documented500(st.Message) && !watchTimeout {
		t.Fatalf("%s %s %q: %d %s", method, target, body, rec.Code, rec.Body)
	}
	return st
}

// documented500 says whether a 5xx is one the real server answers too: a create carrying a
// resourceVersion, an unparsable watch resourceVersion (500), a resourceVersion newer than the
// store's (504 "Too large resource version", with Retry-After), an apply patch off the schema.
func documented500(msg string) bool {
	return strings.HasPrefix(msg, "resourceVersion should not be set on objects to be created") ||
		strings.HasPrefix(msg, "resourceVersion: Invalid value") ||
		strings.HasPrefix(msg, "Timeout: Too large resource version") ||
		// An apply patch with a field the schema lacks: the real server's structured-merge
		// manager returns a plain error, which it answers as a 500 with the error's text.
		strings.HasPrefix(msg, "failed to create typed patch object")
}

// FuzzCreate decodes and validates any body as a Lease, a LeaseCandidate, an Event or a
// Namespace, as JSON or YAML, with each fieldValidation.
func FuzzCreate(f *testing.F) {
	a := fzStart(f)
	collections := []string{
		fzLeases,
		"/apis/coordination.k8s.io/v1beta1/namespaces/default/leasecandidates",
		"/apis/coordination.k8s.io/v1alpha2/namespaces/default/leasecandidates",
		"/api/v1/namespaces/default/events",
		"/api/v1/namespaces",
	}
	for _, s := range []struct {
		sel  uint8
		body string
	}{
		{0, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"x"},"spec":{"holderIdentity":"h","leaseDurationSeconds":15,"acquireTime":"2026-01-01T00:00:00.000000Z","renewTime":"2026-01-01T00:00:01.000000Z","leaseTransitions":1}}`},
		{0, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"generateName":"g-"},"spec":{"strategy":"OldestEmulationVersion","preferredHolder":"p"}}`},
		{0, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"x","resourceVersion":"5"}}`},
		{0, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"X_bad"},"spec":{"leaseDurationSeconds":-1,"leaseTransitions":-2}}`},
		{0, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"x","namespace":"other"}}`},
		{0 | 0x10, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"x"},"spec":{"unknown":1},"extra":true}`},
		{0 | 0x20, "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: y\nspec:\n  holderIdentity: h\n"},
		{0, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"x"`},
		{0, `[]`},
		{1, `{"apiVersion":"coordination.k8s.io/v1beta1","kind":"LeaseCandidate","metadata":{"name":"c"},"spec":{"leaseName":"l","binaryVersion":"1.33.0","emulationVersion":"1.33.0","strategy":"OldestEmulationVersion","renewTime":"2026-01-01T00:00:00.000000Z"}}`},
		{2, `{"apiVersion":"coordination.k8s.io/v1alpha2","kind":"LeaseCandidate","metadata":{"name":"c2"},"spec":{"leaseName":"l","binaryVersion":"x.y","strategy":""}}`},
		{3, `{"apiVersion":"v1","kind":"Event","metadata":{"generateName":"e."},"involvedObject":{"kind":"Lease","namespace":"default","name":"l"},"reason":"LeaderElection","message":"m","type":"Normal","count":1}`},
		{4, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns1"}}`},
	} {
		f.Add(s.sel, []byte(s.body))
	}
	validations := []string{"", "Strict", "Warn", "Ignore"}
	f.Fuzz(func(t *testing.T, sel uint8, body []byte) {
		target := collections[int(sel&0x0f)%len(collections)]
		q := url.Values{}
		if v := validations[int(sel>>4)&3]; v != "" {
			q.Set("fieldValidation", v)
		}
		if sel&0x40 != 0 {
			q.Set("dryRun", "All")
		}
		if len(q) > 0 {
			target += "?" + q.Encode()
		}
		ct := "application/json"
		if sel&0x20 != 0 {
			ct = "application/yaml"
		}
		rec := a.do(http.MethodPost, target, ct, body)
		fzCheck(t, http.MethodPost, target, body, rec)
		if rec.Code == http.StatusCreated && sel&0x40 == 0 {
			// Keep the store small: delete what was created.
			var m metav1.PartialObjectMetadata
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || m.Name == "" {
				t.Fatalf("201 without a name: %s", rec.Body)
			}
			path := strings.SplitN(target, "?", 2)[0] + "/" + url.PathEscape(m.Name)
			fzCheck(t, http.MethodDelete, path, nil, a.do(http.MethodDelete, path, "", nil))
		}
	})
}

// FuzzPatch applies any patch of each type (JSON, merge, strategic merge, apply) to a lease.
func FuzzPatch(f *testing.F) {
	a := fzStart(f)
	types := []string{
		"application/json-patch+json",
		"application/merge-patch+json",
		"application/strategic-merge-patch+json",
		"application/apply-patch+yaml",
	}
	for _, s := range []struct {
		typ   uint8
		patch string
	}{
		{0, `[{"op":"replace","path":"/spec/holderIdentity","value":"b"}]`},
		{0, `[{"op":"test","path":"/spec/holderIdentity","value":"nobody"}]`},
		{0, `[{"op":"add","path":"/metadata/labels/x","value":"y"},{"op":"remove","path":"/spec"}]`},
		{0, `[{"op":"move","from":"/spec","path":"/spec/x"}]`},
		{0, `[{"op":"copy","from":"/metadata","path":"/metadata/annotations/a"}]`},
		{1, `{"spec":{"holderIdentity":"c","leaseDurationSeconds":0}}`},
		{1, `{"metadata":{"name":"other","resourceVersion":"1"}}`},
		{1, `{"spec":null}`},
		{2, `{"metadata":{"labels":{"$patch":"delete"}}}`},
		{2, `{"spec":{"$retainKeys":["holderIdentity"],"holderIdentity":"d"}}`},
		{3, "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: seed\nspec:\n  holderIdentity: e\n"},
		{3, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"seed","managedFields":[{"manager":"x"}]}}`},
		{3 | 0x10, "apiVersion: v1\nkind: Lease\n"},
	} {
		f.Add(s.typ, []byte(s.patch))
	}
	f.Fuzz(func(t *testing.T, typ uint8, patch []byte) {
		ct := types[int(typ&0x0f)%len(types)]
		q := url.Values{}
		if ct == "application/apply-patch+yaml" {
			q.Set("fieldManager", "fuzz")
			if typ&0x10 != 0 {
				q.Set("force", "true")
			}
		}
		if typ&0x20 != 0 {
			q.Set("dryRun", "All")
		}
		target := fzLeases + "/seed?" + q.Encode()
		if typ&0x40 != 0 {
			// A patch that may create: the object does not exist.
			target = fzLeases + "/absent?" + q.Encode()
		}
		rec := a.do(http.MethodPatch, target, ct, patch)
		fzCheck(t, http.MethodPatch, target, patch, rec)
		if rec.Code < 300 && typ&0x40 != 0 && typ&0x20 == 0 {
			path := fzLeases + "/absent"
			fzCheck(t, http.MethodDelete, path, nil, a.do(http.MethodDelete, path, "", nil))
		}
	})
}

// FuzzListQuery lists and watches with any label and field selectors, continue token,
// resourceVersion, resourceVersionMatch and limit.
func FuzzListQuery(f *testing.F) {
	a := fzStart(f)
	var page metav1.List
	_ = json.Unmarshal(a.mustDo(f, 200, http.MethodGet, fzLeases+"?limit=1", "", nil), &page)
	valid := page.Continue
	f.Add("app=fuzz", "", "", "", "", int64(0), false)
	f.Add("app in (fuzz,x),!missing,k notin (v)", "metadata.name=seed", "", "", "", int64(2), false)
	f.Add("", "metadata.name!=seed,metadata.namespace==default", valid, "", "", int64(1), false)
	f.Add("a=b=c", "spec.holderIdentity=a", "", "0", "NotOlderThan", int64(-1), false)
	f.Add("", "", "", "1", "Exact", int64(0), false)
	f.Add("", "", "", "999999", "", int64(0), true)
	f.Add("x", "metadata.name=seed", "", "abc", "", int64(0), true)
	f.Add("", "", "", "0", "", int64(0), true)
	f.Fuzz(func(t *testing.T, label, field, cont, rv, rvMatch string, limit int64, watch bool) {
		q := url.Values{}
		for k, v := range map[string]string{"labelSelector": label, "fieldSelector": field, "continue": cont, "resourceVersion": rv, "resourceVersionMatch": rvMatch} {
			if v != "" {
				q.Set(k, v)
			}
		}
		if limit != 0 {
			q.Set("limit", strconv.FormatInt(limit, 10))
		}
		if watch {
			q.Set("watch", "true")
		}
		target := fzLeases + "?" + q.Encode()
		rec := a.do(http.MethodGet, target, "", nil)
		fzCheck(t, http.MethodGet, target, nil, rec)
		// The same query across namespaces.
		target = "/apis/coordination.k8s.io/v1/leases?" + q.Encode()
		fzCheck(t, http.MethodGet, target, nil, a.do(http.MethodGet, target, "", nil))
	})
}

// FuzzContinue pages with any continue token: a valid one lists the next page, a tampered one
// is 400 (or 410 when it names a compacted revision), never a panic or a 5xx.
func FuzzContinue(f *testing.F) {
	a := fzStart(f)
	var page metav1.List
	_ = json.Unmarshal(a.mustDo(f, 200, http.MethodGet, fzLeases+"?limit=1", "", nil), &page)
	valid := page.Continue
	raw, _ := base64.RawURLEncoding.DecodeString(valid)
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add(valid + "x")
	f.Add(base64.RawURLEncoding.EncodeToString(bytes.Replace(raw, []byte(`"rv":`), []byte(`"rv":-`), 1)))
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":1,"start":"../../x\u0000"}`)))
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":99999999999,"start":"default/l1"}`)))
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v2","rv":1,"start":"a"}`)))
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":1,"start":"default/"}`)))
	f.Add(string(raw))
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		for _, target := range []string{
			fzLeases + "?limit=1&continue=" + url.QueryEscape(token),
			"/apis/coordination.k8s.io/v1/leases?limit=2&continue=" + url.QueryEscape(token),
		} {
			rec := a.do(http.MethodGet, target, "", nil)
			fzCheck(t, http.MethodGet, target, nil, rec)
			if rec.Code != 200 && rec.Code != 400 && rec.Code != 410 {
				t.Fatalf("continue %q: %d %s", token, rec.Code, rec.Body)
			}
		}
	})
}

// FuzzResourceVersion passes any resourceVersion to get, list, watch, update and delete
// preconditions.
func FuzzResourceVersion(f *testing.F) {
	a := fzStart(f)
	for _, rv := range []string{"", "0", "1", "5", "-1", "abc", "99999999999999999999", "1e3", " 1", "0x10"} {
		for verb := uint8(0); verb < 6; verb++ {
			f.Add(verb, rv)
		}
	}
	f.Fuzz(func(t *testing.T, verb uint8, rv string) {
		var method, target, ct string
		var body []byte
		switch verb % 6 {
		case 0:
			method, target = http.MethodGet, fzLeases+"/seed?resourceVersion="+url.QueryEscape(rv)
		case 1:
			method, target = http.MethodGet, fzLeases+"?resourceVersionMatch=Exact&resourceVersion="+url.QueryEscape(rv)
		case 2:
			method, target = http.MethodGet, fzLeases+"?resourceVersionMatch=NotOlderThan&limit=1&resourceVersion="+url.QueryEscape(rv)
		case 3:
			method, target = http.MethodGet, fzLeases+"?watch=true&resourceVersion="+url.QueryEscape(rv)
		case 4:
			method, target, ct = http.MethodPut, fzLeases+"/seed?dryRun=All", "application/json"
			body, _ = json.Marshal(map[string]any{
				"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
				"metadata": map[string]any{"name": "seed", "resourceVersion": rv},
			})
		case 5:
			method, target, ct = http.MethodDelete, fzLeases+"/seed?dryRun=All", "application/json"
			body, _ = json.Marshal(map[string]any{"preconditions": map[string]any{"resourceVersion": rv}})
		}
		fzCheck(t, method, target, body, a.do(method, target, ct, body))
	})
}
