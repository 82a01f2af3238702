package apiserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/kinds"
)

const (
	mediaJSON     = "application/json"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// BenchmarkCodec is the request decode and response encode of a Lease, in JSON and protobuf,
// through the registry's codecs as the server uses them.
func BenchmarkCodec(b *testing.B) {
	reg := kinds.NewRegistry(kinds.DefaultOptions())
	gv := schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}
	gvk := gv.WithKind("Lease")
	for _, media := range []string{mediaJSON, mediaProtobuf} {
		info, ok := runtime.SerializerInfoForMediaType(reg.Codecs.SupportedMediaTypes(), media)
		if !ok {
			b.Fatalf("no serializer for %s", media)
		}
		enc := reg.Codecs.EncoderForVersion(info.Serializer, gv)
		var body bytes.Buffer
		obj, _, err := reg.Codecs.UniversalDeserializer().Decode([]byte(leaseJSON("bench", "holder")), &gvk, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := enc.Encode(obj, &body); err != nil {
			b.Fatal(err)
		}
		b.Run("decode/"+media, func(b *testing.B) {
			for b.Loop() {
				into := &coordinationv1.Lease{}
				if _, _, err := info.Serializer.Decode(body.Bytes(), &gvk, into); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("encode/"+media, func(b *testing.B) {
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				if err := enc.Encode(obj, &out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkServeRenewal is one lease renewal as client-go's LeaseLock does it, GET then PUT
// with the resourceVersion read, served in process (no network) by the API server on SQLite:
// negotiation, decoding, managed fields, validation, the store's group commit and encoding.
func BenchmarkServeRenewal(b *testing.B) {
	api := MustStartAPI(b, sqlite.Options{})
	h := api.Handler
	var n atomic.Int64
	b.SetParallelism(8) // with GOMAXPROCS 2: 16 concurrent electors
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		name := fmt.Sprintf("elector-%d", n.Add(1))
		path := leasesPath + "/" + name
		do := func(method, path, body string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("User-Agent", "elector/v1")
			req.Header.Set("Content-Type", mediaJSON)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			return w
		}
		if w := do(http.MethodPost, leasesPath, leaseJSON(name, name)); w.Code != http.StatusCreated {
			b.Errorf("create: %d %s", w.Code, w.Body)
			return
		}
		for i := 0; pb.Next(); i++ {
			w := do(http.MethodGet, path, "")
			if w.Code != http.StatusOK {
				b.Errorf("get: %d %s", w.Code, w.Body)
				return
			}
			// The renewal: a new renewTime in the object as read.
			var l coordinationv1.Lease
			if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil {
				b.Error(err)
				return
			}
			l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now()))
			out, _ := json.Marshal(&l)
			body := string(out)
			if w := do(http.MethodPut, path, body); w.Code != http.StatusOK {
				b.Errorf("update: %d %s", w.Code, w.Body)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "renewals/s")
}

// BenchmarkWatchFanout measures lease updates delivered to 100 chunked HTTP watchers of the
// API; an op is one update received by every watcher.
func BenchmarkWatchFanout(b *testing.B) {
	api := MustStartAPI(b, sqlite.Options{})
	const watchers = 100
	rv := api.MustCreate(b, leasesPath, leaseJSON("fan", "a"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, watchers)
	for range watchers {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api.URL+leasesPath+"?watch=1&resourceVersion="+rv, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			defer resp.Body.Close()
			r := bufio.NewReaderSize(resp.Body, 64<<10)
			for range b.N {
				if _, err := r.ReadBytes('\n'); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	b.ResetTimer()
	for i := range b.N {
		body := fmt.Sprintf(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"fan","resourceVersion":%q},"spec":{"holderIdentity":"h%d"}}`, rv, i)
		rv = api.MustDo(b, http.StatusOK, http.MethodPut, leasesPath+"/fan", body, "Content-Type", mediaJSON)
	}
	for range watchers {
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}
