package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/leaselab/leaselab/web/play/scenario"
)

// fieldLessonChecks says, of each lesson retold from an incident in the field, what its page
// shows: end checks the page at the lesson's end and returns what is wrong ("" for nothing);
// during, when set, checks the page once step at is done, before Next.
var fieldLessonChecks = map[string]struct {
	end    string
	at     int
	during string
}{
	// Without fencing alice's writes landed as damage; with it, every write of bob's
	// that met a 409 was refused, and none of a stale leader landed.
	"fencing": {`(() => {
		const fx = [...document.querySelectorAll('[data-testid="effect"]')];
		const damage = Number(document.querySelector('[data-testid="damage"]').dataset.count);
		const aliceDamage = fx.some((e) => e.dataset.by === 'alice' && e.dataset.fenced === 'false' && e.dataset.accepted === 'true' && e.dataset.stale === 'true');
		const bobRefused = fx.some((e) => e.dataset.by === 'bob' && e.dataset.fenced === 'true' && e.dataset.accepted === 'false');
		const fencedDamage = fx.some((e) => e.dataset.fenced === 'true' && e.dataset.accepted === 'true' && e.dataset.stale === 'true');
		if (damage < 1 || !aliceDamage) return 'no damage counted: ' + damage;
		if (!bobRefused) return 'no fenced write of bob refused';
		if (fencedDamage) return 'a fenced stale write landed';
		return '';
	})()`, 0, ""},
	// Two cards of identity node-1 lead while the record names node-1, and the checker
	// finds no split brain; at the end the renamed process follows.
	"identity-collision": {`(() => {
		const st = (n) => (document.querySelector('[data-testid="member"][data-name="' + n + '"]') || {dataset: {}}).dataset.state;
		return st('node-1-a') === 'leader' && st('node-1-b') === 'stopped' && st('node-1-7f3a') === 'follower' ? '' : 'states ' + [st('node-1-a'), st('node-1-b'), st('node-1-7f3a')];
	})()`, 3, `(() => {
		const leaders = [...document.querySelectorAll('[data-testid="member"][data-identity="node-1"][data-state="leader"]')].map((m) => m.dataset.name);
		const holder = document.querySelector('[data-testid="holder"]').textContent.trim();
		if (leaders.length !== 2) return 'leaders of identity node-1: ' + leaders;
		if (holder !== 'node-1') return 'holder ' + holder;
		if (document.querySelector('[data-testid="scenario-overlaps"]')) return 'a split brain was counted';
		return '';
	})()`},
	// Both replicas say that Run returned, and nobody leads.
	"zombie-standby": {`(() => {
		const zombies = document.querySelectorAll('[data-testid="member"] [data-testid="zombie"]').length;
		const leaders = document.querySelectorAll('[data-testid="member"][data-state="leader"]').length;
		return zombies === 2 && leaders === 0 ? '' : zombies + ' zombies, ' + leaders + ' leaders';
	})()`, 0, ""},
	// The old cast is stopped; a newcomer holds the lease, with one transition.
	"restart-waits": {`(() => {
		const holder = document.querySelector('[data-testid="holder"]').textContent.trim();
		const stopped = document.querySelectorAll('[data-testid="member"][data-state="stopped"]').length;
		return (holder === 'dave' || holder === 'erin') && stopped === 3 ? '' : 'holder ' + holder + ', ' + stopped + ' stopped';
	})()`, 0, ""},
	// While bob holds the lease, alice, waiting on her dead connection, still leads on her
	// card, which names the fault; at the end one split brain was found, and alice holds.
	"stuck-connection": {`(() => {
		const holder = document.querySelector('[data-testid="holder"]').textContent.trim();
		const overlaps = (document.querySelector('[data-testid="scenario-overlaps"]') || {}).textContent || '';
		return holder === 'alice' && overlaps.startsWith('1 ') ? '' : 'holder ' + holder + ', overlaps ' + overlaps;
	})()`, 3, `(() => {
		const card = (n) => document.querySelector('[data-testid="member"][data-name="' + n + '"]');
		const faults = [...card('alice').querySelectorAll('.member-fault')].map((f) => f.textContent).join('; ');
		if (card('alice').dataset.state !== 'leader' || card('bob').dataset.state !== 'leader') return 'alice ' + card('alice').dataset.state + ', bob ' + card('bob').dataset.state;
		return faults.includes('dead connection') ? '' : 'alice\'s faults: ' + faults;
	})()`},
	// While the server is down the page says so and nobody leads; once it is back, one
	// candidate leads and the record names it.
	"apiserver-outage": {`(() => {
		const leaders = [...document.querySelectorAll('[data-testid="member"][data-state="leader"]')].map((m) => m.dataset.name);
		const holder = document.querySelector('[data-testid="holder"]').textContent.trim();
		if (document.querySelector('[data-testid="outage"]')) return 'the outage banner is still shown';
		return leaders.length === 1 && leaders[0] === holder ? '' : 'leaders ' + leaders + ', holder ' + holder;
	})()`, 2, `(() => {
		const leaders = document.querySelectorAll('[data-testid="member"][data-state="leader"]').length;
		return document.querySelector('[data-testid="outage"]') && leaders === 0 ? '' : 'outage banner ' + !!document.querySelector('[data-testid="outage"]') + ', ' + leaders + ' leaders';
	})()`},
}

