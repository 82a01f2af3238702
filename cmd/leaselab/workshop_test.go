package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/leaselab/leaselab/cmd/internal/access"
	"github.com/leaselab/leaselab/cmd/internal/tlscert"
	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/auth"
)

// workshop is a test server in workshop mode and the tokens of its identities by user name.
type workshop struct {
	*testServer
	tokens map[string]string
}

// mustStartWorkshop starts leaselab with --workshop n (TLS on, self-signed) and reads the
// identities it stored.
func mustStartWorkshop(tb testing.TB, n int, db string, configure func(*serveConfig)) *workshop {
	tb.Helper()
	ts := mustStartServerWith(tb, db, func(c *serveConfig) {
		c.access = access.Config{Workshop: n, TLS: "auto", RateQPS: 1000, RateBurst: 1000, MaxWatchers: 50, MaxObjects: 500}
		if configure != nil {
			configure(c)
		}
	})
	toks, err := auth.LoadWorkshop(context.Background(), ts.db)
	if err != nil {
		tb.Fatal(err)
	}
	w := &workshop{testServer: ts, tokens: map[string]string{}}
	for _, t := range toks {
		w.tokens[t.User.Name] = t.Token
	}
	return w
}

// restConfig is a client configuration for one identity, verifying the server's certificate.
func (w *workshop) restConfig(user string) *rest.Config {
	return &rest.Config{
		Host:            w.URL,
		BearerToken:     w.tokens[user],
		QPS:             -1,
		UserAgent:       "leaselab-test/" + user,
		TLSClientConfig: rest.TLSClientConfig{CAData: w.access.CAData},
	}
}

