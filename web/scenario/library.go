package scenario

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
)

// The browser tab's timings, which every scenario starts from.
const (
	leaseDuration = 10 * time.Second
	renewDeadline = 7 * time.Second
	retryPeriod   = 2 * time.Second
)

// trio is the usual cast: alice starts first and so leads first; bob and carol follow.
func trio() []Member {
	return []Member{{Identity: "alice"}, {Identity: "bob", Joins: 700 * time.Millisecond}, {Identity: "carol", Joins: 1400 * time.Millisecond}}
}

// plain returns a scenario with the tab's timings and the usual cast.
func plain(s Scenario) *Scenario {
	if s.Lease == "" {
		s.Lease = "demo"
	}
	if s.LeaseDuration == 0 {
		s.LeaseDuration, s.RenewDeadline, s.RetryPeriod = leaseDuration, renewDeadline, retryPeriod
	}
	if s.Cast == nil {
		s.Cast = trio()
	}
	return &s
}

// Common steps and conditions.

func aliceLeads() Step {
	return Step{
		Say: i18n.Text{
			En: "Three candidates start: alice, bob and carol. alice starts first, finds no Lease and creates it with herself as holderIdentity. bob and carol read it, see it is valid, and wait.",
			Zh: "三个候选者启动：alice、bob 和 carol。alice 最先启动，发现没有租约，于是创建它，并把自己写为 holderIdentity。bob 和 carol 读到租约仍然有效，于是等待。",
		},
		Until:   func(w *World) bool { return w.Holder() == "alice" && w.Leads("alice") && followers(w, "bob", "carol") },
		Waiting: i18n.Text{En: "until alice holds the lease and bob and carol follow", Zh: "等待 alice 持有租约，bob 和 carol 成为跟随者"},
	}
}

func watchRenewals() Step {
	return Step{
		Say: i18n.Text{
			En: "alice renews every retry period (2 s): each renewal writes a new renewTime. bob and carol do not read renewTime against their own clocks: each notes when it last saw the record change, and will wait leaseDuration (10 s) from that moment.",
			Zh: "alice 每个重试周期（2 秒）续约一次：每次续约都会写入新的 renewTime。bob 和 carol 并不拿 renewTime 与自己的时钟比较：它们各自记下最后一次看到记录变化的时刻，并从那一刻起等待 leaseDuration（10 秒）。",
		},
		Do:      func(a *Actions) { a.Mark("watch") },
		Until:   func(w *World) bool { return w.For(5 * time.Second) },
		Waiting: i18n.Text{En: "while alice renews a few times", Zh: "等待 alice 续约几次"},
	}
}

func followers(w *World, ids ...string) bool {
	for _, id := range ids {
		s, ok := w.Members[id]
		if !ok || s.Role != candidate.RoleFollower || s.Holder == "" {
			return false
		}
	}
	return true
}

func someoneElseHolds(w *World, not string) bool {
	h := w.Holder()
	return h != "" && h != not && w.Leads(h)
}

func holderOtherThan(not string) func(w *World) error {
	return func(w *World) error {
		if h := w.Holder(); h == "" || h == not {
			return fmt.Errorf("the lease should have passed from %s to another candidate; it names %q", not, h)
		}
		return nil
	}
}

// Library lists the scenarios, in the order a workshop takes them.
func Library() []*Scenario { return library }

// Find returns the scenario called name, or nil.
func Find(name string) *Scenario {
	for _, s := range library {
		if s.Name == name {
			return s
		}
	}
	return nil
}

var library = []*Scenario{
	leaderCrash,
}

var leaderCrash = plain(Scenario{
	Name:    "leader-crash",
	Title:   i18n.Text{En: "Leader crash", Zh: "领导者崩溃"},
	Summary: i18n.Text{En: "The leader dies without releasing: the others wait out the lease, then one takes over.", Zh: "领导者没有释放租约就崩溃了：其他候选者等到租约过期，然后其中一个接管。"},
	Steps: []Step{
		aliceLeads(),
		watchRenewals(),
		{
			Say: i18n.Text{
				En: "alice's process dies (kill -9): nothing releases the lease, which still names alice. bob and carol cannot tell a dead leader from a slow one; they keep reading the record, and it has stopped changing.",
				Zh: "alice 的进程崩溃了（kill -9）：没有任何东西释放租约，租约仍然写着 alice。bob 和 carol 无法区分一个死掉的领导者和一个慢的领导者；它们继续读取记录，而记录已不再变化。",
			},
			Do:      func(a *Actions) { a.Member("alice").Crash() },
			Until:   func(w *World) bool { return w.SeesExpired("bob") || w.SeesExpired("carol") },
			Waiting: i18n.Text{En: "until bob's or carol's clock says the lease expired", Zh: "等待 bob 或 carol 的时钟认为租约已过期"},
		},
		{
			Say: i18n.Text{
				En: "By their own clocks, leaseDuration has passed since the record last changed: the lease has expired. On its next retry, the first of them to write wins; the other's write conflicts (409) and it follows the new holder.",
				Zh: "按它们自己的时钟，自记录最后一次变化以来已经过了 leaseDuration：租约已过期。在下一次重试时，先写入的一方获胜；另一方的写入发生冲突（409），于是跟随新的持有者。",
			},
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until bob or carol holds the lease", Zh: "等待 bob 或 carol 持有租约"},
		},
		{
			Say: i18n.Text{
				En: "A new leader, and leaseTransitions went up by one. The failover took up to leaseDuration plus a retry period after alice's last renewal: the price of never taking a lease that might still be in use.",
				Zh: "新的领导者产生了，leaseTransitions 加一。这次故障转移最多耗时 alice 最后一次续约之后的 leaseDuration 再加一个重试周期：这是绝不抢占可能仍在使用的租约的代价。",
			},
		},
	},
	Outcome: holderOtherThan("alice"),
})

var _ = errors.New
var _ = slices.Contains[[]string]
