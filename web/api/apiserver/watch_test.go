package apiserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store/sqlite"
)

const mergePatch = "application/merge-patch+json"

// addedFrame is the frame of an ADDED event for an object as GET returns it.
func addedFrame(typ string, get []byte) string {
	return `{"type":"` + typ + `","object":` + string(bytes.TrimSuffix(get, []byte("\n"))) + "}\n"
}

// TestWatchInitialEvents is lease-watch-bookmarks-sendinitialevents: the initial ADDED events,
// the bookmark that ends them, then live events.
func TestWatchInitialEvents(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("sample-lease", "holder-a"))
	a.MustCreate(t, leasesPath, leaseJSON("sample-watch", "holder-a"))
	a.MustCreate(t, "/apis/coordination.k8s.io/v1/namespaces/other/leases", leaseWithLabel("elsewhere", "app", "peer-sample"))
	getLease := a.Do(t, http.MethodGet, leasesPath+"/sample-lease", "")
	listRV := a.mustList(t, leasesPath).Metadata.ResourceVersion

	w := a.MustWatch(t, leasesPath+"?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
	if got, want := string(w.Next(t)), addedFrame("ADDED", getLease.Body); got != want {
		t.Errorf("first frame:\n%s\nwant:\n%s", got, want)
	}
	WantEvent(t, w.NextEvent(t), "ADDED", "sample-watch", "")
	bookmark := `{"type":"BOOKMARK","object":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"resourceVersion":"` + listRV + `","annotations":{"k8s.io/initial-events-end":"true"}},"spec":{}}}` + "\n"
	if got := string(w.Next(t)); got != bookmark {
		t.Errorf("bookmark:\n%s\nwant:\n%s", got, bookmark)
	}

	rv := a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/sample-watch", `{"spec":{"holderIdentity":"holder-w1"}}`, "Content-Type", mergePatch)
	get := a.Do(t, http.MethodGet, leasesPath+"/sample-watch", "")
	if got, want := string(w.Next(t)), addedFrame("MODIFIED", get.Body); got != want {
		t.Errorf("MODIFIED frame:\n%s\nwant:\n%s", got, want)
	}
	r := a.Do(t, http.MethodDelete, leasesPath+"/sample-watch", "")
	WantCode(t, r, http.StatusOK)
	// DELETED carries the last state with the resourceVersion of the delete.
	del := w.NextEvent(t)
	m := WantEvent(t, del, "DELETED", "sample-watch", "")
	if delRV, updRV := mustAtoi(t, m.Metadata.ResourceVersion), mustAtoi(t, rv); delRV <= updRV {
		t.Errorf("DELETED at %d, not after the update at %d", delRV, updRV)
	}
	if want := strings.Replace(string(get.Body), `"resourceVersion":"`+rv+`"`, `"resourceVersion":"`+m.Metadata.ResourceVersion+`"`, 1); string(del.raw) != addedFrame("DELETED", []byte(want)) {
		t.Errorf("DELETED frame:\n%s\nwant the last state:\n%s", del.raw, want)
	}
	rv = a.MustCreate(t, leasesPath, leaseJSON("sample-watch", "holder-a"))
	WantEvent(t, w.NextEvent(t), "ADDED", "sample-watch", rv)
}

func mustAtoi(tb testing.TB, s string) int64 {
	tb.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		tb.Fatalf("resourceVersion %q: %v", s, err)
	}
	return n
}

