package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/status"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// clusterProxy is an HTTP proxy in front of the upstream leaselab, over TLS of its own, that
// turns it into the API server a test needs and a real one would be: one without
// coordination.k8s.io/v1beta1 (an older kube-apiserver, or one without the
// CoordinatedLeaderElection runtime-config), one whose RBAC refuses the kubeconfig's identity
// the list of Leases, or one whose watches are cut and held, as a partition does. Everything
// else is the upstream's own answer.
type clusterProxy struct {
	t      testing.TB
	up     *cluster
	srv    *httptest.Server
	rt     http.RoundTripper
	caData []byte

	mu sync.Mutex
	// noCandidates removes coordination.k8s.io/v1beta1 from discovery and answers its paths 404.
	noCandidates bool
	// forbidListLeases answers the list of Leases with the cluster's 403 for its identity.
	forbidListLeases bool
	// hold, when set, keeps new watch requests waiting until it is closed.
	hold chan struct{}
	// watches ends the running watches' streams.
	watches map[*context.CancelFunc]struct{}
	// held are the watch requests that waited on hold, by path and query.
	held []string
	// expired are the watch requests the cluster answered with 410 Expired, by path and query.
	expired []string
}

func startClusterProxy(t testing.TB, up *cluster) *clusterProxy {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(up.caData) {
		t.Fatal("the cluster's CA")
	}
	p := &clusterProxy{t: t, up: up, watches: map[*context.CancelFunc]struct{}{},
		rt: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	p.srv = httptest.NewUnstartedServer(p)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.srv.Listener = ln
	p.srv.StartTLS()
	p.caData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	t.Cleanup(func() { p.release(); p.srv.Close() })
	return p
}

// kubeconfig is a kubeconfig for user of the cluster through the proxy.
func (p *clusterProxy) kubeconfig(t testing.TB, user string) string {
	t.Helper()
	b, err := auth.Kubeconfig(p.srv.URL, "default", upstreamTokens[user], user, p.caData)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), user+"-proxy.kubeconfig")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// set changes what the proxy plays.
func (p *clusterProxy) set(change func(*clusterProxy)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	change(p)
}

// cutWatches ends every running watch stream, as a connection that breaks does, and keeps the
// watches that resume from a resourceVersion started from now on waiting until release.
func (p *clusterProxy) cutWatches() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold == nil {
		p.hold = make(chan struct{})
	}
	for cancel := range p.watches {
		(*cancel)()
	}
}

// release lets the held watches through to the cluster.
func (p *clusterProxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold != nil {
		close(p.hold)
		p.hold = nil
	}
}

func (p *clusterProxy) heldWatches() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.held...)
}

func (p *clusterProxy) expiredWatches() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.expired...)
}

// user is the name of the upstream's identity whose token r carries.
func (p *clusterProxy) user(r *http.Request) string {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	for name, t := range upstreamTokens {
		if t == token {
			return name
		}
	}
	return "system:anonymous"
}

func (p *clusterProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ri := request.Parse(r)
	p.mu.Lock()
	noCandidates, forbidList := p.noCandidates, p.forbidListLeases
	p.mu.Unlock()
	switch {
	case noCandidates && candidateVersionPath(r.URL.Path):
		// kube-apiserver's answer for a group version it does not serve.
		status.Write(w, r, status.New(http.StatusNotFound, "NotFound", "the server could not find the requested resource", nil), status.Filter)
		return
	case forbidList && ri.IsResourceRequest && ri.Group == "coordination.k8s.io" && ri.Resource == "leases" && (ri.Verb == "list" || ri.Verb == "watch"):
		// The upstream's own 403, as its authorizer words it for an identity without the verb.
		status.Write(w, r, auth.Forbidden(auth.User{Name: p.user(r)}, ri, ""), status.Filter)
		return
	case ri.Verb == "watch":
		p.watch(w, r)
		return
	}
	rewrite := noCandidates && (r.URL.Path == "/apis" || r.URL.Path == "/apis/coordination.k8s.io" || r.URL.Path == "/openapi/v3")
	resp, err := p.roundTrip(r.Context(), r, rewrite)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if rewrite && resp.StatusCode == http.StatusOK {
		body = withoutCandidateVersions(p.t, body)
	}
	copyHeader(w.Header(), resp.Header)
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
}

