package discovery

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/version"

	"github.com/leaselab/leaselab/web/api/kinds"
)

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// testKinds are the kinds leaselab serves, as the registry describes them.
func testKinds() []*kinds.Kind {
	return []*kinds.Kind{
		{Group: "coordination.k8s.io", Resource: "leases", Singular: "lease", Kind: "Lease", ListKind: "LeaseList",
			Namespaced: true, Versions: []string{"v1"}, StorageVersion: "v1", Verbs: allVerbs},
		{Group: "coordination.k8s.io", Resource: "leasecandidates", Singular: "leasecandidate", Kind: "LeaseCandidate", ListKind: "LeaseCandidateList",
			Namespaced: true, Versions: []string{"v1beta1", "v1alpha2"}, StorageVersion: "v1beta1", Verbs: allVerbs},
		{Group: "", Resource: "namespaces", Singular: "namespace", Kind: "Namespace", ListKind: "NamespaceList",
			Versions: []string{"v1"}, StorageVersion: "v1", Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
		{Group: "", Resource: "events", Singular: "event", Kind: "Event", ListKind: "EventList",
			Namespaced: true, Versions: []string{"v1"}, StorageVersion: "v1", Verbs: allVerbs},
	}
}

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(coordinationv1.AddToScheme(s))
	utilruntime.Must(coordinationv1beta1.AddToScheme(s))
	utilruntime.Must(coordinationv1alpha2.AddToScheme(s))
	return s
}

var testVersion = version.Info{
	Major: "1", Minor: "36", EmulationMajor: "1", EmulationMinor: "36", MinCompatibilityMajor: "1", MinCompatibilityMinor: "35",
	GitVersion: "v1.36.3-leaselab", GitCommit: "test", GitTreeState: "clean", BuildDate: "2026-01-01T00:00:00Z",
	GoVersion: "go1.26", Compiler: "gc", Platform: "linux/amd64",
}

var (
	handlerOnce sync.Once
	handler     *Handler
	handlerErr  error
)

// MustHandler returns the Handler for the test kinds, built once for the whole package.
func MustHandler(tb testing.TB) *Handler {
	tb.Helper()
	handlerOnce.Do(func() { handler, handlerErr = New(testKinds(), testScheme(), nil, testVersion) })
	if handlerErr != nil {
		tb.Fatalf("New: %v", handlerErr)
	}
	return handler
}

// testServer is an httptest server on 127.0.0.1 running echo with only this package's
// routes. It records the Accept header of every request by path.
type testServer struct {
	*httptest.Server
	mu      sync.Mutex
	accepts map[string][]string
}

func MustServer(tb testing.TB) *testServer {
	tb.Helper()
	h := MustHandler(tb)
	ts := &testServer{accepts: map[string][]string{}}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ts.mu.Lock()
			ts.accepts[c.Request().URL.Path] = append(ts.accepts[c.Request().URL.Path], c.Request().Header.Get("Accept"))
			ts.mu.Unlock()
			return next(c)
		}
	})
	h.Register(e)
	ts.Server = httptest.NewServer(e)
	tb.Cleanup(ts.Close)
	return ts
}

func (ts *testServer) acceptsFor(p string) []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.accepts[p]...)
}

// get performs a GET with the given headers (name, value pairs) and returns the response
// and its body.
func (ts *testServer) get(tb testing.TB, p string, headers ...string) (*http.Response, []byte) {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+p, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, body
}

func (ts *testServer) host() string {
	return strings.TrimPrefix(ts.URL, "http://")
}
