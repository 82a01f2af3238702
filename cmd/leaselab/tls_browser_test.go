package main

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBrowserOverTLS: a workshop as it is held, over HTTPS, with and without --http2, in a
// real Chromium that trusts the server's own certificate (and no other): the join link signs
// the browser in, the page and the candidate's API requests come over HTTP/2 when it is
// offered (HTTP/1.1 otherwise), and the candidate, whose tab hub link is a WebSocket over
// HTTP/1.1 either way, leads its lease and shows on the dashboard.
func TestBrowserOverTLS(t *testing.T) {
	browserTest(t)
	// Both servers first, so that one Chromium, started trusting their two certificates, serves
	// both rounds: a browser's start costs seconds of CPU.
	var servers []*workshop
	var pins []string
	for _, h2 := range []bool{true, false} {
		w := mustStartWorkshop(t, 1, "", func(c *serveConfig) { c.access.HTTP2 = h2 })
		if !strings.HasPrefix(w.URL, "https://") {
			t.Fatalf("workshop URL %s is not https", w.URL)
		}
		block, _ := pem.Decode(w.access.CAData)
		if block == nil {
			t.Fatal("the server's certificate is not PEM")
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		spki := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
		servers = append(servers, w)
		pins = append(pins, base64.StdEncoding.EncodeToString(spki[:]))
	}
	chromium := mustStartBrowserWith(t, chromedp.Flag("ignore-certificate-errors-spki-list", strings.Join(pins, ",")))
	for i, h2 := range []bool{true, false} {
		w := servers[i]
		// A browser context of the round's own: the servers' sessions are cookies of one host.
		browser := mustNewBrowserContext(t, chromium)
		tab, _ := openBrowserTab(t, browser, w.URL+"/join?token="+w.tokens["participant-01"])
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(`[data-testid=join-button]`)), chromedp.WaitVisible(chromedp.CSS(`#lease-grid`))); err != nil {
			t.Fatalf("http2=%v: join button: %v", h2, err)
		}
		want := "http/1.1"
		if h2 {
			want = "h2"
		}
		if p, err := browserEval(tab, `performance.getEntriesByType('navigation')[0].nextHopProtocol`); err != nil || p != want {
			t.Errorf("http2=%v: the dashboard came over %q (%v), want %s", h2, p, err, want)
		}

		play, _ := openBackgroundTab(t, browser, w.URL+"/play?namespace=participant-01&lease=tls&identity=tab-tls&leaseDuration=3&renewDeadline=2&retryPeriod=1")
		if d, err := browserWait(30*time.Second, func() (bool, string) {
			s, _ := browserCandidateState(play)
			return s == "leader", s
		}); err != nil {
			t.Fatalf("http2=%v: the candidate over TLS: %v", h2, err)
		} else {
			t.Logf("http2=%v: leader after %v", h2, d)
		}
		l, err := w.client(t, "instructor").CoordinationV1().Leases("participant-01").Get(ctxT(t, 10*time.Second), "tls", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "tab-tls" {
			t.Fatalf("http2=%v: lease participant-01/tls: %v %+v", h2, err, l)
		}
		// The dashboard, open since before the tab, lists it leading: its tab stream (a WebSocket)
		// works over this TLS too.
		if _, err := browserWait(20*time.Second, func() (bool, string) {
			n, _ := browserEval(tab, `String(document.querySelectorAll('[data-testid=tab-row][data-identity="tab-tls"][data-state="leader"]').length)`)
			return n != "0", n
		}); err != nil {
			t.Errorf("http2=%v: the dashboard does not list the tab: %v", h2, err)
		}
		w.Close()
	}
}
