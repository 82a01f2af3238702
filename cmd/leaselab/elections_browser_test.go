package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/leaselab/leaselab/web/lease/election"
)

// answerCandidatePings renews every candidate of ns whose pingTime is after its renewTime, as
// client-go's LeaseCandidate helper does, until ctx ends. It renews through v1beta1, which
// keeps a v1alpha1 candidate's preferredStrategies.
func answerCandidatePings(ctx context.Context, ts *testServer, ns string) {
	cands := ts.Client.CoordinationV1beta1().LeaseCandidates(ns)
	for ctx.Err() == nil {
		w, err := cands.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			time.Sleep(20 * time.Millisecond) // back off before watching again
			continue
		}
		for ev := range w.ResultChan() {
			c, ok := ev.Object.(*coordinationv1beta1.LeaseCandidate)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			if c.Spec.PingTime != nil && (c.Spec.RenewTime == nil || c.Spec.PingTime.After(c.Spec.RenewTime.Time)) {
				c.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
				_, _ = cands.Update(ctx, c, metav1.UpdateOptions{}) // a conflict means a newer event is coming
			}
		}
		w.Stop()
	}
}

// TestBrowserDashboardStrategyConflict: two LeaseCandidates written through v1alpha1 with
// contradicting preferredStrategies leave their Lease alone (it is never created); the open
// dashboard shows why, live, without a reload: the controller's conflict decision, as a
// warning, and both candidates' lists. Once one candidate gives in, the dashboard moves on to
// the election, and the lease's card appears without the warning.
func TestBrowserDashboardStrategyConflict(t *testing.T) {
	browserTest(t)
	ts := mustStartServerWith(t, "", func(c *serveConfig) {
		c.cleController = true
		c.cleElectionDuration = time.Second
		c.cleRequeueInterval = 500 * time.Millisecond
		// Nobody renews the elected lease here: it must stay valid while the test looks.
		c.cleLeaseDuration = 60 * time.Second
	})
	out := browserOutputDir(t)
	browser := mustStartBrowser(t)
	ctx := ctxT(t, 60*time.Second)
	const ns, leaseName = "default", "sched"

	dash, _ := openBrowserTab(t, browser, ts.URL+"/")
	if err := chromedp.Do(dash, chromedp.WaitVisible(chromedp.CSS(`#lease-grid`))); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	// A reload would lose this.
	if _, err := browserEval(dash, `window.__sameDocument = 'yes'`); err != nil {
		t.Fatal(err)
	}

	// A lease that exists, held and valid, gets candidates that disagree: it is left alone,
	// and its card carries the warning.
	holder, dur := "someone", int32(600)
	now := metav1.NewMicroTime(time.Now())
	if _, err := ts.Client.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "clash"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &now, AcquireTime: &now},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Both candidates exist before either answers a ping, so that the controller never elects
	// with one of them alone: their renewTime is older than the election duration, and pings
	// are answered only from now on.
	alpha := dynamic.NewForConfigOrDie(rest.CopyConfig(ts.Config)).Resource(leaseCandidatesV1alpha1).Namespace(ns)
	renew := metav1.NewMicroTime(time.Now().Add(-10 * time.Second))
	for _, c := range []struct {
		name, lease string
		preferred   []any
	}{
		{"sched-a", leaseName, []any{"OldestEmulationVersion", "example.com/custom"}},
		{"sched-b", leaseName, []any{"example.com/custom", "OldestEmulationVersion"}},
		{"clash-a", "clash", []any{"OldestEmulationVersion", "example.com/custom"}},
		{"clash-b", "clash", []any{"example.com/custom", "OldestEmulationVersion"}},
	} {
		in := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "coordination.k8s.io/v1alpha1", "kind": "LeaseCandidate",
			"metadata": map[string]any{"name": c.name},
			"spec": map[string]any{
				"leaseName": c.lease, "binaryVersion": "1.31.0", "emulationVersion": "1.31.0",
				"renewTime": renew.UTC().Format(metav1.RFC3339Micro), "preferredStrategies": c.preferred,
			},
		}}
		if _, err := alpha.Create(ctx, in, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s through v1alpha1: %v", c.name, err)
		}
	}
	answerCtx, stopAnswering := context.WithCancel(ctx)
	answered := make(chan struct{})
	go func() { defer close(answered); answerCandidatePings(answerCtx, ts, ns) }()
	t.Cleanup(func() { stopAnswering(); <-answered })

	// What the dashboard shows about the lease: its election row, its card, the candidates'
	// strategies, each as one line.
	const stateJS = `(function () {
		const r = document.querySelector('#elections [data-election-row][data-namespace="default"][data-lease="sched"]');
		const card = document.querySelector('#lease-grid [data-lease-card][data-namespace="default"][data-name="sched"]');
		const shown = (e) => !!e && !e.hidden && e.getClientRects().length > 0;
		const strat = (name) => {
			const c = document.querySelector('#candidates [data-candidate-row][data-name="' + name + '"]');
			if (!c) return 'none';
			return c.querySelector('[data-testid=candidate-strategy]').textContent.trim() +
				(shown(c.querySelector('[data-testid=candidate-v1alpha1]')) ? ' (v1alpha1)' : '');
		};
		return JSON.stringify({
			row: shown(r),
			kind: r ? r.dataset.kind : '',
			warning: !!r && r.classList.contains('decision-warning') && shown(r.querySelector('[data-testid=election-kind]')),
			word: r ? r.querySelector('[data-testid=election-kind]').textContent.trim() : '',
			message: r ? r.querySelector('[data-testid=election-message]').textContent.trim() : '',
			candidates: r ? r.querySelector('[data-field=candidates]').textContent.trim() : '',
			card: !!card,
			holder: card ? card.dataset.holder : '',
			cardWarning: !!card && shown(card.querySelector('[data-testid=card-conflict]')),
			a: strat('sched-a'),
			b: strat('sched-b'),
			same: window.__sameDocument || '',
			clash: (function () {
				const c = document.querySelector('#lease-grid [data-lease-card][data-namespace="default"][data-name="clash"]');
				const w = c && c.querySelector('[data-testid=card-conflict]');
				return w && shown(w) ? w.textContent.trim() : '';
			})(),
		});
	})()`
	type dashState struct {
		Row         bool   `json:"row"`
		Kind        string `json:"kind"`
		Warning     bool   `json:"warning"`
		Word        string `json:"word"`
		Message     string `json:"message"`
		Candidates  string `json:"candidates"`
		Card        bool   `json:"card"`
		Holder      string `json:"holder"`
		CardWarning bool   `json:"cardWarning"`
		A           string `json:"a"`
		B           string `json:"b"`
		Same        string `json:"same"`
		Clash       string `json:"clash"`
	}
	var st dashState
	read := func() (dashState, string) {
		var s dashState
		raw, err := chromedp.Run(dash, chromedp.Evaluate[string](stateJS))
		if err != nil {
			return s, "error: " + err.Error()
		}
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			return s, "bad state " + raw
		}
		return s, raw
	}

	took, err := browserWait(20*time.Second, func() (bool, string) {
		var raw string
		st, raw = read()
		return st.Row && st.Kind == "conflict" && st.Warning && st.Clash != "", raw
	})
	if err != nil {
		t.Logf("controller decisions:\n%s", decisionsText(ts.election.Decisions(ns, leaseName)))
		t.Fatalf("the dashboard shows the strategy conflict: %v", err)
	}
	t.Logf("conflict shown after %s", took.Round(time.Millisecond))
	if st.Word != "CONFLICT" || !strings.HasPrefix(st.Message, "strategy conflict: ") || !strings.Contains(st.Message, "the lease is left alone until the candidates agree") {
		t.Errorf("conflict row reads %q: %q", st.Word, st.Message)
	}
	if st.Candidates != "2" || st.Card {
		t.Errorf("conflict: %s candidates listed, lease card shown %v (the lease must not exist)", st.Candidates, st.Card)
	}
	if st.A != "OldestEmulationVersion > example.com/custom (v1alpha1)" || st.B != "example.com/custom > OldestEmulationVersion (v1alpha1)" {
		t.Errorf("candidates' strategies: %q, %q", st.A, st.B)
	}
	if _, err := ts.Client.CoordinationV1().Leases(ns).Get(ctx, leaseName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the lease was written in a conflict: %v", err)
	}
	if !strings.HasPrefix(st.Clash, "strategy conflict: ") {
		t.Errorf("the clash card's warning reads %q", st.Clash)
	}
	browserScreenshot(t, dash, out, "dashboard-strategy-conflict-card.png")
	_, _ = browserEval(dash, `document.querySelector('[data-testid=elections]').scrollIntoView(), ''`)
	browserScreenshot(t, dash, out, "dashboard-strategy-conflict.png")
	// At 1280 (1260 with a page scrollbar) the LeaseCandidates table fits its column: names and
	// strategies break between their words rather than push the last column out of sight.
	if err := chromedp.Do(dash, chromedp.EmulateViewport(1260, 720)); err != nil {
		t.Fatal(err)
	}
	if s, err := browserEval(dash, `(() => { const w = document.querySelector('[data-testid=lease-candidates]').parentElement; return w.scrollWidth <= w.clientWidth ? 'fits' : w.scrollWidth + ' > ' + w.clientWidth })()`); s != "fits" {
		t.Errorf("the LeaseCandidates table overflows its column (scroll width > client width: %s %v)", s, err)
	}
	// On a phone the tables scroll in place.
	if err := chromedp.Do(dash, chromedp.EmulateViewport(390, 800)); err == nil {
		_, _ = browserEval(dash, `document.querySelector('[data-testid=elections]').scrollIntoView(), ''`)
		browserScreenshot(t, dash, out, "dashboard-strategy-conflict-phone.png")
		if got, _ := browserEval(dash, `String(document.documentElement.scrollWidth <= window.innerWidth + 1)`); got != "true" {
			t.Errorf("on a phone the page scrolls sideways")
		}
		_ = chromedp.Do(dash, chromedp.EmulateViewport(1280, 720))
	}

	// The dashboard links to the lease's page, which explains the same without the lease.
	page, _ := openBrowserTab(t, browser, ts.URL+"/leases/"+ns+"/"+leaseName)
	if got, err := browserEval(page, `(document.querySelector('[data-testid=lease-conflict]') || {textContent: 'none'}).textContent`); err != nil || !strings.Contains(got, "strategy conflict") {
		t.Errorf("lease page conflict: %q, %v", got, err)
	}

	// sched-b gives in: every list now starts with OldestEmulationVersion.
	for attempt := 0; ; attempt++ {
		u, err := alpha.Get(ctx, "sched-b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedStringSlice(u.Object, []string{"OldestEmulationVersion"}, "spec", "preferredStrategies"); err != nil {
			t.Fatal(err)
		}
		_, err = alpha.Update(ctx, u, metav1.UpdateOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) || attempt > 20 {
			t.Fatalf("update sched-b through v1alpha1: %v", err)
		}
	}
	took, err = browserWait(20*time.Second, func() (bool, string) {
		var raw string
		st, raw = read()
		return st.Row && (st.Kind == "elect" || st.Kind == "keep") && !st.Warning && st.Card && st.Holder != "" && !st.CardWarning, raw
	})
	if err != nil {
		t.Logf("controller decisions:\n%s", decisionsText(ts.election.Decisions(ns, leaseName)))
		t.Fatalf("the dashboard moves on to the election: %v", err)
	}
	t.Logf("election shown after %s: %s %q", took.Round(time.Millisecond), st.Kind, st.Message)
	if !strings.Contains(st.Message, st.Holder) {
		t.Errorf("the decision %q does not name the holder %s", st.Message, st.Holder)
	}
	if st.B != "OldestEmulationVersion (v1alpha1)" {
		t.Errorf("sched-b's strategies after the change: %q", st.B)
	}
	if st.Same != "yes" {
		t.Error("the dashboard reloaded")
	}
	elected := false
	for _, d := range ts.election.Decisions(ns, leaseName) {
		elected = elected || (d.Kind == election.KindElect && d.Candidate == st.Holder)
	}
	if !elected {
		t.Errorf("no elect decision for %s:\n%s", st.Holder, decisionsText(ts.election.Decisions(ns, leaseName)))
	}
	browserScreenshot(t, dash, out, "dashboard-strategy-agreed.png")
}