// candidateVersionPath says whether a path is coordination.k8s.io/v1beta1's, which an API
// server without it answers 404.
func candidateVersionPath(p string) bool {
	for _, prefix := range []string{"/apis/coordination.k8s.io/v1beta1", "/openapi/v3/apis/coordination.k8s.io/v1beta1"} {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return false
}

// roundTrip sends r on to the cluster; json asks for JSON only, for a body the proxy rewrites.
func (p *clusterProxy) roundTrip(ctx context.Context, r *http.Request, json bool) (*http.Response, error) {
	u := *r.URL
	u.Scheme, u.Host = "https", strings.TrimPrefix(p.up.URL, "https://")
	out, err := http.NewRequestWithContext(ctx, r.Method, u.String(), r.Body)
	if err != nil {
		return nil, err
	}
	out.ContentLength = r.ContentLength
	for _, h := range []string{"Authorization", "Accept", "Content-Type", "User-Agent"} {
		if v := r.Header.Values(h); len(v) > 0 {
			out.Header[h] = v
		}
	}
	if json {
		var kept []string
		for _, a := range strings.Split(r.Header.Get("Accept"), ",") {
			if !strings.Contains(a, "protobuf") {
				kept = append(kept, strings.TrimSpace(a))
			}
		}
		out.Header.Set("Accept", strings.Join(kept, ","))
		if out.Header.Get("Accept") == "" {
			out.Header.Set("Accept", "application/json")
		}
	}
	return p.rt.RoundTrip(out)
}

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Length", "Transfer-Encoding", "Connection":
			continue
		}
		dst[k] = v
	}
}

// watch forwards a watch and streams it back until either side ends it or cutWatches does;
// a cut stream ends as a broken connection's does, and the watch started after it waits while
// the proxy holds watches.
func (p *clusterProxy) watch(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	// A watch that lists first (sendInitialEvents) is the reflector's list, not a resumption.
	hold := p.hold
	if r.URL.Query().Get("sendInitialEvents") == "true" {
		hold = nil
	}
	if hold != nil {
		p.held = append(p.held, r.URL.RequestURI())
	}
	p.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	p.mu.Lock()
	p.watches[&cancel] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.watches, &cancel)
		p.mu.Unlock()
	}()
	resp, err := p.roundTrip(ctx, r, false)
	if err != nil {
		if ctx.Err() == nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
		}
		return
	}
	defer resp.Body.Close()
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	flusher := w.(http.Flusher)
	flusher.Flush()
	lines := bufio.NewReader(resp.Body)
	for first := true; ; first = false {
		line, err := lines.ReadBytes('\n')
		if len(line) > 0 {
			if first && bytes.Contains(line, []byte(`"type":"ERROR"`)) && bytes.Contains(line, []byte(`"reason":"Expired"`)) {
				p.mu.Lock()
				p.expired = append(p.expired, r.URL.RequestURI())
				p.mu.Unlock()
			}
			if _, err := w.Write(line); err != nil {
				return
			}
			flusher.Flush()
		}
		if err != nil {
			return
		}
	}
}

// withoutCandidateVersions removes coordination.k8s.io/v1beta1 from a discovery document: the
// group list (/apis), aggregated discovery, the group (/apis/coordination.k8s.io) and the
// OpenAPI v3 index.
func withoutCandidateVersions(t testing.TB, body []byte) []byte {
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Errorf("a discovery document that is not JSON: %v", err)
		return body
	}
	keepV1 := func(group map[string]any) {
		if group["name"] != "coordination.k8s.io" && nested(group, "metadata", "name") != "coordination.k8s.io" {
			return
		}
		versions, _ := group["versions"].([]any)
		var kept []any
		for _, v := range versions {
			vm, _ := v.(map[string]any)
			if vm["version"] != "v1beta1" && vm["groupVersion"] != "coordination.k8s.io/v1beta1" {
				kept = append(kept, v)
			}
		}
		group["versions"] = kept
	}
	for _, key := range []string{"groups", "items"} {
		if list, ok := doc[key].([]any); ok {
			for _, g := range list {
				if gm, ok := g.(map[string]any); ok {
					keepV1(gm)
				}
			}
		}
	}
	keepV1(doc)
	if paths, ok := doc["paths"].(map[string]any); ok {
		delete(paths, "apis/coordination.k8s.io/v1beta1")
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Error(err)
		return body
	}
	return out
}

