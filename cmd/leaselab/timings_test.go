package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestTimingsCommand: leaselab timings reports client-go's figures and warnings, and exits 1
// with client-go's reason for settings it refuses.
func TestTimingsCommand(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     []string // in this order
		stderr     string
		noStdout   bool
		notInStdio string
	}{
		{args: nil, stdout: []string{
			"leaseDuration 15s, renewDeadline 10s, retryPeriod 2s: client-go accepts these settings.",
			"failover after a crash                   13 to 23.8 s",
			"failover after a release                 0 to 4.4 s",
			"renew attempts in the renew deadline     5",
			"API-server outage the leader rides out   up to 10 s",
			"cut-off leader stops before a takeover   3 s to spare",
			"leaseDurationSeconds: 15",
			"No warnings.",
			"kube-controller-manager and kube-scheduler use 15s / 10s / 2s",
		}},
		{args: []string{"--lease-duration", "1500ms", "--renew-deadline", "1s", "--retry-period", "500ms"}, stdout: []string{
			"leaseDurationSeconds: 1",
			"Warnings:",
			"DANGER  A leader cut off from the API server may still be leading when another candidate takes",
			"CAUTION leaseDuration 1.5 s is written to the Lease as leaseDurationSeconds 1",
			"CAUTION Only 2 renew attempts fit in the renew deadline.",
			"CAUTION Every candidate calls the API server more than once a second.",
		}},
		{args: []string{"--lease-duration=15s", "--renew-deadline=13s", "--retry-period=1500ms"}, stdout: []string{
			"0.5 s to spare", "CAUTION A leader cut off from the API server stops only 0.5 s before another candidate",
		}},
		{args: []string{"--lease-duration", "10s", "--renew-deadline", "10s"}, code: 1, noStdout: true,
			stderr: "leaselab timings: client-go refuses these settings: leaseDuration must be greater than renewDeadline\n"},
		{args: []string{"--retry-period", "9s"}, code: 1, noStdout: true,
			stderr: "leaselab timings: client-go refuses these settings: renewDeadline must be greater than retryPeriod*JitterFactor\n"},
		{args: []string{"--lease-duration", "0s", "--renew-deadline", "-1ns", "--retry-period", "-1s"}, code: 1, noStdout: true,
			stderr: "leaselab timings: client-go refuses these settings: leaseDuration must be greater than zero\n"},
		{args: []string{"--lease-duration", "900ms", "--renew-deadline", "500ms", "--retry-period", "200ms"}, code: 1, noStdout: true,
			stderr: "leaselab timings: the API server refuses the Lease client-go writes with these settings (leaseDuration 900ms is written as leaseDurationSeconds 0): spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0\n"},
		{args: []string{"--retry-period", "soon"}, code: 2, noStdout: true, stderr: `invalid value "soon" for flag -retry-period`},
		{args: []string{"15s"}, code: 2, noStdout: true, stderr: "unexpected arguments: 15s"},
		{args: []string{"--help"}, code: 0, stdout: []string{"Usage: leaselab timings", "-lease-duration duration"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"timings"}, tc.args...), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout.String(), stderr.String())
			}
			out := stdout.String()
			for _, s := range tc.stdout {
				i := strings.Index(out, s)
				if i < 0 {
					t.Errorf("stdout lacks %q (or has it too early):\n%s", s, stdout.String())
					continue
				}
				out = out[i+len(s):]
			}
			if tc.noStdout && stdout.Len() > 0 {
				t.Errorf("stdout: %s", stdout.String())
			}
			if tc.stderr == "" && stderr.Len() > 0 || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.stderr)
			}
			if tc.code == 0 && !tc.noStdout && !helpAsked(tc.args) { // the report fits 100 columns; help is flag.PrintDefaults
				for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
					if len([]rune(line)) > 100 {
						t.Errorf("line of %d characters: %q", len([]rune(line)), line)
					}
				}
			}
		})
	}
}

// TestTimingsJSON: the JSON fields docs/timings.md documents, for accepted and refused settings.
func TestTimingsJSON(t *testing.T) {
	decode := func(t *testing.T, args ...string) (map[string]any, int) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"timings", "--json"}, args...), &stdout, &stderr)
		var m map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, stdout.String())
		}
		return m, code
	}
	m, code := decode(t, "--lease-duration", "10.9s")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for key, want := range map[string]any{
		"accepted":                    true,
		"leaseDurationSeconds":        10.0,
		"failoverAfterCrashSeconds":   map[string]any{"best": 8.0, "worst": 18.8},
		"failoverAfterReleaseSeconds": map[string]any{"best": 0.0, "worst": 4.4},
		"followerTryGapSeconds":       map[string]any{"best": 2.0, "worst": 4.4},
		"renewAttempts":               5.0,
		"lastRenewAttemptSeconds":     10.0,
		"outageRiddenOutSeconds":      8.0,
		"leaderStopsAfterSeconds":     12.0,
		"takeoverMarginSeconds":       -2.0,
		"clockRateTolerance":          0.8333,
		"leaderWritesPerSecond":       0.5,
		"followerReadsPerSecond":      0.3125,
		"settings":                    map[string]any{"leaseDuration": "10.9s", "renewDeadline": "10s", "retryPeriod": "2s"},
		"kubernetesDefaults":          map[string]any{"leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s"},
	} {
		if got, want := timingsJSONString(m[key]), timingsJSONString(want); got != want {
			t.Errorf("%s = %s, want %s", key, got, want)
		}
	}
	ws, _ := m["warnings"].([]any)
	var codes []string
	for _, w := range ws {
		w := w.(map[string]any)
		codes = append(codes, w["code"].(string)+"/"+w["severity"].(string))
		if w["message"] == "" || w["reason"] == "" {
			t.Errorf("warning without words: %v", w)
		}
	}
	if got := strings.Join(codes, " "); got != "two-leaders/danger not-whole-seconds/caution" {
		t.Errorf("warnings %s", got)
	}
	if _, ok := m["refused"]; ok {
		t.Error("accepted settings carry refused")
	}

	// No warnings is an empty list, not null.
	m, _ = decode(t)
	if ws, ok := m["warnings"].([]any); !ok || len(ws) != 0 {
		t.Errorf("warnings = %#v, want []", m["warnings"])
	}

	// Refused: the reason, and none of the figures.
	m, code = decode(t, "--renew-deadline", "2400ms")
	if code != 1 || m["accepted"] != false || m["refused"] != "renewDeadline must be greater than retryPeriod*JitterFactor" {
		t.Errorf("exit %d, %v", code, m)
	}
	for _, key := range []string{"leaseDurationSeconds", "renewAttempts", "warnings", "apiServerRefuses"} {
		if _, ok := m[key]; ok {
			t.Errorf("refused settings carry %s", key)
		}
	}
	m, code = decode(t, "--lease-duration", "999ms", "--renew-deadline", "900ms", "--retry-period", "500ms")
	if code != 1 || m["accepted"] != false || m["leaseDurationSeconds"] != 0.0 || !strings.Contains(m["apiServerRefuses"].(string), "must be greater than 0") {
		t.Errorf("exit %d, %v", code, m)
	}
}

// timingsJSONString is v as JSON, for comparing decoded values.
func timingsJSONString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
