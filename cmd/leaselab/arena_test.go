package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// TestChineseArena: the room lesson's page in Chinese has no English left, before it runs (its
// panel: the join link, an empty room) and while it plays with a room of tabs the server
// simulates (their rows, the narration of what they did, its claims).
func TestChineseArena(t *testing.T) {
	ts := mustStartServer(t, "")
	ctx := ctxT(t, time.Minute)
	check := func(when string, doc *goquery.Document) {
		for _, text := range visibleTexts(doc) {
			for _, e := range englishLeft(text) {
				t.Errorf("%s: English left: %q", when, e)
			}
		}
	}
	before := mustGetZh(t, ts.URL, "/scenarios/arena?lang=zh")
	if before.Find(`[data-testid="room-empty"]`).Length() != 1 {
		t.Errorf("before any tab joins, the panel says: %q", before.Find(`[data-testid="room"]`).Text())
	}
	check("before", before)
	post := func(path string) {
		resp, err := http.PostForm(ts.URL+path, url.Values{"seed": {"1"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			t.Fatalf("POST %s: %d", path, resp.StatusCode)
		}
	}
	post("/scenarios/arena/start")
	t.Cleanup(func() { post("/scenarios/arena/stop") })
	for range 3 {
		post("/scenarios/arena/room/simulate")
	}
	var doc *goquery.Document
	waitFor(t, ctx, "the room of three, one leading, told", func() (bool, string) {
		doc = mustGetZh(t, ts.URL, "/scenarios/arena?lang=zh")
		step := doc.Find(`[data-testid="step"]`).First().Text()
		return doc.Find(`[data-testid="room-tab"]`).Length() == 3 && strings.Contains(step, "领导者：") && doc.Find(`[data-testid="claim"]`).Length() > 0, step
	})
	check("while it plays", doc)
}