func nested(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// startFrontErr starts leaselab in front of the cluster the kubeconfig names, through `leaselab
// serve` itself, and returns what it said on stderr when it stopped; it fails the test if the
// server started.
func startFrontErr(t *testing.T, kubeconfig string, flags ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "front.db"),
		"--log-level", "error", "--upstream-kubeconfig", kubeconfig}, flags...), &stdout, &stderr)
	if strings.Contains(stdout.String(), "serving on") {
		t.Fatalf("serve started: %s", stdout.String())
	}
	return code, stderr.String()
}

// putHolder creates the lease name with holder h on the cluster, or sets h as its holder.
func putHolder(t *testing.T, ctx context.Context, c kubernetes.Interface, name, h string) {
	t.Helper()
	leases := c.CoordinationV1().Leases("default")
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &h}}, metav1.CreateOptions{})
	} else if err == nil {
		l.Spec.HolderIdentity = &h
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestUpstreamExpired: the mirror's watch of the cluster breaks and cannot come back before
// the cluster has compacted the history it would resume from; the cluster answers the resumed
// watch with 410 Expired, and the mirror lists again, as an informer does: it records what
// changed and what went away, counts the 410 and the list after it, logs both and says so on
// the banner.
func TestUpstreamExpired(t *testing.T) {
	t.Parallel()
	up := mustStartCluster(t, "", func(c *serveConfig) { c.compactKeep, c.compactInterval = 3, 20*time.Millisecond })
	px := startClusterProxy(t, up)
	logs := &syncBuffer{}
	front := mustStartServerLogging(t, "", func(c *serveConfig) { c.upstream = upstreamConfig{kubeconfig: px.kubeconfig(t, "admin")} }, logs)
	ctx := ctxT(t, 2*time.Minute)
	admin := up.client(t, "admin")

	holder := func(name string) string {
		l, err := mirrored(t, front, "default", name)
		if err != nil {
			return err.Error()
		}
		return ptr.Deref(l.Spec.HolderIdentity, "")
	}
	putHolder(t, ctx, admin, "a", "before")
	putHolder(t, ctx, admin, "b", "before")
	poll.Until(t, 30*time.Second, "the mirror records a and b", func() (bool, string) {
		return holder("a") == "before" && holder("b") == "before", holder("a") + " " + holder("b")
	})
	if code, body := httpGetCode(t, front.URL+"/"); code != http.StatusOK || strings.Contains(body, `data-testid="upstream-relisted"`) {
		t.Fatalf("the banner before any 410: %d", code)
	}
	before := front.mirror.History()

	// The watches break; the mirror's Lease watch resumes from where it was, and waits.
	px.cutWatches()
	resumed := ""
	poll.Until(t, 30*time.Second, "the mirror's Lease watch resumes from a resourceVersion", func() (bool, string) {
		for _, u := range px.heldWatches() {
			if strings.Contains(u, "/leases?") && strings.Contains(u, "resourceVersion=") {
				resumed = u
				return true, u
			}
		}
		return false, fmt.Sprint(px.heldWatches())
	})
	q, err := url.Parse(resumed)
	if err != nil {
		t.Fatal(err)
	}
	rv := q.Query().Get("resourceVersion")

	// Meanwhile the cluster moves on and compacts that resourceVersion away.
	for i := range 5 {
		putHolder(t, ctx, admin, "a", fmt.Sprintf("during-%d", i))
	}
	putHolder(t, ctx, admin, "c", "new")
	if err := admin.CoordinationV1().Leases("default").Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "the cluster compacts the resourceVersion the mirror resumes from", func() (bool, string) {
		_, err := admin.CoordinationV1().Leases("default").List(ctx, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		return apierrors.IsResourceExpired(err) || apierrors.IsGone(err), fmt.Sprint(err)
	})

	px.release()
	poll.Until(t, 60*time.Second, "the mirror lists again after the 410 and records what it missed", func() (bool, string) {
		h := front.mirror.History()
		// The log line follows the list's writes.
		logged := strings.Contains(logs.String(), `msg="listed the cluster again after its 410 Expired" resource=leases.coordination.k8s.io`)
		return logged && h.RelistedAfterExpired > before.RelistedAfterExpired && holder("a") == "during-4" && holder("c") == "new" && strings.Contains(holder("b"), "not found"),
			fmt.Sprintf("%+v logged=%v a=%s b=%s c=%s", h, logged, holder("a"), holder("b"), holder("c"))
	})
	// The 410 was the cluster's own answer to the resumed watch.
	if !slices.Contains(px.expiredWatches(), resumed) {
		t.Errorf("the cluster's 410 answers %v lack the resumed watch %s", px.expiredWatches(), resumed)
	}
	after := front.mirror.History()
	if after.Expired <= before.Expired || after.Lists <= before.Lists {
		t.Errorf("history %+v, before the break %+v", after, before)
	}
	// The log says it, for the Lease watch that resumed.
	for _, want := range []string{`(410 Expired): listing it again`, `resource=leases.coordination.k8s.io verb=watch resourceVersion=` + rv + ` `} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	// The banner says it, with the counts (the other resources' watches may still be listing
	// again: the counts only grow).
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(httpGet(t, front.URL+"/")))
	if err != nil {
		t.Fatal(err)
	}
	b := doc.Find(`[data-testid="upstream-relisted"]`)
	expired, _ := strconv.ParseInt(b.AttrOr("data-expired", ""), 10, 64)
	relisted, _ := strconv.ParseInt(b.AttrOr("data-relisted", ""), 10, 64)
	if b.Length() != 1 || expired < after.Expired || relisted < after.RelistedAfterExpired || !strings.Contains(b.Text(), "410 Expired") {
		t.Errorf("the banner's relist line: %d %d %d %q, after the list %+v", b.Length(), expired, relisted, b.Text(), after)
	}
	hist, err := front.db.History(ctx, store.Key{Resource: "leases.coordination.k8s.io", Namespace: "default", Name: "b"}, 0)
	if err != nil || len(hist) == 0 || hist[len(hist)-1].Type != store.Deleted {
		t.Errorf("the front's history of b: %v %v", hist, err)
	}
}

