package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/web"
	"github.com/leaselab/leaselab/web/ui"
)

// TestReplayRefusesWrites: a replay answers every request that could change something, on any
// path, with kube-apiserver's 405 MethodNotAllowed Status naming the recording; reads pass.
func TestReplayRefusesWrites(t *testing.T) {
	replay := &ui.Replay{File: "class.jsonl", From: time.Unix(100, 0), To: time.Unix(200, 0), FirstRevision: 1, LastRevision: 9, Changes: 9}
	srv := startOpen(t, web.Config{Replay: replay})
	for _, tc := range []struct{ method, path, kind, group string }{
		{http.MethodPost, testLeases, "leases", "coordination.k8s.io"},
		{http.MethodPut, testLeases + "/x", "leases", "coordination.k8s.io"},
		{http.MethodPatch, testLeases + "/x", "leases", "coordination.k8s.io"},
		{http.MethodDelete, "/api/v1/namespaces/default", "namespaces", ""},
		{http.MethodPost, "/ui/leases", "", ""},
		{http.MethodPost, "/ui/leases/default/x/delete", "", ""},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var st metav1.Status
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusMethodNotAllowed || st.Reason != metav1.StatusReasonMethodNotAllowed || st.Kind != "Status" ||
			!strings.Contains(st.Message, `replays the recording "class.jsonl"`) || resp.Header.Get("Allow") != "GET, HEAD, OPTIONS" {
			t.Errorf("%s %s: %d %v %+v", tc.method, tc.path, resp.StatusCode, err, st)
			continue
		}
		if tc.kind != "" && (st.Details == nil || st.Details.Kind != tc.kind || st.Details.Group != tc.group) {
			t.Errorf("%s %s: details %+v", tc.method, tc.path, st.Details)
		}
	}
	for _, path := range []string{"/healthz", testLeases, "/"} {
		if code, body := get(t, srv.URL+path); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
}
