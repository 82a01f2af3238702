package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// TestPredictionInWorkshop: in workshop mode a participant votes as who they signed in as, one
// vote each whatever they send, and may not reveal; bad input is refused with a clear status and
// counts nothing; the instructor's page shows the tally, a participant's does not until the
// reveal; the question's words are Chinese on a Chinese page; after the reveal the vote is closed.
func TestPredictionInWorkshop(t *testing.T) {
	t.Parallel()
	w := mustStartWorkshop(t, 2, "", nil)
	signedIn := func(user string) *http.Client {
		hc := w.httpClient(t)
		w.join(t, hc, user)
		return hc
	}
	instructor, p1, p2 := signedIn("instructor"), signedIn("participant-01"), signedIn("participant-02")
	post := func(hc *http.Client, action string, form url.Values) int {
		t.Helper()
		form.Set("seed", "1")
		req, _ := http.NewRequest(http.MethodPost, w.URL+"/scenarios/clean-release/"+action, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", w.URL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	page := w.URL + "/scenarios/clean-release?seed=1"
	if code := post(instructor, "start", url.Values{"speed": {"4"}}); code != http.StatusSeeOther {
		t.Fatalf("start: %d", code)
	}
	ctx := ctxT(t, 2*time.Minute)
	waitFor(t, ctx, "the question", func() (bool, string) {
		d := getDoc(t, instructor, page, http.StatusOK)
		if d.Find(`[data-testid="prediction"][data-open="true"]`).Length() == 1 {
			return true, ""
		}
		if _, disabled := d.Find(`[data-testid="next"]`).Attr("disabled"); !disabled {
			post(instructor, "next", url.Values{})
		}
		return false, d.Find(`[data-testid="scenario-status"]`).Text()
	})
	vote := func(hc *http.Client, step, choice string) int {
		return post(hc, "vote", url.Values{"step": {step}, "choice": {choice}})
	}
	for _, v := range []struct {
		hc           *http.Client
		step, choice string
		want         int
	}{
		{p1, "3", "0", http.StatusSeeOther},
		{p1, "3", "1", http.StatusSeeOther}, // changed her mind
		{p2, "3", "1", http.StatusSeeOther},
		{p2, "3", "1", http.StatusSeeOther}, // the same again: still one vote
		{p1, "3", "7", http.StatusBadRequest},
		{p1, "3", "x", http.StatusBadRequest},
		{p1, "2", "0", http.StatusConflict}, // a step that asks nothing, or no longer
	} {
		if got := vote(v.hc, v.step, v.choice); got != v.want {
			t.Errorf("vote step %s choice %s: %d, want %d", v.step, v.choice, got, v.want)
		}
	}
	if code := post(p1, "reveal", url.Values{}); code != http.StatusForbidden {
		t.Errorf("a participant's reveal: %d, want 403", code)
	}
	tally := func(d *goquery.Document) string {
		tl := d.Find(`[data-testid="tally"]`)
		if tl.Length() == 0 {
			return "none"
		}
		rows := tl.Find(`[data-testid="tally-row"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-votes", "") })
		return tl.AttrOr("data-votes", "") + ":" + strings.Join(rows, ",")
	}
	if got := tally(getDoc(t, instructor, page, http.StatusOK)); got != "2:0,2,0" {
		t.Errorf("the instructor's tally %s, want 2:0,2,0", got)
	}
	mine := getDoc(t, p1, w.URL+"/follow", http.StatusOK)
	if got := tally(mine); got != "none" {
		t.Errorf("a participant sees the tally %s before the reveal", got)
	}
	if got := mine.Find(`[data-testid="choice"][aria-pressed="true"]`).AttrOr("data-choice", ""); got != "1" {
		t.Errorf("participant-01's page marks choice %q, want 1", got)
	}
	zh := getDoc(t, instructor, page+"&lang=zh", http.StatusOK)
	for _, text := range visibleTexts(goquery.NewDocumentFromNode(zh.Find(`[data-testid="prediction"]`).Nodes[0])) {
		for _, e := range englishLeft(text) {
			t.Errorf("the question in Chinese: English left: %q", e)
		}
	}

	if code := post(instructor, "reveal", url.Values{}); code != http.StatusSeeOther {
		t.Fatalf("reveal: %d", code)
	}
	if got := vote(p1, "3", "0"); got != http.StatusConflict {
		t.Errorf("a vote after the reveal: %d, want 409", got)
	}
	if code := post(instructor, "reveal", url.Values{}); code != http.StatusConflict {
		t.Errorf("a second reveal: %d, want 409", code)
	}
	after := getDoc(t, p2, w.URL+"/follow", http.StatusOK)
	if got := tally(after); got != "2:0,2,0" {
		t.Errorf("after the reveal a participant's tally is %s, want 2:0,2,0", got)
	}
	if after.Find(`[data-testid="answer"]`).Length() != 1 || after.Find(`[data-testid="choice"][data-right="true"]`).AttrOr("data-choice", "") != "1" {
		t.Errorf("after the reveal /follow does not say the answer: %s", after.Find(`[data-testid="prediction"]`).Text())
	}
}
