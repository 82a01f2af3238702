package tabproto

import (
	"errors"
	"fmt"
	"github.com/leaselab/leaselab/wasm/said"
	"math"
	"strconv"
	"time"
)

// Faults are a tab's faults, in the one shape every part of leaselab holds them: the candidate
// that takes them and posts them to its page, the report a tab sends, the views the server
// records, the split-brain checker that reads them and the screens that show them. Its JSON is
// the report's "faults", a contract like the rest of the protocol: a new fault is a field added
// at the end, left out while it is off, so that the bytes of every older report stay the same.
type Faults struct {
	Paused bool `json:"paused"`
	// PausedSince is when the pause began, Unix ms on the tab's own clock; 0 unless paused.
	// Only the tab's page is told it: a report leaves it out (see Clean).
	PausedSince   int64     `json:"pausedSince,omitempty"`
	Partition     Partition `json:"partition"`
	LatencyMs     int64     `json:"latencyMs"`     // added round-trip time
	ClockOffsetMs int64     `json:"clockOffsetMs"` // the tab's clock minus the real one
	// ClockRate is how fast the tab's clock runs; absent (0) for the real rate.
	ClockRate float64 `json:"clockRate,omitempty"`
	// LossPercent is the share of the tab's requests the network loses, 0 to MaxLossPercent:
	// each lost request hangs until it times out, as in a hanging partition.
	LossPercent int `json:"lossPercent,omitempty"`
	// DeadConnection is true while the tab's connection to the server is dead without a word
	// (no reset ever came): its requests hang until the client finds it dead.
	DeadConnection bool `json:"deadConnection,omitempty"`
}

// Partition says how a tab's requests behave while its network is partitioned.
type Partition string

// Partition modes.
const (
	// PartitionNone is a healthy network.
	PartitionNone Partition = ""
	// PartitionHang drops packets: requests and responses wait until the partition heals
	// (then go through) or their context ends.
	PartitionHang Partition = "hang"
	// PartitionFail refuses connections: requests fail at once.
	PartitionFail Partition = "fail"
)

// Latency is the added round-trip time.
func (f Faults) Latency() time.Duration { return time.Duration(f.LatencyMs) * time.Millisecond }

// ClockOffset is the tab's clock minus the real one.
func (f Faults) ClockOffset() time.Duration { return time.Duration(f.ClockOffsetMs) * time.Millisecond }

// clean is f as a report may carry it: the partition mode cut to MaxWordLen, no pause start,
// a loss within its bounds.
func (f Faults) clean() Faults {
	f.Partition = Partition(Cut(string(f.Partition), MaxWordLen))
	f.PausedSince = 0
	f.LossPercent = min(max(f.LossPercent, 0), MaxLossPercent)
	return f
}

// Describe says a tab's faults, one message each: what the pages list as its active faults.
func (f Faults) Describe() []Msg {
	out := []Msg{}
	if f.Paused {
		out = append(out, Say("fault.paused"))
	}
	switch f.Partition {
	case PartitionHang:
		out = append(out, Say("fault.partitionHang"))
	case PartitionFail:
		out = append(out, Say("fault.partitionFail"))
	}
	if f.LatencyMs > 0 {
		out = append(out, Say("fault.slow", Secs(f.Latency())))
	}
	if f.LossPercent > 0 {
		out = append(out, Say("fault.loss", f.LossPercent))
	}
	if f.DeadConnection {
		out = append(out, Say("fault.deadConnection"))
	}
	if f.ClockOffsetMs != 0 {
		out = append(out, DescribeOffset(f.ClockOffset()))
	}
	if f.ClockRate != 0 && f.ClockRate != 1 {
		out = append(out, DescribeRate(f.ClockRate))
	}
	return out
}

// DescribeOffset says a clock offset: "clock 2 s ahead".
func DescribeOffset(d time.Duration) Msg {
	switch {
	case d > 0:
		return Say("fault.clockAhead", Secs(d))
	case d < 0:
		return Say("fault.clockBehind", Secs(-d))
	}
	return Say("fault.clockInSync")
}

// DescribeRate says how a clock's rate differs from the real one: "clock runs 5% fast".
func DescribeRate(rate float64) Msg {
	switch pct := math.Round((rate - 1) * 100); {
	case pct > 0:
		return Say("fault.clockFast", strconv.FormatFloat(pct, 'g', -1, 64))
	case pct < 0:
		return Say("fault.clockSlow", strconv.FormatFloat(-pct, 'g', -1, 64))
	}
	return Say("fault.clockRealRate")
}

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
	CommandLoss        = "loss"        // LossPercent: the share of requests lost, 0 to end it
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
	MaxLossPercent        = 90 // a network that loses every request is a partition
)

