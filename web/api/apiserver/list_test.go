package apiserver_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store/sqlite"
)

// The Table columns of the real server, byte for byte (lease-get-table-200,
// leasecandidate-list-table-200).
const (
	leaseColumns     = `"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names","priority":0},{"name":"Holder","type":"string","format":"","description":"holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.","priority":0},{"name":"Age","type":"string","format":"","description":"CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata","priority":0}]`
	candidateColumns = `"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names","priority":0},{"name":"LeaseName","type":"string","format":"","description":"LeaseName is the name of the lease for which this candidate is contending. This field is immutable.","priority":0},{"name":"BinaryVersion","type":"string","format":"","description":"","priority":0},{"name":"EmulationVersion","type":"string","format":"","description":"","priority":0},{"name":"Age","type":"string","format":"","description":"CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata","priority":0}]`
)

// table is a decoded Table response.
type table struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	ColumnDefinitions []metav1.TableColumnDefinition `json:"columnDefinitions"`
	Rows              []struct {
		Cells  []any           `json:"cells"`
		Object json.RawMessage `json:"object"`
	} `json:"rows"`
}

func decodeTable(tb testing.TB, r response, columns string) table {
	tb.Helper()
	WantCode(tb, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type %q", ct)
	}
	if columns != "" && !bytes.Contains(r.Body, []byte(columns+`,"rows":[`)) {
		tb.Errorf("column definitions differ from the real server's:\n%s", r.Body)
	}
	var t table
	if err := json.Unmarshal(r.Body, &t); err != nil {
		tb.Fatalf("decode Table %s: %v", r.Body, err)
	}
	if t.Kind != "Table" || !strings.HasPrefix(t.APIVersion, "meta.k8s.io/v1") {
		tb.Fatalf("not a Table: %s", r.Body)
	}
	return t
}

// rowObject decodes a row's object: kind, apiVersion and name.
func rowObject(tb testing.TB, raw json.RawMessage) objectMeta {
	tb.Helper()
	var m objectMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		tb.Fatalf("decode row object %s: %v", raw, err)
	}
	return m
}

// ageCell matches the Age cell of a row made within the test.
var ageCell = regexp.MustCompile(`^[0-9]+s$`)

