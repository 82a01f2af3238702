package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1ac "k8s.io/client-go/applyconfigurations/coordination/v1"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/api/auth/authtest"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// apiGet performs one GET as user with a raw HTTP client (client-go would retry a 429).
func (w *workshop) apiGet(tb testing.TB, hc *http.Client, user, path string) (*http.Response, []byte) {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodGet, w.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+w.tokens[user])
	resp, err := hc.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}

// TestRateLimitIsolation: a participant flooding the server gets 429 with Retry-After, while
// another participant's lease renewals keep their latency.
func TestRateLimitIsolation(t *testing.T) {
	w := mustStartWorkshop(t, 2, "", func(c *serveConfig) { c.access.RateQPS, c.access.RateBurst = 20, 20 })
	ctx := ctxT(t, 60*time.Second)
	p2 := w.client(t, "participant-02")
	lease, err := p2.CoordinationV1().Leases("participant-02").Create(ctx, namedLease("renewed"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	renew := func(n int) []time.Duration {
		var lat []time.Duration
		for i := 0; i < n; i++ {
			lease.Spec.HolderIdentity = ptr.To("p2")
			lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			start := time.Now()
			l, err := p2.CoordinationV1().Leases("participant-02").Update(ctx, lease, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("renewal %d: %v", i, err)
			}
			lat = append(lat, time.Since(start))
			lease = l
			time.Sleep(40 * time.Millisecond) // paced as a renewing elector is, within its own bucket
		}
		slices.Sort(lat)
		return lat
	}
	base := renew(15) // 15 renewals in ~0.6 s stay within participant-02's own bucket

	hc := w.httpClient(t)
	var ok, limited atomic.Int64
	var badRetry atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, body := w.apiGet(t, hc, "participant-01", "/apis/coordination.k8s.io/v1/namespaces/participant-01/leases")
				switch resp.StatusCode {
				case 200:
					ok.Add(1)
				case 429:
					limited.Add(1)
					st := statusOf(body)
					if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 || st.Reason != metav1.StatusReasonTooManyRequests {
						badRetry.Store(fmt.Sprintf("Retry-After %q, body %s", resp.Header.Get("Retry-After"), body))
					}
				default:
					badRetry.Store(fmt.Sprintf("flood got %d %s", resp.StatusCode, body))
				}
			}
		}()
	}
	poll.Until(t, 10*time.Second, "the flooder's bucket is empty", func() (bool, string) {
		return limited.Load() > 0, fmt.Sprintf("%d requests served, none refused", ok.Load())
	})
	flood := renew(15)
	close(stop)
	wg.Wait()

	if limited.Load() == 0 {
		t.Fatalf("the flood (%d requests served) got no 429", ok.Load())
	}
	if v := badRetry.Load(); v != nil {
		t.Error(v)
	}
	median := func(d []time.Duration) time.Duration { return d[len(d)/2] }
	t.Logf("flood: %d served, %d refused; renewal latency median %v → %v, max %v → %v",
		ok.Load(), limited.Load(), median(base), median(flood), base[len(base)-1], flood[len(flood)-1])
	// Generous bounds: the point is that participant-02 is never throttled or queued behind
	// participant-01's flood.
	if m := median(flood); m > 10*median(base)+50*time.Millisecond {
		t.Errorf("renewal median under flood %v, before %v", m, median(base))
	}
	if mx := flood[len(flood)-1]; mx > 2*time.Second {
		t.Errorf("slowest renewal under flood %v", mx)
	}
	// 20 qps for ~1 s of flood (+ burst 20): far fewer served than refused.
	if ok.Load() > 200 {
		t.Errorf("%d flood requests served at 20 qps", ok.Load())
	}
}

