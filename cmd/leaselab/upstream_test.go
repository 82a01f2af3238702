package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/cmd/internal/access"
	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/candidate/candidatetest"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/api/upstream"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// upstreamTokens are the identities of the upstream leaselab in these tests: an administrator
// (what a cluster-admin kubeconfig is), a participant, who may write only in "alice", and "ci",
// whom a clusterProxy's RBAC refuses what a test says.
var upstreamTokens = map[string]string{"admin": "admin-token", "alice": "alice-token", "ci": "ci-token"}

// cluster is a leaselab standing in for a Kubernetes cluster: TLS and bearer tokens, reached
// by the front through a kubeconfig, as a real API server is.
type cluster struct {
	*testServer
	caData []byte
}

// mustStartCluster starts the upstream leaselab; configure may change its configuration (the
// address and database to restart it on, its compaction).
func mustStartCluster(tb testing.TB, db string, configure func(*serveConfig)) *cluster {
	tb.Helper()
	tf := filepath.Join(tb.TempDir(), "tokens.csv")
	if err := os.WriteFile(tf, []byte("admin-token,admin,1,\"system:masters\"\nalice-token,alice,2\nci-token,ci,3,\"system:masters\"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	ts := mustStartServerWith(tb, db, func(c *serveConfig) {
		c.access = access.Config{TokenFile: tf, TLS: "on", RateQPS: 1000, RateBurst: 1000, MaxWatchers: 100, MaxObjects: 500}
		if configure != nil {
			configure(c)
		}
	})
	return &cluster{testServer: ts, caData: ts.access.CAData}
}

// restConfig is a client of the cluster as user, straight, not through a front.
func (c *cluster) restConfig(user string) *rest.Config {
	return &rest.Config{Host: c.URL, BearerToken: upstreamTokens[user], QPS: -1, UserAgent: "leaselab-test/" + user,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.caData}}
}

func (c *cluster) client(tb testing.TB, user string) kubernetes.Interface {
	tb.Helper()
	return kubernetes.NewForConfigOrDie(c.restConfig(user))
}

// kubeconfig writes a kubeconfig for user of the cluster at server (the cluster's URL, or a
// relay's in front of it), as `leaselab kubeconfig` prints it.
func (c *cluster) kubeconfig(tb testing.TB, server, user string) string {
	tb.Helper()
	b, err := auth.Kubeconfig(server, "default", upstreamTokens[user], user, c.caData)
	if err != nil {
		tb.Fatal(err)
	}
	f := filepath.Join(tb.TempDir(), user+".kubeconfig")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return f
}

// mustStartFront starts leaselab in front of the cluster the kubeconfig names.
func mustStartFront(tb testing.TB, kubeconfig string, configure func(*serveConfig)) *testServer {
	tb.Helper()
	return mustStartServerWith(tb, "", func(c *serveConfig) {
		c.upstream = upstreamConfig{kubeconfig: kubeconfig}
		if configure != nil {
			configure(c)
		}
	})
}

// elect runs client-go leader-election candidates through cfg until the test ends and returns
// the channel of the identities that start leading.
func elect(t *testing.T, cfg *rest.Config, namespace, lease string, ids ...string) <-chan string {
	t.Helper()
	leaders := make(chan string, 16)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, id := range ids {
		c := rest.CopyConfig(cfg)
		c.UserAgent = "candidate/" + id
		client := kubernetes.NewForConfigOrDie(c)
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{
				LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: lease},
				Client:     client.CoordinationV1(),
				LockConfig: resourcelock.ResourceLockConfig{Identity: id},
			},
			LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) { leaders <- id },
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); le.Run(ctx) }()
	}
	return leaders
}

// mirrored reads a lease from the front's store, the mirror the screens read.
func mirrored(t *testing.T, front *testServer, namespace, name string) (*coordinationv1.Lease, error) {
	t.Helper()
	o, err := front.db.Get(context.Background(), store.Key{Resource: "leases.coordination.k8s.io", Namespace: namespace, Name: name})
	if err != nil {
		return nil, err
	}
	var l coordinationv1.Lease
	if err := json.Unmarshal(o.Value, &l); err != nil {
		t.Fatal(err)
	}
	return &l, nil
}