// TestTable checks Table responses for get and list, with each includeObject policy.
func TestTable(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	rv := a.MustCreate(t, leasesPath, leaseJSON("sample-lease", "holder-a"))
	a.MustCreate(t, leasesPath, leaseJSON("sample-page-a", "holder-b"))

	t.Run("lease-get-table-200", func(t *testing.T) {
		tab := decodeTable(t, a.Do(t, http.MethodGet, leasesPath+"/sample-lease", "", "Accept", tableAccept), leaseColumns)
		if tab.Metadata.ResourceVersion != rv || len(tab.Rows) != 1 {
			t.Fatalf("table %+v", tab)
		}
		cells := tab.Rows[0].Cells
		if len(cells) != 3 || cells[0] != "sample-lease" || cells[1] != "holder-a" || !ageCell.MatchString(fmt.Sprint(cells[2])) {
			t.Errorf("cells %q", cells)
		}
		// By default each row carries the object's metadata.
		want := `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"sample-lease","namespace":"default","uid":"X","resourceVersion":"X","creationTimestamp":"X","labels":{"app":"peer-sample"},"managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:acquireTime":{},"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:leaseTransitions":{},"f:renewTime":{}}}}]}}`
		if got := normalize(tab.Rows[0].Object); got != want {
			t.Errorf("row object:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("lease-list-table-200", func(t *testing.T) {
		tab := decodeTable(t, a.Do(t, http.MethodGet, leasesPath, "", "Accept", tableAccept), leaseColumns)
		if len(tab.Rows) != 2 {
			t.Fatalf("%d rows", len(tab.Rows))
		}
		for i, name := range []string{"sample-lease", "sample-page-a"} {
			if m := rowObject(t, tab.Rows[i].Object); m.Kind != "PartialObjectMetadata" || m.APIVersion != "meta.k8s.io/v1" || m.Metadata.Name != name {
				t.Errorf("row %d object %s", i, tab.Rows[i].Object)
			}
		}
	})
	t.Run("lease-list-table-includeobject-object-200", func(t *testing.T) {
		tab := decodeTable(t, a.Do(t, http.MethodGet, leasesPath+"?includeObject=Object", "", "Accept", tableAccept), leaseColumns)
		got := a.Do(t, http.MethodGet, leasesPath+"/sample-lease", "")
		if want := bytes.TrimSuffix(got.Body, []byte("\n")); !bytes.Equal(tab.Rows[0].Object, want) {
			t.Errorf("row object:\n%s\nwant the object:\n%s", tab.Rows[0].Object, want)
		}
	})
	// Older clients ask for meta.k8s.io/v1beta1: the same Table, at that version, rows included.
	t.Run("v1beta1", func(t *testing.T) {
		accept := "application/json;as=Table;v=v1beta1;g=meta.k8s.io"
		r := a.Do(t, http.MethodGet, leasesPath, "", "Accept", accept)
		tab := decodeTable(t, r, leaseColumns)
		if !bytes.HasPrefix(r.Body, []byte(`{"kind":"Table","apiVersion":"meta.k8s.io/v1beta1",`)) || len(tab.Rows) != 2 {
			t.Fatalf("v1beta1 Table:\n%s", r.Body)
		}
		if m := rowObject(t, tab.Rows[0].Object); m.Kind != "PartialObjectMetadata" || m.APIVersion != "meta.k8s.io/v1beta1" {
			t.Errorf("row object %s", tab.Rows[0].Object)
		}
		r = a.Do(t, http.MethodGet, leasesPath, "", "Accept", "application/json;as=PartialObjectMetadataList;v=v1beta1;g=meta.k8s.io")
		WantCode(t, r, http.StatusOK)
		if !bytes.HasPrefix(r.Body, []byte(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1beta1",`)) || !bytes.Contains(r.Body, []byte(`"name":"sample-page-a"`)) {
			t.Errorf("v1beta1 PartialObjectMetadataList:\n%s", r.Body)
		}
	})
	t.Run("includeObject=None", func(t *testing.T) {
		tab := decodeTable(t, a.Do(t, http.MethodGet, leasesPath+"?includeObject=None", "", "Accept", tableAccept), leaseColumns)
		for _, row := range tab.Rows {
			if len(row.Object) != 0 && string(row.Object) != "null" {
				t.Errorf("row object %s with None", row.Object)
			}
		}
	})
	t.Run("includeObject=foo", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath+"?includeObject=foo", "", "Accept", tableAccept+",application/json")
		WantBody(t, r, http.StatusBadRequest, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unable to convert to Table as requested: includeObject: Invalid value: \"foo\": must be 'Metadata', 'Object', 'None', or empty","reason":"BadRequest","code":400}`+"\n")
	})
	t.Run("lease-list-table-kubectl-accept-200", func(t *testing.T) {
		tab := decodeTable(t, a.Do(t, http.MethodGet, leasesPath+"?limit=500", "", "Accept", tableAccept+",application/json"), leaseColumns)
		if len(tab.Rows) != 2 {
			t.Errorf("%d rows", len(tab.Rows))
		}
	})
	t.Run("PartialObjectMetadata", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath+"/sample-lease", "", "Accept", "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
		WantCode(t, r, http.StatusOK)
		want := `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"sample-lease","namespace":"default","uid":"X","resourceVersion":"X","creationTimestamp":"X","labels":{"app":"peer-sample"},"managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"coordination.k8s.io/v1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:acquireTime":{},"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:leaseTransitions":{},"f:renewTime":{}}}}]}}` + "\n"
		if got := normalize(r.Body); got != want {
			t.Errorf("body:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("PartialObjectMetadataList", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath, "", "Accept", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")
		WantCode(t, r, http.StatusOK)
		if !bytes.HasPrefix(r.Body, []byte(`{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"`)) ||
			bytes.Contains(r.Body, []byte(`"spec"`)) {
			t.Errorf("body %s", r.Body)
		}
	})

	a.MustCreate(t, candidatesPath, candidateJSON)
	t.Run("leasecandidate-list-table-200", func(t *testing.T) {
		tab := decodeTable(t, a.Do(t, http.MethodGet, candidatesPath, "", "Accept", tableAccept), candidateColumns)
		if len(tab.Rows) != 1 {
			t.Fatalf("%d rows", len(tab.Rows))
		}
		cells := tab.Rows[0].Cells
		if len(cells) != 5 || cells[0] != "sample-candidate" || cells[1] != "sample-component" || cells[2] != "1.36.0" || cells[3] != "1.36.0" {
			t.Errorf("cells %q", cells)
		}
	})
	t.Run("leasecandidate-get-via-v1alpha2-200", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, "/apis/coordination.k8s.io/v1alpha2/namespaces/default/leasecandidates/sample-candidate", "")
		WantCode(t, r, http.StatusOK)
		want := `{"kind":"LeaseCandidate","apiVersion":"coordination.k8s.io/v1alpha2","metadata":{"name":"sample-candidate","namespace":"default","uid":"X","resourceVersion":"X","creationTimestamp":"X","managedFields":[{"manager":"peer-samples","operation":"Update","apiVersion":"coordination.k8s.io/v1beta1","time":"X","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:binaryVersion":{},"f:emulationVersion":{},"f:leaseName":{},"f:pingTime":{},"f:renewTime":{},"f:strategy":{}}}}]},"spec":{"leaseName":"sample-component","pingTime":"2026-01-02T03:04:05.000000Z","renewTime":"2026-01-02T03:04:05.000000Z","binaryVersion":"1.36.0","emulationVersion":"1.36.0","strategy":"OldestEmulationVersion"}}` + "\n"
		if got := normalize(r.Body); got != want {
			t.Errorf("body:\n%s\nwant:\n%s", got, want)
		}
	})
}

