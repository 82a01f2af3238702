package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/leaselab/leaselab/cmd/internal/timingsreport"
	"github.com/leaselab/leaselab/web/lease/timings"
)

const timingsSummary = "judge leader-election timings as client-go runs them: failovers, renew attempts, outages, warnings"

func runTimings(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("timings", timingsSummary, "", stderr)
	d := timings.KubernetesDefaults
	var s timings.Settings
	durationVar(fs, &s.LeaseDuration, "lease-duration", d.LeaseDuration, "how long followers wait, after they last saw the lease change, before taking it")
	durationVar(fs, &s.RenewDeadline, "renew-deadline", d.RenewDeadline, "how long a leader keeps trying to renew before it stops leading")
	durationVar(fs, &s.RetryPeriod, "retry-period", d.RetryPeriod, "the pause between tries (followers add a jitter of up to 1.2 times this)")
	asJSON := fs.Bool("json", false, "print the verdict as JSON (field names in docs/timings.md) instead of a report")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v := timings.Check(s)
	var err error
	if *asJSON {
		err = timingsreport.WriteJSON(stdout, v)
	} else {
		err = timingsreport.WriteText(stdout, v)
	}
	if err != nil {
		return err
	}
	switch {
	case v.Refused != "":
		return errors.New("client-go refuses these settings: " + v.Refused)
	case v.APIServerRefuses != "":
		return fmt.Errorf("the API server refuses the Lease client-go writes with these settings (leaseDuration %s is written as leaseDurationSeconds %d): %s",
			s.LeaseDuration, v.LeaseDurationSeconds, v.APIServerRefuses)
	}
	return nil
}