// TestUpstreamElection: client-go candidates talking to the front elect a leader on the
// cluster; the cluster's Lease names it; the front's store recorded the changes, which its
// lease page shows; the front forwards only the coordination paths, and bridges a browser's
// WebSocket watch to the cluster's chunked watch.
func TestUpstreamElection(t *testing.T) {
	up := mustStartCluster(t, "", nil)
	front := mustStartFront(t, up.kubeconfig(t, up.URL, "admin"), nil)
	ctx := ctxT(t, time.Minute)

	leader := ""
	leaders := elect(t, front.Config, "default", "upstream-demo", "tab-1", "tab-2", "tab-3")
	select {
	case leader = <-leaders:
	case <-ctx.Done():
		t.Fatal("no candidate became leader through the front")
	}
	l, err := up.client(t, "admin").CoordinationV1().Leases("default").Get(ctx, "upstream-demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(l.Spec.HolderIdentity, ""); got != leader {
		t.Fatalf("the cluster's Lease names %q; %q started leading", got, leader)
	}

	// The mirror has it, with the cluster's resourceVersion beside the store's own revisions.
	poll.Until(t, 30*time.Second, "the mirror records the leader", func() (bool, string) {
		m, err := mirrored(t, front, "default", "upstream-demo")
		if err != nil {
			return false, err.Error()
		}
		return ptr.Deref(m.Spec.HolderIdentity, "") == leader && m.Annotations[upstream.ResourceVersionAnnotation] != "", fmt.Sprintf("%+v", m.ObjectMeta)
	})
	hist, err := front.db.History(ctx, store.Key{Resource: "leases.coordination.k8s.io", Namespace: "default", Name: "upstream-demo"}, 0)
	if err != nil || len(hist) == 0 {
		t.Fatalf("the front's history of the lease: %d changes, %v", len(hist), err)
	}
	page := httpGet(t, front.URL+"/leases/default/upstream-demo")
	for _, want := range []string{`data-testid="upstream"`, "own controller (its CoordinatedLeaderElection feature gate)", leader, `data-api-base="/ui/mirror"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the lease page lacks %q", want)
		}
	}
	// The screens' reads of the mirror are read-only.
	resp, err := http.Post(front.URL+"/ui/mirror/apis/coordination.k8s.io/v1/namespaces/default/leases", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("a write to the mirror: %d, want 405", resp.StatusCode)
	}

	// The dashboard's forms write on the cluster, through the forwarder.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := func(path string, values url.Values) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, front.URL+path, strings.NewReader(values.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", front.URL)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
	}
	form("/ui/leases", url.Values{"namespace": {"default"}, "name": {"from-dashboard"}})
	if _, err := up.client(t, "admin").CoordinationV1().Leases("default").Get(ctx, "from-dashboard", metav1.GetOptions{}); err != nil {
		t.Fatalf("the dashboard's new lease on the cluster: %v", err)
	}
	form("/ui/leases/default/from-dashboard/delete", nil)
	if _, err := up.client(t, "admin").CoordinationV1().Leases("default").Get(ctx, "from-dashboard", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the dashboard's delete on the cluster: %v", err)
	}

	// Nothing but the coordination paths, Namespaces, Events and discovery is forwarded.
	for _, p := range []string{"/api/v1/pods", "/api/v1/namespaces/default/secrets", "/apis/apps/v1", "/apis/apps/v1/namespaces/default/deployments", "/api/v1/namespaces/default/status"} {
		code, body := httpGetCode(t, front.URL+p)
		if code != http.StatusNotFound || !strings.Contains(body, `"reason":"NotFound"`) {
			t.Errorf("GET %s: %d %s, want a 404 Status", p, code, body)
		}
	}
	if _, err := front.Client.Discovery().ServerResourcesForGroupVersion("coordination.k8s.io/v1"); err != nil {
		t.Errorf("discovery through the front: %v", err)
	}

	// A browser's WebSocket watch is bridged to the cluster's chunked watch: its events carry
	// the cluster's resourceVersions.
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(front.URL, "http")+"/apis/coordination.k8s.io/v1/namespaces/default/leases?watch=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	_, msg, err := conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Type   string
		Object coordinationv1.Lease
	}
	if err := json.Unmarshal(msg, &ev); err != nil || ev.Type != "ADDED" || ev.Object.Name != "upstream-demo" {
		t.Fatalf("bridged watch event: %v %s", err, msg)
	}
	if ev.Object.Annotations[upstream.ResourceVersionAnnotation] != "" {
		t.Errorf("the bridged watch serves the mirror, not the cluster: %s", msg)
	}
}

// httpGet returns a 200 answer's body.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	code, body := httpGetCode(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	return body
}

func httpGetCode(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestUpstreamWorkshop: participants hold the front's tokens and the cluster sees the
// kubeconfig's identity: the front refuses a participant's write outside its namespace before
// the cluster sees it; a write the cluster refuses to the kubeconfig's identity says which
// identity, verb and resource.
func TestUpstreamWorkshop(t *testing.T) {
	up := mustStartCluster(t, "", nil)
	front := mustStartWorkshop(t, 2, "", func(c *serveConfig) {
		c.upstream = upstreamConfig{kubeconfig: up.kubeconfig(t, up.URL, "admin")}
	})
	ctx := ctxT(t, time.Minute)
	admin := up.client(t, "admin")

	p1 := front.client(t, auth.ParticipantName(1, 2))
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("p1")}}
	// The front created the participants' namespaces on the cluster.
	if _, err := p1.CoordinationV1().Leases("participant-01").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a participant's write in its namespace: %v", err)
	}
	if _, err := admin.CoordinationV1().Leases("participant-01").Get(ctx, "mine", metav1.GetOptions{}); err != nil {
		t.Fatalf("the cluster has the participant's lease: %v", err)
	}
	_, err := p1.CoordinationV1().Leases("participant-02").Create(ctx, lease, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "participants write only in their namespace") {
		t.Fatalf("a participant's write in another's namespace: %v, want leaselab's 403", err)
	}
	if _, err := admin.CoordinationV1().Leases("participant-02").Get(ctx, "mine", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the cluster got the refused write: %v", err)
	}
	// Participants read everything, as on leaselab itself.
	if _, err := p1.CoordinationV1().Leases("participant-02").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}

	// The kubeconfig's identity may write only "alice" on the cluster: the cluster's 403 says
	// whom it refused, and what that identity needs.
	front2 := mustStartFront(t, up.kubeconfig(t, up.URL, "alice"), nil)
	_, err = front2.Client.CoordinationV1().Leases("default").Create(ctx, lease, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("a write the cluster refuses: %v, want 403", err)
	}
	for _, want := range []string{`refused leaselab's identity (kubeconfig user "alice")`, `verb "create" on the resource "leases.coordination.k8s.io" in the namespace "default"`, `User "alice" cannot create`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the cluster's refusal %q lacks %q", err, want)
		}
	}
	if _, err := front2.Client.CoordinationV1().Leases("alice").Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a write the cluster allows: %v", err)
	}
}

