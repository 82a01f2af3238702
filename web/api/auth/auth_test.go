package auth

import (
	"context"
	"encoding/json"
	"k8s.io/client-go/tools/clientcmd"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/auth/authtest"
	"github.com/leaselab/leaselab/web/api/request"
)

func TestParseTokenFile(t *testing.T) {
	in := `t1,alice,uid-1,"leaselab:instructors,dev"
t2,Bob,uid-2
,skipped,uid-3
t4,carol,uid-4,"g1,g2,g3",extra
t2,bob2,uid-5,
`
	got, err := ParseTokenFile(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Token{
		{"t1", User{Name: "alice", UID: "uid-1", Groups: []string{"leaselab:instructors", "dev"}, Role: RoleInstructor}},
		{"t2", User{Name: "bob2", UID: "uid-5", Role: RoleParticipant, Namespace: "bob2"}},
		{"t4", User{Name: "carol", UID: "uid-4", Groups: []string{"g1", "g2", "g3"}, Role: RoleParticipant, Namespace: "carol"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	for name, bad := range map[string]string{
		"two columns":        "t1,alice\n",
		"unterminated quote": "t1,alice,1,\"g1\n",
		"bad namespace name": "t1,Alice Smith,1\n",
	} {
		if _, err := ParseTokenFile(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestBearerToken(t *testing.T) {
	for h, want := range map[string]string{
		"Bearer abc":       "abc",
		"bearer abc":       "abc",
		"  Bearer abc  ":   "abc",
		"Bearer abc def":   "abc",
		"Bearer":           "",
		"Bearer  abc":      "",
		"Basic Zm9vOmJhcg": "",
		"":                 "",
	} {
		got, ok := BearerToken(h)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v", h, got, ok)
		}
	}
}

func TestWebSocketToken(t *testing.T) {
	tok := authtest.EncodeWebSocketToken("s3cret")
	for _, c := range []struct {
		headers  []string
		token    string
		filtered []string
		ok       bool
		err      string
	}{
		{headers: []string{tok + ", leaselab.watch"}, token: "s3cret", filtered: []string{"leaselab.watch"}, ok: true},
		{headers: []string{"a", tok}, token: "s3cret", filtered: []string{"a"}, ok: true},
		{headers: []string{"a, b"}, filtered: []string{"a", "b"}},
		{headers: nil},
		{headers: []string{tok}, err: "missing additional subprotocol"},
		{headers: []string{tok + "," + tok + ",a"}, err: "multiple"},
		{headers: []string{bearerProtocolPrefix + "!!!,a"}, err: "encoding"},
		{headers: []string{bearerProtocolPrefix + "czNjcmV0PQ==,a"}, err: "encoding"}, // padded
		{headers: []string{bearerProtocolPrefix + ",a"}, err: "invalid"},
		{headers: []string{bearerProtocolPrefix + "_w,a"}, err: "invalid"}, // not UTF-8
	} {
		token, filtered, ok, err := WebSocketToken(c.headers)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.headers, err, c.err)
			}
			continue
		}
		if err != nil || token != c.token || ok != c.ok || !reflect.DeepEqual(filtered, c.filtered) {
			t.Errorf("%q: %q %q %v %v", c.headers, token, filtered, ok, err)
		}
	}
}

// TestStatusBodies: the 401 and 403 bodies are byte for byte those of the recorded samples,
// with the newline the real server's JSON encoder ends them with.
func TestStatusBodies(t *testing.T) {
	body := func(se error) string {
		e := echo.New()
		rec := httptest.NewRecorder()
		c := e.NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
		if err := writeErr(c, se); err != nil {
			t.Fatal(err)
		}
		return rec.Body.String()
	}
	list := request.Info{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: "default", Verb: "list"}
	for got, want := range map[string]string{
		// auth-bad-token-401.http
		body(errUnauthorized()): `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n",
		// authz-forbidden-403.http
		body(Forbidden(User{Name: "peer-nobody"}, list, "")): `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io is forbidden: User \"peer-nobody\" cannot list resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"default\"","reason":"Forbidden","details":{"group":"coordination.k8s.io","kind":"leases"},"code":403}` + "\n",
		// the reference's example with a name (section 8)
		body(Forbidden(User{Name: "alice"}, request.Info{Group: "coordination.k8s.io", Resource: "leases", Namespace: "default", Name: "demo", Verb: "get"}, "")): `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"demo\" is forbidden: User \"alice\" cannot get resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"default\"","reason":"Forbidden","details":{"name":"demo","group":"coordination.k8s.io","kind":"leases"},"code":403}` + "\n",
		body(Forbidden(User{Name: "p"}, request.Info{Resource: "namespaces", Name: "x", Verb: "delete"}, "")):                                                     `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \"x\" is forbidden: User \"p\" cannot delete resource \"namespaces\" in API group \"\" at the cluster scope","reason":"Forbidden","details":{"name":"x","kind":"namespaces"},"code":403}` + "\n",
	} {
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

func TestAuthorize(t *testing.T) {
	p := User{Name: "participant-01", Role: RoleParticipant, Namespace: "participant-01"}
	inst := User{Name: "instructor", Role: RoleInstructor}
	for _, c := range []struct {
		u        User
		verb, ns string
		resource string
		allowed  bool
	}{
		{p, "create", "participant-01", "leases", true},
		{p, "update", "arena", "leases", true},
		{p, "delete", "participant-02", "leases", false},
		{p, "patch", "default", "leases", false},
		{p, "deletecollection", "participant-02", "events", false},
		{p, "get", "participant-02", "leases", true},
		{p, "list", "", "leases", true},
		{p, "watch", "", "namespaces", true},
		{p, "create", "", "namespaces", false},
		{inst, "delete", "participant-02", "leases", true},
		{inst, "create", "", "namespaces", true},
	} {
		err := Authorize(c.u, request.Info{Verb: c.verb, Namespace: c.ns, Resource: c.resource})
		if (err == nil) != c.allowed {
			t.Errorf("%s %s %s in %q: %v", c.u.Name, c.verb, c.resource, c.ns, err)
		}
	}
}

// countingStore answers List with a fixed count, for the quota, and keeps browser sessions.
type countingStore struct {
	store.Interface
	n int64
}

// kept holds what the tests' stores keep (browser sessions, whose keys are random).
var kept sync.Map

func (s countingStore) Create(ctx context.Context, key store.Key, value []byte) (store.Object, error) {
	if _, loaded := kept.LoadOrStore(key, value); loaded {
		return store.Object{}, store.ErrExists
	}
	return store.Object{Key: key, Revision: 1, Value: value}, nil
}

func (s countingStore) Get(ctx context.Context, key store.Key) (store.Object, error) {
	v, ok := kept.Load(key)
	if !ok {
		return store.Object{}, store.ErrNotFound
	}
	return store.Object{Key: key, Revision: 1, Value: v.([]byte)}, nil
}

func (s countingStore) Delete(ctx context.Context, key store.Key, expect int64) (store.Object, error) {
	if _, ok := kept.LoadAndDelete(key); !ok {
		return store.Object{}, store.ErrNotFound
	}
	return store.Object{Key: key}, nil
}

func (s countingStore) List(ctx context.Context, opts store.ListOptions) (store.ListResult, error) {
	if s.n == 0 {
		return store.ListResult{}, nil
	}
	return store.ListResult{Objects: []store.Object{{}}, Remaining: s.n - 1}, nil
}

// TestMiddleware: 401 without credentials, 429 with Retry-After past the bucket (per identity),
// and the user in the handler's context.
func TestMiddleware(t *testing.T) {
	now := time.Unix(1000, 0)
	a := New(nil, countingStore{n: 5}, Options{
		Tokens: []Token{
			{"tp", User{Name: "p1", Role: RoleParticipant, Namespace: "p1"}},
			{"tq", User{Name: "p2", Role: RoleParticipant, Namespace: "p2"}},
		},
		RateQPS: 1, RateBurst: 2, MaxObjectsPerNamespace: 5,
		Now: func() time.Time { return now },
	})
	e := echo.New()
	e.Use(a.Middleware)
	var seen User
	e.Any("/*", func(c echo.Context) error {
		seen, _ = UserFrom(c.Request().Context())
		return c.String(200, "ok")
	})
	do := func(method, path, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	const leases = "/apis/coordination.k8s.io/v1/namespaces/p1/leases"
	if rec := do("GET", leases, ""); rec.Code != 401 {
		t.Errorf("no token: %d", rec.Code)
	}
	if rec := do("GET", "/healthz", ""); rec.Code != 200 {
		t.Errorf("healthz: %d", rec.Code)
	}
	if rec := do("GET", leases, "tp"); rec.Code != 200 || seen.Name != "p1" {
		t.Errorf("p1: %d %+v", rec.Code, seen)
	}
	do("GET", leases, "tp")
	rec := do("GET", leases, "tp")
	var st struct {
		Reason  string
		Details struct{ RetryAfterSeconds int }
	}
	json.Unmarshal(rec.Body.Bytes(), &st)
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "1" || st.Reason != "TooManyRequests" || st.Details.RetryAfterSeconds != 1 {
		t.Errorf("p1 past its burst: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if rec := do("GET", leases, "tq"); rec.Code != 200 {
		t.Errorf("p2 while p1 is limited: %d", rec.Code)
	}

	// The server's own code calling itself in process (web/api/inprocess) is trusted as the user
	// its context carries, without a token and without counting against p1's bucket (its own
	// request was counted), and authorized as that user. A user in the context without the
	// in-process mark is not trusted.
	inProcess := func(method, path string, u User, mark bool) *httptest.ResponseRecorder {
		ctx := WithUser(context.Background(), u)
		if mark {
			ctx = request.WithInProcess(ctx)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, method, path, nil))
		return rec
	}
	p1 := User{Name: "p1", Role: RoleParticipant, Namespace: "p1"}
	if rec := inProcess("POST", leases, p1, true); rec.Code != 200 || seen.Name != "p1" {
		t.Errorf("p1 in process, limited outside: %d %+v", rec.Code, seen)
	}
	if rec := inProcess("POST", "/apis/coordination.k8s.io/v1/namespaces/p2/leases", p1, true); rec.Code != 403 || !strings.Contains(rec.Body.String(), "cannot create") {
		t.Errorf("p1 in process writes in p2's namespace: %d %s", rec.Code, rec.Body)
	}
	if rec := inProcess("GET", leases, p1, false); rec.Code != 401 {
		t.Errorf("a user in the context without the in-process mark: %d", rec.Code)
	}
}

// TestAdmitCreate: a participant's create past the quota is refused with ResourceQuota's
// message; the instructor, the server's own clients and requests without a user are not.
func TestAdmitCreate(t *testing.T) {
	a := New(nil, countingStore{n: 5}, Options{MaxObjectsPerNamespace: 5})
	leases := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	p1 := WithUser(context.Background(), User{Name: "p1", Role: RoleParticipant, Namespace: "p1"})
	_, err := a.AdmitCreate(p1, leases, "p1", "x")
	want := "leases.coordination.k8s.io \"x\" is forbidden: exceeded quota: leaselab-objects, requested: count/leases.coordination.k8s.io=1, used: count/leases.coordination.k8s.io=5, limited: count/leases.coordination.k8s.io=5"
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("participant over quota: %v\nwant %s", err, want)
	}
	for name, ctx := range map[string]context.Context{
		"instructor": WithUser(context.Background(), User{Name: "instructor", Role: RoleInstructor}),
		"internal":   WithUser(context.Background(), User{Name: "system:leaselab:election", Role: RoleParticipant}),
		"no user":    context.Background(),
	} {
		done, err := a.AdmitCreate(ctx, leases, "p1", "x")
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		done()
	}
	under := New(nil, countingStore{n: 4}, Options{MaxObjectsPerNamespace: 5})
	done, err := under.AdmitCreate(p1, leases, "p1", "x")
	if err != nil {
		t.Errorf("participant under quota: %v", err)
	}
	done()
	// done released the namespace's lock: the next create is admitted too.
	done, err = under.AdmitCreate(p1, leases, "p1", "y")
	if err != nil {
		t.Errorf("participant under quota, again: %v", err)
	}
	done()
}

// TestKubeconfigForPlainHTTP: a kubeconfig for a plain-http server says insecure-skip-tls-verify
// (client-node refuses http without it; there is nothing to verify), and one with a CA does not.
func TestKubeconfigForPlainHTTP(t *testing.T) {
	b, err := Kubeconfig("http://127.0.0.1:8080", "default", "", "leaselab", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Clusters["leaselab"].InsecureSkipTLSVerify {
		t.Errorf("http kubeconfig:\n%s", b)
	}
	// client-go takes it as it is.
	if _, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig(); err != nil {
		t.Errorf("client-go refuses it: %v", err)
	}
	b, err = Kubeconfig("https://127.0.0.1:8443", "default", "t", "leaselab", []byte("-----BEGIN CERTIFICATE-----\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := clientcmd.Load(b); err != nil || cfg.Clusters["leaselab"].InsecureSkipTLSVerify {
		t.Errorf("https kubeconfig with a CA:\n%s (%v)", b, err)
	}
}
