package tabproto

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Command types a tab obeys from the hub: its fault commands. A tab's own page sends the
// same commands to its candidate.
const (
	CommandPause       = "pause"
	CommandResume      = "resume"
	CommandPartition   = "partition" // Mode: PartitionHang (the default) or PartitionFail
	CommandHeal        = "heal"
	CommandSlow        = "slow"        // LatencyMs: the added round trip; absent means the tab's default
	CommandClockOffset = "clockOffset" // Seconds: the absolute offset, not a step
	CommandClockRate   = "clockRate"   // Rate: how fast the tab's clock runs, 1 for the real rate
	CommandRelease     = "release"
	CommandCrash       = "crash"
	CommandRejoin      = "rejoin"
	CommandSnapshot    = "snapshot" // report now
)

// Bounds of a command's values.
const (
	MaxLatencyMs          = 600_000
	MaxClockOffsetSeconds = 86_400
	MinClockRate          = 0.5
	MaxClockRate          = 2.0
)

// Command is a fault command for a tab.
type Command struct {
	Type      string    `json:"type"`
	Mode      Partition `json:"mode,omitempty"`
	LatencyMs *float64  `json:"latencyMs,omitempty"`
	Seconds   *float64  `json:"seconds,omitempty"`
	Rate      *float64  `json:"rate,omitempty"`
}

// Validate refuses anything but a known fault command with sane values: the hub forwards
// nothing else, and a tab obeys nothing else from it.
func (c Command) Validate() error {
	switch c.Type {
	case CommandPause, CommandResume, CommandHeal, CommandRelease, CommandCrash, CommandRejoin, CommandSnapshot:
		return nil
	case CommandPartition:
		if c.Mode != PartitionNone && c.Mode != PartitionHang && c.Mode != PartitionFail {
			return errors.New("partition mode must be hang or fail")
		}
		return nil
	case CommandSlow:
		if c.LatencyMs != nil && (*c.LatencyMs < 0 || *c.LatencyMs > MaxLatencyMs) {
			return fmt.Errorf("latencyMs must be between 0 and %d", MaxLatencyMs)
		}
		return nil
	case CommandClockRate:
		if c.Rate == nil || !(*c.Rate >= MinClockRate && *c.Rate <= MaxClockRate) {
			return fmt.Errorf("clockRate needs a rate between %g and %g", MinClockRate, MaxClockRate)
		}
		return nil
	case CommandClockOffset:
		if c.Seconds == nil || *c.Seconds < -MaxClockOffsetSeconds || *c.Seconds > MaxClockOffsetSeconds {
			return fmt.Errorf("clockOffset needs seconds between %d and %d", -MaxClockOffsetSeconds, MaxClockOffsetSeconds)
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", Cut(c.Type, 40))
}

// commandMessage is a command on the wire.
type commandMessage struct {
	Type    string  `json:"type"`
	Command Command `json:"command"`
	// From is who sent it from a dashboard, on a server with tokens; the tab's page says so.
	From string `json:"from,omitempty"`
}

// EncodeCommand returns the message the hub sends a tab to forward c, sent by from ("" when
// unknown). It returns Validate's error for a command a tab must not obey.
func EncodeCommand(c Command, from string) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(commandMessage{Type: TypeCommand, Command: c, From: from})
}
