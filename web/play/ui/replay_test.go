package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/store/changelog"
	"github.com/leaselab/leaselab/store/sqlite"
	"github.com/leaselab/leaselab/web/api/kinds"
	"github.com/leaselab/leaselab/web/lease/recording"
)

// TestHistoryDownload: /ui/history offers the recording of a lease (or a namespace) as a
// file; a scope that names nothing valid gets an error page instead.
func TestHistoryDownload(t *testing.T) {
	tu := mustNewUI(t, t0.Add(time.Minute))
	tu.putLease(t, lease("demo", "x", "alice", t0, 10, 0), t0)
	tu.putLease(t, lease("demo", "x", "bob", t0.Add(20*time.Second), 10, 1), t0.Add(20*time.Second))
	tu.putLease(t, lease("demo", "y", "carol", t0, 10, 0), t0)

	w := tu.do(t, httptest.NewRequest(http.MethodGet, "/ui/history?namespace=demo&lease=x", nil))
	cd := w.Header().Get("Content-Disposition")
	if w.Code != http.StatusOK || !strings.HasPrefix(cd, `attachment; filename="leaselab-demo-x-`) || !strings.HasSuffix(cd, `.jsonl"`) {
		t.Fatalf("download: %d %q\n%s", w.Code, cd, w.Body.String())
	}
	lines := strings.Split(strings.TrimSpace(w.Body.String()), "\n")
	var h changelog.Header
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil || h.Recording != changelog.Format || h.Lease != "x" || h.Changes != 2 || len(lines) != 3 {
		t.Errorf("recording of demo/x: %v %+v\n%s", err, h, w.Body.String())
	}
	// The page offers it.
	doc := tu.mustGetDoc(t, "/leases/demo/x", http.StatusOK)
	if href := doc.Find(`[data-testid=download-recording]`).AttrOr("href", ""); href != "/ui/history?lease=x&namespace=demo" {
		t.Errorf("lease page's download link %q", href)
	}
	doc = tu.mustGetDoc(t, "/?namespace=demo", http.StatusOK)
	if href := doc.Find(`[data-testid=download-recording]`).AttrOr("href", ""); href != "/ui/history?namespace=demo" {
		t.Errorf("dashboard's download link %q", href)
	}
	for _, bad := range []string{"/ui/history?lease=x", "/ui/history?namespace=Demo"} {
		tu.mustGetDoc(t, bad, http.StatusBadRequest)
	}
	// A lease or namespace the log never held: nothing to download.
	for _, absent := range []string{"/ui/history?namespace=demo&lease=never", "/ui/history?namespace=absent"} {
		tu.mustGetDoc(t, absent, http.StatusNotFound)
	}
}

// TestReplayScreens: on a replay every page says what it replays, with the clock stopped;
// candidate tabs cannot join, and the dashboard commands no tab.
func TestReplayScreens(t *testing.T) {
	replay := &Replay{File: "class.jsonl", Scope: "namespace demo", From: t0, To: t0.Add(time.Minute), FirstRevision: 3, LastRevision: 40, Changes: 12}
	tu := mustNewUI(t, replay.To, func(o *Options) { o.Replay = replay })
	tu.putLease(t, lease("demo", "x", "alice", t0, 10, 0), t0)
	for _, path := range []string{"/", "/leases/demo/x"} {
		doc := tu.mustGetDoc(t, path, http.StatusOK)
		banner := text(doc.Find(`[data-testid=replay]`))
		if !strings.Contains(banner, "class.jsonl") || !strings.Contains(banner, "(namespace demo)") || !strings.Contains(banner, "revisions 3 to 40") {
			t.Errorf("%s: banner %q", path, banner)
		}
		if _, ok := doc.Find(`body`).Attr("data-replay"); !ok {
			t.Errorf("%s: the page's clock is not stopped (no data-replay)", path)
		}
		if doc.Find(`.writes`).Length() == 0 {
			t.Errorf("%s: no action marked as one that writes", path)
		}
	}
	doc := tu.mustGetDoc(t, "/play?namespace=demo&lease=x", http.StatusUnprocessableEntity)
	if !strings.Contains(text(doc.Find(`[data-testid=problems]`)), "Candidate tabs cannot join") ||
		!strings.Contains(doc.Find(`script#play-config`).Text(), `"disabled":true`) {
		t.Error("the candidate tab's page does not refuse to join the replay")
	}
	if doc.Find(`[data-testid=change-in-settings]`).Length() != 0 {
		t.Error("the refusal to join a replay advises changing the tab's settings")
	}
	w := tu.do(t, httptest.NewRequest(http.MethodGet, "/ui/tabs/connect", nil))
	var st metav1.Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || w.Code != http.StatusMethodNotAllowed ||
		st.Reason != metav1.StatusReasonMethodNotAllowed || !strings.Contains(st.Message, "candidate tabs cannot join") {
		t.Errorf("tab connection: %d %v %s", w.Code, err, w.Body.String())
	}
}

