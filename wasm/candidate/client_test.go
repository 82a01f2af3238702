//go:build !js

package candidate_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// TestClientOverHTTP runs the client over real HTTP against the fixture.
func TestClientOverHTTP(t *testing.T) {
	srv := newLeaseServer(time.Now)
	var auth atomic.Value
	inner := srv.handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		if r.Header.Get("Accept") != "application/json" {
			http.Error(w, "accept", http.StatusNotAcceptable)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer hs.Close()
	c := &candidate.Client{BaseURL: hs.URL + "/", Token: "s3cret", Transport: candidate.HTTPTransport{Client: hs.Client()}}
	ctx := t.Context()

	if _, err := c.GetLease(ctx, testNS, testLease); !candidate.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}
	if auth.Load() != "Bearer s3cret" {
		t.Errorf("Authorization = %v", auth.Load())
	}
	l := &candidate.Lease{Kind: candidate.LeaseKind, APIVersion: candidate.LeaseAPIVersion,
		Metadata: candidate.ObjectMeta{Name: testLease, Namespace: testNS},
		Spec:     candidate.LeaseSpec{HolderIdentity: ptr.To("a"), RenewTime: &candidate.MicroTime{Time: time.Now()}}}
	created, err := c.CreateLease(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if created.Metadata.ResourceVersion == "" || created.Metadata.Unknown["creationTimestamp"] == nil {
		t.Errorf("created %+v", created.Metadata)
	}
	if _, err := c.CreateLease(ctx, l); !candidate.IsAlreadyExists(err) || candidate.IsConflict(err) {
		t.Errorf("second create: %v", err)
	}
	got, err := c.GetLease(ctx, testNS, testLease)
	if err != nil || *got.Spec.HolderIdentity != "a" {
		t.Fatalf("get: %v %+v", err, got)
	}
	got.Spec.HolderIdentity = ptr.To("b")
	updated, err := c.UpdateLease(ctx, got)
	if err != nil || *updated.Spec.HolderIdentity != "b" || updated.Metadata.ResourceVersion == got.Metadata.ResourceVersion {
		t.Fatalf("update: %v %+v", err, updated)
	}
	_, err = c.UpdateLease(ctx, got) // stale resourceVersion
	if !candidate.IsConflict(err) || !strings.Contains(err.Error(), "the object has been modified") {
		t.Errorf("stale update: %v", err)
	}
	var ae *candidate.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 409 || ae.Status.Details == nil || ae.Status.Details.Name != testLease {
		t.Errorf("APIError %+v", ae)
	}

	// A plain-text 404 (a path no API serves) still reads as NotFound.
	plain := &candidate.Client{BaseURL: hs.URL + "/nothing-here", Transport: candidate.HTTPTransport{}}
	if _, err := plain.GetLease(ctx, "a/b", "c d"); !candidate.IsNotFound(err) || !strings.Contains(err.Error(), "404 page not found") {
		t.Errorf("plain 404: %v", err)
	}
	// No server at all: an error that is not an API error.
	hs.Close()
	if _, err := c.GetLease(ctx, testNS, testLease); err == nil || candidate.IsNotFound(err) {
		t.Errorf("closed server: %v", err)
	}
}

func TestLeasePathEscapes(t *testing.T) {
	if p := candidate.LeasePath("a b", "c/d"); p != "/apis/coordination.k8s.io/v1/namespaces/a%20b/leases/c%2Fd" {
		t.Errorf("path %s", p)
	}
	if p := candidate.LeasePath("ns", ""); p != "/apis/coordination.k8s.io/v1/namespaces/ns/leases" {
		t.Errorf("path %s", p)
	}
}

func TestNetworkFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var served atomic.Int32
		next := candidate.TransportFunc(func(ctx context.Context, req *candidate.Request) (*candidate.Response, error) {
			served.Add(1)
			return &candidate.Response{StatusCode: 200}, nil
		})
		n := candidate.NewNetwork(next, candidate.SystemClock{})
		req := &candidate.Request{Method: "GET", URL: "http://x/"}
		ctx := t.Context()

		// Latency: half each way, on the clock.
		n.SetLatency(3 * time.Second)
		start := time.Now()
		if _, err := n.RoundTrip(ctx, req); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("round trip took %s", d)
		}
		n.SetLatency(0)

		// Failing partition: at once, and nothing reaches the server.
		n.Partition(candidate.PartitionFail)
		before := served.Load()
		start = time.Now()
		if _, err := n.RoundTrip(ctx, req); !errors.Is(err, candidate.ErrPartitioned) || time.Since(start) != 0 {
			t.Errorf("fail partition: %v after %s", err, time.Since(start))
		}
		if served.Load() != before {
			t.Error("a partitioned request reached the server")
		}

		// Hanging partition: the request waits, then goes through on heal.
		n.Partition(candidate.PartitionHang)
		done := make(chan error, 1)
		go func() {
			_, err := n.RoundTrip(ctx, req)
			done <- err
		}()
		time.Sleep(time.Minute)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("returned during the partition: %v", err)
		default:
		}
		n.Partition(candidate.PartitionNone)
		if err := <-done; err != nil {
			t.Errorf("after heal: %v", err)
		}

		// Hanging partition: a context deadline cuts it.
		n.Partition(candidate.PartitionHang)
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := n.RoundTrip(cctx, req); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("hang with deadline: %v", err)
		}
		if mode, _ := n.State(); mode != candidate.PartitionHang {
			t.Errorf("mode %q", mode)
		}
	})
}
