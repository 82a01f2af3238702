package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOutageFromTheDashboard: the instructor's API-server outage, pressed on the dashboard,
// fails every resource request with 503 (client-go sees ServiceUnavailable), or, for one
// namespace, holds its requests while the others are served; ending it serves them again.
func TestOutageFromTheDashboard(t *testing.T) {
	t.Parallel()
	srv := mustStartServer(t, "")
	press := func(mode, ns string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/ui/outage", strings.NewReader(url.Values{"mode": {mode}, "namespace": {ns}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", srv.URL)
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST /ui/outage mode=%s: %d", mode, resp.StatusCode)
		}
	}
	get := func(ns string, d time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		_, err := srv.Client.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
		return err
	}
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `data-testid="outage"`) {
		t.Fatal("the dashboard offers no outage control")
	}

	press("fail", "")
	if err := get("default", 10*time.Second); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("a list during a failing outage: %v, want ServiceUnavailable", err)
	}
	press("hang", "held")
	if err := get("held", time.Second); !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(fmtErr(err), "deadline") {
		t.Errorf("a list in the held namespace: %v, want it held until its deadline", err)
	}
	if err := get("default", 10*time.Second); err != nil {
		t.Errorf("a list in another namespace during held's outage: %v", err)
	}
	press("off", "")
	if err := get("held", 10*time.Second); err != nil {
		t.Errorf("a list after the outage: %v", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