// TestLongReplayTimeline: a replay's holder timeline shows the whole recording, not only its
// last five minutes: it has no now to follow.
func TestLongReplayTimeline(t *testing.T) {
	replay := &Replay{File: "class.jsonl", From: t0, To: t0.Add(8 * time.Minute), FirstRevision: 1, LastRevision: 3, Changes: 3}
	tu := mustNewUI(t, replay.To, func(o *Options) { o.Replay = replay })
	tu.putLease(t, lease("demo", "x", "first", t0, 60, 0), t0) // its hold ends after a minute
	tu.putLease(t, lease("demo", "x", "second", t0.Add(7*time.Minute), 600, 1), t0.Add(7*time.Minute))
	doc := tu.mustGetDoc(t, "/leases/demo/x", http.StatusOK)
	var lanes []string
	doc.Find(`.timeline-names .lane-label`).Each(func(_ int, s *goquery.Selection) { lanes = append(lanes, s.Text()) })
	if !slices.Contains(lanes, "first") || !slices.Contains(lanes, "second") {
		t.Errorf("the replay's timeline draws the lanes %q, want first and second", lanes)
	}
}

// TestReplayTimeBarSkipsUndatedViews: a recorded view with no time of its own (atMs 0, as no
// server writes one) is dated by its commit: the time bar of the replay starts at the
// recording's first change, not in 1970, and every moment it lists lies within it.
func TestReplayTimeBarSkipsUndatedViews(t *testing.T) {
	const (
		leaseLine = `{"revision":%d,"type":"%s","time":"%s","resource":"leases.coordination.k8s.io","namespace":"default","name":"x","createRevision":1,` +
			`"object":{"metadata":{"name":"x","namespace":"default","creationTimestamp":"%[3]s"},"spec":{"holderIdentity":"alice","leaseDurationSeconds":15,"renewTime":"%[4]s"}}}`
		viewLine = `{"revision":2,"type":"ADDED","time":"%s","resource":"candidateviews.leaselab.dev","namespace":"default","name":"x/alice","createRevision":2,` +
			`"object":{"identity":"alice","namespace":"default","lease":"x","source":"tab","state":"leader","role":"leader","leads":true,"holder":"alice","receivedMs":0,"atMs":0}}`
	)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	micro := func(t time.Time) string { return t.UTC().Format(metav1.RFC3339Micro) }
	file := fmt.Sprintf(leaseLine, 1, "ADDED", changelog.FormatTime(at(0)), micro(at(0))) + "\n" +
		fmt.Sprintf(viewLine, changelog.FormatTime(at(1))) + "\n" +
		fmt.Sprintf(leaseLine, 3, "MODIFIED", changelog.FormatTime(at(4)), micro(at(4))) + "\n"
	path := filepath.Join(t.TempDir(), "replay.db")
	rec, err := recording.New(kinds.NewRegistry(kinds.DefaultOptions()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Import(context.Background(), path, strings.NewReader(file), rec.Checker()); err != nil {
		t.Fatal(err)
	}
	replay := &Replay{File: "x.jsonl", From: at(0), To: at(4), FirstRevision: 1, LastRevision: 3, Changes: 3}
	rp := mustNewUIOn(t, openTestStore(t, path, at(4)), at(4), func(o *Options) { o.Replay = replay })
	w := rp.do(t, httptest.NewRequest(http.MethodGet, "/ui/moments?namespace=default&lease=x", nil))
	var r momentsReply
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil || w.Code != http.StatusOK {
		t.Fatalf("moments: %d %v %s", w.Code, err, w.Body.String())
	}
	if want := momentText(at(0)); r.From != want {
		t.Errorf("the time bar starts at %s, want the recording's first change %s", r.From, want)
	}
	for _, m := range r.Moments {
		if m.At < r.From || m.At > r.To {
			t.Errorf("moment %s %q outside the time bar %s to %s", m.At, m.Text, r.From, r.To)
		}
	}
}