// TestUpstreamNamespaces: with --namespaces, the front forwards and mirrors those only.
func TestUpstreamNamespaces(t *testing.T) {
	up := mustStartCluster(t, "", nil)
	ctx := ctxT(t, time.Minute)
	admin := up.client(t, "admin")
	for _, ns := range []string{"kube-system", "other"} {
		if _, err := admin.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1_" + ns), LeaseDurationSeconds: ptr.To[int32](15)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	front := mustStartFront(t, up.kubeconfig(t, up.URL, "admin"), func(c *serveConfig) { c.upstream.namespaces = "kube-system" })
	// Start waited for the first list: the cluster's leases show at once.
	if l, err := mirrored(t, front, "kube-system", "kube-scheduler"); err != nil || ptr.Deref(l.Spec.HolderIdentity, "") != "node-1_kube-system" {
		t.Fatalf("kube-system's lease in the mirror: %v %v", l, err)
	}
	if _, err := mirrored(t, front, "other", "kube-scheduler"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a lease outside --namespaces in the mirror: %v", err)
	}
	dash := httpGet(t, front.URL+"/")
	if !strings.Contains(dash, "node-1_kube-system") || strings.Contains(dash, "node-1_other") {
		t.Errorf("the dashboard shows other namespaces than --namespaces")
	}
	_, err := front.Client.CoordinationV1().Leases("other").Get(ctx, "kube-scheduler", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "--namespaces") {
		t.Errorf("a read outside --namespaces: %v, want 403", err)
	}
	if _, err := front.Client.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a list across namespaces with --namespaces: %v, want 403", err)
	}
	if code, body := httpGetCode(t, front.URL+"/play?namespace=other&lease=x"); code != http.StatusUnprocessableEntity || !strings.Contains(body, "forwards only the namespaces kube-system") {
		t.Errorf("a tab outside --namespaces: %d", code)
	}
	if why := front.mirror.ReadOnly(); why != "" || strings.Contains(dash, "data-read-only") {
		t.Errorf("an administrator's view is read-only: %s", why)
	}

	// An identity that may only read kube-system (alice writes only "alice") shows the
	// cluster's leases read-only: no write buttons, no tabs, and writes refused with the reason.
	reader := mustStartFront(t, up.kubeconfig(t, up.URL, "alice"), func(c *serveConfig) { c.upstream.namespaces = "kube-system" })
	if why := reader.mirror.ReadOnly(); !strings.Contains(why, `(user "alice") may not create leases.coordination.k8s.io in "kube-system"`) {
		t.Errorf("read-only: %q", why)
	}
	page := httpGet(t, reader.URL+"/leases/kube-system/kube-scheduler")
	for _, want := range []string{"data-read-only", `data-testid="upstream-read-only"`, "node-1_kube-system"} {
		if !strings.Contains(page, want) {
			t.Errorf("the read-only lease page lacks %q", want)
		}
	}
	if code, body := httpGetCode(t, reader.URL+"/play?namespace=kube-system&lease=kube-scheduler"); code != http.StatusUnprocessableEntity || !strings.Contains(body, "read-only") {
		t.Errorf("a tab on a read-only cluster: %d", code)
	}
	err = reader.Client.CoordinationV1().Leases("kube-system").Delete(ctx, "kube-scheduler", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `verb "delete"`) {
		t.Errorf("a delete on a read-only cluster: %v", err)
	}
	if _, err := admin.CoordinationV1().Leases("kube-system").Get(ctx, "kube-scheduler", metav1.GetOptions{}); err != nil {
		t.Errorf("the cluster lost its lease: %v", err)
	}
}

