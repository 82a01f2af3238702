package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// englishAllowed are the words a Chinese page keeps in Latin letters: API kinds and fields,
// commands, flags, program and package names, units, identities and the language switch.
var englishAllowed = wordSet(`
	Lease Leases LeaseCandidate LeaseCandidates holderIdentity leaseDurationSeconds leaseTransitions
	renewTime acquireTime preferredHolder pingTime strategy spec binaryVersion emulationVersion
	preferredStrategies resourceVersion renewDeadline leaseDuration retryPeriod JitterFactor
	coordination k8s io v1 v1beta1 v1alpha1 v1alpha2 Kubernetes kubectl get o yaml client go
	kube controller manager scheduler ReleaseOnCancel OnStartedLeading OnStoppedLeading os Exit
	LeaderElector GC API etcd ping CLE MAJOR MINOR PATCH leaselab replay candidate make build run
	serve cle false wasm English s ms min h d int32 time Second became leader fencing token
	OldestEmulationVersion demo alice bob carol dave erin node default lang zh en GET PUT POST`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[strings.ToLower(w)] = true
	}
	return m
}

// quotedErrors are other programs' messages a Chinese page quotes word for word, as a reader
// would search for them: client-go's refusals of leader-election timings.
var quotedErrors = []string{
	"leaseDuration must be greater than renewDeadline",
	"renewDeadline must be greater than retryPeriod*JitterFactor",
	"leaseDuration must be greater than zero",
	"renewDeadline must be greater than zero",
	"retryPeriod must be greater than zero",
}

// englishRun finds runs of Latin words joined by spaces (an English phrase, a sentence).
var englishRun = regexp.MustCompile(`[A-Za-z][A-Za-z'’-]*(?:\s+[A-Za-z][A-Za-z'’-]*)+`)

// englishLeft returns the English phrases of text: runs of two or more Latin words of which
// at least two are not allowed words.
func englishLeft(text string) []string {
	for _, q := range quotedErrors {
		text = strings.ReplaceAll(text, q, " ")
	}
	var out []string
	for _, run := range englishRun.FindAllString(text, -1) {
		n := 0
		for _, w := range strings.Fields(run) {
			for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '\'' || r == '’' }) {
				if !englishAllowed[strings.ToLower(part)] {
					n++
				}
			}
		}
		if n >= 2 {
			out = append(out, run)
		}
	}
	return out
}

// visibleTexts are what a reader of the document sees or hears: its text outside script and
// style (templates included: the page shows them as it adds rows), and the titles, labels,
// placeholders and confirmations.
func visibleTexts(doc *goquery.Document) []string {
	// The switch is in the other language on purpose.
	doc.Find("script, style, [data-testid=lang-switch]").Remove()
	texts := []string{doc.Find("html").Text()}
	doc.Find("[title], [aria-label], [placeholder], [data-confirm], [aria-valuetext]").Each(func(_ int, s *goquery.Selection) {
		for _, a := range []string{"title", "aria-label", "placeholder", "data-confirm", "aria-valuetext"} {
			if v, ok := s.Attr(a); ok {
				texts = append(texts, v)
			}
		}
	})
	return texts
}

