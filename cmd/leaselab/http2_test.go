package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/leaselab/leaselab/cmd/internal/access"
	"github.com/leaselab/leaselab/web/api/auth/authtest"
)

// protocols records the protocol of every response a client got.
type protocols struct {
	mu   sync.Mutex
	seen map[string]int
	next http.RoundTripper
}

func (p *protocols) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.next.RoundTrip(req)
	if err == nil {
		p.mu.Lock()
		p.seen[resp.Proto]++
		p.mu.Unlock()
	}
	return resp, err
}

func (p *protocols) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for proto, n := range p.seen {
		b.WriteString(proto + "×" + strconv.Itoa(n) + " ")
	}
	return b.String()
}

// TestHTTP2: with --http2, client-go reaches the server over HTTP/2 (its requests and its
// watch on one connection, as with kube-apiserver) and a watch delivers; WebSockets (the API
// watch and the dashboard's streams) still upgrade, over HTTP/1.1, even from a client that
// offers h2. Without the flag, client-go speaks HTTP/1.1. Without TLS the flag is refused.
func TestHTTP2(t *testing.T) {
	t.Parallel()
	for _, h2 := range []bool{true, false} {
		w := mustStartWorkshop(t, 1, "", func(c *serveConfig) { c.access.HTTP2 = h2 })
		want := "HTTP/1.1"
		if h2 {
			want = "HTTP/2.0"
		}
		seen := &protocols{seen: map[string]int{}}
		cfg := w.restConfig("participant-01")
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { seen.next = rt; return seen })
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx := ctxT(t, 30*time.Second)
		leases := c.CoordinationV1().Leases("participant-01")
		lease, err := leases.Create(ctx, namedLease("h2"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wi, err := leases.Watch(ctx, metav1.ListOptions{ResourceVersion: lease.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		holder := "over-" + want
		lease.Spec.HolderIdentity = &holder
		if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-wi.ResultChan():
			if ev.Type != watch.Modified {
				t.Errorf("http2=%v: watch event %s %v", h2, ev.Type, ev.Object)
			}
		case <-ctx.Done():
			t.Fatalf("http2=%v: the watch delivered nothing", h2)
		}
		wi.Stop()
		if s := seen.String(); !strings.HasPrefix(s, want+"×") || strings.Count(s, "×") != 1 {
			t.Errorf("http2=%v: client-go's responses came over %s, want %s only", h2, s, want)
		}

		// A client that offers h2 still gets its WebSockets, over HTTP/1.1.
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(w.access.CAData)
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
		for _, path := range []string{"/apis/coordination.k8s.io/v1/namespaces/participant-01/leases?watch=true", "/ui/board/watch"} {
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			conn, resp, err := websocket.Dial(dctx, "wss"+strings.TrimPrefix(w.URL, "https")+path, &websocket.DialOptions{
				HTTPClient: hc, HTTPHeader: http.Header{"Origin": {w.URL}},
				Subprotocols: []string{authtest.EncodeWebSocketToken(w.tokens["participant-01"]), "leaselab.watch"},
			})
			if err != nil {
				cancel()
				t.Fatalf("http2=%v: WebSocket %s: %v", h2, path, err)
			}
			if resp.Proto != "HTTP/1.1" {
				t.Errorf("http2=%v: WebSocket %s upgraded over %s", h2, path, resp.Proto)
			}
			if _, _, err := conn.Read(dctx); err != nil {
				t.Errorf("http2=%v: WebSocket %s: first message: %v", h2, path, err)
			}
			conn.CloseNow()
			cancel()
		}
		if !h2 {
			_, err := access.New(ctx, access.Config{TLS: "off", HTTP2: true}, "127.0.0.1:0", "127.0.0.1:0", "", w.db, discardLogger())
			if err == nil || !strings.Contains(err.Error(), "--tls on") {
				t.Errorf("--http2 without TLS: %v, want a refusal naming --tls on", err)
			}
		}
		w.Close()
	}
}
