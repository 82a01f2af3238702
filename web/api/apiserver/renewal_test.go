package apiserver_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store/sqlite"
)

// TestRenewalAfterGet follows the writes a renewal takes: a PUT at the revision a GET returned
// (answered from the decoded object the GET left), a stale PUT at a revision that has since
// moved on (409, as without the cache), a PUT that changes nothing (the stored object back),
// and managedFields that stay one entry per manager with the renewing manager's time.
func TestRenewalAfterGet(t *testing.T) {
	api := MustStartAPI(t, sqlite.Options{})
	path := leasesPath + "/renewed"
	rv0 := api.MustCreate(t, leasesPath, leaseJSON("renewed", "a"))

	get := func() map[string]any {
		t.Helper()
		r := api.Do(t, http.MethodGet, path, "")
		WantCode(t, r, http.StatusOK)
		var m map[string]any
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	put := func(m map[string]any, code int, ua string) string {
		t.Helper()
		b, _ := json.Marshal(m)
		return api.MustDo(t, code, http.MethodPut, path, string(b), "Content-Type", "application/json", "User-Agent", ua)
	}
	renew := func(m map[string]any, at string) map[string]any {
		m["spec"].(map[string]any)["renewTime"] = at
		return m
	}

	first := get()
	rv1 := put(renew(first, "2026-01-02T03:04:06.000000Z"), http.StatusOK, "elector/v1")
	if rv1 == rv0 {
		t.Fatalf("renewal did not write: rv %s", rv1)
	}
	// The object read first is now stale: its revision must conflict, cache or not.
	stale := renew(first, "2026-01-02T03:04:07.000000Z")
	r := api.Do(t, http.MethodPut, path, mustMarshal(t, stale), "Content-Type", "application/json", "User-Agent", "elector/v1")
	WantCode(t, r, http.StatusConflict)

	cur := get()
	same := put(cur, http.StatusOK, "elector/v1") // no change: the stored object, not a write
	if same != rv1 {
		t.Errorf("no-op PUT answered rv %s, want %s", same, rv1)
	}
	rv2 := put(renew(get(), "2026-01-02T03:04:08.000000Z"), http.StatusOK, "elector/v1")
	final := get()
	if md := final["metadata"].(map[string]any); md["resourceVersion"] != rv2 {
		t.Errorf("resourceVersion %v, want %s", md["resourceVersion"], rv2)
	}
	var meta struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	b, _ := json.Marshal(final)
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, e := range meta.Metadata.ManagedFields {
		managers = append(managers, e.Manager+"/"+string(e.Operation))
	}
	slices.Sort(managers)
	if got := strings.Join(managers, ","); got != "elector/Update,peer-samples/Update" {
		t.Errorf("managers %s", got)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