// TestUpstreamWithoutCandidates: a cluster that does not serve coordination.k8s.io/v1beta1
// (kube-apiserver before 1.33, or without CoordinatedLeaderElection's runtime-config), played by
// the upstream leaselab behind a proxy that takes v1beta1 out of discovery and answers its
// paths 404 as such a server does. The front starts; its banner says that coordinated
// candidates are refused, and why; a coordinated tab and a native coordinated candidate are
// refused with that reason; plain candidates elect a leader on the cluster.
func TestUpstreamWithoutCandidates(t *testing.T) {
	up := mustStartCluster(t, "", nil)
	px := startClusterProxy(t, up)
	px.set(func(p *clusterProxy) { p.noCandidates = true })
	ctx := ctxT(t, time.Minute)

	// The proxy is such a server: no v1beta1 in discovery, 404 on its paths.
	direct := kubernetes.NewForConfigOrDie(&rest.Config{Host: px.srv.URL, BearerToken: upstreamTokens["admin"], QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: px.caData}})
	coordinationVersions := func(c kubernetes.Interface) []string {
		t.Helper()
		groups, err := c.Discovery().ServerGroups()
		if err != nil {
			t.Fatal(err)
		}
		var versions []string
		for _, g := range groups.Groups {
			if g.Name == "coordination.k8s.io" {
				for _, v := range g.Versions {
					versions = append(versions, v.Version)
				}
			}
		}
		return versions
	}
	if got := coordinationVersions(direct); slices.Contains(got, "v1beta1") || !slices.Contains(got, "v1") {
		t.Fatalf("the proxy's coordination.k8s.io versions: %v", got)
	}
	if _, err := direct.CoordinationV1beta1().LeaseCandidates("default").List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("LeaseCandidates v1beta1 on the proxy: %v, want 404", err)
	}

	front := mustStartFront(t, px.kubeconfig(t, "admin"), nil)
	why := front.mirror.CandidatesRefused()
	if !strings.Contains(why, "does not serve coordination.k8s.io/v1beta1 LeaseCandidates") {
		t.Fatalf("candidates refused: %q", why)
	}
	if got := coordinationVersions(front.Client); slices.Contains(got, "v1beta1") {
		t.Errorf("the front's discovery of coordination.k8s.io: %v", got)
	}

	// The dashboard's banner says it.
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(httpGet(t, front.URL+"/")))
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Find(`[data-testid="upstream-candidates-refused"]`).Text(); !strings.Contains(got, "Coordinated candidates are refused") || !strings.Contains(got, why) {
		t.Errorf("the banner's refusal: %q", got)
	}

	// A coordinated tab is refused with the reason; a plain one opens.
	code, body := httpGetCode(t, front.URL+"/play?lease=cle&coordinated=1&binaryVersion=1.36.0&emulationVersion=1.35.0")
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "coordinated mode is not available") || !strings.Contains(body, "does not serve coordination.k8s.io/v1beta1 LeaseCandidates") {
		t.Errorf("a coordinated tab: %d", code)
	}
	if code, body := httpGetCode(t, front.URL+"/play?lease=plain"); code != http.StatusOK {
		t.Errorf("a plain tab: %d %s", code, body)
	}

	// A native coordinated candidate stops at once with the reason; the front answers
	// LeaseCandidates 404 with it.
	var out, errOut syncBuffer
	if code := run(ctx, []string{"candidate", "--server", front.URL, "--coordinated", "--identity", "c1", "--namespace", "default", "--lease", "cle"}, &out, &errOut); code != 1 {
		t.Errorf("a coordinated candidate: exit %d, %s %s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"--coordinated: the server does not serve coordination.k8s.io/v1beta1 LeaseCandidates", "kube-apiserver serves them with --feature-gates=CoordinatedLeaderElection=true"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("the coordinated candidate's error %q lacks %q", errOut.String(), want)
		}
	}
	_, err = front.Client.CoordinationV1beta1().LeaseCandidates("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), why) {
		t.Errorf("LeaseCandidates through the front: %v", err)
	}

	// Plain candidates elect a leader on the cluster.
	var leader string
	select {
	case leader = <-elect(t, front.Config, "default", "plain", "p1", "p2"):
	case <-ctx.Done():
		t.Fatal("no plain candidate became leader")
	}
	l, err := up.client(t, "admin").CoordinationV1().Leases("default").Get(ctx, "plain", metav1.GetOptions{})
	if err != nil || ptr.Deref(l.Spec.HolderIdentity, "") != leader {
		t.Fatalf("the cluster's Lease: %v %v, want holder %q", l, err, leader)
	}
}