// list is a decoded list response.
type list struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		ResourceVersion    string `json:"resourceVersion"`
		Continue           string `json:"continue"`
		RemainingItemCount *int64 `json:"remainingItemCount"`
	} `json:"metadata"`
	Items []objectMeta `json:"items"`
}

func (l list) names() []string {
	names := []string{}
	for _, it := range l.Items {
		names = append(names, it.Metadata.Name)
	}
	return names
}

func (a *testAPI) mustList(tb testing.TB, path string) list {
	tb.Helper()
	r := a.Do(tb, http.MethodGet, path, "")
	WantCode(tb, r, http.StatusOK)
	var l list
	if err := json.Unmarshal(r.Body, &l); err != nil {
		tb.Fatalf("decode list %s: %v", r.Body, err)
	}
	if !bytes.Contains(r.Body, []byte(`"items":[`)) {
		tb.Errorf("items is not an array: %s", r.Body)
	}
	return l
}

func wantNames(tb testing.TB, l list, want ...string) {
	tb.Helper()
	if got := l.names(); !equalStrings(got, want) {
		tb.Errorf("items %q, want %q", got, want)
	}
}

// TestList checks paging, the resourceVersion rules and selectors of list.
func TestList(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	for _, name := range []string{"a", "b", "c"} {
		a.MustCreate(t, leasesPath, leaseWithLabel(name, "app", "peer-sample"))
	}
	a.MustCreate(t, leasesPath, leaseWithLabel("d", "app", "other"))
	a.MustCreate(t, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", leaseWithLabel("a", "app", "peer-sample"))

	t.Run("limit and continue", func(t *testing.T) {
		p1 := a.mustList(t, leasesPath+"?limit=1")
		wantNames(t, p1, "a")
		if p1.Kind != "LeaseList" || p1.APIVersion != "coordination.k8s.io/v1" || p1.Metadata.Continue == "" ||
			p1.Metadata.RemainingItemCount == nil || *p1.Metadata.RemainingItemCount != 3 {
			t.Fatalf("page 1 metadata %+v", p1.Metadata)
		}
		// The token is base64url JSON, like the real server's.
		b, err := base64.RawURLEncoding.DecodeString(p1.Metadata.Continue)
		var tok struct {
			V  string `json:"v"`
			RV int64  `json:"rv"`
		}
		if err != nil || json.Unmarshal(b, &tok) != nil || tok.V != "meta.k8s.io/v1" || fmt.Sprint(tok.RV) != p1.Metadata.ResourceVersion {
			t.Errorf("continue token %q (%s)", p1.Metadata.Continue, b)
		}
		// A write between pages does not show: every page is read at the first one's revision.
		a.MustCreate(t, leasesPath, leaseWithLabel("bb", "app", "peer-sample"))
		p2 := a.mustList(t, leasesPath+"?limit=2&continue="+url.QueryEscape(p1.Metadata.Continue))
		wantNames(t, p2, "b", "c")
		if p2.Metadata.ResourceVersion != p1.Metadata.ResourceVersion || p2.Metadata.Continue == "" || *p2.Metadata.RemainingItemCount != 1 {
			t.Errorf("page 2 metadata %+v, page 1 %+v", p2.Metadata, p1.Metadata)
		}
		p3 := a.mustList(t, leasesPath+"?limit=2&continue="+url.QueryEscape(p2.Metadata.Continue))
		wantNames(t, p3, "d")
		if p3.Metadata.Continue != "" || p3.Metadata.RemainingItemCount != nil || p3.Metadata.ResourceVersion != p1.Metadata.ResourceVersion {
			t.Errorf("last page metadata %+v", p3.Metadata)
		}
		a.MustDo(t, http.StatusOK, http.MethodDelete, leasesPath+"/bb", "")
	})
	t.Run("tampered continue token", func(t *testing.T) {
		p1 := a.mustList(t, leasesPath+"?limit=1")
		tok := []byte(p1.Metadata.Continue)
		tok[2] ^= 0x01
		r := a.Do(t, http.MethodGet, leasesPath+"?limit=1&continue="+url.QueryEscape(string(tok)), "")
		WantCode(t, r, http.StatusBadRequest)
		if st := decodeStatus(t, r.Body); st.Reason != metav1.StatusReasonBadRequest || !strings.HasPrefix(st.Message, "invalid continue token: ") {
			t.Errorf("status %+v", st)
		}
	})
	t.Run("continue with resourceVersion", func(t *testing.T) {
		p1 := a.mustList(t, leasesPath+"?limit=1")
		r := a.Do(t, http.MethodGet, leasesPath+"?limit=1&resourceVersion="+p1.Metadata.ResourceVersion+"&continue="+url.QueryEscape(p1.Metadata.Continue), "")
		WantBody(t, r, http.StatusBadRequest, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"specifying resource version is not allowed when using continue","reason":"BadRequest","code":400}`+"\n")
	})
	t.Run("lease-list-resourceversion0-limit1-200", func(t *testing.T) {
		l := a.mustList(t, leasesPath+"?resourceVersion=0&limit=1")
		wantNames(t, l, "a", "b", "c", "d")
		if l.Metadata.Continue != "" || l.Metadata.RemainingItemCount != nil {
			t.Errorf("metadata %+v", l.Metadata)
		}
	})
	t.Run("lease-list-labelselector-200", func(t *testing.T) {
		wantNames(t, a.mustList(t, leasesPath+"?labelSelector=app%3Dpeer-sample"), "a", "b", "c")
		wantNames(t, a.mustList(t, leasesPath+"?labelSelector="+url.QueryEscape("app in (other,none)")), "d")
		wantNames(t, a.mustList(t, leasesPath+"?labelSelector=app%21%3Dpeer-sample"), "d")
		wantNames(t, a.mustList(t, leasesPath+"?labelSelector=missing"))
		// With a selector a page has a continue token but no remainingItemCount.
		l := a.mustList(t, leasesPath+"?labelSelector=app%3Dpeer-sample&limit=1")
		wantNames(t, l, "a")
		if l.Metadata.Continue == "" || l.Metadata.RemainingItemCount != nil {
			t.Errorf("metadata %+v", l.Metadata)
		}
		a.MustDo(t, http.StatusBadRequest, http.MethodGet, leasesPath+"?labelSelector="+url.QueryEscape("app in ("), "")
	})
	t.Run("lease-list-fieldselector-200", func(t *testing.T) {
		wantNames(t, a.mustList(t, leasesPath+"?fieldSelector=metadata.name%3Db"), "b")
		wantNames(t, a.mustList(t, leasesPath+"?fieldSelector=metadata.name%21%3Db"), "a", "c", "d")
		wantNames(t, a.mustList(t, "/apis/coordination.k8s.io/v1/leases?fieldSelector=metadata.namespace%3Dkube-system"), "a")
		wantNames(t, a.mustList(t, "/apis/coordination.k8s.io/v1/leases?fieldSelector=metadata.name%3Da,metadata.namespace%3Ddefault"), "a")
	})
	t.Run("lease-list-all-namespaces-200", func(t *testing.T) {
		// default/a..d, then kube-system/a.
		wantNames(t, a.mustList(t, "/apis/coordination.k8s.io/v1/leases"), "a", "b", "c", "d", "a")
	})
	t.Run("resourceVersionMatch without resourceVersion", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath+"?resourceVersionMatch=NotOlderThan", "")
		WantCode(t, r, http.StatusUnprocessableEntity)
		if st := decodeStatus(t, r.Body); st.Details == nil || st.Details.Kind != "ListOptions" || st.Details.Group != "meta.k8s.io" {
			t.Errorf("status %+v", st)
		}
	})
	t.Run("exact resourceVersion reads the past", func(t *testing.T) {
		before := a.mustList(t, leasesPath)
		a.MustDo(t, http.StatusOK, http.MethodPatch, leasesPath+"/a", `{"spec":{"holderIdentity":"later"}}`, "Content-Type", "application/merge-patch+json")
		l := a.mustList(t, leasesPath+"?resourceVersionMatch=Exact&resourceVersion="+before.Metadata.ResourceVersion)
		if l.Metadata.ResourceVersion != before.Metadata.ResourceVersion || *l.Items[0].Spec.HolderIdentity != "h" {
			t.Errorf("exact list at %s: rv %s, holder %q", before.Metadata.ResourceVersion, l.Metadata.ResourceVersion, *l.Items[0].Spec.HolderIdentity)
		}
	})
	t.Run("exact future resourceVersion", func(t *testing.T) {
		r := a.Do(t, http.MethodGet, leasesPath+"?resourceVersionMatch=Exact&resourceVersion=1000000", "")
		WantCode(t, r, http.StatusGatewayTimeout)
		st := decodeStatus(t, r.Body)
		if st.Reason != metav1.StatusReasonTimeout || !strings.HasPrefix(st.Message, "Timeout: Too large resource version: 1000000, current: ") {
			t.Errorf("status %+v", st)
		}
	})
}

// TestListFutureResourceVersion waits the 3 s the real server waits for a resourceVersion it
// has not reached, then expects its 504.
func TestListFutureResourceVersion(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	rv := a.MustCreate(t, leasesPath, leaseJSON("sample-lease", "holder-a"))
	start := time.Now()
	r := a.Do(t, http.MethodGet, leasesPath+"?resourceVersion=1000000", "")
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("answered after %v, want a wait of about 3 s", d)
	}
	WantBody(t, r, http.StatusGatewayTimeout, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 1000000, current: `+rv+`","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}`+"\n")
	if got := r.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
}

// TestDeleteCollectionAnswer: deletecollection answers the list as it read it, as the real
// server does: items at their resourceVersions before the delete, and with a limit only that
// page is deleted and the answer carries its continue token and remaining count.
func TestDeleteCollectionAnswer(t *testing.T) {
	t.Parallel()
	a := MustStartAPI(t, sqlite.Options{})
	rvs := map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		rvs[name] = a.MustCreate(t, leasesPath, leaseJSON(name, "holder-a"))
	}
	listed := a.mustList(t, leasesPath)

	r := a.Do(t, http.MethodDelete, leasesPath+"?limit=2", "")
	WantCode(t, r, http.StatusOK)
	var page list
	if err := json.Unmarshal(r.Body, &page); err != nil {
		t.Fatal(err)
	}
	if page.Kind != "LeaseList" || page.Metadata.ResourceVersion != listed.Metadata.ResourceVersion ||
		page.Metadata.Continue == "" || page.Metadata.RemainingItemCount == nil || *page.Metadata.RemainingItemCount != 1 || len(page.Items) != 2 {
		t.Fatalf("deletecollection page: %s", r.Body)
	}
	for _, it := range page.Items {
		if it.Metadata.ResourceVersion != rvs[it.Metadata.Name] {
			t.Errorf("%s at %s, want its resourceVersion before the delete %s", it.Metadata.Name, it.Metadata.ResourceVersion, rvs[it.Metadata.Name])
		}
	}
	wantNames(t, a.mustList(t, leasesPath), "c")

	// Without a limit: everything, and no continue.
	listRV := a.mustList(t, leasesPath).Metadata.ResourceVersion
	g := a.Do(t, http.MethodGet, leasesPath+"/c", "")
	WantCode(t, g, http.StatusOK)
	item := strings.Replace(strings.TrimSuffix(string(g.Body), "\n"), `{"kind":"Lease","apiVersion":"coordination.k8s.io/v1",`, "{", 1)
	want := `{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","metadata":{"resourceVersion":"` + listRV + `"},"items":[` + item + `]}` + "\n"
	r = a.Do(t, http.MethodDelete, leasesPath, "")
	WantCode(t, r, http.StatusOK)
	if string(r.Body) != want {
		t.Errorf("body:\n%s\nwant:\n%s", r.Body, want)
	}
	wantNames(t, a.mustList(t, leasesPath))
}
