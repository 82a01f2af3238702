package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// liveCardSnapshot is a lease card as the page has it: every element with its attributes and,
// for the innermost, its text; only what the page's clock moves (the ring's fill and its
// seconds) is left out.
const liveCardSnapshot = `(() => {
	const card = document.querySelector('#lease-grid [data-lease-card][data-namespace="default"][data-name="live"]');
	if (!card) return 'no card';
	return [card, ...card.querySelectorAll('*')].map((el) => {
		const attrs = Array.from(el.attributes).filter((a) => a.name !== 'stroke-dashoffset').map((a) => a.name + '=' + a.value).sort().join(' ');
		const text = el.children.length || el.classList.contains('ring-text') ? '' : el.textContent.trim();
		return el.tagName.toLowerCase() + '[' + attrs + '] ' + text;
	}).join('\n');
})()`

// TestBrowserLiveCardIsTheReloadedCard: a lease card that changes while the dashboard is open
// shows what the same dashboard shows after a reload, attribute for attribute and word for
// word, in the page's language (Chinese here); and the change leaves the card's elements in
// place, so that the link the reader is on keeps the focus.
func TestBrowserLiveCardIsTheReloadedCard(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	ctx := ctxT(t, time.Minute)
	leases := ts.Client.CoordinationV1().Leases("default")
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "live"}, Spec: coordinationv1.LeaseSpec{
		HolderIdentity: ptr.To("first"), LeaseDurationSeconds: ptr.To[int32](300), AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0)}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	browser := mustStartBrowser(t)
	dash, _ := openBrowserTab(t, browser, ts.URL+"/?lang=zh")
	waitFor := func(what, expr, want string) string {
		t.Helper()
		var got string
		if _, err := browserWait(20*time.Second, func() (bool, string) {
			got, _ = browserEval(dash, expr)
			return got == want, got
		}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return got
	}
	waitFor("the stream connects", `document.getElementById('conn').textContent`, "实时")
	holder := `(document.querySelector('[data-lease-card][data-name="live"]') || {dataset: {}}).dataset.holder + ' ' + (document.querySelector('[data-lease-card][data-name="live"]') || {dataset: {}}).dataset.transitions`
	waitFor("the card", holder, "first 0")
	if _, err := browserEval(dash, `(() => { window.onStage = document.querySelector('[data-lease-card][data-name="live"] [data-testid=open-stage]'); window.onStage.focus(); return 'focused'; })()`); err != nil {
		t.Fatal(err)
	}

	// Another holder takes it over: the card changes live.
	later := metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity, l.Spec.AcquireTime, l.Spec.RenewTime, l.Spec.LeaseTransitions = ptr.To("second"), &later, &later, ptr.To[int32](1)
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the card changes live", holder, "second 1")
	if f, _ := browserEval(dash, `String(document.activeElement === window.onStage && window.onStage.isConnected)`); f != "true" {
		t.Errorf("the link on the card lost the focus when the card changed")
	}
	live, _ := browserEval(dash, liveCardSnapshot)
	if !strings.Contains(live, "已持有") {
		t.Errorf("the live card is not in Chinese:\n%s", live)
	}

	if err := chromedp.Do(dash, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor("the reloaded page connects", `document.getElementById('conn').textContent`, "实时")
	waitFor("the reloaded card", holder, "second 1")
	if reloaded, _ := browserEval(dash, liveCardSnapshot); reloaded != live {
		t.Errorf("the live card differs from the reloaded one:\n%s", lineDiff(live, reloaded))
	}
}

// lineDiff lists the lines of a and b that differ, side by side.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("live:     %s\nreloaded: %s", x, y))
		}
	}
	return strings.Join(out, "\n")
}
