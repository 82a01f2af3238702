package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/leaselab/leaselab/store/changelog"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/auth"
	"github.com/leaselab/leaselab/web/play/ui"
	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestExportHistoryAndReplay: a lease held by alice, then bob, is recorded with export
// --history (the same recording as the lease page's download) and replayed on another port:
// the lease is the same object at the same resourceVersion, the lease page shows alice at a
// moment she held it and bob later, writes are refused with the replay's Status, and the
// replay's temporary database is gone when it stops.
func TestExportHistoryAndReplay(t *testing.T) {
	holdBrowserSlot(t) // at once: serial tests run before the parallel ones
	ts := mustStartServer(t, "")
	ctx := ctxT(t, time.Minute)
	leases := ts.Client.CoordinationV1().Leases("demo")
	alice := mustCreateLease(t, leases, "x", "alice")
	bob := alice.DeepCopy()
	bob.Spec.HolderIdentity, bob.Spec.LeaseTransitions = ptrTo("bob"), ptrTo[int32](1)
	bob, err := leases.Update(ctx, bob, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustCreateLease(t, leases, "y", "carol") // not the lease recorded
	if _, err := ts.Client.CoreV1().Events("demo").Create(ctx, leaseEvent("demo", "x"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var rec, errOut bytes.Buffer
	if code := run(ctx, []string{"export", "--history", "--namespace", "demo", "--lease", "x", "--db", ts.DB}, &rec, &errOut); code != 0 {
		t.Fatalf("export --history: exit %d: %s", code, errOut.String())
	}
	file := filepath.Join(t.TempDir(), "demo-x.jsonl")
	if err := os.WriteFile(file, rec.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := mustDownload(t, ts.URL+"/ui/history?namespace=demo&lease=x"); withoutExportTime(t, got) != withoutExportTime(t, rec.String()) {
		t.Errorf("the download differs from export --history:\n%s\nwant\n%s", got, rec.String())
	}
	aliceAt, bobAt := commitTime(t, rec.String(), alice.ResourceVersion), commitTime(t, rec.String(), bob.ResourceVersion)

	browser := mustStartBrowser(t) // before TMPDIR is the replay's, which must be left empty
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	replayURL, stop := mustReplay(t, file)
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: replayURL, QPS: -1})
	got, err := client.CoordinationV1().Leases("demo").Get(ctx, "x", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ts.Client.CoordinationV1().Leases("demo").Get(ctx, "x", metav1.GetOptions{})
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w || got.ResourceVersion != bob.ResourceVersion {
		t.Errorf("replayed lease:\n%s\nwant\n%s", g, w)
	}
	if _, err := client.CoordinationV1().Leases("demo").Get(ctx, "y", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a lease outside the recording: %v", err)
	}
	for _, tc := range []struct{ at, holder string }{{aliceAt, "alice"}, {bobAt, "bob"}, {"", "bob"}} {
		if h := holderOnPage(t, replayURL, tc.at); h != tc.holder {
			t.Errorf("holder at %q: %q, want %q", tc.at, h, tc.holder)
		}
	}
	// The stage of the replayed lease draws its record, and at alice's moment her as holder.
	if body := mustGetBody(t, replayURL+"/stage?namespace=demo&lease=x"); !strings.Contains(body, `data-testid="stage-holder">bob<`) {
		t.Errorf("the replay's stage does not name bob as the holder")
	}
	if body := mustGetBody(t, replayURL+"/stage?namespace=demo&lease=x&at="+url.QueryEscape(aliceAt)); !strings.Contains(body, `data-testid="stage-holder">alice<`) {
		t.Errorf("the replay's stage at %s does not name alice as the holder", aliceAt)
	}
	// The time bar's newest moment is the end of the recording, not LIVE.
	page, _ := openBrowserTab(t, browser, replayURL+"/leases/demo/x")
	mustSee(t, page, `document.querySelector('[data-testid=scrub-shown]').textContent`, "END OF THE RECORDING")
	_, err = client.CoordinationV1().Leases("demo").Update(ctx, got, metav1.UpdateOptions{})
	if !apierrors.IsMethodNotSupported(err) || !strings.Contains(err.Error(), file) {
		t.Errorf("update on a replay: %v", err)
	}
	err = client.CoordinationV1().Leases("demo").Delete(ctx, "x", metav1.DeleteOptions{})
	if !apierrors.IsMethodNotSupported(err) || !strings.Contains(err.Error(), file) {
		t.Errorf("delete on a replay: %v", err)
	}
	stop()
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the replay left %v in the temporary directory", left)
	}
}

// TestReplaySparseRevisions: a recording of one lease out of a busy server has revisions far
// apart; every moment of it still shows on the lease page, however far back in revisions.
func TestReplaySparseRevisions(t *testing.T) {
	const change = `{"revision":%d,"type":"%s","time":"%s","resource":"leases.coordination.k8s.io","namespace":"demo","name":"x","createRevision":7,` +
		`"object":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"x","namespace":"demo","creationTimestamp":"2026-01-02T03:00:00Z"},` +
		`"spec":{"holderIdentity":"%s","leaseDurationSeconds":15,"renewTime":"%s"}}}`
	rec := fmt.Sprintf(change, 7, "ADDED", "2026-01-02T03:00:00Z", "alice", "2026-01-02T03:00:00.000000Z") + "\n" +
		fmt.Sprintf(change, 900007, "MODIFIED", "2026-01-02T03:00:30Z", "bob", "2026-01-02T03:00:30.000000Z") + "\n"
	file := filepath.Join(t.TempDir(), "sparse.jsonl")
	if err := os.WriteFile(file, []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	replayURL, _ := mustReplay(t, file)
	for _, tc := range []struct{ at, holder string }{{"2026-01-02T03:00:05Z", "alice"}, {"2026-01-02T03:00:31Z", "bob"}, {"", "bob"}} {
		if h := holderOnPage(t, replayURL, tc.at); h != tc.holder {
			t.Errorf("holder at %q: %q, want %q", tc.at, h, tc.holder)
		}
	}
}

// TestReplayRefusesBadRecording: a recording that is not one is refused with its line, before
// anything serves, and leaves nothing behind.
func TestReplayRefusesBadRecording(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.jsonl")
	line := `{"revision":3,"type":"ADDED","time":"2026-01-02T03:04:05Z","resource":"leases.coordination.k8s.io","namespace":"d","name":"x","createRevision":3,"object":{}}`
	if err := os.WriteFile(file, []byte(line+"\n"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var out bytes.Buffer
	code := run(context.Background(), []string{"replay", "--addr", "127.0.0.1:0", file}, &out, &out)
	if code != 1 || !strings.Contains(out.String(), file+": line 2: revision 3 does not follow") {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("a refused replay left %v", left)
	}
}

func mustCreateLease(t *testing.T, leases interface {
	Create(context.Context, *coordinationv1.Lease, metav1.CreateOptions) (*coordinationv1.Lease, error)
}, name, holder string) *coordinationv1.Lease {
	t.Helper()
	now := metav1.NewMicroTime(time.Now())
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: coordinationv1.LeaseSpec{
		HolderIdentity: &holder, LeaseDurationSeconds: ptrTo[int32](15), AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptrTo[int32](0),
	}}
	l, err := leases.Create(ctxT(t, 10*time.Second), l, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func ptrTo[T any](v T) *T { return &v }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mustReplay runs leaselab replay FILE on 127.0.0.1:0 until stop, which waits for it to exit.
func mustReplay(t *testing.T, file string) (url string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"replay", file, "--addr", "127.0.0.1:0", "--log-level", "warn"}, &out, &out)
	}()
	banner := regexp.MustCompile(`replaying \S+ on (http://\S+), read-only: \d+ changes`)
	poll.Until(t, 20*time.Second, "the replay serves", func() (bool, string) {
		m := banner.FindStringSubmatch(out.String())
		if m != nil {
			url = m[1]
		}
		return m != nil, "output:\n" + out.String()
	})
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("replay exited %d:\n%s", code, out.String())
		}
	}
	t.Cleanup(stop)
	return url, stop
}

func mustDownload(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment; ") {
		t.Fatalf("GET %s: %d %v\n%s", u, resp.StatusCode, resp.Header, b)
	}
	return string(b)
}

