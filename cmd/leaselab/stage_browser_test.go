package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/web/webtest/poll"
)

// TestBrowserStage: the stage of a lease three tabs compete for shows who leads and each
// one's timers, the requests as they travel with their verbs and outcomes (a client's 409
// among them), a paused leader's belief lane and the split brain after it resumes, a
// partitioned leader's requests ending in a timeout, and a past moment's roles.
func TestBrowserStage(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	tabs := map[string]context.Context{}
	for _, id := range []string{"alice", "bob", "carol"} {
		q := url.Values{"namespace": {"default"}, "lease": {"stage"}, "identity": {id},
			"leaseDuration": {"5"}, "renewDeadline": {"4"}, "retryPeriod": {"2"}}
		tabs[id], _ = openBackgroundTab(t, browser, ts.URL+"/play?"+q.Encode())
	}
	stageURL := ts.URL + "/stage?namespace=default&lease=stage"
	stage, _ := openBrowserTab(t, browser, stageURL)
	// Every request the stage drew, as identity|verb|outcome (the picture is patched anew), and
	// of each that ended, identity|verb|outcome|start|end (server clock, Unix ms).
	if _, err := browserEval(stage, `(() => {
		window.reqSeen = new Set();
		window.reqEnded = {};
		window.reqNear = Infinity;
		window.reqPlaced = 0;
		window.reqBack = 0; // placed on their way back, and of those, showing their verb
		window.reqBackVerb = 0;
		setInterval(() => {
			for (const g of document.querySelectorAll('[data-testid=stage-request]')) {
				const d = g.dataset;
				window.reqSeen.add([d.identity, d.verb, d.outcome].join('|'));
				if (d.outcome) window.reqEnded[d.id] = [d.identity, d.verb, d.outcome, d.startMs, d.endMs].join('|');
				// How close a request placed by the page comes to its candidate, in outer rings.
				const ring = document.querySelector('[data-testid=stage-candidate][data-identity="' + d.identity + '"] .ring-renew');
				if (!ring || !g.llDrawn || !g.llDrawn.t || g.style.opacity === '0.00') continue;
				const a = ring.getBoundingClientRect(), b = g.querySelector('circle').getBoundingClientRect();
				const dist = Math.hypot(a.x + a.width / 2 - b.x - b.width / 2, a.y + a.height / 2 - b.y - b.height / 2) / (a.width / 2);
				window.reqNear = Math.min(window.reqNear, dist);
				window.reqPlaced++;
				if (g.hasAttribute('data-back')) {
					window.reqBack++;
					if (getComputedStyle(g.querySelector('.req-verb')).display !== 'none') window.reqBackVerb++;
				}
			}
		}, 30);
		return 'ok';
	})()`); err != nil {
		t.Fatal(err)
	}
	roles := func() map[string]string {
		s, _ := browserEval(stage, `Array.from(document.querySelectorAll('[data-testid=stage-candidate]'), (c) => c.dataset.identity + '=' + c.dataset.role).join(' ')`)
		m := map[string]string{}
		for _, f := range strings.Fields(s) {
			id, role, _ := strings.Cut(f, "=")
			m[id] = role
		}
		return m
	}
	leaderOn := func(m map[string]string) string {
		for id, r := range m {
			if r == "leader" {
				return id
			}
		}
		return ""
	}
	var first string
	poll.Until(t, 30*time.Second, "one leader and two followers on the stage, with their rings", func() (bool, string) {
		m := roles()
		first = leaderOn(m)
		n := 0
		for _, id := range []string{"alice", "bob", "carol"} {
			if m[id] == "follower" {
				n++
			}
		}
		rings, _ := browserEval(stage, `Array.from(document.querySelectorAll('[data-testid=stage-candidate]'), (c) => c.dataset.identity + ':' + Array.from(c.querySelectorAll('[data-testid=stage-ring]'), (r) => r.dataset.timer).join('+')).join(' ')`)
		return first != "" && n == 2 && strings.Contains(rings, first+":expiry+renew") && strings.Count(rings, "expiry") == 3, fmt.Sprintf("%v rings %s", m, rings)
	})
	ledAt := time.Now()
	seen := func() string { s, _ := browserEval(stage, `Array.from(window.reqSeen).sort().join(' ')`); return s }
	poll.Until(t, 30*time.Second, "the leader's renewal drawn as a PUT answered 200", func() (bool, string) {
		s := seen()
		return strings.Contains(s, first+"|PUT|200"), s
	})
	browserScreenshot(t, stage, out, "stage.png")
	// A request leaves from its candidate's outer ring and comes back to it: never over the
	// shape inside, which says who leads.
	near := mustEval(t, stage, `(window.reqPlaced > 0 && window.reqNear >= 1 ? 'outside' : 'inside or none') + ': ' +
		window.reqPlaced + ' placed, the nearest at ' + window.reqNear.toFixed(2) + ' rings'`)
	t.Logf("requests %s", near)
	if !strings.HasPrefix(near, "outside: ") {
		t.Errorf("a request was drawn inside its candidate's outer ring, or none was placed: %s", near)
	}
	// On its way back a request shows its answer only: the verb of the next one may be beside it.
	poll.Until(t, 10*time.Second, "a request seen on its way back", func() (bool, string) {
		s := mustEval(t, stage, `window.reqBack + ' back'`)
		return !strings.HasPrefix(s, "0 "), s
	})
	if s := mustEval(t, stage, `window.reqBack + ' back, ' + window.reqBackVerb + ' with their verb'`); !strings.HasSuffix(s, " 0 with their verb") {
		t.Errorf("requests on their way back: %s, want none with its verb", s)
	}

	// The dashboard shows the same roles on the lease's card, above the fold, one click from
	// the stage.
	dash, _ := openBrowserTab(t, browser, ts.URL+"/?namespace=default")
	poll.Until(t, 30*time.Second, "the card's cast, above the fold", func() (bool, string) {
		s, _ := browserEval(dash, `(() => { const card = document.querySelector('[data-lease-card][data-name=stage]'); if (!card) return 'no card';
			const chips = [...card.querySelectorAll('[data-testid=card-cast] li')];
			return chips.map((c) => c.dataset.identity + '=' + c.dataset.role + (c.getBoundingClientRect().bottom <= innerHeight ? '' : '(below)')).sort().join(' ') + ' | ' + card.querySelector('[data-testid=open-stage]').getAttribute('href'); })()`)
		chips, _, _ := strings.Cut(s, " | ")
		return strings.Count(chips, "=") == 3 && strings.Contains(chips, first+"=leader") && !strings.Contains(s, "below") &&
			strings.HasSuffix(s, "| /stage?lease=stage&namespace=default"), s
	})
	browserScreenshot(t, dash, out, "dashboard-cast.png")

	// A client writes over a stale resourceVersion: its 409 bounces back on the stage.
	l, err := ts.Client.CoordinationV1().Leases("default").Get(context.Background(), "stage", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.ResourceVersion = "1"
	if _, err := ts.Client.CoordinationV1().Leases("default").Update(context.Background(), l, metav1.UpdateOptions{}); err == nil {
		t.Fatal("an update at resourceVersion 1 succeeded")
	}
	poll.Until(t, 30*time.Second, "a client's PUT answered 409", func() (bool, string) {
		s := seen()
		return strings.Contains(s, "|PUT|409") && strings.Contains(strings.Join(mapValues(roles()), " "), "client"), s
	})

	// The leader is paused: another takes over; resumed, it believed it led meanwhile.
	if err := chromedp.Do(tabs[first], chromedp.KeyEvent("p")); err != nil {
		t.Fatal(err)
	}
	var second string
	poll.Until(t, 30*time.Second, "the paused leader drawn paused, and another leading", func() (bool, string) {
		m := roles()
		second = leaderOn(m)
		return m[first] == "paused" && second != "" && second != first, fmt.Sprint(m)
	})
	browserScreenshot(t, stage, out, "stage-paused.png")
	if err := chromedp.Do(tabs[first], chromedp.KeyEvent("p")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "the first leader's paused belief and the split-brain band", func() (bool, string) {
		s, _ := browserEval(stage, `(() => {
			const lane = document.querySelector('[data-testid=belief-lane][data-identity="`+first+`"]');
			const beliefs = lane ? Array.from(lane.querySelectorAll('[data-testid=belief]'), (b) => b.dataset.belief).join(',') : 'no lane';
			return beliefs + ' bands=' + document.querySelectorAll('[data-testid=overlap-band]').length;
		})()`)
		return strings.Contains(s, "leading,paused") && !strings.HasSuffix(s, "bands=0"), s
	})

	// The new leader is cut off (its requests hang): they end in a timeout.
	if err := chromedp.Do(tabs[second], chromedp.KeyEvent("n")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "the partitioned leader drawn cut off, its request timing out", func() (bool, string) {
		s := seen()
		return roles()[second] == "partitioned" && (strings.Contains(s, second+"|PUT|timeout") || strings.Contains(s, second+"|GET|timeout")), s
	})
	browserScreenshot(t, stage, out, "stage-partition.png")
	hung, _ := browserEval(stage, `Object.values(window.reqEnded).find((s) => s.startsWith('`+second+`|') && s.includes('|timeout|')) || ''`)

	// The moment the first leader led: the server draws the roles of then.
	at := stageURL + "&at=" + url.QueryEscape(ledAt.UTC().Format(time.RFC3339Nano))
	if err := chromedp.Do(stage, chromedp.Navigate(at)); err != nil {
		t.Fatal(err)
	}
	if m := roles(); m[first] != "leader" {
		t.Errorf("%s: roles %v, want %s leading", at, m, first)
	}

	// Half way through the partitioned leader's request that timed out: the server draws it
	// in flight then, from the requests it kept.
	f := strings.Split(hung, "|")
	if len(f) != 5 {
		t.Fatalf("no timed-out request of %s with its instants: %q", second, hung)
	}
	start, _ := strconv.ParseInt(f[3], 10, 64)
	end, _ := strconv.ParseInt(f[4], 10, 64)
	at = stageURL + "&at=" + url.QueryEscape(time.UnixMilli((start+end)/2).UTC().Format(time.RFC3339Nano))
	if err := chromedp.Do(stage, chromedp.Navigate(at)); err != nil {
		t.Fatal(err)
	}
	s, _ := browserEval(stage, `Array.from(document.querySelectorAll('[data-testid=stage-request][data-identity="`+second+`"]'), (g) => g.dataset.verb + '|' + g.dataset.outcome).join(' ')`)
	if !slices.Contains(strings.Fields(s), f[1]+"|") {
		t.Errorf("%s: %s's requests drawn %q, want its %s in flight (%s)", at, second, s, f[1], hung)
	}
	browserScreenshot(t, stage, out, "stage-past-request.png")
	if err := chromedp.Do(stage, chromedp.Navigate(stageURL+"&lang=zh"), chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	if s, _ := browserEval(stage, `document.querySelector('[data-testid=stage-server] .server-name').textContent`); s != "API 服务器" {
		t.Errorf("Chinese stage: server named %q", s)
	}
	browserScreenshot(t, stage, out, "stage-phone-zh.png")
	mustSeeTicksFit(t, stage, "390x844", true)

	// Dark: the picture follows the system's scheme, the server's box dark like the page.
	if _, err := chromedp.Call(ctxWith(stage, 10*time.Second), emulation.SetEmulatedMedia,
		emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(stage, chromedp.EmulateViewport(1280, 720)); err != nil {
		t.Fatal(err)
	}
	mustSeeTicksFit(t, stage, "1280x720", false)
	if s, _ := browserEval(stage, `getComputedStyle(document.querySelector('.stage-server rect')).fill`); s == "rgb(255, 255, 255)" {
		t.Errorf("in the dark scheme the server's box is still white")
	}
	browserScreenshot(t, stage, out, "stage-dark.png")
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// mustSeeTicksFit fails the test unless the lanes' time labels shown are apart from each other
// and within the lanes' box, every other one on a phone (TestStageTicksFit checks the rule for
// every span).
func mustSeeTicksFit(t *testing.T, stage context.Context, size string, phone bool) {
	t.Helper()
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserEval(stage, `(() => { const box = document.querySelector('.lanes-scroll').getBoundingClientRect();
			const all = [...document.querySelectorAll('[data-testid=lane-tick]')];
			const shown = all.filter((e) => getComputedStyle(e).display !== 'none').map((e) => [e.textContent, e.getBoundingClientRect()]);
			const bad = shown.filter(([l, r], i) => r.right > box.right + 1 || (i > 0 && r.left < shown[i - 1][1].right + 2)).map(([l]) => l);
			const want = `+strconv.FormatBool(phone)+` ? Math.ceil(all.length / 2) : all.length;
			return (all.length >= 2 && shown.length === want && bad.length === 0 ? 'fit' : 'wrong') + ': ' +
				shown.length + ' of ' + all.length + ' shown, crowded or cut: ' + bad.join(' '); })()`)
		return strings.HasPrefix(s, "fit: "), s
	}); err != nil {
		t.Errorf("the lanes' time labels at %s: %v", size, err)
	}
}
