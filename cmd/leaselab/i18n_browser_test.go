package main

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// han matches Chinese characters.
var han = regexp.MustCompile(`\p{Han}`)

// TestBrowserPlayChinese: a candidate tab opened with ?lang=zh shows its state words, its
// explanation and its decision log in Chinese, the candidate's own sentences included.
func TestBrowserPlayChinese(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustHaveWasm(t, ts.URL)
	browser := mustStartBrowser(t)
	q := url.Values{
		"lang":          {"zh"},
		"namespace":     {"default"},
		"lease":         {"zh-demo"},
		"identity":      {"tab-zh"},
		"leaseDuration": {browserSeconds(browserLeaseDuration)},
		"renewDeadline": {browserSeconds(browserRenewDeadline)},
		"retryPeriod":   {browserSeconds(browserRetryPeriod)},
	}
	tab, _ := openBrowserTab(t, browser, ts.URL+"/play?"+q.Encode())
	if _, err := browserWait(10*time.Second, func() (bool, string) {
		s, _ := browserCandidateState(tab)
		return s == "leader", "state " + s
	}); err != nil {
		t.Fatalf("leading: %v", err)
	}
	for _, c := range []struct{ expr, want string }{
		{`document.getElementById('role-word').textContent`, "领导者"},
		{`document.documentElement.lang`, "zh-CN"},
		{`document.querySelector('#log li:last-child .log-kind').textContent`, "加入"},
	} {
		if got, err := browserEval(tab, c.expr); err != nil || got != c.want {
			t.Errorf("%s = %q (%v), want %q", c.expr, got, err, c.want)
		}
	}
	// The explanation, and every line of the decision log, in Chinese.
	for _, expr := range []string{
		`document.getElementById('role-explain').textContent`,
		`Array.from(document.querySelectorAll('#log .log-text')).map((e) => e.textContent).join('\n')`,
		`document.getElementById('next-retry').textContent`,
	} {
		got, err := browserEval(tab, expr)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range regexp.MustCompile(`\n`).Split(got, -1) {
			if !han.MatchString(line) {
				t.Errorf("%s: %q is not Chinese", expr, line)
			}
		}
	}

	// Faults: Shift+N partitions the network failing fast, } speeds the clock up, S slows the
	// network at the delay chosen. The explanation, the buttons, the clock rate, the delay's
	// effect, the active faults and the log's line on the unreachable network follow the page's
	// language.
	for _, k := range []string{"N", "}", "s"} {
		kctx, cancel := context.WithTimeout(tab, 10*time.Second)
		err := chromedp.Do(kctx, chromedp.KeyEvent(k))
		cancel()
		if err != nil {
			t.Fatalf("key %s: %v", k, err)
		}
	}
	if _, err := browserWait(20*time.Second, func() (bool, string) {
		s, err := browserEval(tab, `(() => { const c = document.getElementById('candidate');
			const unreachable = Array.from(document.querySelectorAll('#log .log-text')).some((e) => e.textContent.includes('网络不可达（网络分区）'));
			return [c.dataset.state, c.dataset.partition, c.dataset.clockRate, Number(c.dataset.latencyMs) > 0, unreachable].join('|'); })()`)
		return s == "partitioned|fail|1.25|true|true", fmt.Sprint(s, " ", err)
	}); err != nil {
		t.Fatalf("faults: %v", err)
	}
	for _, c := range []struct{ expr, want string }{
		{`document.querySelector('[data-testid=faultbar] [data-cmd=partition-fail] [data-label]').textContent`, "恢复网络"},
		{`document.querySelector('[data-testid=faultbar] [data-cmd=partition] [data-label]').textContent`, "网络分区"},
		{`document.querySelector('[data-testid=faultbar] [data-field=rate]').textContent`, "时钟 1.25×"},
		{`document.querySelector('[data-testid=faultbar] [data-cmd=slow] [data-label]').textContent`, "慢速 3.0 s"},
	} {
		if got, err := browserEval(tab, c.expr); err != nil || got != c.want {
			t.Errorf("%s = %q (%v), want %q", c.expr, got, err, c.want)
		}
	}
	for _, expr := range []string{
		`document.getElementById('role-explain').textContent`,
		`document.getElementById('active-faults').textContent`,
		`document.getElementById('delay-effect').textContent`,
		`Array.from(document.querySelectorAll('#log .log-text')).map((e) => e.textContent).join('\n')`,
	} {
		got, err := browserEval(tab, expr)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(got, "\n") {
			if !han.MatchString(line) || strings.Contains(line, "network") || strings.Contains(line, "request") {
				t.Errorf("%s: %q is not Chinese", expr, line)
			}
		}
	}

	// Crash: the stopped word and the fault buttons' words follow the page's language.
	if _, err := browserEval(tab, `document.querySelector('[data-cmd=crash]').click(), ''`); err != nil {
		t.Fatal(err)
	}
	if _, err := browserWait(15*time.Second, func() (bool, string) {
		w, _ := browserEval(tab, `document.getElementById('role-word').textContent`)
		return w == "已停止", "role word " + w
	}); err != nil {
		t.Error(err)
	}
}

// TestBrowserLanguagePerTab: a page keeps its language when another tab switches the language:
// the parts its script fetches again (the lease page's live part) come in the page's own, not
// in the cookie's.
func TestBrowserLanguagePerTab(t *testing.T) {
	browserTest(t)
	ts := mustStartServer(t, "")
	mustRenewLease(t, ts, "default", "lang", "alice", 60)
	browser := mustStartBrowser(t)
	zh, _ := openBrowserTab(t, browser, ts.URL+"/leases/default/lang?lang=zh")
	live := `document.getElementById('lease-live').textContent`
	chinese := func() string {
		s, _ := browserEval(zh, live)
		return fmt.Sprint(han.MatchString(s) && !strings.Contains(s, "Holder timeline"))
	}
	if c := chinese(); c != "true" {
		t.Fatalf("the Chinese page's live part is not Chinese")
	}
	openBrowserTab(t, browser, ts.URL+"/leases/default/lang?lang=en") // the cookie says English now
	mustRenewLease(t, ts, "default", "lang", "bob", 60)
	mustSee(t, zh, `document.querySelector('#lease-live [data-testid=holder]').textContent`, "bob")
	if c := chinese(); c != "true" {
		s, _ := browserEval(zh, live)
		t.Errorf("after another tab chose English, the Chinese page's live part reads:\n%.300s", s)
	}
}
