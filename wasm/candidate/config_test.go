//go:build !js

package candidate_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/leaselab/leaselab/wasm/candidate"
)

func TestParamsDefaults(t *testing.T) {
	cfg, err := candidate.Params{Lease: "demo"}.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Namespace != "default" || cfg.LeaseDuration != 10*time.Second || cfg.RenewDeadline != 7*time.Second ||
		cfg.RetryPeriod != 2*time.Second || !strings.HasPrefix(cfg.Identity, "tab-") {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestConfigRefusedWithReasons(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		p    candidate.Params
		want []string
	}{
		// What client-go checks, and that the check alone guarantees nothing (a leader gives up
		// at the end of a renew round that may start a retry period after its last renewal).
		{candidate.Params{Lease: "demo", Identity: "a", LeaseDuration: f(7)}, []string{"leaseDuration (7 s) must be greater than renewDeadline (7 s), as client-go's NewLeaderElector checks. " +
			"That alone guarantees nothing: a leader gives up at the end of a renew round, which starts up to a retry period after its last renewal"}},
		{candidate.Params{Lease: "demo", Identity: "a", RenewDeadline: f(2.4)}, []string{"renewDeadline (2.4 s) must be greater than 1.2 × retryPeriod (2.4 s)"}},
		{candidate.Params{Lease: "demo", Identity: "a", RetryPeriod: f(0)}, []string{"retryPeriod must be greater than zero"}},
		{candidate.Params{Lease: "demo", Identity: "a", RetryPeriod: f(0.001)}, []string{"retryPeriod (0.001 s) must be at least 0.2 s"}},
		{candidate.Params{Lease: "demo", Identity: "a", LeaseDuration: f(-1), RenewDeadline: f(0)},
			[]string{"leaseDuration must be greater than zero", "renewDeadline must be greater than zero"}},
		{candidate.Params{Lease: "demo", Identity: "a", LeaseDuration: f(10.5)}, []string{"whole number of seconds"}},
		{candidate.Params{Lease: "demo", Identity: "a", LeaseDuration: f(1e6)}, []string{"must be at most"}},
		{candidate.Params{Identity: "a"}, []string{"lease name must not be empty"}},
		{candidate.Params{Lease: "demo", Identity: "  "}, []string{"identity must not be empty"}},
	}
	for _, tc := range cases {
		_, err := tc.p.Config()
		var ce *candidate.ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%+v: err = %v, want a ConfigError", tc.p, err)
			continue
		}
		if len(ce.Problems) != len(tc.want) {
			t.Errorf("%+v: problems %q, want %d", tc.p, ce.Problems, len(tc.want))
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %q does not say %q", tc.p, err, w)
			}
		}
	}
}

// TestValidateAgreesWithClientGo checks the timing rules against
// NewLeaderElector itself, on whole-second lease durations.
func TestValidateAgreesWithClientGo(t *testing.T) {
	ms := []time.Duration{-1000, 0, 500, 1000, 1500, 2000, 2400, 2401, 3000, 5000, 7000, 10000, 15000}
	for _, ld := range []time.Duration{-1, 0, 1, 2, 3, 7, 10, 15} {
		for _, rd := range ms {
			for _, rp := range ms {
				cfg := candidate.Config{Namespace: "ns", LeaseName: "l", Identity: "me",
					LeaseDuration: ld * time.Second, RenewDeadline: rd * time.Millisecond, RetryPeriod: rp * time.Millisecond}
				ours := cfg.Validate()
				_, theirs := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
					Lock:          &resourcelock.LeaseLock{LockConfig: resourcelock.ResourceLockConfig{Identity: "me"}},
					LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod,
					Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
				})
				if (ours == nil) != (theirs == nil) {
					t.Errorf("lease %s renew %s retry %s: ours %v, client-go %v", cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod, ours, theirs)
				}
			}
		}
	}
}

func TestParamsFromQuery(t *testing.T) {
	q, _ := url.ParseQuery("namespace=team-a&lease=demo&identity=tab-9&leaseDuration=15&renewDeadline=10&retryPeriod=2.5&releaseOnCancel=true")
	p, err := candidate.ParamsFromQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Namespace != "team-a" || cfg.LeaseName != "demo" || cfg.Identity != "tab-9" || cfg.LeaseDuration != 15*time.Second ||
		cfg.RenewDeadline != 10*time.Second || cfg.RetryPeriod != 2500*time.Millisecond || !cfg.ReleaseOnCancel {
		t.Errorf("%+v", cfg)
	}
	q, _ = url.ParseQuery("lease=demo&leaseDuration=ten&stopAfterLoss=maybe&retryPeriod=NaN")
	_, err = candidate.ParamsFromQuery(q)
	var ce *candidate.ConfigError
	if !errors.As(err, &ce) || len(ce.Problems) != 3 {
		t.Errorf("err = %v", err)
	}
}
