// Package chromium starts and stops headless Chromium the way leaselab's browser tests and
// `leaselab bench join` both do: which command, with which options, and how it is closed.
package chromium

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// Names are the commands tried for a Chromium, in order.
var Names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Find returns path when it is given, else the first of Names on PATH.
func Find(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	for _, n := range Names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium on PATH (tried %s): install Debian's chromium (make test-deps does)", strings.Join(Names, ", "))
}

// DisabledFeatures are the Chromium features its Options turn off. Each tab opened through
// DevTools is a window of its own, and Chromium 156 gives each window its address bar's popups,
// drawn by pages of their own in a renderer: measured on a 2-core machine, 1.4 CPU-seconds as
// each tab opened, more than most pages under test cost. Nobody here types a URL.
const DisabledFeatures = "WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup"

// Options are those of a headless Chromium at path with its profile in the directory
// profile, whose windows are width by height pixels.
func Options(path, profile string, width, height int) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", DisabledFeatures),
		chromedp.UserDataDir(profile),
		// Chromium keeps files of its own in a directory under TMPDIR, left behind when it does
		// not close cleanly: in the profile, they go with it.
		chromedp.Env("TMPDIR=" + profile),
		chromedp.WindowSize(width, height),
	}
}

// closeWithin bounds how long Start's stop waits for Chromium to close before it kills it.
const closeWithin = 10 * time.Second

// Start returns the context of the first tab of a Chromium started with opts (by the first
// action run in it), and what stops the browser. Stop closes it, and kills it only when it
// has not closed within closeWithin: a killed browser's network service may still write its
// state into the profile as the profile is removed.
func Start(parent context.Context, opts []chromedp.ExecAllocatorOption, ctxOpts ...chromedp.ContextOption) (context.Context, func()) {
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	ctx, cancel := chromedp.NewContext(allocCtx, ctxOpts...)
	return ctx, func() {
		closed := make(chan struct{})
		go func() { chromedp.Cancel(ctx); close(closed) }()
		select {
		case <-closed:
		case <-time.After(closeWithin):
		}
		cancel()
		cancelAlloc()
	}
}
