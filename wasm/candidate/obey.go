package candidate

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// Obey carries out a fault command, as a tab obeys its page's keys and the dashboard's
// buttons, clamping its values to the protocol's bounds. A snapshot command does nothing here:
// the caller reports.
func (c *Candidate) Obey(cmd tabproto.Command) error {
	switch cmd.Type {
	case tabproto.CommandPause:
		c.Pause()
	case tabproto.CommandResume:
		c.Resume()
	case tabproto.CommandPartition:
		mode := cmd.Mode
		if mode == PartitionNone {
			mode = PartitionHang
		}
		if mode != PartitionHang && mode != PartitionFail {
			return fmt.Errorf("partition mode must be %q or %q, not %q", PartitionHang, PartitionFail, cmd.Mode)
		}
		c.Partition(mode)
	case tabproto.CommandHeal:
		c.Heal()
	case tabproto.CommandSlow:
		cfg := c.Config()
		d := Timings{LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod}.SlowLatency()
		if cmd.LatencyMs != nil {
			d = time.Duration(math.Round(min(max(*cmd.LatencyMs, 0), tabproto.MaxLatencyMs))) * time.Millisecond
		}
		c.SetLatency(d)
	case tabproto.CommandClockOffset:
		if cmd.Seconds == nil {
			return errors.New(`clockOffset needs "seconds"`)
		}
		const bound = tabproto.MaxClockOffsetSeconds
		c.SetClockOffset(time.Duration(math.Round(min(max(*cmd.Seconds, -bound), bound)*1000)) * time.Millisecond)
	case tabproto.CommandClockRate:
		if cmd.Rate == nil {
			return errors.New(`clockRate needs "rate"`)
		}
		return c.SetClockRate(*cmd.Rate)
	case tabproto.CommandRelease:
		c.Release()
	case tabproto.CommandCrash:
		c.Crash()
	case tabproto.CommandRejoin:
		c.Rejoin()
	case tabproto.CommandSnapshot:
	default:
		return fmt.Errorf("unknown message type %q", cmd.Type)
	}
	return nil
}