// mustGetZh reads a page; refused settings (422) and a missing lease (404) are pages too.
func mustGetZh(t *testing.T, base, path string) *goquery.Document {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusUnprocessableEntity && resp.StatusCode != http.StatusNotFound {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if lang, _ := doc.Find("html").Attr("lang"); lang != "zh-CN" {
		t.Errorf("GET %s: <html lang=%q>, want zh-CN", path, lang)
	}
	return doc
}

// TestChinesePagesHaveNoEnglish renders every screen with ?lang=zh through the real server,
// with a history to tell (acquired, taken over, released), and finds no English phrase left in
// what a reader sees: only API names, commands, identities and units stay in Latin letters.
func TestChinesePagesHaveNoEnglish(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, 30*time.Second)
	leases := ts.Client.CoordinationV1().Leases("default")
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "demo"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("alice"), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, holder := range []string{"bob", ""} { // bob takes it over, then releases it
		l.Spec.HolderIdentity = ptr.To(holder)
		l.Spec.LeaseTransitions = ptr.To(*l.Spec.LeaseTransitions + 1)
		if l, err = leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := leases.Create(context.Background(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "carol"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("carol"), LeaseDurationSeconds: ptr.To[int32](30), RenewTime: &now}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	play := url.Values{"lang": {"zh"}, "lease": {"demo"}, "identity": {"alice"}}
	risky := url.Values{"lang": {"zh"}, "lease": {"demo"}, "leaseDuration": {"10"}, "renewDeadline": {"9"}, "retryPeriod": {"0.2"}}
	refused := url.Values{"lang": {"zh"}, "lease": {"demo"}, "leaseDuration": {"5"}, "renewDeadline": {"8"}, "retryPeriod": {"2"}}
	for _, path := range []string{
		"/?lang=zh",
		"/leases/default/demo?lang=zh",
		"/leases/default/carol?lang=zh",
		"/play?" + play.Encode(),
		"/play?" + risky.Encode(),
		"/play?" + refused.Encode(),
		"/leases/default/demo?lang=zh&at=" + url.QueryEscape(time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)),
		"/leases/default/nothing?lang=zh", // the error page
		"/scenarios?lang=zh",
		"/scenarios/leader-crash?lang=zh",
		"/scenarios/fencing?lang=zh",
		"/scenarios/identity-collision?lang=zh",
		"/follow?lang=zh",
		"/?lang=zh&cleared=1",
	} {
		doc := mustGetZh(t, ts.URL, path)
		if doc.Find("[data-testid=timings]").Length() == 0 && strings.HasPrefix(path, "/play") {
			t.Errorf("%s has no timings panel", path)
		}
		for _, text := range visibleTexts(doc) {
			for _, e := range englishLeft(text) {
				t.Errorf("%s: English left: %q", path, e)
			}
		}
	}
}

// TestLanguageChoice: ?lang= forces the language and keeps it in the switch's cookie, the
// cookie then chooses, then Accept-Language; the header's switch leads to the same page in
// the other language; the API answers as kube-apiserver does whatever the language.
func TestLanguageChoice(t *testing.T) {
	ts := mustStartServer(t, "")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path, cookie, accept string) (*http.Response, *goquery.Document) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: i18n.CookieName, Value: cookie})
		}
		if accept != "" {
			req.Header.Set("Accept-Language", accept)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		doc, err := goquery.NewDocumentFromReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, doc
	}
	for _, tc := range []struct {
		path, cookie, accept string
		want                 string // <html lang>
		setCookie            string // the cookie's new value, "" for none
	}{
		{"/", "", "", "en", ""},
		{"/", "", "zh-CN,zh;q=0.9,en;q=0.8", "zh-CN", ""},
		{"/", "", "en-GB,en;q=0.9,zh;q=0.5", "en", ""},
		{"/", "en", "zh-CN", "en", ""},
		{"/", "zh", "en", "zh-CN", ""},
		{"/?lang=zh", "en", "en", "zh-CN", "zh"},
		{"/?lang=en", "zh", "zh", "en", "en"},
		{"/?lang=klingon", "zh", "en", "zh-CN", ""},
		{"/play?lease=demo&lang=zh", "", "", "zh-CN", "zh"},
		{"/leases/default/nothing?lang=zh", "", "", "zh-CN", "zh"},
	} {
		resp, doc := get(tc.path, tc.cookie, tc.accept)
		if lang, _ := doc.Find("html").Attr("lang"); lang != tc.want {
			t.Errorf("%s (cookie %q, Accept-Language %q): lang %q, want %q", tc.path, tc.cookie, tc.accept, lang, tc.want)
		}
		var set *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == i18n.CookieName {
				set = c
			}
		}
		switch {
		case tc.setCookie == "" && set != nil:
			t.Errorf("%s sets the cookie %v", tc.path, set)
		case tc.setCookie != "" && set == nil:
			t.Errorf("%s does not set the cookie", tc.path)
		case set != nil && (set.Value != tc.setCookie || set.Path != "/" || set.SameSite != http.SameSiteLaxMode || set.MaxAge < 364*24*3600):
			t.Errorf("%s sets %v, want %s for a year on / with SameSite=Lax", tc.path, set, tc.setCookie)
		}
	}

	// The switch: the same page, its query kept, in the other language.
	_, doc := get("/play?lease=demo&identity=x", "", "")
	sw := doc.Find("[data-testid=lang-switch]")
	href, _ := sw.Attr("href")
	u, err := url.Parse(href)
	if err != nil || u.Path != "/play" || u.Query().Get("lang") != "zh" || u.Query().Get("lease") != "demo" || u.Query().Get("identity") != "x" {
		t.Errorf("the switch of an English /play leads to %q", href)
	}
	if strings.TrimSpace(sw.Text()) != "中文" {
		t.Errorf("the switch of an English page says %q", sw.Text())
	}
	_, doc = get(href, "", "")
	sw = doc.Find("[data-testid=lang-switch]")
	if back, _ := sw.Attr("href"); !strings.Contains(back, "lang=en") || strings.TrimSpace(sw.Text()) != "English" {
		t.Errorf("the switch of a Chinese page: %q %q", back, sw.Text())
	}

	// The API stays English and sets no cookie, as kube-apiserver.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/apis/coordination.k8s.io/v1/namespaces/default/leases/nothing?lang=zh", nil)
	req.Header.Set("Accept-Language", "zh-CN")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `leases.coordination.k8s.io \"nothing\" not found`) || len(resp.Cookies()) != 0 {
		t.Errorf("the API with ?lang=zh: %d %s, cookies %v", resp.StatusCode, body, resp.Cookies())
	}
}