// TestUpstreamStartErrors: a cluster that does not answer, or refuses the credentials, is a
// clear error at start, and nothing is served.
func TestUpstreamStartErrors(t *testing.T) {
	up := mustStartCluster(t, "", nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		name, kubeconfig, want string
	}{
		{"unreachable", up.kubeconfig(t, closed, "admin"), "upstream: the cluster at " + closed + " is unreachable: "},
		{"bad token", func() string {
			upstreamTokens["nobody"] = "wrong"
			defer delete(upstreamTokens, "nobody")
			return up.kubeconfig(t, up.URL, "nobody")
		}(), `does not accept the credentials of --upstream-kubeconfig (user "nobody")`},
		{"no such context", up.kubeconfig(t, up.URL, "admin"), `--upstream-context "elsewhere": the kubeconfig`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := serveConfig{addr: "127.0.0.1:0", db: filepath.Join(t.TempDir(), "front.db"), compactKeep: 1000, compactMaxAge: time.Hour,
				upstream: upstreamConfig{kubeconfig: tc.kubeconfig}}
			if tc.name == "no such context" {
				cfg.upstream.context = "elsewhere"
			}
			rs, err := startServer(context.Background(), cfg, discardLogger())
			if err == nil {
				rs.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q lacks %q", err, tc.want)
			}
		})
	}
	if err := (&serveConfig{addr: "127.0.0.1:0", upstream: upstreamConfig{namespaces: "a"}}).validate(); err == nil || !strings.Contains(err.Error(), "--namespaces needs --upstream-kubeconfig") {
		t.Errorf("--namespaces alone: %v", err)
	}
}

// TestUpstreamRefusesPlaygroundDatabase: a database that holds the playground's own leases is
// not used to mirror a cluster, whose first list would delete them; they are still there after.
func TestUpstreamRefusesPlaygroundDatabase(t *testing.T) {
	up := mustStartCluster(t, "", nil)
	db := filepath.Join(t.TempDir(), "leaselab.db")
	play := mustStartServer(t, db)
	ctx := ctxT(t, time.Minute)
	for _, name := range []string{"mine", "yours", "theirs", "ours"} {
		putHolder(t, ctx, play.Client, name, "me")
	}
	play.Close()

	cfg := serveConfig{addr: "127.0.0.1:0", db: db, compactKeep: 1000, compactMaxAge: time.Hour,
		upstream: upstreamConfig{kubeconfig: up.kubeconfig(t, up.URL, "admin")}}
	rs, err := startServer(context.Background(), cfg, discardLogger())
	if err == nil {
		rs.Close()
		t.Fatal("served in front of a cluster on the playground's database")
	}
	for _, want := range []string{"Lease default/mine, Lease default/ours, Lease default/theirs and 1 more", "would delete them", "--db"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	play = mustStartServer(t, db)
	if l, err := play.Client.CoordinationV1().Leases("default").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 4 {
		t.Fatalf("the playground's leases after the refusal: %v %v", l, err)
	}
}

// relay is a TCP relay between the front and the cluster that a test can cut, as a network
// partition does, and heal.
type relay struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

func startRelay(t *testing.T, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { ln.Close(); r.Cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go r.serve(c)
		}
	}()
	return r
}

