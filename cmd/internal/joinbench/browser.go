package joinbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/leaselab/leaselab/cmd/internal/chromium"
)

// headless is a headless Chromium with a profile of its own.
type headless struct {
	ctx     context.Context
	version string
	stop    func()
}

// startBrowser starts a headless Chromium, as the browser tests do.
func startBrowser(ctx context.Context, path string) (*headless, error) {
	path, err := chromium.Find(path)
	if err != nil {
		return nil, fmt.Errorf("%w; or give --chromium", err)
	}
	profile, err := os.MkdirTemp("", "leaselab-bench-join-")
	if err != nil {
		return nil, err
	}
	opts := append(chromium.Options(path, profile, 412, 915), chromedp.IgnoreCertErrors, chromedp.WithDialer(dialTap))
	bctx, stop := chromium.Start(ctx, opts)
	h := &headless{ctx: bctx, stop: func() { stop(); os.RemoveAll(profile) }}
	v, err := chromedp.CallBrowser(bctx, browser.GetVersion, cdp.Empty{})
	if err != nil {
		h.stop()
		return nil, fmt.Errorf("start chromium %s: %w", path, err)
	}
	h.version = v.Product
	return h, nil
}

// joinedScript records, in the page, when the candidate program said it runs (its worker's
// "ready") and when the tab first showed follower or leader: performance.now() counts from
// the navigation's start. DevTools adds it to every new document, past the page's
// Content-Security-Policy.
const joinedScript = `(() => {
  const W = window.Worker;
  window.Worker = function (...args) {
    const w = new W(...args);
    w.addEventListener('message', (e) => {
      if (e.data && e.data.type === 'ready' && !window.__leaselabReady) window.__leaselabReady = performance.now();
    });
    return w;
  };
  const seen = () => {
    const c = document.getElementById('candidate');
    const s = c && c.dataset.state;
    if ((s === 'follower' || s === 'leader') && !window.__leaselabJoined) {
      window.__leaselabJoined = { ms: performance.now(), state: s, readyMs: window.__leaselabReady || 0 };
    }
  };
  new MutationObserver(seen).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-state'] });
})();`

// join opens link in a fresh browser context over the network nw and waits until the tab is a
// candidate.
func (h *headless) join(ctx context.Context, link string, nw Network, cfg Config) (Run, error) {
	timeout := cfg.Timeout
	tab, cancel := chromedp.NewContext(h.ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	tctx, cancelT := context.WithTimeout(tab, timeout)
	defer cancelT()
	stop := context.AfterFunc(ctx, cancelT)
	defer stop()
	if err := emulate(tctx, nw); err != nil {
		return Run{}, err
	}
	if cfg.AcceptEncoding != "" {
		if _, err := chromedp.Call(tctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Encoding": cfg.AcceptEncoding}}); err != nil {
			return Run{}, err
		}
	}
	if _, err := chromedp.Call(tctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: joinedScript}); err != nil {
		return Run{}, err
	}
	if _, err := chromedp.Call(tctx, page.Navigate, page.NavigateParams{URL: link}); err != nil {
		return Run{}, fmt.Errorf("open %s: %w", link, err)
	}
	var joined struct {
		Ms      float64
		State   string
		ReadyMs float64
	}
	for joined.State == "" {
		if err := sleep(tctx, 50*time.Millisecond); err != nil {
			if ctx.Err() != nil {
				return Run{}, ctx.Err()
			}
			return Run{}, fmt.Errorf("the tab was not a candidate within %s (its state: %s)", timeout, candidateState(tab))
		}
		s, err := chromedp.Run(tctx, chromedp.Evaluate[string](`JSON.stringify(window.__leaselabJoined || {})`))
		if err != nil {
			continue // the document is still being replaced
		}
		if err := json.Unmarshal([]byte(s), &joined); err != nil {
			return Run{}, err
		}
	}
	r := Run{CandidateMs: joined.Ms, State: joined.State, ReadyMs: joined.ReadyMs}
	return r, traffic(tab, &r)
}