// Each lesson retold from an incident in the field runs from its page to its end in Chromium,
// at 4× (fencing at 2×): Start, then Next whenever it is offered. Each page links the incident
// it retells and says what it teaches; at the end, what the lesson shows is on the page (the
// ledger's damage and refusals, two processes leading under one identity, a member that never
// competes again, ...). A test each, not subtests of one: the lessons wait on their clocks far
// more than they use the machine, and top-level tests take their turns in order with the rest.
func TestBrowserLessonFencing(t *testing.T)           { browserFieldLesson(t, "fencing") }
func TestBrowserLessonIdentityCollision(t *testing.T) { browserFieldLesson(t, "identity-collision") }
func TestBrowserLessonZombieStandby(t *testing.T)     { browserFieldLesson(t, "zombie-standby") }
func TestBrowserLessonRestartWaits(t *testing.T)      { browserFieldLesson(t, "restart-waits") }
func TestBrowserLessonStuckConnection(t *testing.T)   { browserFieldLesson(t, "stuck-connection") }
func TestBrowserLessonAPIServerOutage(t *testing.T)   { browserFieldLesson(t, "apiserver-outage") }

// TestEveryFieldLessonHasABrowserTest: each lesson from the field has its browser test above.
func TestEveryFieldLessonHasABrowserTest(t *testing.T) {
	for _, sc := range scenario.Library() {
		if sc.Incident != "" {
			if _, ok := fieldLessonChecks[sc.Name]; !ok {
				t.Errorf("lesson %s retells %s but has no browser test", sc.Name, sc.Incident)
			}
		}
	}
}

// browserFieldLesson plays the lesson name in a tab of its own and checks its page.
func browserFieldLesson(t *testing.T, name string) {
	browserTest(t)
	c, ok := fieldLessonChecks[name]
	sc := scenario.Find(name)
	if sc == nil || !ok {
		t.Fatalf("no lesson %s, or nothing to check of it", name)
	}
	srv := mustStartServer(t, "")
	out := browserOutputDir(t)
	// Fencing's damage needs a frozen writer's second try to land within its renew
	// deadline: at 4x on a loaded machine that is a few hundred milliseconds.
	speed := "4"
	if name == "fencing" {
		speed = "2"
	}
	// With less motion, as a participant's browser may ask for: the stage marks each request
	// at its candidate instead of moving it along its link, and the page's countdowns and
	// claims must hold all the same. (The other lesson tests draw in full motion.)
	browser := mustStartBrowser(t)
	tab, _ := openBrowserTab(t, browser, "about:blank")
	if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctxWith(tab, 20*time.Second), chromedp.Navigate(srv.URL+"/scenarios/"+name+"?speed="+speed+"&lang=en")); err != nil {
		t.Fatal(err)
	}
	if got := mustEval(t, tab, `String(matchMedia('(prefers-reduced-motion: reduce)').matches)`); got != "true" {
		t.Fatalf("the lesson's page does not ask for less motion: %s", got)
	}
	playLessonInBrowser(t, tab, len(sc.Steps), c.at, func() string {
		if s := mustEval(t, tab, c.during); s != "" {
			return s
		}
		mustEval(t, tab, `(() => { document.querySelector('[data-testid="members"]').scrollIntoView({block: 'start'}); scrollBy(0, -80); return ''; })()`)
		browserScreenshot(t, tab, out, name+"-step"+strconv.Itoa(c.at)+"-1280.png")
		return ""
	})
	if got := mustEval(t, tab, `(document.querySelector('[data-testid="incident"]') || {}).href || ''`); got != sc.Incident {
		t.Errorf("the incident link is %q, want %q", got, sc.Incident)
	}
	if got := mustEval(t, tab, `(document.querySelector('.scenario-head [data-testid="teaches"]') || {}).textContent || ''`); !strings.Contains(got, sc.Teaches.En) {
		t.Errorf("the page teaches %q, want %q", got, sc.Teaches.En)
	}
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		s := mustEval(t, tab, c.end)
		return s == "", s
	}); err != nil {
		t.Errorf("at the end of %s: %v", name, err)
	}
	// Every claim the lesson makes is listed, and held.
	if _, err := browserWait(30*time.Second, func() (bool, string) {
		s := mustEval(t, tab, `[...document.querySelectorAll('[data-testid="claim"]')].map((c) => c.dataset.held + ': ' + c.textContent.trim()).join('\n')`)
		n := strings.Count(s, "\n") + 1
		return s != "" && n == len(sc.Claims) && !strings.Contains(s, "false:") && !strings.HasPrefix(s, ":") && !strings.Contains(s, "\n:"), s
	}); err != nil {
		t.Errorf("the claims of %s on its page: %v", name, err)
		lease := mustEval(t, tab, `document.querySelector('[data-testid="scenario-lease"]').href`)
		lt, _ := openBrowserTab(t, browser, lease)
		time.Sleep(2 * time.Second)
		t.Logf("the lease page's split brains: %s", mustEval(t, lt, `[...document.querySelectorAll('[data-testid="overlap"]')].map((o) => o.dataset.cause + ' ' + o.textContent.replace(/\s+/g, ' ')).join('\n')`))
	}
	browserScreenshot(t, tab, out, name+"-end-1280.png")
	// What the lesson shows, under the stage: the cards, and the ledger of a lesson with one.
	mustEval(t, tab, `(() => { document.querySelector('[data-testid="members"]').scrollIntoView({block: 'start'}); scrollBy(0, -80); return ''; })()`)
	browserScreenshot(t, tab, out, name+"-cards-1280.png")
}