// TestElectionDecisionsHaveNoEnglish: with the election controller on and two LeaseCandidates,
// the controller's decisions (it creates the lease for alice, then keeps her) read in Chinese
// on the lease page and the dashboard of a Chinese reader, and as before in English.
func TestElectionDecisionsHaveNoEnglish(t *testing.T) {
	ts := mustStartCLEServer(t)
	ctx := ctxT(t, 30*time.Second)
	// On a busy machine the controller may first look after its election duration: then it
	// pings, and the candidates answer as client-go's do.
	go answerCandidatePings(ctx, ts, "default")
	now := metav1.NewMicroTime(time.Now())
	for _, name := range []string{"alice", "bob"} {
		if _, err := ts.Client.CoordinationV1beta1().LeaseCandidates("default").Create(ctx, &coordinationv1beta1.LeaseCandidate{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: "demo", RenewTime: &now, BinaryVersion: "1.36.0",
				EmulationVersion: "1.36.0", Strategy: coordinationv1.OldestEmulationVersion},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	poll.Until(t, 20*time.Second, "the controller elects and keeps a leader", func() (bool, string) {
		doc := mustGetZh(t, ts.URL, "/leases/default/demo?lang=zh")
		kinds := doc.Find(`[data-testid=lease-decisions] [data-testid=decision]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-kind", "") })
		return slices.Contains(kinds, "elect") && slices.Contains(kinds, "keep"), strings.Join(kinds, ",")
	})
	for _, path := range []string{"/leases/default/demo?lang=zh", "/?lang=zh"} {
		doc := mustGetZh(t, ts.URL, path)
		decisions := doc.Find(`[data-testid=lease-decisions] [data-kind=elect] .decision-text, [data-testid=lease-decisions] [data-kind=keep] .decision-text, #elections [data-testid=election-message]`)
		if decisions.Length() == 0 {
			t.Errorf("%s shows no decision", path)
		}
		decisions.Each(func(_ int, s *goquery.Selection) {
			if got := s.Text(); !strings.Contains(got, "选中 alice") {
				t.Errorf("%s: decision %q", path, got)
			}
		})
		for _, text := range visibleTexts(doc) {
			for _, e := range englishLeft(text) {
				t.Errorf("%s: English left: %q", path, e)
			}
		}
	}
	// In English, the controller's own words.
	resp, err := http.Get(ts.URL + "/leases/default/demo?lang=en")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Find(`[data-testid=lease-decisions] [data-kind=elect] .decision-text`).First().Text(); !strings.HasPrefix(got, "created the lease with holder alice: picked alice: ") {
		t.Errorf("in English: %q", got)
	}
}

// TestChineseLessonsLive: the live part of running lessons, in Chinese, has no English left: a
// ledger and its writes, the claims, a member's identity beside its name.
func TestChineseLessonsLive(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, time.Minute)
	for _, c := range []struct{ name, shows string }{
		{"fencing", "[data-testid=effect]"},
		{"identity-collision", "[data-testid=member-identity]"},
	} {
		resp, err := http.PostForm(ts.URL+"/scenarios/"+c.name+"/start", url.Values{"seed": {"1"}, "speed": {"4"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		t.Cleanup(func() {
			if r, err := http.PostForm(ts.URL+"/scenarios/"+c.name+"/stop", url.Values{"seed": {"1"}}); err == nil {
				r.Body.Close()
			}
		})
		var doc *goquery.Document
		waitFor(t, ctx, c.name+" to show "+c.shows, func() (bool, string) {
			doc = mustGetZh(t, ts.URL, "/scenarios/"+c.name+"?seed=1&lang=zh")
			return doc.Find(c.shows).Length() > 0 && doc.Find("[data-testid=claim]").Length() > 0, doc.Text()
		})
		for _, text := range visibleTexts(doc) {
			for _, e := range englishLeft(text) {
				t.Errorf("%s, live: English left: %q", c.name, e)
			}
		}
	}
}
