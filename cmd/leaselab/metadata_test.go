package main

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// client-go's metadata client and informer (what garbage collectors and quota controllers use)
// read leases as PartialObjectMetadata, in protobuf as they ask first.
func TestMetadataClient(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, 30*time.Second)
	leasesGVR := schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	mc, err := metadata.NewForConfig(ts.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Client.CoordinationV1().Leases("default").Create(ctx, newLease("first", "h", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := mc.Resource(leasesGVR).Namespace("default").Get(ctx, "first", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("metadata get: %v", err)
	}
	if m.Name != "first" || m.UID == "" || len(m.ManagedFields) != 1 {
		t.Errorf("metadata get = %+v", m)
	}

	factory := metadatainformer.NewSharedInformerFactory(mc, 0)
	inf := factory.ForResource(leasesGVR).Informer()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("metadata informer did not sync")
	}
	if _, err := ts.Client.CoordinationV1().Leases("default").Create(ctx, newLease("second", "h", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the informer sees the second lease", func() (bool, string) {
		_, ok, _ := inf.GetStore().GetByKey("default/second")
		return ok, fmt.Sprintf("has %v", inf.GetStore().ListKeys())
	})

	// The same Accept header on the wire: protobuf is chosen; a Table is never protobuf.
	for accept, want := range map[string]string{
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json": "application/vnd.kubernetes.protobuf",
		"application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json":                     "application/json",
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/apis/coordination.k8s.io/v1/namespaces/default/leases", nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || got != want {
			t.Errorf("Accept %s: %d %s, want %s", accept, resp.StatusCode, got, want)
		}
	}
}