// withoutExportTime is a recording with its header's export time left out.
func withoutExportTime(t *testing.T, rec string) string {
	t.Helper()
	first, rest, _ := strings.Cut(rec, "\n")
	var h changelog.Header
	if err := json.Unmarshal([]byte(first), &h); err != nil || h.Recording != changelog.Format {
		t.Fatalf("header %q: %v", first, err)
	}
	h.Exported = ""
	return mustJSON(t, h) + "\n" + rest
}

// commitTime is the commit time of the change at revision rv, as the recording says.
func commitTime(t *testing.T, rec, rv string) string {
	t.Helper()
	for _, l := range strings.Split(rec, "\n")[1:] {
		var c changelog.Change
		if json.Unmarshal([]byte(l), &c) == nil && c.Revision > 0 && rv == strings.TrimSpace(mustJSON(t, c.Revision)) {
			return c.Time
		}
	}
	t.Fatalf("no change at revision %s in\n%s", rv, rec)
	return ""
}

// holderOnPage is the holder the lease page of demo/x shows at the moment at ("" for now).
func holderOnPage(t *testing.T, base, at string) string {
	t.Helper()
	u := base + "/leases/demo/x"
	if at != "" {
		u += "?at=" + url.QueryEscape(at)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return doc.Find(`.lease-now [data-testid="holder"]`).Text()
}

// The lines of a small recording: the namespace, then a lease whose renewTime is %s and
// whose object is %s when not empty.
const (
	recordedNamespace = `{"revision":1,"type":"ADDED","time":"2026-01-02T03:00:00Z","resource":"namespaces","name":"default","createRevision":1,` +
		`"object":{"metadata":{"name":"default","creationTimestamp":"2026-01-02T03:00:00Z"}}}`
	recordedLease = `{"revision":2,"type":"ADDED","time":"2026-01-02T03:00:01Z","resource":"leases.coordination.k8s.io","namespace":"default","name":"x","createRevision":2,"object":%s}`
	leaseObject   = `{"metadata":{"name":"x","namespace":"default","creationTimestamp":"2026-01-02T03:00:01Z"},"spec":{"holderIdentity":"alice","leaseDurationSeconds":15,"renewTime":"%s"}}`
	// recordedInstructor is a workshop identity with a token someone knows.
	recordedInstructor = `{"revision":3,"type":"ADDED","time":"2026-01-02T03:00:02Z","resource":"participants.leaselab.dev","name":"instructor","createRevision":3,` +
		`"object":{"name":"instructor","uid":"u","token":"attacker-known-token-0123456789","role":"instructor"}}`
)

// recordingResources are the resources a recording's header lists.
var recordingResources = []string{"leases.coordination.k8s.io", "leasecandidates.coordination.k8s.io", "candidateviews.leaselab.dev", "namespaces", "events"}

// writeRecording writes a recording of lines, with a header that lists resources and sums the
// lines up, or none when resources is nil; it returns the file.
func writeRecording(t *testing.T, resources []string, lines ...string) string {
	t.Helper()
	var b strings.Builder
	if resources != nil {
		h := changelog.Header{Recording: changelog.Format, Resources: resources, Changes: int64(len(lines))}
		for i, l := range lines {
			var c changelog.Change
			if err := json.Unmarshal([]byte(l), &c); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				h.FirstRevision, h.From = c.Revision, c.Time
			}
			h.LastRevision, h.To = c.Revision, c.Time
		}
		b.WriteString(mustJSON(t, h) + "\n")
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	file := filepath.Join(t.TempDir(), "crafted.jsonl")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// replayRefused runs leaselab replay FILE and wants it refused at once, with an error naming
// the file's line and saying msg. A replay that serves instead is stopped after a while.
func replayRefused(t *testing.T, file string, line int, msg string) {
	t.Helper()
	var out syncBuffer
	code := run(ctxT(t, 10*time.Second), []string{"replay", "--addr", "127.0.0.1:0", file}, &out, &out)
	want := fmt.Sprintf("%s: line %d: ", file, line)
	if code != 1 || !strings.Contains(out.String(), want) || !strings.Contains(out.String(), msg) {
		t.Errorf("exit %d, want 1 and %q saying %q:\n%s", code, want, msg, out.String())
	}
	if strings.Contains(out.String(), "https://") {
		t.Errorf("the replay served HTTPS:\n%s", out.String())
	}
}

// TestReplayRefusesWhatConfiguresTheServer: a recording holds what its header lists, and may
// list only what recordings hold; a workshop identity slipped into one (its header listing it
// or not, or a plain export) is refused on its line, and no replay starts with tokens on.
func TestReplayRefusesWhatConfiguresTheServer(t *testing.T) {
	lease := fmt.Sprintf(recordedLease, fmt.Sprintf(leaseObject, "2026-01-02T03:00:01.000000Z"))
	for _, tc := range []struct {
		name      string
		resources []string
		line      int
		msg       string
	}{
		{"listed in the header", append(slices.Clone(recordingResources), "participants.leaselab.dev"), 1, `"participants.leaselab.dev"`},
		{"not listed in the header", recordingResources, 4, `resource "participants.leaselab.dev" is not one the header lists`},
		{"a plain export", nil, 3, `resource "participants.leaselab.dev" is not one a recording holds`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replayRefused(t, writeRecording(t, tc.resources, recordedNamespace, lease, recordedInstructor), tc.line, tc.msg)
		})
	}
}

// TestReplayLoadsNoStoredIdentity: whatever its database holds, a replay serves without
// tokens and without TLS: workshop identities in it are not loaded.
func TestReplayLoadsNoStoredIdentity(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	path := filepath.Join(t.TempDir(), "replay.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{CompactInterval: -1}, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.EnsureWorkshop(ctx, db, 0); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	replay := &ui.Replay{File: "crafted.jsonl", From: at, To: at, FirstRevision: 1, LastRevision: 3, Changes: 3}
	rs, err := startServer(ctx, replayConfig("127.0.0.1:0", path, replay), discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if !strings.HasPrefix(rs.URL, "http://") || rs.access.Auth != nil {
		t.Errorf("a replay of a database with workshop identities serves %s with tokens %v", rs.URL, rs.access.Auth != nil)
	}
}

// TestReplayRefusesUndecodableObjects: an object the server could not read back (a renewTime
// with nine fractional digits where MicroTime takes six, bytes that are not JSON, a field of
// the wrong type, no object at all) is refused on its line before anything serves; the same
// recording with a good lease replays.
func TestReplayRefusesUndecodableObjects(t *testing.T) {
	for _, tc := range []struct{ name, object, msg string }{
		{"nine fractional digits", fmt.Sprintf(leaseObject, "2026-01-02T03:00:01.123456789Z"), `cannot parse "789Z"`},
		{"not JSON", `"` + base64.StdEncoding.EncodeToString([]byte("\x00\x01garbage")) + `"`, "invalid character"},
		{"a wrong type", strings.Replace(fmt.Sprintf(leaseObject, "2026-01-02T03:00:01.000000Z"), `:15,`, `:"15",`, 1), "cannot unmarshal string"},
		{"a null object", `null`, "no object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replayRefused(t, writeRecording(t, recordingResources, recordedNamespace, fmt.Sprintf(recordedLease, tc.object)), 3, tc.msg)
		})
	}
	good := fmt.Sprintf(recordedLease, fmt.Sprintf(leaseObject, "2026-01-02T03:00:01.123456Z"))
	replayURL, _ := mustReplay(t, writeRecording(t, recordingResources, recordedNamespace, good))
	for _, path := range []string{"/", "/leases/default/x", "/apis/coordination.k8s.io/v1/leases"} {
		resp, err := http.Get(replayURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s on the replay of a good recording: %d", path, resp.StatusCode)
		}
	}
}