// TestUpstreamListForbidden: an identity that lacks `list` on Leases (the upstream's own 403,
// as its authorizer words it, for every list of Leases) stops `leaselab serve` at start with an
// error that names the identity, the verb and the resource, and quotes the cluster.
func TestUpstreamListForbidden(t *testing.T) {
	up := mustStartCluster(t, "", nil)
	px := startClusterProxy(t, up)
	px.set(func(p *clusterProxy) { p.forbidListLeases = true })
	// The proxy is such a cluster for the identity "ci".
	direct := kubernetes.NewForConfigOrDie(&rest.Config{Host: px.srv.URL, BearerToken: upstreamTokens["ci"], QPS: -1,
		TLSClientConfig: rest.TLSClientConfig{CAData: px.caData}})
	_, err := direct.CoordinationV1().Leases("").List(context.Background(), metav1.ListOptions{})
	cluster := `leases.coordination.k8s.io is forbidden: User "ci" cannot list resource "leases" in API group "coordination.k8s.io" at the cluster scope`
	if !apierrors.IsForbidden(err) || err.Error() != cluster {
		t.Fatalf("the proxy's list of Leases: %v", err)
	}

	code, stderr := startFrontErr(t, px.kubeconfig(t, "ci"))
	if code != 1 {
		t.Errorf("serve exited %d", code)
	}
	for _, want := range []string{
		`leaselab serve: upstream: the kubeconfig's identity (user "ci") may not list leases.coordination.k8s.io in every namespace on the cluster at ` + px.srv.URL,
		"leaselab needs the verbs get, list and watch on leases.coordination.k8s.io there",
		"The cluster said: " + cluster,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("serve's error %q lacks %q", stderr, want)
		}
	}
	// Within --namespaces, the namespace it may not list them in.
	_, stderr = startFrontErr(t, px.kubeconfig(t, "ci"), "--namespaces", "kube-system")
	want := `may not list leases.coordination.k8s.io in the namespace "kube-system" on the cluster at ` + px.srv.URL
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, `User "ci" cannot list resource "leases" in API group "coordination.k8s.io" in the namespace "kube-system"`) {
		t.Errorf("serve's error %q lacks %q and the cluster's words", stderr, want)
	}
}