// TestWatchStarts checks where a watch starts: after a resourceVersion, or with the current
// objects as ADDED events.
func TestWatchStarts(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	from := a.MustCreate(t, leasesPath, leaseJSON("a", "holder-a"))
	rv1 := a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/a", `{"spec":{"holderIdentity":"holder-w1"}}`, "Content-Type", mergePatch)
	rv2 := a.MustCreate(t, leasesPath, leaseJSON("b", "holder-a"))

	t.Run("lease-watch-from-resourceversion", func(t *testing.T) {
		w := a.MustWatch(t, leasesPath+"?watch=true&resourceVersion="+from)
		WantEvent(t, w.NextEvent(t), "MODIFIED", "a", rv1)
		WantEvent(t, w.NextEvent(t), "ADDED", "b", rv2)
		rv := a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/b", `{"spec":{"holderIdentity":"holder-w2"}}`, "Content-Type", mergePatch)
		WantEvent(t, w.NextEvent(t), "MODIFIED", "b", rv)
	})
	t.Run("lease-watch-no-resourceversion-initial-adds", func(t *testing.T) {
		// Without a resourceVersion: the current objects, without a bookmark (none asked for).
		w := a.MustWatch(t, leasesPath+"?watch=1")
		WantEvent(t, w.NextEvent(t), "ADDED", "a", rv1)
		WantEvent(t, w.NextEvent(t), "ADDED", "b", "")
		rv := a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/a", `{"spec":{"holderIdentity":"holder-w3"}}`, "Content-Type", mergePatch)
		WantEvent(t, w.NextEvent(t), "MODIFIED", "a", rv)
	})
	t.Run("sendInitialEvents=false", func(t *testing.T) {
		cur := a.mustList(t, leasesPath).Metadata.ResourceVersion
		w := a.MustWatch(t, leasesPath+"?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion="+cur)
		rv := a.MustCreate(t, leasesPath, leaseJSON("c", "holder-a"))
		WantEvent(t, w.NextEvent(t), "ADDED", "c", rv)
	})
	t.Run("lease-watch-single-object-fieldselector", func(t *testing.T) {
		for _, path := range []string{
			leasesPath + "?watch=true&fieldSelector=metadata.name%3Db",
			"/apis/coordination.k8s.io/v1/watch/namespaces/default/leases/b",
		} {
			w := a.MustWatch(t, path)
			WantEvent(t, w.NextEvent(t), "ADDED", "b", "")
			w.Close()
		}
		r := a.Do(t, http.MethodGet, "/apis/coordination.k8s.io/v1/watch/namespaces/default/leases/b?fieldSelector=metadata.name%3Da", "")
		WantBody(t, r, http.StatusBadRequest, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"fieldSelector metadata.name doesn't match requested name","reason":"BadRequest","code":400}`+"\n")
	})
	t.Run("protobuf", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.URL+leasesPath+"?watch=true", nil)
		req.Header.Set("Accept", "application/vnd.kubernetes.protobuf")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/vnd.kubernetes.protobuf;stream=watch" {
			t.Errorf("status %d, Content-Type %q", resp.StatusCode, ct)
		}
		// Each frame is a 4-byte big-endian length and a protobuf WatchEvent.
		var n [4]byte
		if _, err := io.ReadFull(resp.Body, n[:]); err != nil || n[0] != 0 {
			t.Errorf("frame length %v: %v", n, err)
		}
	})
	t.Run("YAML", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath+"?watch=true", "", "Accept", "application/yaml, application/json")
		WantCode(t, r, http.StatusNotAcceptable)
		if ct := r.Header.Get("Content-Type"); ct != "application/yaml" || !bytes.Contains(r.Body, []byte("message: 'only the following media types are accepted: application/json;stream=watch,")) {
			t.Errorf("Content-Type %q body:\n%s", ct, r.Body)
		}
	})
	t.Run("lease-watch-timeoutseconds1", func(t *testing.T) {
		start := time.Now()
		cur := a.mustList(t, leasesPath).Metadata.ResourceVersion
		w := a.MustWatch(t, leasesPath+"?watch=true&timeoutSeconds=1&resourceVersion="+cur)
		w.WantEnd(t, 5*time.Second)
		if d := time.Since(start); d < 900*time.Millisecond {
			t.Errorf("ended after %v", d)
		}
	})
}

// TestWatchLabelSelector checks that objects moving into and out of a label selection are
// ADDED and DELETED, the DELETED with the previous content and the new resourceVersion.
func TestWatchLabelSelector(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	from := a.MustCreate(t, leasesPath, leaseWithLabel("l", "app", "out"))
	w := a.MustWatch(t, leasesPath+"?watch=true&labelSelector=app%3Din&resourceVersion="+from)

	patch := func(body string) string {
		return a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/l", body, "Content-Type", mergePatch)
	}
	patch(`{"spec":{"holderIdentity":"unseen"}}`) // outside the selection: no event
	rv := patch(`{"metadata":{"labels":{"app":"in"}}}`)
	WantEvent(t, w.NextEvent(t), "ADDED", "l", rv)
	rv = patch(`{"spec":{"holderIdentity":"seen"}}`)
	WantEvent(t, w.NextEvent(t), "MODIFIED", "l", rv)
	rv = patch(`{"metadata":{"labels":{"app":"out"}}}`)
	m := WantEvent(t, w.NextEvent(t), "DELETED", "l", rv)
	if m.Metadata.Labels["app"] != "in" || *m.Spec.HolderIdentity != "seen" {
		t.Errorf("DELETED carries %+v, want the content before the move", m)
	}
	patch(`{"spec":{"holderIdentity":"unseen again"}}`)
	a.MustCreate(t, leasesPath, leaseWithLabel("m", "app", "in"))
	WantEvent(t, w.NextEvent(t), "ADDED", "m", "")
}

// TestWatchTable checks a Table watch as kubectl get -w makes it: column definitions in the
// first event only.
func TestWatchTable(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("a", "holder-a"))
	a.MustCreate(t, leasesPath, leaseJSON("b", "holder-b"))
	w := a.MustWatch(t, leasesPath+"?watch=true", "Accept", tableAccept+",application/json")
	first := w.NextEvent(t)
	if m := first.Meta(t); first.Type != "ADDED" || m.Kind != "Table" || m.APIVersion != "meta.k8s.io/v1" ||
		!bytes.Contains(first.Object, []byte(leaseColumns+`,"rows":[{"cells":["a","holder-a",`)) {
		t.Errorf("first event %s", first.raw)
	}
	second := w.NextEvent(t)
	if !bytes.Contains(second.Object, []byte(`"columnDefinitions":null,"rows":[{"cells":["b","holder-b",`)) {
		t.Errorf("second event %s", second.raw)
	}
	a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/a", `{"spec":{"holderIdentity":"holder-c"}}`, "Content-Type", mergePatch)
	third := w.NextEvent(t)
	if third.Type != "MODIFIED" || !bytes.Contains(third.Object, []byte(`"columnDefinitions":null,"rows":[{"cells":["a","holder-c",`)) ||
		!bytes.Contains(third.Object, []byte(`"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a",`)) {
		t.Errorf("third event %s", third.raw)
	}
}

// TestCompacted checks reads below the compacted revision: a 410 list, and a watch that is
// accepted and then ends with one ERROR event.
func TestCompacted(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{CompactKeep: 1})
	from := a.MustCreate(t, leasesPath, leaseJSON("c", "holder-a"))
	for i := range 3 {
		a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/c", fmt.Sprintf(`{"spec":{"holderIdentity":"h%d"}}`, i), "Content-Type", mergePatch)
	}
	ctx := context.Background()
	if _, err := a.DB.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	_, compacted, err := a.DB.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.ParseInt(from, 10, 64); compacted <= n {
		t.Fatalf("compacted to %d, not past %s", compacted, from)
	}

	t.Run("list Exact", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath+"?resourceVersionMatch=Exact&resourceVersion="+from, "")
		WantBody(t, r, http.StatusGone, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The resourceVersion for the provided list is too old.","reason":"Expired","code":410}`+"\n")
	})
	t.Run("watch", func(t *testing.T) {
		w := a.MustWatch(t, leasesPath+"?watch=true&resourceVersion="+from)
		want := fmt.Sprintf(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: %s (%d)","reason":"Expired","code":410}}`+"\n", from, compacted)
		if got := string(w.Next(t)); got != want {
			t.Errorf("frame:\n%s\nwant:\n%s", got, want)
		}
		w.WantEnd(t, 5*time.Second)
	})
	t.Run("continue past compaction", func(t *testing.T) {
		a.MustCreate(t, leasesPath, leaseJSON("d", "holder-a"))
		a.MustCreate(t, leasesPath, leaseJSON("e", "holder-a"))
		p1 := a.mustList(t, leasesPath+"?limit=1")
		wantNames(t, p1, "c")
		for i := range 2 {
			a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/d", fmt.Sprintf(`{"spec":{"holderIdentity":"h%d"}}`, i), "Content-Type", mergePatch)
		}
		if _, err := a.DB.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		r := a.Do(t, http.MethodGet, leasesPath+"?limit=1&continue="+url.QueryEscape(p1.Metadata.Continue), "")
		WantCode(t, r, http.StatusGone)
		st := decodeStatus(t, r.Body)
		if st.Reason != metav1.StatusReasonExpired || !strings.Contains(st.Message, "or use the continue token in this response") || st.Continue == "" {
			t.Fatalf("status %+v", st)
		}
		// The token in the Status goes on after c at the latest revision.
		b, err := base64.RawURLEncoding.DecodeString(st.Continue)
		if err != nil || !bytes.Contains(b, []byte(`"rv":-1`)) {
			t.Errorf("continue token %s (%v)", b, err)
		}
		p2 := a.mustList(t, leasesPath+"?continue="+url.QueryEscape(st.Continue))
		wantNames(t, p2, "d", "e")
		if p2.Metadata.ResourceVersion == p1.Metadata.ResourceVersion || p2.Metadata.Continue != "" {
			t.Errorf("metadata %+v after page 1 %+v", p2.Metadata, p1.Metadata)
		}
	})
}

// wsURL is the WebSocket URL of an API path.
func (a *testAPI) wsURL(path string) string {
	return "ws" + strings.TrimPrefix(a.URL, "http") + path
}

// TestWatchWebSocket checks a watch over a WebSocket on the same URL: one event per text
// message, the same bytes as the HTTP frame, and the origin and subprotocol rules.
func TestWatchWebSocket(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	from := a.MustCreate(t, leasesPath, leaseJSON("a", "holder-a"))
	a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/a", `{"spec":{"holderIdentity":"holder-b"}}`, "Content-Type", mergePatch)
	a.MustCreate(t, leasesPath, leaseJSON("b", "holder-a"))
	a.MustDo(t, http.StatusOK, http.MethodDelete, leasesPath+"/a", "")
	path := leasesPath + "?watch=true&resourceVersion=" + from

	h := a.MustWatch(t, path)
	var frames [][]byte
	for range 3 {
		frames = append(frames, h.Next(t))
	}
	h.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.Run("same origin", func(t *testing.T) {
		c, resp, err := websocket.Dial(ctx, a.wsURL(path), &websocket.DialOptions{
			HTTPHeader:   http.Header{"Origin": {a.URL}, "User-Agent": {sampleUA}},
			Subprotocols: []string{"leaselab.watch"},
		})
		if err != nil {
			t.Fatalf("dial: %v (%v)", err, resp)
		}
		defer c.CloseNow()
		if c.Subprotocol() != "leaselab.watch" {
			t.Errorf("subprotocol %q, want the offered one echoed", c.Subprotocol())
		}
		for i, want := range frames {
			typ, got, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("read message %d: %v", i, err)
			}
			if typ != websocket.MessageText || !bytes.Equal(got, want) {
				t.Errorf("message %d (%v):\n%q\nwant the HTTP frame:\n%q", i, typ, got, want)
			}
		}
		// What the client sends is read and dropped; the watch goes on.
		if err := c.Write(ctx, websocket.MessageText, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		// A live event arrives as one more message.
		rv := a.MustCreate(t, leasesPath, leaseJSON("c", "holder-a"))
		_, got, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		WantEvent(t, decodeEvent(t, got), "ADDED", "c", rv)
	})
	t.Run("no origin", func(t *testing.T) {
		// Clients that are not browsers send no Origin.
		c, resp, err := websocket.Dial(ctx, a.wsURL(path), nil)
		if err != nil {
			t.Fatalf("dial: %v (%v)", err, resp)
		}
		defer c.CloseNow()
		if c.Subprotocol() != "" {
			t.Errorf("subprotocol %q, none offered", c.Subprotocol())
		}
		if _, got, err := c.Read(ctx); err != nil || !bytes.Equal(got, frames[0]) {
			t.Errorf("first message %q, %v", got, err)
		}
	})
	t.Run("timeoutSeconds closes the socket", func(t *testing.T) {
		c, resp, err := websocket.Dial(ctx, a.wsURL(leasesPath+"?watch=true&timeoutSeconds=1&resourceVersion="+from), nil)
		if err != nil {
			t.Fatalf("dial: %v (%v)", err, resp)
		}
		defer c.CloseNow()
		for i := 0; ; i++ {
			if _, _, err := c.Read(ctx); err != nil {
				if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
					t.Errorf("closed with %v", err)
				}
				break
			}
			if i > 10 {
				t.Fatal("socket still open")
			}
		}
	})
	t.Run("foreign origin", func(t *testing.T) {
		c, resp, err := websocket.Dial(ctx, a.wsURL(path), &websocket.DialOptions{
			HTTPHeader: http.Header{"Origin": {"http://evil.example"}},
		})
		if err == nil {
			c.CloseNow()
			t.Fatal("a foreign origin was accepted")
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("answer %v, want 403", resp)
		}
		b, _ := io.ReadAll(resp.Body)
		if ct := resp.Header.Get("Content-Type"); ct == "" || bytes.Contains(b, []byte(`"kind":"Status"`)) {
			t.Errorf("403 answered twice? Content-Type %q body %q", ct, b)
		}
	})
	t.Run("more than one subprotocol", func(t *testing.T) {
		// The real server cannot echo one of several and refuses the handshake.
		c, resp, err := websocket.Dial(ctx, a.wsURL(path), &websocket.DialOptions{
			HTTPHeader:   http.Header{"Origin": {a.URL}},
			Subprotocols: []string{"one", "two"},
		})
		if err == nil {
			c.CloseNow()
			t.Fatal("two subprotocols were accepted")
		}
		if resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("answer %v, want 400", resp)
		}
	})
}

// TestWatchParamValues: boolean query parameters follow the real server's conversion, in the
// router's choice of a watch as in the options: any value but "0" or "false" (in any case) is
// true, the empty one included.
func TestWatchParamValues(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	a.MustCreate(t, leasesPath, leaseJSON("a", "holder-a"))
	for _, v := range []string{"true", "yes", "", "TRUE", "1"} {
		t.Run("watch="+v, func(t *testing.T) {
			w := a.MustWatch(t, leasesPath+"?watch="+v)
			WantEvent(t, w.NextEvent(t), "ADDED", "a", "")
		})
	}
	for _, v := range []string{"false", "0", "False"} {
		t.Run("watch="+v, func(t *testing.T) {
			wantNames(t, a.mustList(t, leasesPath+"?watch="+v), "a")
		})
	}
	t.Run("allowWatchBookmarks and sendInitialEvents", func(t *testing.T) {
		w := a.MustWatch(t, leasesPath+"?watch&allowWatchBookmarks=yes&sendInitialEvents=on&resourceVersionMatch=NotOlderThan")
		WantEvent(t, w.NextEvent(t), "ADDED", "a", "")
		if ev := w.NextEvent(t); ev.Type != "BOOKMARK" || ev.Meta(t).Metadata.Annotations["k8s.io/initial-events-end"] != "true" {
			t.Errorf("want the initial-events-end bookmark, got %s", ev.raw)
		}
	})
}

// TestWatchTimeoutSeconds: kube-apiserver's handleWatch (k8s.io/apiserver
// pkg/endpoints/handlers/get.go) validates no timeoutSeconds: 0 is "not set" (the random 30 to
// 60 minutes), and a negative one a timer that has already fired, so the watch answers 200 with
// the stream's headers and ends at once (a 504 before).
func TestWatchTimeoutSeconds(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	cur := a.MustCreate(t, leasesPath, leaseJSON("a", "holder-a"))
	t.Run("negative", func(t *testing.T) {
		for _, path := range []string{
			leasesPath + "?watch=1&timeoutSeconds=-1&resourceVersion=" + cur,
			leasesPath + "?watch=1&timeoutSeconds=-30&resourceVersion=" + cur,
		} {
			w := a.MustWatch(t, path)
			w.WantEnd(t, 5*time.Second)
		}
	})
	t.Run("zero is not set", func(t *testing.T) {
		w := a.MustWatch(t, leasesPath+"?watch=1&timeoutSeconds=0&resourceVersion="+cur)
		rv := a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/a", `{"spec":{"holderIdentity":"holder-b"}}`, "Content-Type", mergePatch)
		WantEvent(t, w.NextEvent(t), "MODIFIED", "a", rv)
	})
}
