package inprocess_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/labstack/echo/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/apiserver"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/api/inprocess"
	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/api/request"
)

// get sends a GET through t and returns the response.
func get(tb testing.TB, t http.RoundTripper, ctx context.Context, path string) *http.Response {
	tb.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+inprocess.Host+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := t.RoundTrip(req)
	if err != nil {
		tb.Fatalf("GET %s: %v", path, err)
	}
	return resp
}

// TestComplete: a response the handler completes arrives whole, with its status, header and
// length; the header as it was when written.
func TestComplete(t *testing.T) {
	tr := inprocess.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/x" || r.URL.RawQuery != "a=1" || r.RequestURI != "/x?a=1" || r.Host != inprocess.Host || r.UserAgent() != "Go-http-client/1.1" {
			t.Errorf("server request: %s %q %q %q %q", r.URL, r.RequestURI, r.Host, r.UserAgent(), r.URL.RawQuery)
		}
		w.Header().Set("X-Kept", "1")
		w.WriteHeader(http.StatusTeapot)
		w.Header().Set("X-Late", "ignored")
		io.WriteString(w, "short and stout")
	}))
	resp := get(t, tr, context.Background(), "/x?a=1")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot || string(b) != "short and stout" || resp.ContentLength != 15 ||
		resp.Header.Get("X-Kept") != "1" || resp.Header.Get("X-Late") != "" || resp.Header.Get("Content-Length") != "15" {
		t.Errorf("%d %q %d %v", resp.StatusCode, b, resp.ContentLength, resp.Header)
	}
}

// TestStream: each flush reaches the reader while the handler still runs; closing the body
// fails the handler's next write.
func TestStream(t *testing.T) {
	next, ended := make(chan struct{}), make(chan error, 1)
	tr := inprocess.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; ; i++ {
			if _, err := io.WriteString(w, "frame\n"); err != nil {
				ended <- err
				return
			}
			if err := http.NewResponseController(w).Flush(); err != nil {
				ended <- err
				return
			}
			<-next
		}
	}))
	resp := get(t, tr, context.Background(), "/watch")
	if resp.ContentLength != -1 || len(resp.TransferEncoding) != 1 {
		t.Errorf("a stream has length %d, transfer encoding %v", resp.ContentLength, resp.TransferEncoding)
	}
	buf := make([]byte, 6)
	for i := 0; i < 3; i++ {
		if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "frame\n" {
			t.Fatalf("frame %d: %q %v", i, buf, err)
		}
		next <- struct{}{}
	}
	resp.Body.Close()
	close(next)
	select {
	case err := <-ended:
		if err == nil {
			t.Error("the handler's write after Close succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler still writes after the body was closed")
	}
}

// TestCancel: the request's context ending ends the stream for the handler and the reader.
func TestCancel(t *testing.T) {
	ended := make(chan struct{})
	tr := inprocess.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(ended)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	ctx, cancel := context.WithCancel(context.Background())
	resp := get(t, tr, ctx, "/watch")
	defer resp.Body.Close()
	read := make(chan error, 1)
	go func() {
		_, err := resp.Body.Read(make([]byte, 1))
		read <- err
	}()
	cancel()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not see the cancellation")
	}
	select {
	case err := <-read:
		if err == nil {
			t.Error("a read after the cancellation returned data")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reader is still blocked")
	}
}

// TestUpgradeRefused: a WebSocket upgrade fails at once and never reaches the handler.
func TestUpgradeRefused(t *testing.T) {
	tr := inprocess.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the handler was called")
	}))
	req, _ := http.NewRequest(http.MethodGet, "http://"+inprocess.Host+"/apis/coordination.k8s.io/v1/leases?watch=1", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	if _, err := tr.RoundTrip(req); !errors.Is(err, inprocess.ErrUpgrade) {
		t.Errorf("err %v, want ErrUpgrade", err)
	}
}