// URL is the relay's address as the cluster's URL.
func (r *relay) URL() string { return "https://" + r.ln.Addr().String() }

func (r *relay) serve(c net.Conn) {
	r.mu.Lock()
	if r.cut {
		r.mu.Unlock()
		c.Close()
		return
	}
	r.conns[c] = struct{}{}
	r.mu.Unlock()
	u, err := net.Dial("tcp", r.target)
	if err != nil {
		c.Close()
		return
	}
	r.mu.Lock()
	r.conns[u] = struct{}{}
	r.mu.Unlock()
	go func() { io.Copy(u, c); u.Close() }()
	io.Copy(c, u)
	c.Close()
}

// Cut closes every connection and refuses new ones until Heal.
func (r *relay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cut = true
	for c := range r.conns {
		c.Close()
		delete(r.conns, c)
	}
}

func (r *relay) Heal() {
	r.mu.Lock()
	r.cut = false
	r.mu.Unlock()
}

// TestUpstreamRestartAndExpired: the mirror survives the cluster's restart (the front is not
// ready meanwhile, and catches up after), and a partition long enough for the cluster to
// compact the history the mirror's watch would resume from (410 Gone): it lists again, as an
// informer does, and records what changed and what went away.
func TestUpstreamRestartAndExpired(t *testing.T) {
	t.Parallel()
	compaction := func(c *serveConfig) { c.compactKeep, c.compactInterval = 3, 20*time.Millisecond }
	up := mustStartCluster(t, "", compaction)
	rl := startRelay(t, strings.TrimPrefix(up.URL, "https://"))
	front := mustStartFront(t, up.kubeconfig(t, rl.URL(), "admin"), nil)
	ctx := ctxT(t, 2*time.Minute)

	holder := func(name string) string {
		l, err := mirrored(t, front, "default", name)
		if err != nil {
			return err.Error()
		}
		return ptr.Deref(l.Spec.HolderIdentity, "")
	}
	ready := func() (bool, string) {
		code, body := httpGetCode(t, front.URL+"/readyz?verbose")
		return code == http.StatusOK, body
	}
	putHolder(t, ctx, up.client(t, "admin"), "a", "before")
	putHolder(t, ctx, up.client(t, "admin"), "b", "before")
	poll.Until(t, 30*time.Second, "the mirror records a and b", func() (bool, string) {
		return holder("a") == "before" && holder("b") == "before", holder("a") + " " + holder("b")
	})

	// The cluster restarts on its database: the front is not ready while it is away, and
	// records its changes once it is back.
	addr := strings.TrimPrefix(up.URL, "https://")
	up.Close()
	poll.Until(t, 30*time.Second, "the front is not ready while the cluster is away", func() (bool, string) {
		ok, body := ready()
		return !ok && strings.Contains(body, "[-]upstream failed"), body
	})
	up = mustStartCluster(t, up.DB, func(c *serveConfig) { compaction(c); c.addr = addr })
	admin := up.client(t, "admin")
	putHolder(t, ctx, admin, "a", "after-restart")
	poll.Until(t, 60*time.Second, "the mirror records a change after the restart", func() (bool, string) {
		ok, body := ready()
		return ok && holder("a") == "after-restart", holder("a") + " " + body
	})

	// A partition outlasts the history the cluster keeps.
	relists := front.mirror.Relists()
	last, err := admin.CoordinationV1().Leases("default").Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rl.Cut()
	poll.Until(t, 30*time.Second, "the front notices the partition", func() (bool, string) {
		ok, body := ready()
		return !ok, body
	})
	for i := range 5 {
		putHolder(t, ctx, admin, "a", fmt.Sprintf("during-%d", i))
	}
	putHolder(t, ctx, admin, "c", "new")
	if err := admin.CoordinationV1().Leases("default").Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "the cluster compacts the revision the mirror's watch resumes from", func() (bool, string) {
		_, err := admin.CoordinationV1().Leases("default").List(ctx, metav1.ListOptions{ResourceVersion: last.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		return apierrors.IsResourceExpired(err) || apierrors.IsGone(err), fmt.Sprint(err)
	})
	rl.Heal()
	poll.Until(t, 60*time.Second, "the mirror lists again and records what it missed", func() (bool, string) {
		ok, _ := ready()
		return ok && holder("a") == "during-4" && holder("c") == "new" && strings.Contains(holder("b"), "not found"),
			fmt.Sprintf("a=%s b=%s c=%s ready=%v", holder("a"), holder("b"), holder("c"), ok)
	})
	if front.mirror.Relists() <= relists {
		t.Errorf("relists %d, before the partition %d", front.mirror.Relists(), relists)
	}
	// The history the screens read has the delete the mirror learned from the list.
	hist, err := front.db.History(ctx, store.Key{Resource: "leases.coordination.k8s.io", Namespace: "default", Name: "b"}, 0)
	if err != nil || len(hist) == 0 || hist[len(hist)-1].Type != store.Deleted {
		t.Errorf("the front's history of b: %v %v", hist, err)
	}
}

// TestUpstreamBrowserCandidates: the browser tabs' candidate (wasm/candidate, natively, on a
// manual clock) elects a leader through the front: its GETs and PUTs of the Lease are the
// cluster's, and the cluster's Lease names the tab that believes it leads.
func TestUpstreamBrowserCandidates(t *testing.T) {
	up := mustStartCluster(t, "", nil)
	front := mustStartFront(t, up.kubeconfig(t, up.URL, "admin"), nil)
	s := &candidateSim{t: t, ts: front, clock: candidatetest.NewManualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)),
		cands: map[string]*candidate.Candidate{}, ctx: ctxT(t, time.Minute)}
	for _, id := range []string{"tab-1", "tab-2", "tab-3"} {
		s.add(id)
	}
	leader, _ := s.waitForNewHolder("", 30*time.Second)
	if ls := s.leaders(); len(ls) != 1 || ls[0] != leader {
		t.Fatalf("tabs leading %v; the front names %q", ls, leader)
	}
	l, err := up.client(t, "admin").CoordinationV1().Leases("sim").Get(s.ctx, "demo", metav1.GetOptions{})
	if err != nil || ptr.Deref(l.Spec.HolderIdentity, "") != leader {
		t.Fatalf("the cluster's Lease: %v %v, want holder %q", l, err, leader)
	}
}