func (w *workshop) client(tb testing.TB, user string) kubernetes.Interface {
	tb.Helper()
	c, err := kubernetes.NewForConfig(w.restConfig(user))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// httpClient is an HTTP client that trusts the server's certificate, keeps cookies and does
// not follow redirects.
func (w *workshop) httpClient(tb testing.TB) *http.Client {
	tb.Helper()
	tr, err := rest.TransportFor(&rest.Config{Host: w.URL, TLSClientConfig: rest.TLSClientConfig{CAData: w.access.CAData}})
	if err != nil {
		tb.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	return &http.Client{Transport: tr, Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// postJoin posts user's token to /join as the join page's form does, with header added (by
// default the Origin and Sec-Fetch-Site a browser sends from the page).
func (w *workshop) postJoin(tb testing.TB, hc *http.Client, user string, header map[string]string) *http.Response {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.URL+"/join", strings.NewReader(url.Values{"token": {w.tokens[user]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if header == nil {
		header = map[string]string{"Origin": w.URL, "Sec-Fetch-Site": "same-origin"}
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// join signs hc in as user, as the join page's button does.
func (w *workshop) join(tb testing.TB, hc *http.Client, user string) {
	tb.Helper()
	if resp := w.postJoin(tb, hc, user, nil); resp.StatusCode != http.StatusSeeOther {
		tb.Fatalf("join as %s: %d", user, resp.StatusCode)
	}
}

func namedLease(name string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// TestWorkshopAuthorization: a participant writes in its own namespace and in arena, reads
// everywhere, and gets the RBAC-worded 403 elsewhere; the instructor does everything.
func TestWorkshopAuthorization(t *testing.T) {
	w := mustStartWorkshop(t, 2, "", nil)
	ctx := ctxT(t, 30*time.Second)
	p1, p2, inst := w.client(t, "participant-01"), w.client(t, "participant-02"), w.client(t, "instructor")

	for _, ns := range []string{"participant-01", "arena"} {
		if _, err := p1.CoordinationV1().Leases(ns).Create(ctx, namedLease("mine"), metav1.CreateOptions{}); err != nil {
			t.Fatalf("participant-01 create in %s: %v", ns, err)
		}
	}
	_, err := p1.CoordinationV1().Leases("participant-02").Create(ctx, namedLease("theirs"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("participant-01 create in participant-02: got %v, want 403", err)
	}
	want := `leases.coordination.k8s.io is forbidden: User "participant-01" cannot create resource "leases" in API group "coordination.k8s.io" in the namespace "participant-02": participants write only in their namespace "participant-01" and in "arena"`
	if err.Error() != want {
		t.Errorf("403 message:\n got %s\nwant %s", err, want)
	}
	// Writes of every kind are refused there, reads are not.
	if _, err := p2.CoordinationV1().Leases("participant-02").Create(ctx, namedLease("theirs"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := p1.CoordinationV1().Leases("participant-02").Delete(ctx, "theirs", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("delete in another's namespace: %v, want 403", err)
	}
	if _, err := p1.CoordinationV1().Leases("participant-02").Get(ctx, "theirs", metav1.GetOptions{}); err != nil {
		t.Errorf("participant reads another namespace: %v", err)
	}
	if l, err := p1.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 3 {
		t.Errorf("participant lists all namespaces: %v, %d items", err, len(l.Items))
	}
	if err := p1.CoreV1().Namespaces().Delete(ctx, "participant-01", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("participant deletes a namespace: %v, want 403", err)
	}
	if _, err := p1.CoreV1().Events("participant-01").Create(ctx, leaseEvent("participant-01", "mine"), metav1.CreateOptions{}); err != nil {
		t.Errorf("participant records an event in its namespace: %v", err)
	}
	// The instructor writes everywhere.
	if _, err := inst.CoordinationV1().Leases("participant-02").Create(ctx, namedLease("by-instructor"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := inst.CoordinationV1().Leases("participant-01").Delete(ctx, "mine", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := inst.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "extra"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestUnauthenticated: no token or a bad one is 401 with the real server's exact body.
func TestUnauthenticated(t *testing.T) {
	w := mustStartWorkshop(t, 1, "", nil)
	hc := w.httpClient(t)
	const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"
	for _, authz := range []string{"", "Bearer not-a-valid-token", "Basic Zm9vOmJhcg=="} {
		req, _ := http.NewRequest(http.MethodGet, w.URL+"/apis/coordination.k8s.io/v1/namespaces/default/leases", nil)
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || string(b) != want || resp.Header.Get("WWW-Authenticate") != "" {
			t.Errorf("Authorization %q: %d %s", authz, resp.StatusCode, b)
		}
	}
	// Health checks and static assets stay public; the dashboard asks for a join link.
	for path, code := range map[string]int{"/healthz": 200, "/readyz": 200, "/": 401, "/workshop": 401} {
		resp, err := hc.Get(w.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, code)
		}
	}
	// client-go reports it as kubectl would.
	c, _ := kubernetes.NewForConfig(&rest.Config{Host: w.URL, BearerToken: "wrong", TLSClientConfig: rest.TLSClientConfig{CAData: w.access.CAData}})
	if _, err := c.CoordinationV1().Leases("arena").List(context.Background(), metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("client-go with a bad token: %v", err)
	}
}

// TestJoinLinkSession: the join link asks for a click, whose same-origin post sets an HttpOnly,
// SameSite=Strict, Secure cookie (a cross-site post sets none); the browser then uses the dashboard, the API and its forms as the participant; cross-site form
// posts are refused; only the instructor sees the workshop page.
func TestJoinLinkSession(t *testing.T) {
	w := mustStartWorkshop(t, 2, "", nil)
	hc := w.httpClient(t)
	// The link itself only asks: loading it (an image, a link another page shows) signs no one in.
	resp, err := hc.Get(w.URL + "/join?token=" + url.QueryEscape(w.tokens["participant-01"]))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 0 || !bytes.Contains(page, []byte(`data-testid="join-button"`)) ||
		resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET join link: %d %v %s", resp.StatusCode, resp.Header, page)
	}
	// Another site's form posting the token (login CSRF) is refused.
	resp = w.postJoin(t, hc, "participant-01", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
	if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Fatalf("cross-site join: %d %v", resp.StatusCode, resp.Header)
	}
	// The page's Join button.
	resp = w.postJoin(t, hc, "participant-01", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?namespace=participant-01" {
		t.Fatalf("join: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	sc := resp.Header.Get("Set-Cookie")
	for _, attr := range []string{auth.SessionCookie + "=", "HttpOnly", "SameSite=Strict", "Secure", "Path=/"} {
		if !strings.Contains(sc, attr) {
			t.Errorf("session cookie %q lacks %s", sc, attr)
		}
	}
	get := func(path string) int {
		t.Helper()
		resp, err := hc.Get(w.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/?namespace=participant-01"); code != 200 {
		t.Errorf("dashboard with the session: %d", code)
	}
	if code := get("/apis/coordination.k8s.io/v1/namespaces/participant-02/leases"); code != 200 {
		t.Errorf("API read with the session: %d", code)
	}
	if code := get("/workshop"); code != http.StatusForbidden {
		t.Errorf("participant opens /workshop: %d", code)
	}

	post := func(path string, form url.Values, header map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, w.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	same := map[string]string{"Origin": w.URL, "Sec-Fetch-Site": "same-origin"}
	if code, body := post("/ui/leases", url.Values{"namespace": {"participant-01"}, "name": {"from-form"}}, same); code != http.StatusSeeOther {
		t.Errorf("form post in own namespace: %d %s", code, body)
	}
	// A refusal is told on the page, in the form, as a bad name is.
	if code, body := post("/ui/leases", url.Values{"namespace": {"participant-02"}, "name": {"from-form"}}, same); code != http.StatusForbidden ||
		!strings.Contains(body, `data-testid="form-errors"`) || !strings.Contains(body, "cannot create") {
		t.Errorf("form post in another's namespace: %d %s", code, body)
	}
	if code, body := post("/ui/leases/participant-02/from-form/delete", nil, same); code != http.StatusForbidden ||
		!strings.Contains(body, "<html") || !strings.Contains(body, "cannot delete") {
		t.Errorf("delete in another's namespace: %d %s", code, body)
	}
	// A form another site makes the browser post (CSRF): refused, with or without Origin.
	for _, h := range []map[string]string{
		{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Origin": "https://evil.example"},
	} {
		if code, _ := post("/ui/leases", url.Values{"namespace": {"participant-01"}, "name": {"csrf"}}, h); code != http.StatusForbidden {
			t.Errorf("cross-site form post %v: %d, want 403", h, code)
		}
		if code, _ := post("/apis/coordination.k8s.io/v1/namespaces/participant-01/leases", nil, h); code != http.StatusForbidden {
			t.Errorf("cross-site API post riding the cookie %v: %d, want 403", h, code)
		}
	}
	if _, err := w.client(t, "instructor").CoordinationV1().Leases("participant-01").Get(context.Background(), "csrf", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the CSRF lease exists: %v", err)
	}

	// The instructor's page lists every join link, QR code and kubeconfig.
	ic := w.httpClient(t)
	w.join(t, ic, "instructor")
	resp, err = ic.Get(w.URL + "/workshop")
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("/workshop: %d %v", resp.StatusCode, resp.Header)
	}
	for _, name := range []string{"instructor", "participant-01", "participant-02"} {
		link := w.URL + "/join?token=" + w.tokens[name]
		if !bytes.Contains(page, []byte(`href="`+link+`"`)) {
			t.Errorf("/workshop lacks the join link of %s", name)
		}
		resp, err := ic.Get(w.URL + "/workshop/qr/" + name)
		if err != nil {
			t.Fatal(err)
		}
		png, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("QR code of %s: %d", name, resp.StatusCode)
		}
	}
	if n := bytes.Count(page, []byte(`data-testid="identity"`)); n != 3 || bytes.Contains(page, []byte("system:leaselab")) {
		t.Errorf("/workshop lists %d identities (want 3, the server's own not among them)", n)
	}
	resp, err = ic.Get(w.URL + "/workshop/kubeconfig/participant-02")
	if err != nil {
		t.Fatal(err)
	}
	kc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := kubernetes.NewForConfig(cfg)
	if _, err := c.CoordinationV1().Leases("participant-02").Create(context.Background(), namedLease("via-download"), metav1.CreateOptions{}); err != nil {
		t.Errorf("downloaded kubeconfig: %v", err)
	}
}

// TestOpenServerRefusedOffLoopback: without tokens, only a loopback address is served.
func TestOpenServerRefusedOffLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		cfg := serveConfig{addr: addr, db: filepath.Join(t.TempDir(), "db"), compactKeep: 10, compactMaxAge: time.Hour}
		rs, err := startServer(context.Background(), cfg, discardLogger())
		if err == nil {
			rs.Close()
			t.Fatalf("%s: served without tokens", addr)
		}
		for _, hint := range []string{"--workshop", "--token-file", "127.0.0.1"} {
			if !strings.Contains(err.Error(), hint) {
				t.Errorf("%s: the refusal %q does not mention %s", addr, err, hint)
			}
		}
	}
	// With a token file, the same address is served.
	tf := filepath.Join(t.TempDir(), "tokens.csv")
	os.WriteFile(tf, []byte("t0ken,alice,1,\"leaselab:instructors\"\n"), 0o600)
	rs, err := startServer(context.Background(), serveConfig{addr: "0.0.0.0:0", db: filepath.Join(t.TempDir(), "db"), compactKeep: 10, compactMaxAge: time.Hour,
		access: access.Config{TokenFile: tf, TLS: "on"}}, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	rs.Close()
}

// TestTLSKubeconfig: with TLS on, the kubeconfig `leaselab kubeconfig --token` prints carries
// the CA; client-go and kubectl verify the server with it; a restart keeps the identities, the
// namespaces and the certificate, so the kubeconfig still works.
func TestTLSKubeconfig(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leaselab.db")
	w := mustStartWorkshop(t, 1, db, nil)
	if !strings.HasPrefix(w.URL, "https://") {
		t.Fatalf("workshop URL %s is not https", w.URL)
	}
	var out, errOut bytes.Buffer
	if err := runKubeconfig(context.Background(), []string{"--server", w.URL, "--db", db, "--token", w.tokens["participant-01"]}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	kc := out.Bytes()
	raw, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatal(err)
	}
	cl := raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster]
	if len(cl.CertificateAuthorityData) == 0 || cl.InsecureSkipTLSVerify || raw.Contexts[raw.CurrentContext].Namespace != "participant-01" {
		t.Fatalf("kubeconfig: %s", kc)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := kubernetes.NewForConfig(cfg)
	ctx := ctxT(t, 30*time.Second)
	if _, err := c.CoordinationV1().Leases("participant-01").Create(ctx, namedLease("tls"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Without the CA, the client refuses the server.
	bare, _ := kubernetes.NewForConfig(&rest.Config{Host: w.URL, BearerToken: w.tokens["participant-01"]})
	if _, err := bare.CoordinationV1().Leases("participant-01").List(ctx, metav1.ListOptions{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("client without the CA: %v, want a certificate error", err)
	}
	kpath := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kpath, kc, 0o600)
	if o, e, err := kubectlWith(t, kpath, "get", "leases"); err != nil || !strings.Contains(o, "tls") {
		t.Errorf("kubectl get leases: %v\n%s\n%s", err, o, e)
	}
	if _, e, err := kubectlWith(t, kpath, "-n", "default", "delete", "lease", "tls"); err == nil || !strings.Contains(err.Error()+e, `User "participant-01" cannot delete resource "leases"`) {
		t.Errorf("kubectl delete in another namespace: %v %s", err, e)
	}
	if _, e, err := kubectlWith(t, kpath, "-n", "participant-01", "delete", "lease", "tls"); err != nil {
		t.Errorf("kubectl delete: %v %s", err, e)
	}

	// Restart on the same database: same tokens, same certificate.
	tokens, caData := w.tokens, w.access.CAData
	w.Close()
	w2 := mustStartWorkshop(t, 1, db, func(c *serveConfig) { c.addr = strings.TrimPrefix(w.URL, "https://") })
	if fmt.Sprint(w2.tokens) != fmt.Sprint(tokens) || !bytes.Equal(w2.access.CAData, caData) {
		t.Fatal("a restart changed the identities or the certificate")
	}
	if _, err := c.CoordinationV1().Leases("participant-01").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the kubeconfig after a restart: %v", err)
	}
}

// TestRestartKeepsTLS: a database that ran a workshop keeps its tokens on a restart without
// --workshop, and so, under --tls auto, HTTPS with the certificate beside the database; --tls
// off is the explicit opt-out, and off loopback it warns that the tokens travel in clear.
func TestRestartKeepsTLS(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leaselab.db")
	w := mustStartWorkshop(t, 2, db, nil)
	w.Close()

	w = mustStartWorkshop(t, 0, db, nil)
	if !strings.HasPrefix(w.URL, "https://") || len(w.tokens) != 3 {
		t.Fatalf("restart without --workshop: URL %s, %d identities", w.URL, len(w.tokens))
	}
	certFile, _ := tlscert.Paths(db)
	caPEM, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("no certificate in %s", certFile)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodGet, w.URL+"/api/v1/namespaces/participant-02", nil)
	req.Header.Set("Authorization", "Bearer "+w.tokens["participant-02"])
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("TLS client with the CA beside the database: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET namespace participant-02: %d", resp.StatusCode)
	}

	// --tls off still serves plain HTTP, warning off loopback.
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	a, err := access.New(context.Background(), access.Config{TLS: "off"}, "192.0.2.1:8443", "192.0.2.1:8443", db, w.db, logger)
	if err != nil {
		t.Fatal(err)
	}
	if a.TLSConfig != nil || a.Auth == nil || !strings.Contains(logs.String(), "tokens travel in clear") {
		t.Errorf("--tls off with tokens: TLS %v, auth %v, log %q", a.TLSConfig != nil, a.Auth != nil, logs.String())
	}
}

// statusOf decodes a Status response body.
func statusOf(b []byte) metav1.Status {
	var st metav1.Status
	_ = json.Unmarshal(b, &st)
	return st
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestPublicURLCertificate: the self-signed certificate names the host of --public-url, which
// join links and kubeconfigs carry, whether a name or an address; a restart with another
// public URL replaces the certificate the server generated before.
func TestPublicURLCertificate(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leaselab.db")
	leaf := func(w *workshop) *x509.Certificate {
		t.Helper()
		c, err := x509.ParseCertificate(w.access.TLSConfig.Certificates[0].Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	w := mustStartWorkshop(t, 1, db, func(c *serveConfig) { c.access.PublicURL = "https://Lab.Example:18225/" })
	if err := leaf(w).VerifyHostname("lab.example"); err != nil {
		t.Errorf("certificate for --public-url https://Lab.Example:18225/: %v", err)
	}
	w.Close()
	w = mustStartWorkshop(t, 1, db, func(c *serveConfig) { c.access.PublicURL = "https://10.1.2.3:8443" })
	if err := leaf(w).VerifyHostname("10.1.2.3"); err != nil {
		t.Errorf("certificate for --public-url https://10.1.2.3:8443: %v", err)
	}
	// The file beside the database is the one served, so that --db kubeconfigs carry it.
	certFile, _ := tlscert.Paths(db)
	pemBytes, err := os.ReadFile(certFile)
	if err != nil || !bytes.Equal(pemBytes, w.access.CAData) {
		t.Errorf("certificate file %s: %v", certFile, err)
	}
}

// TestCertificateKeyMode: the private key beside the database is 0600 and stays so when it is
// regenerated over a file someone made readable; the certificate is 0644.
func TestCertificateKeyMode(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leaselab.db")
	certFile, keyFile := tlscert.Paths(db)
	modes := func(when string) {
		t.Helper()
		for f, want := range map[string]os.FileMode{keyFile: 0o600, certFile: 0o644} {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != want {
				t.Errorf("%s: %s has mode %v, want %v", when, filepath.Base(f), fi.Mode().Perm(), want)
			}
		}
	}
	w := mustStartWorkshop(t, 1, db, func(c *serveConfig) { c.access.PublicURL = "https://one.example:8443" })
	w.Close()
	modes("generated")
	old, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(keyFile, 0o644); err != nil {
		t.Fatal(err)
	}
	// Another host: the certificate and its key are generated again.
	w = mustStartWorkshop(t, 1, db, func(c *serveConfig) { c.access.PublicURL = "https://two.example:8443" })
	w.Close()
	if now, err := os.ReadFile(keyFile); err != nil || bytes.Equal(now, old) {
		t.Fatalf("key not regenerated: %v", err)
	}
	modes("regenerated")
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(db), ".*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestKubeconfigFromDB: `leaselab kubeconfig --db` without --server names the URL the server
// announced (its --public-url, as the instructor page's download does, else where it listens),
// --server still wins, and a token the workshop does not know is an error.
func TestKubeconfigFromDB(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leaselab.db")
	w := mustStartWorkshop(t, 1, db, nil)
	tok := w.tokens["participant-01"]
	kubeconfigServer := func(args ...string) (server, namespace string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(context.Background(), append([]string{"kubeconfig", "--db", db}, args...), &out, &errOut); code != 0 {
			t.Fatalf("kubeconfig %q: exit %d %s", args, code, errOut.String())
		}
		raw, err := clientcmd.Load(out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		ctx := raw.Contexts[raw.CurrentContext]
		return raw.Clusters[ctx.Cluster].Server, ctx.Namespace
	}
	if s, ns := kubeconfigServer("--token", tok); s != w.URL || ns != "participant-01" {
		t.Errorf("kubeconfig --db: server %s namespace %s, want %s participant-01", s, ns, w.URL)
	}
	w.Close()

	w = mustStartWorkshop(t, 1, db, func(c *serveConfig) { c.access.PublicURL = "https://lab.example:18225/" })
	if s, _ := kubeconfigServer("--token", tok); s != "https://lab.example:18225" {
		t.Errorf("kubeconfig --db with --public-url: server %s", s)
	}
	// The instructor page's download names the same server.
	hc := w.httpClient(t)
	w.join(t, hc, auth.InstructorName)
	resp, err := hc.Get(w.URL + "/workshop/kubeconfig/participant-01")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if raw, err := clientcmd.Load(body); err != nil || raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster].Server != "https://lab.example:18225" {
		t.Errorf("downloaded kubeconfig: %v\n%s", err, body)
	}
	if s, _ := kubeconfigServer("--token", tok, "--server", "https://other.example:1"); s != "https://other.example:1" {
		t.Errorf("kubeconfig --server: server %s", s)
	}
	var errOut bytes.Buffer
	if code := run(context.Background(), []string{"kubeconfig", "--db", db, "--token", "not-a-token"}, io.Discard, &errOut); code != 1 || !strings.Contains(errOut.String(), "workshop identities") {
		t.Errorf("kubeconfig with an unknown token: exit %d %s", code, errOut.String())
	}
}

// TestKubeconfigIgnoresHost: the kubeconfig, join links and QR codes the workshop page serves
// name the --public-url, else the address the server listens at, never the request's Host
// header, which whoever sends the request chooses.
func TestKubeconfigIgnoresHost(t *testing.T) {
	for _, public := range []string{"", "https://lab.example:18225"} {
		w := mustStartWorkshop(t, 1, "", func(c *serveConfig) { c.access.PublicURL = public })
		want := cmp.Or(public, w.URL)
		hc := w.httpClient(t)
		w.join(t, hc, auth.InstructorName)
		get := func(path string) []byte {
			t.Helper()
			req, _ := http.NewRequest(http.MethodGet, w.URL+path, nil)
			// (net/http picks the jar's cookies by Host: the session goes by hand.)
			for _, c := range hc.Jar.Cookies(req.URL) {
				req.AddCookie(c)
			}
			req.Host = "evil.example"
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s with a forged Host: %d %s", path, resp.StatusCode, b)
			}
			return b
		}
		raw, err := clientcmd.Load(get("/workshop/kubeconfig/participant-01"))
		if err != nil {
			t.Fatal(err)
		}
		if s := raw.Clusters[raw.Contexts[raw.CurrentContext].Cluster].Server; s != want {
			t.Errorf("public URL %q: the kubeconfig names %s, want %s", public, s, want)
		}
		page := get("/workshop")
		if bytes.Contains(page, []byte("evil.example")) || !bytes.Contains(page, []byte(`href="`+want+`/join?token=`)) {
			t.Errorf("public URL %q: the workshop page's join links do not name %s", public, want)
		}
		w.Close()
	}
}

// TestSessionCookie: the session cookie is a random id, not the join link's token, and the
// database keeps only its hash; the session signs the browser's API reads and its WebSocket
// watches in, and lasts over a restart.
func TestSessionCookie(t *testing.T) {
	db := filepath.Join(t.TempDir(), "leaselab.db")
	w := mustStartWorkshop(t, 1, db, nil)
	hc := w.httpClient(t)
	w.join(t, hc, "participant-01")
	u, _ := url.Parse(w.URL)
	cookies := hc.Jar.Cookies(u)
	if len(cookies) != 1 || cookies[0].Value == "" || cookies[0].Value == w.tokens["participant-01"] {
		t.Fatalf("session cookies %v: want one that is not the token", cookies)
	}
	id := cookies[0].Value
	res, err := w.db.List(context.Background(), store.ListOptions{Resource: auth.SessionResource})
	if err != nil || len(res.Objects) != 1 {
		t.Fatalf("stored sessions: %v %d", err, len(res.Objects))
	}
	if o := res.Objects[0]; strings.Contains(o.Name+string(o.Value), id) || strings.Contains(string(o.Value), w.tokens["participant-01"]) {
		t.Errorf("the database keeps the session id or the token: %s %s", o.Name, o.Value)
	}

	check := func(w *workshop) {
		t.Helper()
		resp, err := hc.Get(w.URL + "/apis/coordination.k8s.io/v1/namespaces/participant-01/leases")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("API read with the session: %d", resp.StatusCode)
		}
		ctx := ctxT(t, 10*time.Second)
		c, _, err := websocket.Dial(ctx, "wss"+strings.TrimPrefix(w.URL, "https")+"/apis/coordination.k8s.io/v1/namespaces/participant-01/leases?watch=1",
			&websocket.DialOptions{HTTPClient: hc})
		if err != nil {
			t.Fatalf("WebSocket watch with the session: %v", err)
		}
		c.CloseNow()
	}
	check(w)
	w.Close()
	// The cookie names the host, not the port: the restarted server gets it too.
	w = mustStartWorkshop(t, 1, db, nil)
	check(w)
	// A cookie that is a token, or an id the server never gave, signs nobody in.
	for _, v := range []string{w.tokens["participant-01"], "made-up"} {
		req, _ := http.NewRequest(http.MethodGet, w.URL+"/apis/coordination.k8s.io/v1/namespaces/participant-01/leases", nil)
		req.AddCookie(&http.Cookie{Name: auth.SessionCookie, Value: v})
		resp, err := w.httpClient(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("cookie %q: %d, want 401", v, resp.StatusCode)
		}
	}
}