// TestAbort: a handler that aborts its response (http.ErrAbortHandler) fails the request as a
// reset connection, which client-go retries a read after (a second later: fake time here), as
// over a network.
func TestAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		tr := inprocess.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				panic(http.ErrAbortHandler)
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","metadata":{},"items":[]}`)
		}))
		req, _ := http.NewRequest(http.MethodGet, "http://"+inprocess.Host+"/apis/coordination.k8s.io/v1/leases", nil)
		_, err := tr.RoundTrip(req)
		if !errors.Is(err, syscall.ECONNRESET) || !utilnet.IsConnectionReset(err) || !utilnet.IsProbableEOF(err) {
			t.Fatalf("aborted: %v, want a reset connection", err)
		}
		client := kubernetes.NewForConfigOrDie(tr.RESTConfig("abort-test"))
		calls.Store(0)
		if _, err := client.CoordinationV1().Leases("").List(t.Context(), metav1.ListOptions{}); err != nil || calls.Load() != 2 {
			t.Errorf("client-go list after an aborted response: %v after %d calls, want it retried once", err, calls.Load())
		}
	})
}

// TestIdentity: a Transport made As a user carries that user, marked in-process; a plain
// Transport carries the user of the context it is given (the request being served).
func TestIdentity(t *testing.T) {
	var got auth.User
	var inProc bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = auth.UserFrom(r.Context())
		inProc = request.InProcess(r.Context())
	})
	election := auth.User{Name: "system:leaselab:election", Role: auth.RoleInstructor}
	get(t, inprocess.New(h).As(election), context.Background(), "/").Body.Close()
	if got.Name != election.Name || !inProc {
		t.Errorf("As: user %+v, in-process %v", got, inProc)
	}
	alice := auth.User{Name: "alice", Role: auth.RoleParticipant, Namespace: "alice"}
	get(t, inprocess.New(h), auth.WithUser(context.Background(), alice), "/").Body.Close()
	if got.Name != "alice" || !inProc {
		t.Errorf("forwarded: user %+v, in-process %v", got, inProc)
	}
}

// mustStartAPI serves the API server on a SQLite store through a Transport.
func mustStartAPI(tb testing.TB) *inprocess.Transport {
	tb.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "leaselab.db"), sqlite.Options{CompactInterval: -1}, logger)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	api, err := apiserver.New(logger, kinds.NewRegistry(kinds.DefaultOptions()), db, apiserver.Options{Context: ctx})
	if err != nil {
		tb.Fatal(err)
	}
	e := echo.New()
	api.Register(e)
	tb.Cleanup(func() {
		cancel()
		db.Close()
	})
	return inprocess.New(e)
}

// TestClientGoWatch: client-go's typed client and its watch work through the Transport, and
// cancelling the watch's context ends it.
func TestClientGoWatch(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(mustStartAPI(t).RESTConfig("inprocess-test/v0"))
	leases := client.CoordinationV1().Leases("default")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := leases.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder := "a"
	created, err := leases.Create(context.Background(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mf := created.ManagedFields; len(mf) != 1 || mf[0].Manager != "inprocess-test" {
		t.Errorf("managed fields %+v", mf)
	}
	select {
	case ev := <-w.ResultChan():
		if l, ok := ev.Object.(*coordinationv1.Lease); ev.Type != watch.Added || !ok || l.Name != "demo" {
			t.Errorf("event %s %T", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	cancel()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, open := <-w.ResultChan():
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("the watch goes on after its context was cancelled")
		}
	}
}

// TestInformer: an informer lists, watches and sees a change through the Transport.
func TestInformer(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(mustStartAPI(t).RESTConfig("inprocess-test/v0"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := informers.NewSharedInformerFactory(client, 0)
	seen := make(chan string, 10)
	inf := factory.Coordination().V1().Leases().Informer()
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) { seen <- obj.(*coordinationv1.Lease).Name }})
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("no sync")
	}
	if _, err := client.CoordinationV1().Leases("team").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "seen"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case name := <-seen:
		if !strings.EqualFold(name, "seen") {
			t.Errorf("informer saw %q", name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the informer saw nothing")
	}
	cancel()
}