// playLessonInBrowser starts the lesson of the open page (whose URL names its speed), and
// presses Next whenever the page offers it, until the page says the last of its steps is done.
// Once step at is done, before Next, it waits for check to find nothing wrong.
func playLessonInBrowser(t *testing.T, tab context.Context, steps, at int, check func() string) {
	t.Helper()
	if _, err := browserWait(time.Minute, func() (bool, string) {
		s, _ := browserEval(tab, `document.readyState + ' ' + !!document.querySelector('[data-testid="start"]')`)
		return s == "complete true", s
	}); err != nil {
		t.Fatalf("the lesson's page does not load: %v", err)
	}
	browserPress(t, tab, `[data-testid="start"]`)
	shown := func() int {
		s, _ := browserEval(tab, `String(document.querySelectorAll('[data-testid="step"]').length)`)
		n, _ := strconv.Atoi(s)
		return n
	}
	status := func() string {
		return mustEval(t, tab, `((document.querySelector('[data-testid="scenario-status"]') || {}).textContent || '') + ' ' + ((document.querySelector('[data-testid="scenario-error"]') || {}).textContent || '')`)
	}
	for n := 1; n <= steps; n++ {
		if _, err := browserWait(time.Minute, func() (bool, string) { return shown() == n, "steps shown " + strconv.Itoa(shown()) + ": " + status() }); err != nil {
			t.Fatalf("step %d is not shown: %v", n, err)
		}
		if n == steps {
			break
		}
		if _, err := browserWait(2*time.Minute, func() (bool, string) {
			s, _ := browserEval(tab, `String(!document.querySelector('[data-testid="next"]').disabled)`)
			return s == "true", "step " + strconv.Itoa(n) + ": " + status()
		}); err != nil {
			t.Fatalf("Next is not offered at step %d: %v", n, err)
		}
		if n == at {
			if _, err := browserWait(30*time.Second, func() (bool, string) {
				s := check()
				return s == "", s
			}); err != nil {
				t.Errorf("at step %d: %v", n, err)
			}
		}
		browserPress(t, tab, `[data-testid="next"]`)
		if _, err := browserWait(time.Minute, func() (bool, string) { return shown() > n, "steps shown " + strconv.Itoa(shown()) + ": " + status() }); err != nil {
			t.Fatalf("Next pressed at step %d: %v", n, err)
		}
		browserRevealIfAsked(t, tab)
	}
	if _, err := browserWait(2*time.Minute, func() (bool, string) {
		s, _ := browserEval(tab, `document.getElementById('scenario-live').dataset.done`)
		return s == "true", "done " + s + ": " + status()
	}); err != nil {
		t.Fatalf("the lesson does not reach its end: %v", err)
	}
}