// Command is a fault command for a tab: what changes its Faults (or its life: release, crash,
// rejoin), as the hub forwards it and the tab's page sends it. Its fields are the wire's, older
// than Faults: each names the one value its Type sets.
type Command struct {
	Type      string    `json:"type"`
	Mode      Partition `json:"mode,omitempty"`
	LatencyMs *float64  `json:"latencyMs,omitempty"`
	Seconds   *float64  `json:"seconds,omitempty"`
	Rate      *float64  `json:"rate,omitempty"`
	// LossPercent is the loss command's share of requests lost.
	LossPercent *int `json:"lossPercent,omitempty"`
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
	case CommandLoss:
		if c.LossPercent == nil || *c.LossPercent < 0 || *c.LossPercent > MaxLossPercent {
			return fmt.Errorf("loss needs lossPercent between 0 and %d", MaxLossPercent)
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

// faultWords are the faults' sentences (see narration): how a tab lists
// its faults ("fault.") and how its decision log tells one switched on or off ("log.").
var faultWords = said.Register(map[string]said.Text{
	"fault.paused":         {En: "paused", Zh: "已暂停"},
	"fault.partitionHang":  {En: "partitioned: requests hang", Zh: "网络分区：请求挂起"},
	"fault.partitionFail":  {En: "partitioned: requests fail", Zh: "网络分区：请求失败"},
	"fault.slow":           {En: "slow network: +%s per request", Zh: "慢速网络：每个请求 +%s"},
	"fault.clockAhead":     {En: "clock %s ahead", Zh: "时钟快 %s"},
	"fault.clockBehind":    {En: "clock %s behind", Zh: "时钟慢 %s"},
	"fault.clockInSync":    {En: "clock in sync", Zh: "时钟同步"},
	"fault.clockFast":      {En: "clock runs %s%% fast", Zh: "时钟快 %s%%"},
	"fault.clockSlow":      {En: "clock runs %s%% slow", Zh: "时钟慢 %s%%"},
	"fault.clockRealRate":  {En: "clock runs at the real rate", Zh: "时钟按真实速率运行"},
	"fault.loss":           {En: "packet loss: %s%% of requests lost", Zh: "丢包：%s%% 的请求丢失"},
	"fault.deadConnection": {En: "dead connection: requests hang until the client finds it dead", Zh: "连接已死：请求挂起，直到客户端发现连接已死"},

	"log.paused":         {En: "paused: frozen as in a long GC pause; the world goes on without me", Zh: "已暂停：如同漫长的 GC 停顿般冻结；外界照常运转"},
	"log.resumed":        {En: "resumed after %s: acting on what I knew before the pause", Zh: "%s 后恢复：按暂停前所知的情况行事"},
	"log.partitionHang":  {En: "network partitioned: my requests hang until it heals", Zh: "网络分区：我的请求一直挂起，直到恢复"},
	"log.partitionFail":  {En: "network partitioned: my requests fail at once", Zh: "网络分区：我的请求立即失败"},
	"log.healed":         {En: "network healed", Zh: "网络已恢复"},
	"log.normalSpeed":    {En: "network back to normal speed", Zh: "网络恢复正常速度"},
	"log.slow":           {En: "slow network: +%s per request", Zh: "慢速网络：每个请求 +%s"},
	"log.clockInSync":    {En: "my clock is back in sync", Zh: "我的时钟已恢复同步"},
	"log.myClock":        {En: "my %s", Zh: "我的%s"},
	"log.realRate":       {En: "my clock runs at the real rate again", Zh: "我的时钟重新按真实速率运行"},
	"log.myRate":         {En: "my %s: I count leases, deadlines and retries on it", Zh: "我的%s：我用它计算租约、截止时间和重试"},
	"log.loss":           {En: "packet loss: %s%% of my requests are lost, each hanging until it times out", Zh: "丢包：我的请求有 %s%% 丢失，每个都挂起直到超时"},
	"log.lossOff":        {En: "no more packet loss", Zh: "不再丢包"},
	"log.deadConnection": {En: "my connection to the server died without a word: every request on it hangs until my client finds it dead, %s from now", Zh: "我与服务器的连接悄无声息地断了：其上的每个请求都会挂起，直到我的客户端在 %s 后发现连接已死"},
})