// candidateState is the tab's data-state, for an error.
func candidateState(tab context.Context) string {
	ctx, cancel := context.WithTimeout(tab, 2*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById('candidate') || {dataset: {}}).dataset.state || 'none'`))
	if err != nil {
		return err.Error()
	}
	return s
}

// emulate sets the tab's network conditions; none leaves the network as it is. The command
// is Network.emulateNetworkConditions, which the page's dedicated workers obey too (its
// successor, emulateNetworkConditionsByRule, leaves the worker that fetches the candidate
// unthrottled).
func emulate(ctx context.Context, nw Network) error {
	if nw.Download == 0 && nw.LatencyMs == 0 {
		return nil
	}
	_, err := chromedp.Call(ctx, emulateNetworkConditions, conditions{Latency: nw.LatencyMs, DownloadThroughput: nw.Download, UploadThroughput: nw.Upload})
	return err
}

// conditions are the parameters of Network.emulateNetworkConditions.
type conditions struct {
	Offline            bool    `json:"offline"`
	Latency            float64 `json:"latency"`
	DownloadThroughput float64 `json:"downloadThroughput"`
	UploadThroughput   float64 `json:"uploadThroughput"`
}

// emulateNetworkConditions is Network.emulateNetworkConditions, which the protocol's Go
// bindings no longer have.
var emulateNetworkConditions = cdp.Command[conditions, cdp.Empty]{Method: "Network.emulateNetworkConditions"}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// timingScript gives the resource timing entries of a page or a worker, with its time origin.
const timingScript = `JSON.stringify({ origin: performance.timeOrigin,
  entries: [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]
    .map((e) => ({ name: e.name, end: e.responseEnd, size: e.transferSize, body: e.encodedBodySize, raw: e.decodedBodySize })) })`

// timing is what timingScript gives.
type timing struct {
	Origin  float64 // ms since the epoch
	Entries []struct {
		Name string
		End  float64 // ms from Origin
		// Size is what came over the network, headers included (0 from the cache); Body the
		// body as sent, Raw decoded.
		Size, Body, Raw int64
	}
}

// traffic sums what the page and its worker loaded until the tab was a candidate (the
// resource timing of both) into r, with when the wasm had arrived (ms from the page's
// navigation) and its size.
func traffic(tab context.Context, r *Run) error {
	page, err := readTiming(tab)
	if err != nil {
		return err
	}
	w, cancel, err := workerOf(tab)
	if err != nil {
		return err
	}
	defer cancel()
	worker, err := readTiming(w)
	if err != nil {
		return err
	}
	for _, t := range []timing{page, worker} {
		for _, e := range t.Entries {
			at := t.Origin + e.End - page.Origin
			if at > r.CandidateMs {
				continue
			}
			r.Bytes += e.Size
			r.Requests++
			if strings.Contains(e.Name, "/candidate.wasm") && e.Size > 0 {
				r.WasmMs, r.WasmBytes, r.WasmRawBytes = at, e.Body, e.Raw
			}
		}
	}
	return nil
}

// readTiming reads the resource timing of a page or a worker.
func readTiming(ctx context.Context) (timing, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var t timing
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](timingScript))
	if err != nil {
		return t, fmt.Errorf("resource timing: %w", err)
	}
	return t, json.Unmarshal([]byte(s), &t)
}

// workerOf attaches to the dedicated worker of the tab's page, where the candidate runs.
func workerOf(tab context.Context) (context.Context, context.CancelFunc, error) {
	targets, err := chromedp.Targets(tab)
	if err != nil {
		return nil, nil, err
	}
	bc := chromedp.FromContext(tab).BrowserContextID
	for _, t := range targets {
		if t.Type == "worker" && t.BrowserContextID == bc {
			ctx, cancel := chromedp.NewContext(tab, chromedp.WithTargetID(t.TargetID))
			return ctx, cancel, nil
		}
	}
	return nil, nil, errors.New("the page has no worker")
}