// TestUpstreamCoordinated: coordinated candidates (leaselab candidate --coordinated, client-go's
// coordinated elector) talk to the front; their LeaseCandidates are the cluster's, whose own
// election controller picks the holder, and the front mirrors both.
func TestUpstreamCoordinated(t *testing.T) {
	t.Parallel()
	up := mustStartCluster(t, "", func(c *serveConfig) {
		c.cleController, c.cleElectionDuration, c.cleRequeueInterval = true, 200*time.Millisecond, 500*time.Millisecond
	})
	front := mustStartFront(t, up.kubeconfig(t, up.URL, "admin"), nil)
	ctx, cancel := context.WithCancel(ctxT(t, time.Minute))
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, id := range []string{"c1", "c2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runCandidate(ctx, []string{"--server", front.URL, "--coordinated", "--identity", id, "--namespace", "default", "--lease", "cle",
				"--binary-version", "1.36.0", "--emulation-version", "1.35.0"}, io.Discard, io.Discard)
		}()
	}
	admin := up.client(t, "admin")
	poll.Until(t, 45*time.Second, "the cluster's controller names a holder among the front's candidates", func() (bool, string) {
		l, err := admin.CoordinationV1().Leases("default").Get(ctx, "cle", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		h := ptr.Deref(l.Spec.HolderIdentity, "")
		return (h == "c1" || h == "c2") && l.Spec.Strategy != nil, fmt.Sprintf("%+v", l.Spec)
	})
	poll.Until(t, 30*time.Second, "the front mirrors the LeaseCandidates", func() (bool, string) {
		res, err := front.db.List(ctx, store.ListOptions{Resource: "leasecandidates.coordination.k8s.io", Namespace: "default"})
		return err == nil && len(res.Objects) == 2, fmt.Sprint(len(res.Objects), err)
	})
	if front.mirror.CandidatesRefused() != "" {
		t.Errorf("candidates refused: %s", front.mirror.CandidatesRefused())
	}
	if code, body := httpGetCode(t, front.URL+"/play?lease=cle&coordinated=1&binaryVersion=1.36.0&emulationVersion=1.35.0"); code != http.StatusOK {
		t.Errorf("a coordinated tab: %d %s", code, body)
	}
}