// TestWatchAndObjectLimits: watches per identity (429) and objects per namespace (403 with a
// quota message); the instructor is not held by the quota.
func TestWatchAndObjectLimits(t *testing.T) {
	t.Parallel()
	w := mustStartWorkshop(t, 1, "", func(c *serveConfig) { c.access.MaxWatchers, c.access.MaxObjects = 2, 3 })
	ctx := ctxT(t, 30*time.Second)
	hc := w.httpClient(t)
	var open []io.Closer
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	watch := func() int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.URL+"/apis/coordination.k8s.io/v1/namespaces/arena/leases?watch=true", nil)
		req.Header.Set("Authorization", "Bearer "+w.tokens["participant-01"])
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, resp.Body)
		return resp.StatusCode
	}
	if a, b := watch(), watch(); a != 200 || b != 200 {
		t.Fatalf("first watches: %d %d", a, b)
	}
	if c := watch(); c != http.StatusTooManyRequests {
		t.Errorf("third watch: %d, want 429", c)
	}
	open[0].Close()
	open = open[1:]
	poll.Until(t, 5*time.Second, "a closed watch is released", func() (bool, string) {
		c := watch()
		return c == 200, fmt.Sprintf("watch: %d", c)
	})

	p1 := w.client(t, "participant-01")
	for i := 0; i < 3; i++ {
		if _, err := p1.CoordinationV1().Leases("participant-01").Create(ctx, namedLease(fmt.Sprint("q", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := p1.CoordinationV1().Leases("participant-01").Create(ctx, namedLease("q3"), metav1.CreateOptions{})
	overQuota := func(name string) string {
		return `leases.coordination.k8s.io "` + name + `" is forbidden: exceeded quota: leaselab-objects, requested: count/leases.coordination.k8s.io=1, used: count/leases.coordination.k8s.io=3, limited: count/leases.coordination.k8s.io=3`
	}
	if !apierrors.IsForbidden(err) || err.Error() != overQuota("q3") {
		t.Errorf("create over quota: %v\nwant %s", err, overQuota("q3"))
	}
	// A PUT or an apply to a missing name creates too, and is counted the same way; updating
	// an existing lease is not a create.
	_, err = p1.CoordinationV1().Leases("participant-01").Update(ctx, namedLease("q4"), metav1.UpdateOptions{})
	if !apierrors.IsForbidden(err) || err.Error() != overQuota("q4") {
		t.Errorf("PUT create over quota: %v\nwant %s", err, overQuota("q4"))
	}
	_, err = p1.CoordinationV1().Leases("participant-01").Apply(ctx,
		coordinationv1ac.Lease("q5", "participant-01").WithSpec(coordinationv1ac.LeaseSpec().WithHolderIdentity("me")),
		metav1.ApplyOptions{FieldManager: "quota-test"})
	if !apierrors.IsForbidden(err) || err.Error() != overQuota("q5") {
		t.Errorf("apply create over quota: %v\nwant %s", err, overQuota("q5"))
	}
	q0, err := p1.CoordinationV1().Leases("participant-01").Get(ctx, "q0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q0.Spec.HolderIdentity = ptr.To("me")
	if _, err := p1.CoordinationV1().Leases("participant-01").Update(ctx, q0, metav1.UpdateOptions{}); err != nil {
		t.Errorf("update at the quota: %v", err)
	}
	if _, err := w.client(t, "instructor").CoordinationV1().Leases("participant-01").Create(ctx, namedLease("q3"), metav1.CreateOptions{}); err != nil {
		t.Errorf("instructor over quota: %v", err)
	}
	// A body over the API's limit is 413, not a crash.
	req, _ := http.NewRequest(http.MethodPost, w.URL+"/apis/coordination.k8s.io/v1/namespaces/arena/leases", bytes.NewReader(make([]byte, 4<<20)))
	req.Header.Set("Authorization", "Bearer "+w.tokens["participant-01"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("4 MiB body: %d, want 413", resp.StatusCode)
	}
}

// TestWebSocketOrigin: a watch WebSocket authenticated with the bearer-token subprotocol works
// from this server's origin and is refused from a foreign one; a bad token is 401.
func TestWebSocketOrigin(t *testing.T) {
	w := mustStartWorkshop(t, 1, "", nil)
	hc := w.httpClient(t)
	hc.Timeout = 0
	const watchPath = "/apis/coordination.k8s.io/v1/namespaces/arena/leases?watch=true"
	dial := func(path, origin, token string) (*websocket.Conn, *http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		return websocket.Dial(ctx, "wss"+strings.TrimPrefix(w.URL, "https")+path,
			&websocket.DialOptions{HTTPClient: hc, HTTPHeader: h, Subprotocols: []string{authtest.EncodeWebSocketToken(token), "leaselab.watch"}})
	}
	c, _, err := dial(watchPath, w.URL, w.tokens["participant-01"])
	if err != nil {
		t.Fatalf("same-origin WebSocket: %v", err)
	}
	if c.Subprotocol() != "leaselab.watch" {
		t.Errorf("echoed subprotocol %q", c.Subprotocol())
	}
	c.Close(websocket.StatusNormalClosure, "")
	_, resp, err := dial(watchPath, "https://evil.example", w.tokens["participant-01"])
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign-origin WebSocket: %v %v, want 403", err, resp)
	}
	_, resp, err = dial(watchPath, w.URL, "wrong")
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("WebSocket with a bad token: %v, want 401", err)
	}
	// Everyone sees the tab stream; a participant's fault commands reach only the participant's
	// own tabs (web/play/ui's TestParticipantsCommandTheirOwnTabs), so one for no such tab is refused.
	pc, _, err := dial("/ui/tabs/watch", w.URL, w.tokens["participant-01"])
	if err != nil {
		t.Fatalf("participant's tab stream: %v", err)
	}
	wctx := ctxT(t, 10*time.Second)
	if _, _, err := pc.Read(wctx); err != nil { // the list of tabs
		t.Fatalf("participant's tab list: %v", err)
	}
	if err := pc.Write(wctx, websocket.MessageText, []byte(`{"type":"command","tab":"any","command":{"type":"pause"}}`)); err != nil {
		t.Fatal(err)
	}
	_, reply, err := pc.Read(wctx)
	if err != nil || !strings.Contains(string(reply), "no such tab") {
		t.Errorf("participant's fault command: reply %s, %v; want a refusal", reply, err)
	}
	pc.Close(websocket.StatusNormalClosure, "")
	c, _, err = dial("/ui/tabs/watch", w.URL, w.tokens["instructor"])
	if err != nil {
		t.Fatalf("instructor's tab stream: %v", err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	_, resp, err = dial("/ui/tabs/watch", "https://evil.example", w.tokens["instructor"])
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign-origin tab stream: %v, want 403", err)
	}
}

// TestBackupDuringWrites: a backup taken during a burst of writes opens and holds every write
// acknowledged before it began.
func TestBackupDuringWrites(t *testing.T) {
	t.Parallel()
	ts := mustStartServer(t, "")
	ctx := ctxT(t, 60*time.Second)
	var (
		mu    sync.Mutex
		acked []string
	)
	stop := make(chan struct{})
	done := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				name := fmt.Sprintf("w%d-%d", g, i)
				if _, err := ts.Client.CoordinationV1().Leases("default").Create(ctx, namedLease(name), metav1.CreateOptions{}); err != nil {
					done <- err
					return
				}
				mu.Lock()
				acked = append(acked, name)
				mu.Unlock()
			}
		}()
	}
	poll.Until(t, 30*time.Second, "200 acknowledged creates", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 200, fmt.Sprintf("%d acknowledged", len(acked))
	})
	mu.Lock()
	before := slices.Clone(acked)
	mu.Unlock()
	dst := filepath.Join(t.TempDir(), "backup.db")
	var out, errOut bytes.Buffer
	if err := runBackup(ctx, []string{dst, "--db", ts.DB}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	close(stop)
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	objs, err := sqlite.ReadObjects(ctx, dst, "leases.coordination.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, o := range objs {
		have[o.Name] = true
	}
	for _, name := range before {
		if !have[name] {
			t.Fatalf("backup lacks %s, acknowledged before the backup began (%d of %d acknowledged in it)", name, len(have), len(before))
		}
	}
	t.Logf("%d writes acknowledged before the backup, %d in it, %d in all", len(before), len(have), len(acked))
	// The copy is a database leaselab opens.
	b := mustStartServer(t, dst)
	l, err := b.Client.CoordinationV1().Leases("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != len(have) {
		t.Fatalf("serving the backup: %v, %d leases", err, len(l.Items))
	}
	if err := runBackup(ctx, []string{"--db", ts.DB, dst}, &out, &errOut); err == nil {
		t.Error("a backup overwrote an existing file")
	}
}

// TestExport: the change log as JSON lines, without the workshop's tokens.
func TestExport(t *testing.T) {
	w := mustStartWorkshop(t, 1, "", nil)
	ctx := ctxT(t, 30*time.Second)
	p1 := w.client(t, "participant-01")
	if _, err := p1.CoordinationV1().Leases("arena").Create(ctx, namedLease("exported"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := p1.CoordinationV1().Leases("arena").Delete(ctx, "exported", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := runExport(ctx, []string{"--db", w.DB}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	var types []string
	last := int64(0)
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var c sqlite.ExportedChange
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if c.Revision <= last {
			t.Errorf("revision %d after %d", c.Revision, last)
		}
		last = c.Revision
		if c.Resource == auth.IdentityResource || bytes.Contains(sc.Bytes(), []byte(w.tokens["participant-01"])) {
			t.Fatalf("the export holds a workshop identity: %s", sc.Text())
		}
		if c.Name == "exported" {
			types = append(types, c.Type)
			var obj map[string]any
			if err := json.Unmarshal(c.Object, &obj); err != nil {
				t.Errorf("object of %s: %v", sc.Text(), err)
			}
		}
	}
	if fmt.Sprint(types) != "[ADDED DELETED]" {
		t.Errorf("changes of the lease: %v", types)
	}
}

// TestMalformedInputKeepsServing: inputs the fuzz targets found to break a handler get an
// answer (a Status, never a dropped connection) and the server goes on serving.
func TestMalformedInputKeepsServing(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, 20*time.Second)
	if _, err := ts.Client.CoordinationV1().Leases("default").Create(ctx, namedLease("p"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path, ctype, body string }{
		{http.MethodPatch, "/apis/coordination.k8s.io/v1/namespaces/default/leases/p", "application/json-patch+json", `[{"op":"replace","path":""}]`},
		{http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/default/leases?limit=-95", "", ""},
		{http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/default/leases?limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiIn0", "", ""},
	} {
		req, _ := http.NewRequestWithContext(ctx, c.method, ts.URL+c.path, strings.NewReader(c.body))
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if st := statusOf(b); resp.StatusCode >= 300 && (st.Kind != "Status" || int(st.Code) != resp.StatusCode) {
			t.Errorf("%s %s: %d %s", c.method, c.path, resp.StatusCode, b)
		}
		t.Logf("%s %s %s: %d", c.method, c.path, c.body, resp.StatusCode)
	}
	if _, err := ts.Client.CoordinationV1().Leases("default").Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Errorf("after the malformed requests: %v", err)
	}
}

// TestQuotaUnderConcurrentCreates: creates sent together are counted one after another, so
// that they cannot all pass the same count and overshoot the quota.
func TestQuotaUnderConcurrentCreates(t *testing.T) {
	w := mustStartWorkshop(t, 1, "", func(c *serveConfig) { c.access.MaxObjects = 5 })
	ctx := ctxT(t, 30*time.Second)
	p1 := w.client(t, "participant-01")
	var created, refused atomic.Int64
	var wg sync.WaitGroup
	// Ten at once: client-go's own rate limiter lets a burst of ten through together.
	for i := range 10 {
		wg.Go(func() {
			_, err := p1.CoordinationV1().Leases("participant-01").Create(ctx, namedLease(fmt.Sprint("c", i)), metav1.CreateOptions{})
			switch {
			case err == nil:
				created.Add(1)
			case apierrors.IsForbidden(err):
				refused.Add(1)
			default:
				t.Errorf("create c%d: %v", i, err)
			}
		})
	}
	wg.Wait()
	list, err := p1.CoordinationV1().Leases("participant-01").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Load() != 5 || refused.Load() != 5 || len(list.Items) != 5 {
		t.Errorf("created %d, refused %d, stored %d; want 5, 5, 5", created.Load(), refused.Load(), len(list.Items))
	}
}

// TestControllerCountsAgainstQuota: Leases the election controller creates for a participant's
// LeaseCandidates count against the participant's quota; the refused create is a decision that
// says why, and nothing more is created.
func TestControllerCountsAgainstQuota(t *testing.T) {
	w := mustStartWorkshop(t, 1, "", func(c *serveConfig) {
		c.access.MaxObjects = 2
		c.cleController = true
		c.cleElectionDuration = 500 * time.Millisecond
		c.cleRequeueInterval = 300 * time.Millisecond
		c.cleLeaseDuration = 2 * time.Second
	})
	ctx := ctxT(t, time.Minute)
	const ns = "participant-01"
	cands := w.client(t, ns).CoordinationV1beta1().LeaseCandidates(ns)
	leases := w.client(t, ns).CoordinationV1().Leases(ns)
	// The candidates answer the controller's pings, as a coordinated elector does.
	var mu sync.Mutex
	live := map[string]bool{}
	go func() {
		for ctx.Err() == nil {
			mu.Lock()
			names := slices.Collect(maps.Keys(live))
			mu.Unlock()
			for _, name := range names {
				if c, err := cands.Get(ctx, name, metav1.GetOptions{}); err == nil {
					now := metav1.NewMicroTime(time.Now())
					c.Spec.RenewTime = &now
					cands.Update(ctx, c, metav1.UpdateOptions{})
				}
			}
			time.Sleep(200 * time.Millisecond) // the renewal cadence of a live elector
		}
	}()
	candidate := func(name, lease string) {
		t.Helper()
		now := metav1.NewMicroTime(time.Now())
		if _, err := cands.Create(ctx, &coordinationv1beta1.LeaseCandidate{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: lease, RenewTime: &now, BinaryVersion: "1.36.0",
				EmulationVersion: "1.36.0", Strategy: coordinationv1.OldestEmulationVersion},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		live[name] = true
		mu.Unlock()
	}
	countLeases := func() (int, string) {
		l, err := leases.List(ctx, metav1.ListOptions{})
		if err != nil {
			return -1, err.Error()
		}
		var names []string
		for _, x := range l.Items {
			names = append(names, x.Name)
		}
		return len(l.Items), strings.Join(names, ",")
	}
	candidate("c0", "l0")
	candidate("c1", "l1")
	poll.Until(t, 30*time.Second, "the controller creates a Lease per candidate", func() (bool, string) {
		n, names := countLeases()
		return n == 2, "leases " + names
	})
	for _, name := range []string{"c0", "c1"} {
		mu.Lock()
		delete(live, name)
		mu.Unlock()
		if err := cands.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	candidate("c2", "l2")
	poll.Until(t, 30*time.Second, "the refused create is a decision with its reason", func() (bool, string) {
		ds := w.election.Decisions(ns, "l2")
		var last string
		for _, d := range ds {
			last = string(d.Kind) + ": " + d.Message
			if d.Kind == election.KindError && strings.Contains(d.Message, "exceeded quota") {
				return true, last
			}
		}
		return false, fmt.Sprintf("%d decisions, last %q", len(ds), last)
	})
	if n, names := countLeases(); n != 2 {
		t.Errorf("leases in %s: %s, want at most the quota of 2", ns, names)
	}
}

// TestObjectSizeLimit: in a workshop, an object in a participant's namespace may take at most
// --max-object-bytes, on create and on update; the refusal is 413 and says the limit; the
// instructor is not limited.
func TestObjectSizeLimit(t *testing.T) {
	w := mustStartWorkshop(t, 1, "", func(c *serveConfig) { c.access.MaxBytes = 4096 })
	ctx := ctxT(t, 30*time.Second)
	const ns = "participant-01"
	p1 := w.client(t, ns).CoordinationV1().Leases(ns)
	withHolder := func(name string, n int) *coordinationv1.Lease {
		l := namedLease(name)
		l.Spec.HolderIdentity = ptr.To(strings.Repeat("h", n))
		return l
	}
	l, err := p1.Create(ctx, withHolder("small", 100), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p1.Create(ctx, withHolder("big", 8000), metav1.CreateOptions{})
	if !apierrors.IsRequestEntityTooLargeError(err) || !strings.Contains(err.Error(), "at most 4096 bytes") {
		t.Errorf("a create of 8000 bytes: %v", err)
	}
	l.Spec.HolderIdentity = ptr.To(strings.Repeat("h", 8000))
	if _, err := p1.Update(ctx, l, metav1.UpdateOptions{}); !apierrors.IsRequestEntityTooLargeError(err) {
		t.Errorf("an update to 8000 bytes: %v", err)
	}
	if _, err := w.client(t, "instructor").CoordinationV1().Leases(ns).Create(ctx, withHolder("teacher", 8000), metav1.CreateOptions{}); err != nil {
		t.Errorf("the instructor's create: %v", err)
	}
	if got, err := p1.Get(ctx, "small", metav1.GetOptions{}); err != nil || len(*got.Spec.HolderIdentity) != 100 {
		t.Errorf("the refused update changed the lease: %v", err)
	}
}
