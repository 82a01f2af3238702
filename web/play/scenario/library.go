package scenario

import (
	"fmt"
	"time"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// The browser tab's timings, which every scenario starts from.
const (
	leaseDuration = 10 * time.Second
	renewDeadline = 7 * time.Second
	retryPeriod   = 2 * time.Second
	// maxTry is the longest wait between a follower's tries: the retry period with client-go's
	// jitter (factor 1.2) at its most.
	maxTry = retryPeriod * 22 / 10
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
	cleanRelease,
	gcPause,
	networkPartition,
	slowNetwork,
	clockSkew,
	releaseOnCancel,
	tightTimings,
	cleRollingUpgrade,
	splitBrain,
	fencing,
	identityCollision,
	zombieStandby,
	restartWaits,
	stuckConnection,
	apiserverOutage,
	arena, // the room is the cast (arenalesson.go)
}

var leaderCrash = plain(Scenario{
	Name:    "leader-crash",
	Length:  18 * time.Second,
	Title:   i18n.Text{En: "Leader crash", Zh: "领导者崩溃"},
	Summary: i18n.Text{En: "The leader dies without releasing: the others wait out the lease, then one takes over.", Zh: "领导者没有释放租约就崩溃了：其他候选者等到租约过期，然后其中一个接管。"},
	Teaches: i18n.Text{En: "A lease protects against a dead leader only once leaseDuration has passed: the price of never taking a lease that may still be in use.", Zh: "租约要等 leaseDuration 过去才能防范死掉的领导者：这是绝不抢占可能仍在使用的租约的代价。"},
	Steps: []Step{
		aliceLeads(),
		watchRenewals(),
		{
			Say: i18n.Text{
				En: "alice's process dies (kill -9): nothing releases the lease, which still names alice. bob and carol cannot tell a dead leader from a slow one; they keep reading the record, and it has stopped changing.",
				Zh: "alice 的进程崩溃了（kill -9）：没有任何东西释放租约，租约仍然写着 alice。bob 和 carol 无法区分一个死掉的领导者和一个慢的领导者；它们继续读取记录，而记录已不再变化。",
			},
			Ask: askCrash,
			Do:  func(a *Actions) { a.Member("alice").Crash() },
			// Or one of them already holds it: the try that saw the expiry may have taken the
			// lease before the run looked (a loaded machine looks late, more so at 4x), and
			// the new holder's clock then counts its own lease, not alice's.
			Until: func(w *World) bool {
				return w.SeesExpired("bob") || w.SeesExpired("carol") || someoneElseHolds(w, "alice")
			},
			Waiting: i18n.Text{En: "until bob's or carol's clock says the lease expired", Zh: "等待 bob 或 carol 的时钟认为租约已过期"},
		},
		{
			Say: i18n.Text{
				En: "By their own clocks, leaseDuration has passed since the record last changed: the lease has expired. Each tries on its own jittered schedule (every 2 to 4.4 s here), so the first to try after the expiry writes itself in, often in the very try that saw the expiry; the other reads the new holder at its next try and follows. Only two writes in the same instant would conflict (409).",
				Zh: "按它们自己的时钟，自记录最后一次变化以来已经过了 leaseDuration：租约已过期。它们各自按带抖动的间隔重试（这里每 2 到 4.4 秒一次），所以过期后第一个尝试的一方把自己写入，往往就在发现过期的那次尝试里；另一方在下一次尝试时读到新的持有者，于是跟随。只有两次写入恰好同时发生才会冲突（409）。",
			},
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until bob or carol holds the lease", Zh: "等待 bob 或 carol 持有租约"},
		},
		{
			Say: i18n.Text{
				En: "A new leader, and leaseTransitions went up by one. A follower takes over between leaseDuration and leaseDuration plus two of its tries after the leader's last renewal (10 to 18.8 s here: it may see that renewal up to 4.4 s late, and try up to 4.4 s after the expiry): the price of never taking a lease that might still be in use.",
				Zh: "新的领导者产生了，leaseTransitions 加一。跟随者在领导者最后一次续约之后的 leaseDuration 到 leaseDuration 加两次尝试间隔之间接管（这里是 10 到 18.8 秒：它可能晚 4.4 秒才看到那次续约，过期后又可能再等 4.4 秒才尝试）：这是绝不抢占可能仍在使用的租约的代价。",
			},
		},
	},
	Claims: []Claim{
		{Kind: HandedOver, Who: "alice"},
		{Kind: TakeoverAfterRenewal, Who: "alice", Min: leaseDuration, Max: leaseDuration + 2*maxTry},
		{Kind: NoSplitBrain},
		{Kind: Transitions, N: 1},
	},
})

var cleanRelease = plain(Scenario{
	Name:    "clean-release",
	Length:  8 * time.Second,
	Title:   i18n.Text{En: "Clean release", Zh: "主动释放"},
	Summary: i18n.Text{En: "The leader shuts down cleanly and releases the lease: the next one takes over at its next try, within seconds.", Zh: "领导者正常退出并释放租约：下一个候选者在它的下一次尝试时接管，几秒之内。"},
	Teaches: i18n.Text{En: "Releasing on a clean shutdown hands the lease over at the next try, not after leaseDuration.", Zh: "正常退出时释放租约，下一次尝试就能交接，而不必等一个 leaseDuration。"},
	Steps: []Step{
		aliceLeads(),
		watchRenewals(),
		{
			Say: i18n.Text{
				En: "alice shuts down cleanly (ReleaseOnCancel): she clears holderIdentity and sets leaseDurationSeconds to 1. The lease is free now; nobody has to wait out the 10 s.",
				Zh: "alice 正常退出（ReleaseOnCancel）：她清空 holderIdentity，并把 leaseDurationSeconds 设为 1。租约现在空闲；没有人需要再等 10 秒。",
			},
			Ask:     askRelease,
			Do:      func(a *Actions) { a.Member("alice").Release() },
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until bob or carol holds the lease", Zh: "等待 bob 或 carol 持有租约"},
		},
		{
			Say: i18n.Text{
				En: "Taken over at a follower's next try: at most 4.4 s after the release here (a retry period of 2 s with client-go's jitter), not a lease duration. A clean release is why rolling updates of a controller do not stall for leaseDuration each time.",
				Zh: "在跟随者的下一次尝试时就被接管：这里释放后最多 4.4 秒（2 秒的重试周期加上 client-go 的抖动），而不是一个租约时长。正是主动释放让控制器的滚动更新不必每次都停顿一个 leaseDuration。",
			},
		},
	},
	Claims: []Claim{
		{Kind: HandedOver, Who: "alice"},
		{Kind: TakeoverAfterStep, Who: "alice", N: 3, Max: leaseDuration},
		{Kind: NoSplitBrain},
	},
})

var gcPause = plain(Scenario{
	Name:    "gc-pause",
	Length:  28 * time.Second,
	Title:   i18n.Text{En: "GC pause: a stale leader", Zh: "GC 停顿：过期的领导者"},
	Summary: i18n.Text{En: "The leader freezes for longer than the lease: another takes over, and the frozen one wakes up still believing it leads.", Zh: "领导者冻结的时间超过了租约时长：另一个候选者接管，而被冻结的那个醒来时仍以为自己是领导者。"},
	Teaches: i18n.Text{En: "A frozen process cannot notice that it lost the lease: it wakes up as a stale leader.", Zh: "被冻结的进程无法察觉自己已失去租约：醒来时它就是过期的领导者。"},
	Steps: []Step{
		aliceLeads(),
		watchRenewals(),
		{
			Say: i18n.Text{
				En: "alice freezes: a stop-the-world garbage collection, a VM migration, SIGSTOP. Nothing runs in her process, not even the timer that would tell her to renew, or to give up. She still believes she leads.",
				Zh: "alice 冻结了：一次全局停顿的垃圾回收、一次虚拟机迁移或 SIGSTOP。她的进程里什么都不运行，连提醒她续约或放弃的定时器也不运行。她仍然以为自己是领导者。",
			},
			Do:      func(a *Actions) { a.Member("alice").Pause() },
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until the lease expires by the others' clocks and one of them takes it", Zh: "等待租约按其他候选者的时钟过期，并由其中一个接管"},
		},
		{
			Say: i18n.Text{
				En: "The lease has a new holder, and alice, frozen, still believes she leads: two leaders. Whatever alice does from the moment she wakes until she steps down, she does as a stale leader.",
				Zh: "租约有了新的持有者，而被冻结的 alice 仍以为自己是领导者：出现了两个领导者。alice 从醒来到退位之间所做的一切，都是以过期领导者的身份做的。",
			},
			Until:   func(w *World) bool { return w.For(3 * time.Second) },
			Waiting: i18n.Text{En: "for a moment, with two leaders", Zh: "两个领导者并存片刻"},
		},
		{
			Say: i18n.Text{
				En: "alice wakes and tries to renew, as if no time had passed: the record names someone else, so each try fails. She keeps trying every retry period until this round's renew deadline (7 s) passes, and only then steps down: 7 more seconds as a stale leader. The split-brain checker marks the interval on the timeline.",
				Zh: "alice 醒来后像什么都没发生一样尝试续约：记录写着别人的名字，所以每次尝试都失败。她每个重试周期都再试一次，直到这一轮的续约期限（7 秒）过去才退位：又当了 7 秒过期的领导者。脑裂检查器在时间线上标出了这段区间。",
			},
			Ask:     askWake,
			Do:      func(a *Actions) { a.Member("alice").Resume() },
			Until:   func(w *World) bool { return !w.Leads("alice") && len(w.Overlaps()) > 0 },
			Waiting: i18n.Text{En: "until alice steps down", Zh: "等待 alice 退位"},
		},
		{
			Say: i18n.Text{
				En: "client-go has no fencing: a lease only says who should lead. If two leaders must never write at once, the resource they write must check a token, such as leaseTransitions, that a stale leader no longer holds.",
				Zh: "client-go 没有防护（fencing）：租约只说明谁应该是领导者。如果两个领导者绝不能同时写入，那么它们写入的资源必须检查一个令牌（例如 leaseTransitions），过期的领导者已不再持有它。",
			},
		},
	},
	Claims: []Claim{
		{Kind: HandedOver, Who: "alice"},
		{Kind: SplitBrain, Who: "alice", Cause: judge.CausePaused},
	},
})

func noOverlap(w *World) error {
	if o := w.Overlaps(); len(o) > 0 {
		return fmt.Errorf("the checker found a split brain: %v believed they led at once (%s)", o[0].Believers, o[0].Cause)
	}
	return nil
}

var networkPartition = plain(Scenario{
	Name:    "network-partition",
	Length:  18 * time.Second,
	Title:   i18n.Text{En: "Network partition", Zh: "网络分区"},
	Summary: i18n.Text{En: "The leader loses the API server: it gives up at its renew deadline, before the others may take over.", Zh: "领导者与 API 服务器失联：它在续约期限到达时放弃领导，早于其他候选者可以接管的时刻。"},
	Teaches: i18n.Text{En: "retryPeriod + renewDeadline < leaseDuration makes a cut-off leader stop before anyone else starts.", Zh: "retryPeriod + renewDeadline < leaseDuration 让断网的领导者在别人开始之前就停下。"},
	Steps: []Step{
		aliceLeads(),
		watchRenewals(),
		{
			Say: i18n.Text{
				En: "alice's network is cut: her requests hang until they time out. Her next round of renewals begins a retry period (2 s) after her last success; she keeps trying until that round's renewDeadline (7 s) passes.",
				Zh: "alice 的网络被切断：她的请求一直挂起，直到超时。她的下一轮续约在最后一次成功续约一个重试周期（2 秒）之后开始；她会一直尝试，直到这一轮的 renewDeadline（7 秒）过去。",
			},
			Ask:     askPartition,
			Do:      func(a *Actions) { a.Member("alice").Partition(candidate.PartitionHang) },
			Until:   func(w *World) bool { return !w.Leads("alice") },
			Waiting: i18n.Text{En: "until alice's renew deadline passes", Zh: "等待 alice 的续约期限到达"},
		},
		{
			Say: i18n.Text{
				En: "alice gave up leading 9 s after her last renewal: a retry period (2 s) until her round began, then its renewDeadline (7 s). bob and carol wait 10 s from when they last saw the record change, which was no earlier: retryPeriod + renewDeadline < leaseDuration is what makes the old leader stop before a new one starts.",
				Zh: "alice 在最后一次续约 9 秒后放弃了领导：先是一个重试周期（2 秒），直到她这一轮续约开始，然后是这一轮的 renewDeadline（7 秒）。bob 和 carol 从最后一次看到记录变化的时刻起等待 10 秒，而那个时刻不会更早：正是 retryPeriod + renewDeadline < leaseDuration 让旧领导者在新领导者开始之前停下来。",
			},
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until bob or carol holds the lease", Zh: "等待 bob 或 carol 持有租约"},
		},
		{
			Say: i18n.Text{
				En: "The network heals. alice comes back as a follower: she reads the record, sees the new holder and waits like everyone else. No moment had two leaders.",
				Zh: "网络恢复了。alice 以跟随者身份回来：她读取记录，看到新的持有者，和其他人一样等待。任何时刻都没有出现两个领导者。",
			},
			Do:      func(a *Actions) { a.Member("alice").Heal() },
			Until:   func(w *World) bool { return followers(w, "alice") },
			Waiting: i18n.Text{En: "until alice follows", Zh: "等待 alice 成为跟随者"},
		},
	},
	Claims: []Claim{
		{Kind: HandedOver, Who: "alice"},
		{Kind: StepsDownFirst, Who: "alice"},
		{Kind: NoSplitBrain},
	},
})

// slowLatency is the slow-network scenario's round trip: more than the renew deadline.
const slowLatency = 8 * time.Second

var slowNetwork = plain(Scenario{
	Name:    "slow-network",
	Length:  24 * time.Second,
	Title:   i18n.Text{En: "Slow network", Zh: "慢网络"},
	Summary: i18n.Text{En: "A slow API server costs the leader its lease: no renewal comes back within the renew deadline.", Zh: "缓慢的 API 服务器让领导者失去租约：没有一次续约能在续约期限内返回。"},
	Teaches: i18n.Text{En: "What counts is whether a renewal returns within renewDeadline: too slow a network is no network.", Zh: "关键在于续约能否在 renewDeadline 内返回：太慢的网络就等于没有网络。"},
	Steps: []Step{
		aliceLeads(),
		watchRenewals(),
		{
			Say: i18n.Text{
				En: "Every request of alice's now takes 8 s to come back (4 s each way): an overloaded API server, a congested link. A renewal is one PUT, and it cannot return within renewDeadline (7 s).",
				Zh: "alice 的每个请求现在都要 8 秒才能返回（单程 4 秒）：API 服务器过载，或链路拥塞。一次续约就是一次 PUT，它无法在 renewDeadline（7 秒）内返回。",
			},
			Ask:     askSlow,
			Do:      func(a *Actions) { a.Member("alice").SetLatency(slowLatency) },
			Until:   func(w *World) bool { return !w.Leads("alice") },
			Waiting: i18n.Text{En: "until alice's renew deadline passes", Zh: "等待 alice 的续约期限到达"},
		},
		{
			Say: i18n.Text{
				En: "alice stopped leading: renew deadline passed. Her last PUT did reach the server, 4 s after she sent it, and renewed the record; its answer was still on the way back when she gave up. She never learns that it succeeded, and the lease is renewed for nobody. bob and carol wait for the record to stop changing, then take it.",
				Zh: "alice 停止了领导：续约期限已过。她最后一次 PUT 在发出 4 秒后确实到达了服务器并续了约；她放弃时，回应还在返回的路上。她永远不知道那次续约成功了，租约是为一个无人使用的领导者续的。bob 和 carol 等到记录不再变化，然后接管。",
			},
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until bob or carol holds the lease", Zh: "等待 bob 或 carol 持有租约"},
		},
		{
			Say: i18n.Text{
				En: "A slow network looks like no network to a leader: what counts is whether a renewal returns within renewDeadline. Delays below that only eat into the margin; the timing calculator shows how much.",
				Zh: "对领导者来说，慢网络就像没有网络：关键在于续约能否在 renewDeadline 内返回。低于这个值的延迟只会蚕食余量；时间计算器会显示还剩多少。",
			},
		},
	},
	Claims: []Claim{
		{Kind: HandedOver, Who: "alice"},
		{Kind: StepsDownFirst, Who: "alice"},
	},
})

var clockSkew = plain(Scenario{
	Name:    "clock-skew",
	Length:  40 * time.Second,
	Title:   i18n.Text{En: "Clock skew and clock drift", Zh: "时钟偏移与时钟漂移"},
	Summary: i18n.Text{En: "A clock 30 s ahead changes nothing; a clock that runs slow does.", Zh: "快 30 秒的时钟不会改变任何事；走得慢的时钟却会。"},
	Teaches: i18n.Text{En: "client-go counts from its own observation on its own clock: an offset cancels out, a drifting rate does not.", Zh: "client-go 在自己的时钟上、从自己的观察时刻开始计时：偏移会被抵消，速率漂移不会。"},
	Steps: []Step{
		aliceLeads(),
		{
			Say: i18n.Text{
				En: "bob's clock is set 30 s ahead. By renewTime + leaseDuration against his clock, alice's lease expired some 20 s ago. Watch: he does not take it.",
				Zh: "bob 的时钟被调快了 30 秒。按 renewTime + leaseDuration 与他的时钟比较，alice 的租约大约 20 秒前就过期了。请看：他并没有抢占。",
			},
			Ask:     askSkew,
			Do:      func(a *Actions) { a.Member("bob").SetClockOffset(30 * time.Second) },
			Until:   func(w *World) bool { return w.For(2*leaseDuration) && w.Holder() == "alice" },
			Waiting: i18n.Text{En: "for two lease durations", Zh: "等待两个租约时长"},
		},
		{
			Say: i18n.Text{
				En: "client-go never compares renewTime with its own clock: it counts leaseDuration from when it observed the record change, on its own clock. A constant offset cancels out. A clock that runs at the wrong rate does not.",
				Zh: "client-go 从不拿 renewTime 与自己的时钟比较：它在自己的时钟上，从观察到记录变化的时刻开始计算 leaseDuration。恒定的偏移会被抵消。走速不对的时钟则不会。",
			},
		},
		{
			Say: i18n.Text{
				En: "Now alice's clock runs at half speed and her network fails. She counts on that clock the retry period (2 s) until her next round and its 7 s renew deadline: up to 18 s of real time after her last renewal (less when her clock slowed some time after it). bob and carol count their 10 s on good clocks.",
				Zh: "现在 alice 的时钟以一半的速度运行，而且她的网络断了。她在这个时钟上计算到下一轮之前的重试周期（2 秒）和这一轮 7 秒的续约期限：相当于最后一次续约后最多 18 秒的真实时间（若她的时钟在续约之后一段时间才变慢，则更短）。bob 和 carol 则在正常的时钟上计算 10 秒。",
			},
			Do: func(a *Actions) {
				alice := a.Member("alice")
				alice.SetClockRate(0.5)
				alice.Partition(candidate.PartitionFail)
			},
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until bob or carol takes the lease", Zh: "等待 bob 或 carol 接管租约"},
		},
		{
			Say: i18n.Text{
				En: "A new holder, and alice still believes she leads: her slow clock says her deadline has not come. Clock drift is the case client-go cannot absorb; the margin leaseDuration − (retryPeriod + renewDeadline) is all that protects you.",
				Zh: "有了新的持有者，而 alice 仍以为自己是领导者：她走慢的时钟说期限还没到。时钟漂移是 client-go 无法吸收的情况；能保护你的只有 leaseDuration − (retryPeriod + renewDeadline) 这段余量。",
			},
			Until:   func(w *World) bool { return !w.Leads("alice") && len(w.Overlaps()) > 0 },
			Waiting: i18n.Text{En: "until alice's slow clock reaches her deadline", Zh: "等待 alice 走慢的时钟到达她的期限"},
		},
	},
	Claims: []Claim{
		{Kind: HandedOver, Who: "alice"},
		{Kind: SplitBrain, Who: "alice", Cause: judge.CauseClockDrift},
	},
})

var releaseOnCancel = plain(Scenario{
	Name:    "release-on-cancel",
	Length:  6 * time.Second,
	Title:   i18n.Text{En: "Release on cancel", Zh: "取消时释放"},
	Summary: i18n.Text{En: "The leader releases at once when cancelled, while its work is still running.", Zh: "领导者被取消时立即释放租约，而它的工作仍在运行。"},
	Teaches: i18n.Text{En: "ReleaseOnCancel releases at once: stop the leader's work before you cancel.", Zh: "ReleaseOnCancel 会立即释放：先停止领导者的工作，再取消上下文。"},
	Cast: []Member{
		{Identity: "alice", ReleaseOnCancel: true},
		{Identity: "bob", Joins: 700 * time.Millisecond, ReleaseOnCancel: true},
		{Identity: "carol", Joins: 1400 * time.Millisecond, ReleaseOnCancel: true},
	},
	Steps: []Step{
		aliceLeads(),
		{
			Say: i18n.Text{
				En: "alice's context is cancelled: a rolling update is replacing her. With ReleaseOnCancel she clears holderIdentity at once. But the work she started when she began leading does not watch that context: it runs on for 4 s.",
				Zh: "alice 的上下文被取消了：一次滚动更新正在替换她。启用 ReleaseOnCancel 后，她会立即清空 holderIdentity。但她开始领导时启动的工作并没有监听这个上下文：它还会继续运行 4 秒。",
			},
			Do: func(a *Actions) {
				a.KeepWorking("alice", 4*time.Second)
				a.Member("alice").Release()
			},
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until bob or carol takes the free lease", Zh: "等待 bob 或 carol 接管空闲的租约"},
		},
		{
			Say: i18n.Text{
				En: "Taken over at a follower's next try, as a release promises, and alice's work is still running: two leaders. Releasing is only safe once everything the leader started has stopped.",
				Zh: "正如释放所承诺的，在跟随者的下一次尝试时就被接管了，而 alice 的工作还在运行：出现了两个领导者。只有当领导者启动的一切都已停止时，释放才是安全的。",
			},
			Until:   func(w *World) bool { return !w.Leads("alice") && len(w.Overlaps()) > 0 },
			Waiting: i18n.Text{En: "until alice's work stops", Zh: "等待 alice 的工作停止"},
		},
		{
			Say: i18n.Text{
				En: "The checker names the cause: released while still working. client-go releases as soon as the elector's context is cancelled: OnStartedLeading runs on a goroutine of its own, and nothing waits for it to return. Stop the work and wait for it to end first; cancel the context last.",
				Zh: "检查器给出了原因：仍在工作时就释放了租约。选举器的上下文一被取消，client-go 就立即释放：OnStartedLeading 运行在它自己的协程里，没有任何东西等待它返回。先停止工作并等待它结束，最后再取消上下文。",
			},
		},
	},
	Claims: []Claim{
		{Kind: HandedOver, Who: "alice"},
		{Kind: SplitBrain, Who: "alice", Cause: judge.CauseReleased},
	},
})

// The tight-timings scenario's renew deadline (within a second of the lease duration) and
// its leader's clock rate.
const (
	tightRenewDeadline = 9 * time.Second
	tightClockRate     = 0.8
)

var tightTimings = plain(Scenario{
	Name:          "tight-timings",
	Length:        14 * time.Second,
	Title:         i18n.Text{En: "Tight timings", Zh: "过紧的时间设置"},
	Summary:       i18n.Text{En: "renewDeadline 9 s against leaseDuration 10 s: a leader cut off from the API server leads on past its lease, and a clock 20% slow makes it worse.", Zh: "renewDeadline 为 9 秒，leaseDuration 为 10 秒：与 API 服务器断开的领导者会在租约到期后继续领导，时钟慢 20% 更会雪上加霜。"},
	Teaches:       i18n.Text{En: "Keep leaseDuration − (retryPeriod + renewDeadline) wide, or a cut-off leader leads past its lease.", Zh: "让 leaseDuration − (retryPeriod + renewDeadline) 保持足够宽，否则断网的领导者会在租约到期后继续领导。"},
	LeaseDuration: leaseDuration,
	RenewDeadline: tightRenewDeadline,
	RetryPeriod:   retryPeriod,
	Steps: []Step{
		aliceLeads(),
		{
			Say: i18n.Text{
				En: "These candidates run with renewDeadline 9 s and leaseDuration 10 s, and client-go accepts it. But a leader that cannot renew keeps trying for 9 s from its next renew round, which begins a retry period (2 s) after its last renewal: it gives up 11 s after that renewal, while the others may take the lease after 10.",
				Zh: "这些候选者使用 renewDeadline 9 秒、leaseDuration 10 秒，client-go 接受这样的设置。但无法续约的领导者会从下一轮续约开始再尝试 9 秒，而下一轮在最后一次续约后一个重试周期（2 秒）才开始：它在那次续约后 11 秒才放弃，而其他候选者 10 秒后就可以接管。",
			},
		},
		{
			Say: i18n.Text{
				En: "alice's network fails, and her clock runs 20% slow. She gives up 11 s of her clock after her last renewal (2 s before her round, then 9 s of trying): up to 13.75 s of real time (a little less when her clock slowed after that renewal). Her lease runs out after 10.",
				Zh: "alice 的网络断了，她的时钟慢了 20%。她在最后一次续约后、按自己的时钟过了 11 秒才放弃（先等 2 秒开始新一轮，再尝试 9 秒）：即最多 13.75 秒的真实时间（若她的时钟在那次续约之后才变慢，则略短）。而她的租约 10 秒后就到期了。",
			},
			Do: func(a *Actions) {
				alice := a.Member("alice")
				alice.SetClockRate(tightClockRate)
				alice.Partition(candidate.PartitionFail)
			},
			Until:   func(w *World) bool { return !w.Leads("alice") },
			Waiting: i18n.Text{En: "until alice gives up leading", Zh: "等待 alice 放弃领导"},
		},
		{
			Say: i18n.Text{
				En: "alice believed she led after her lease had expired: the lease page lists it as leading past its lease, and the stage's lanes draw it. Anyone who had taken the lease in that window would have shared it with her: a split brain. With the default 7 s she gives up 9 s after her last renewal: on a true clock 1 s before her lease runs out, on this one, 20% slow, after 11.25 s, too late as well. Keep leaseDuration − (retryPeriod + renewDeadline) wide: the timing calculator, under Links, keys and timings below, warns when it is thin.",
				Zh: "alice 在租约过期之后仍以为自己是领导者：租约页面把它列为“租约到期后仍在领导”，舞台的泳道也画出了这一段。若有人在这段时间里接管了租约，就会和她共享租约：出现脑裂。若使用默认的 7 秒，她会在最后一次续约后 9 秒放弃：时钟准确时比租约到期早 1 秒；而在这个慢 20% 的时钟上要 11.25 秒，同样太迟。请让 leaseDuration − (retryPeriod + renewDeadline) 保持足够宽：余量太小时，下方“链接、快捷键与时间设置”中的时间计算器会发出警告。",
			},
			Do:      func(a *Actions) { a.Member("alice").Heal() },
			Until:   func(w *World) bool { return w.Holder() != "alice" || w.Leads("alice") },
			Waiting: i18n.Text{En: "until the lease has moved on", Zh: "等待租约易主"},
		},
	},
	Claims: []Claim{
		{Kind: PastLease, Who: "alice", Min: 500 * time.Millisecond},
	},
})

var cleRollingUpgrade = &Scenario{
	Name:          "cle-rolling-upgrade",
	Length:        40 * time.Second,
	Title:         i18n.Text{En: "Coordinated Leader Election: a rolling upgrade", Zh: "协调式领导者选举：滚动升级"},
	Summary:       i18n.Text{En: "The server's controller picks the holder: the oldest emulation version wins, and a better candidate makes the holder step down.", Zh: "由服务器的控制器挑选持有者：模拟版本最老的候选者胜出，更合适的候选者出现时，持有者会退位。"},
	Teaches:       i18n.Text{En: "In Coordinated Leader Election the server picks the holder, and during an upgrade the oldest emulation version leads.", Zh: "在协调式领导者选举中由服务器挑选持有者，升级期间由模拟版本最老的候选者领导。"},
	Lease:         "kube-scheduler",
	LeaseDuration: leaseDuration,
	RenewDeadline: renewDeadline,
	RetryPeriod:   retryPeriod,
	Coordinated:   true,
	Cast: []Member{
		{Identity: "alice", BinaryVersion: "1.35.0", EmulationVersion: "1.35.0"},
		{Identity: "bob", Joins: 700 * time.Millisecond, BinaryVersion: "1.36.0", EmulationVersion: "1.36.0"},
		{Identity: "carol", Absent: true, BinaryVersion: "1.36.0", EmulationVersion: "1.35.0"},
	},
	Steps: []Step{
		{
			Say: i18n.Text{
				En: "In Coordinated Leader Election, candidates do not grab the lease: each publishes a LeaseCandidate with its binary and emulation versions, and the API server's controller picks the holder. alice (1.35) and bob (already upgraded to 1.36) join.",
				Zh: "在协调式领导者选举中，候选者不会抢占租约：每个候选者发布一个带有二进制版本和模拟版本的 LeaseCandidate，由 API 服务器的控制器挑选持有者。alice（1.35）和 bob（已升级到 1.36）加入。",
			},
			Until:   func(w *World) bool { return w.Holder() == "alice" && w.Leads("alice") },
			Waiting: i18n.Text{En: "until the controller elects alice", Zh: "等待控制器选出 alice"},
		},
		{
			Say: i18n.Text{
				En: "The controller picked alice, the only candidate when it first decided (bob declared himself 0.7 s later). With bob there she stays: the lowest emulation version wins (OldestEmulationVersion), so that during an upgrade the leader never runs code newer than the oldest member can follow. Its decisions, on the lease page, say so.",
				Zh: "控制器选择了 alice，它第一次做决定时她是唯一的候选者（bob 晚 0.7 秒才声明自己）。bob 加入后她仍然保留：模拟版本最低者胜出（OldestEmulationVersion），这样在升级期间，领导者运行的代码永远不会比最老的成员更新。租约页面上控制器的决定也这样说明。",
			},
		},
		{
			Say: i18n.Text{
				En: "alice's node is taken down to be upgraded. Her lease expires, and the controller elects the only candidate left: bob.",
				Zh: "alice 所在节点被下线升级。她的租约到期后，控制器选出了唯一剩下的候选者：bob。",
			},
			Do:      func(a *Actions) { a.Member("alice").Crash() },
			Until:   func(w *World) bool { return w.Holder() == "bob" && w.Leads("bob") },
			Waiting: i18n.Text{En: "until the controller elects bob", Zh: "等待控制器选出 bob"},
		},
		{
			Say: i18n.Text{
				En: "carol joins: a 1.36 binary emulating 1.35, as an upgraded node does until the whole control plane is upgraded. She is a better candidate than bob, so the controller writes preferredHolder: carol into the lease.",
				Zh: "carol 加入：一个模拟 1.35 的 1.36 二进制，就像整个控制平面升级完成之前的已升级节点那样。她是比 bob 更合适的候选者，于是控制器在租约中写入 preferredHolder: carol。",
			},
			Do: func(a *Actions) { a.Join("carol") },
			Until: func(w *World) bool {
				return (w.Lease != nil && w.Lease.Spec.PreferredHolder != nil && *w.Lease.Spec.PreferredHolder == "carol") || w.Holder() == "carol"
			},
			Waiting: i18n.Text{En: "until the lease names carol as preferredHolder", Zh: "等待租约将 carol 写为 preferredHolder"},
		},
		{
			Say: i18n.Text{
				En: "bob reads preferredHolder and steps down at the end of his term: he stops renewing and lets the lease run out. The controller then makes carol the holder. alice's LeaseCandidate is still there, unrenewed since her node went down: the controller still counts her as the best, pings her, gets no answer, and keeps carol; it deletes a LeaseCandidate left unrenewed for 30 minutes. leaseTransitions stayed 0 through both hand-overs: client-go counts a transition when a candidate takes a lease itself, and here the controller names each holder, who renews what it wrote.",
				Zh: "bob 读到 preferredHolder，在任期结束时退位：他停止续约，让租约自然到期。随后控制器让 carol 成为持有者。alice 的 LeaseCandidate 还在，自她的节点下线后就没有续约：控制器仍把她算作最佳人选，向她发送 ping，得不到回应，于是保留 carol；一个 30 分钟未续约的 LeaseCandidate 会被控制器删除。两次交接中 leaseTransitions 一直是 0：client-go 只在候选者自己拿下租约时才计一次转换，而这里每个持有者都由控制器指定，持有者只是续约控制器写下的记录。",
			},
			Until:   func(w *World) bool { return w.Holder() == "carol" && w.Leads("carol") },
			Waiting: i18n.Text{En: "until carol holds the lease", Zh: "等待 carol 持有租约"},
		},
	},
	Claims: []Claim{
		{Kind: EndsWith, Who: "carol"},
	},
}

var splitBrain = plain(Scenario{
	Name:    "split-brain",
	Length:  32 * time.Second,
	Title:   i18n.Text{En: "Split brain, found", Zh: "找出脑裂"},
	Summary: i18n.Text{En: "Two leaders freeze one after the other: when they wake, three candidates believe they lead, and the checker finds it.", Zh: "两个领导者先后冻结：它们醒来时，三个候选者都以为自己是领导者，检查器找出了这一点。"},
	Teaches: i18n.Text{En: "The checker compares every candidate's belief with the record and finds each interval of more than one leader.", Zh: "检查器把每个候选者的认知与记录比较，找出每一段出现多个领导者的区间。"},
	Steps: []Step{
		aliceLeads(),
		{
			Say: i18n.Text{
				En: "alice freezes. The others wait out her lease, and one of them takes it.",
				Zh: "alice 冻结了。其他候选者等她的租约到期，然后其中一个接管。",
			},
			Do:      func(a *Actions) { a.Member("alice").Pause() },
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until the lease has a new holder", Zh: "等待租约有新的持有者"},
		},
		{
			Say: i18n.Text{
				En: "Now the new leader freezes too, and the last candidate waits out its lease in turn.",
				Zh: "现在新的领导者也冻结了，最后一个候选者也要等它的租约到期。",
			},
			Do: func(a *Actions) {
				second := a.Leader()
				a.Note("second", second)
				a.Member(second).Pause()
			},
			Until: func(w *World) bool {
				h := w.Holder()
				return h != "" && h != "alice" && h != w.Notes["second"] && w.Leads(h)
			},
			Waiting: i18n.Text{En: "until the third candidate holds the lease", Zh: "等待第三个候选者持有租约"},
		},
		{
			Say: i18n.Text{
				En: "Three candidates believe they lead: the holder, and two frozen ones that never learnt otherwise. They wake now; each one's renewals fail against the record, and each steps down when its renew deadline passes.",
				Zh: "三个候选者都以为自己是领导者：当前持有者，以及两个从未得知真相的冻结者。它们现在醒来；各自的续约都因记录不符而失败，各自在续约期限过去后退位。",
			},
			Do: func(a *Actions) {
				a.Member("alice").Resume()
				a.Member(a.Noted("second")).Resume()
			},
			Until:   func(w *World) bool { return len(w.Leaders()) == 1 && len(w.Overlaps()) > 0 },
			Waiting: i18n.Text{En: "until only the holder believes it leads", Zh: "等待只剩持有者以为自己是领导者"},
		},
		{
			Say: i18n.Text{
				En: "The checker compared every candidate's belief with the record and found the intervals: who believed, who held, for how long, why, and what to do about it. Open the lease page to see them on the timeline, and scrub back to any moment.",
				Zh: "检查器将每个候选者的认知与记录进行比较，找出了这些区间：谁以为自己领导、谁实际持有、持续多久、原因是什么以及应对办法。打开租约页面可以在时间线上看到它们，还可以回到任意时刻。",
			},
		},
	},
	Claims: []Claim{
		{Kind: Believers, N: 3},
	},
})

// readingTime is how long a room takes to read one step's narration, on top of the run.
const readingTime = 20 * time.Second

// askingTime is how long a question takes a room: reading it, voting, and the reveal.
const askingTime = time.Minute

// Minutes is how long giving the lesson takes at 1×: its run, a reading of each step, and
// the room's time with each question.
func (s *Scenario) Minutes() time.Duration {
	d := s.Length + time.Duration(len(s.Steps))*readingTime
	for _, st := range s.Steps {
		if st.Ask != nil {
			d += askingTime
		}
	}
	return d
}

// SessionItem is one lesson of a suggested session: the lesson, and the time to talk it over
// after its run.
type SessionItem struct {
	Lesson *Scenario
	Talk   time.Duration
}

// Session is a suggested 90-minute session: the lessons in the order to give them, from the
// crash every election survives to the fencing that saves a split brain, each with time to
// talk it over (TestSessionFitsNinetyMinutes keeps its total within the hour and a half).
func Session() []SessionItem {
	plan := []struct {
		name string
		talk time.Duration
	}{
		{"leader-crash", 5 * time.Minute}, {"clean-release", 4 * time.Minute}, {"network-partition", 5 * time.Minute},
		{"gc-pause", 7 * time.Minute}, {"clock-skew", 5 * time.Minute}, {"tight-timings", 6 * time.Minute},
		{"split-brain", 7 * time.Minute}, {"release-on-cancel", 6 * time.Minute}, {"apiserver-outage", 6 * time.Minute},
		{"fencing", 10 * time.Minute},
	}
	out := make([]SessionItem, 0, len(plan))
	for _, p := range plan {
		if sc := Find(p.name); sc != nil {
			out = append(out, SessionItem{Lesson: sc, Talk: p.talk})
		}
	}
	return out
}
