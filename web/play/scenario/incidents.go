package scenario

import (
	"time"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// The lessons of this file retell incidents from the field: each links the upstream issue,
// pull request or documentation it retells (Scenario.Incident).

// pair is a cast of two: alice starts first and so leads first; bob follows.
func pair() []Member {
	return []Member{{Identity: "alice"}, {Identity: "bob", Joins: 700 * time.Millisecond}}
}

func aliceLeadsBobFollows() Step {
	return Step{
		Say: i18n.Text{
			En: "Two candidates start: alice, then bob. alice finds no Lease, creates it with herself as holderIdentity and leads; bob reads it, sees it is valid, and waits.",
			Zh: "两个候选者启动：先是 alice，然后是 bob。alice 发现没有租约，于是创建它，把自己写为 holderIdentity 并开始领导；bob 读到租约仍然有效，于是等待。",
		},
		Until:   func(w *World) bool { return w.Holder() == "alice" && w.Leads("alice") && followers(w, "bob") },
		Waiting: i18n.Text{En: "until alice holds the lease and bob follows", Zh: "等待 alice 持有租约、bob 成为跟随者"},
	}
}

// wroteSince reports whether member who's work wrote the ledger, and the write landed, at or
// after the step began.
func wroteSince(w *World, who string) bool {
	for _, e := range w.Effects() {
		if e.By == who && e.Accepted && !w.Started.Add(e.At).Before(w.StepStarted) {
			return true
		}
	}
	return false
}

// stepsDownAfter reports whether who no longer believes it leads and the ledger holds at least
// one write of its of the kind wanted.
func stepsDownAfter(w *World, who string, wanted func(Effect) bool) bool {
	if w.Leads(who) {
		return false
	}
	for _, e := range w.Effects() {
		if e.By == who && wanted(e) {
			return true
		}
	}
	return false
}

// gaveUpLongAgo says that who no longer leads and the step has waited a lease and more: on a
// machine too slow for its work to write before it stepped down, the lesson goes on, and its
// claims (stale-writes-land, stale-writes-refused) say on the page what did not happen,
// rather than the step waiting for ever.
func gaveUpLongAgo(w *World, who string) bool {
	return !w.Leads(who) && w.For(2*leaseDuration)
}

// leaderelectionDocs is client-go's tools/leaderelection package documentation, which says
// that the package gives no fencing.
const leaderelectionDocs = "https://pkg.go.dev/k8s.io/client-go/tools/leaderelection"

var fencing = plain(Scenario{
	Name:     "fencing",
	Length:   44 * time.Second,
	Title:    i18n.Text{En: "Fencing: what a second leader costs", Zh: "防护：第二个领导者的代价"},
	Summary:  i18n.Text{En: "A frozen leader wakes and its work writes a shared ledger beside the new leader's; with a fencing token the same writes are refused with 409.", Zh: "被冻结的领导者醒来后，它的工作与新领导者一起写入共享账本；有了防护令牌，同样的写入会被 409 拒绝。"},
	Teaches:  i18n.Text{En: "A lease does not stop a stale leader from acting: only the resource it writes can refuse it, by a token such as leaseTransitions.", Zh: "租约无法阻止过期的领导者行事：只有它写入的资源才能凭 leaseTransitions 这样的令牌拒绝它。"},
	Incident: leaderelectionDocs,
	Ledger:   true,
	Cast:     pair(),
	Steps: []Step{
		aliceLeadsBobFollows(),
		{
			Say: i18n.Text{
				En: "While it leads, a candidate's work writes to a shared resource once a second: the ledger under the cards, a second Lease (demo-ledger) whose annotations name the last writer and count the entries. It stands for whatever a controller changes: objects, a database, a cloud API. Each write is a PUT over the copy its writer last wrote; if anyone wrote since, the server answers 409 Conflict, and the writer reads the ledger again and writes again, as client-go's retry.RetryOnConflict does.",
				Zh: "候选者在领导期间，它的工作每秒向一个共享资源写入一次：卡片下方的账本，即第二个租约（demo-ledger），它的注解记录最后的写入者并为条目计数。它代表控制器所改动的任何东西：对象、数据库、云 API。每次写入都是基于写入者上次写入的副本所做的 PUT；如果此后有人写过，服务器回答 409 Conflict，写入者重新读取账本再写一次，就像 client-go 的 retry.RetryOnConflict 那样。",
			},
			Until:   func(w *World) bool { return w.For(3*time.Second) && wroteSince(w, "alice") },
			Waiting: i18n.Text{En: "while alice's work writes the ledger", Zh: "等待 alice 的工作写入账本"},
		},
		{
			Say: i18n.Text{
				En: "alice freezes in the middle of her work: a stop-the-world pause. bob waits out her lease, takes it, and his work starts writing the ledger. There is no fencing yet: the ledger takes any write made over its latest copy.",
				Zh: "alice 在工作中途冻结了：一次全局停顿。bob 等她的租约到期后接管，他的工作开始写入账本。现在还没有防护：账本接受任何基于其最新副本的写入。",
			},
			Do:      func(a *Actions) { a.Member("alice").Pause() },
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") && wroteSince(w, "bob") },
			Waiting: i18n.Text{En: "until bob holds the lease and writes the ledger", Zh: "等待 bob 持有租约并写入账本"},
		},
		{
			Say: i18n.Text{
				En: "alice wakes, still believing she leads, and her work goes on where it stopped. Her first write meets a 409, bob having written since; she reads the ledger again, writes again, and it lands. Optimistic concurrency keeps writers from overwriting each other unseen; it does not keep a stale leader out. Every write of hers until her renew deadline passes is damage, counted under the ledger.",
				Zh: "alice 醒来，仍以为自己是领导者，她的工作从中断处继续。她的第一次写入遇到 409，因为 bob 此后写过；她重新读取账本再写一次，写入成功了。乐观并发只能防止写入者在不知情时互相覆盖，却挡不住过期的领导者。在她的续约期限过去之前，她的每一次写入都是损害，计在账本下方。",
			},
			Do: func(a *Actions) { a.Member("alice").Resume() },
			Until: func(w *World) bool {
				return stepsDownAfter(w, "alice", Effect.Damage) && len(w.Overlaps()) > 0 || gaveUpLongAgo(w, "alice")
			},
			Waiting: i18n.Text{En: "until alice steps down", Zh: "等待 alice 退位"},
		},
		{
			Say: i18n.Text{
				En: "Now the ledger takes a fencing token. Every write carries its writer's token, the lease's leaseTransitions when it took the lease (bob's is 1), and the ledger keeps the newest token written. After a 409 a writer reads the ledger and writes again only if the ledger's token is not newer than its own: the server's resourceVersion check makes the comparison and the write one compare-and-set. bob freezes in turn; alice waits out his lease, takes it with token 2, and her work writes the ledger at once.",
				Zh: "现在账本启用防护令牌。每次写入都带上写入者的令牌，即它拿下租约时租约的 leaseTransitions（bob 的是 1），账本记住写入过的最新令牌。遇到 409 后，写入者重新读取账本，只有当账本的令牌不比自己的新时才再写一次：服务器的 resourceVersion 检查让比较和写入成为一次比较并交换。bob 也冻结了；alice 等他的租约到期，以令牌 2 接管，她的工作立即写入账本。",
			},
			Do: func(a *Actions) {
				a.Fence(true)
				a.Member("bob").Pause()
			},
			Until:   func(w *World) bool { return someoneElseHolds(w, "bob") && wroteSince(w, "alice") },
			Waiting: i18n.Text{En: "until alice holds the lease and writes the ledger", Zh: "等待 alice 持有租约并写入账本"},
		},
		{
			Say: i18n.Text{
				En: "bob wakes, still believing he leads, and writes as alice did. Each of his writes meets a 409; he reads the ledger, finds token 2, newer than his 1, and the write is refused. Nothing of his lands before his renew deadline passes.",
				Zh: "bob 醒来，仍以为自己是领导者，像 alice 刚才那样写入。他的每次写入都遇到 409；他重新读取账本，发现令牌 2 比自己的 1 新，这次写入被拒绝。在他的续约期限过去之前，他的写入一次也没有落入账本。",
			},
			Ask: askFenced,
			Do:  func(a *Actions) { a.Member("bob").Resume() },
			Until: func(w *World) bool {
				return stepsDownAfter(w, "bob", Effect.Refused) && len(w.Overlaps()) > 1 || gaveUpLongAgo(w, "bob")
			},
			Waiting: i18n.Text{En: "until bob steps down", Zh: "等待 bob 退位"},
		},
		{
			Say: i18n.Text{
				En: "Two leaders again, and no damage this time: the ledger refused the stale one. client-go's package documentation says so: it does not guarantee that only one client acts as the leader (no fencing). A lease says who should lead; only the resource a leader writes can refuse one that no longer does, so carry a token (leaseTransitions, or the lease's resourceVersion) into every write and check it where the write lands.",
				Zh: "又出现了两个领导者，但这次没有损害：账本拒绝了过期的那个。client-go 的包文档写明了：它不保证只有一个客户端以领导者身份行事（没有防护）。租约只说明谁应该领导；只有领导者写入的资源才能拒绝已不再是领导者的一方，所以要在每次写入中带上令牌（leaseTransitions 或租约的 resourceVersion），并在写入落地之处检查它。",
			},
		},
	},
	Claims: []Claim{
		{Kind: SplitBrain, Who: "alice", Cause: judge.CausePaused},
		{Kind: StaleWritesLand, Who: "alice", N: 1},
		{Kind: SplitBrain, Who: "bob", Cause: judge.CausePaused},
		{Kind: StaleWritesRefused, Who: "bob", N: 1},
		{Kind: Transitions, N: 2},
	},
})

// leadsUnder reports whether every member named believes it leads, and the record names
// identity.
func leadsUnder(w *World, identity string, names ...string) bool {
	for _, n := range names {
		if !w.Leads(n) {
			return false
		}
	}
	return w.Holder() == identity
}

var identityCollision = plain(Scenario{
	Name:     "identity-collision",
	Length:   12 * time.Second,
	Title:    i18n.Text{En: "Identity collision: two leaders under one name", Zh: "身份标识冲突：一个名字下的两个领导者"},
	Summary:  i18n.Text{En: "Two processes take the hostname as their identity: both believe they lead, the record names one, and nothing looks wrong.", Zh: "两个进程都用主机名作身份标识：两者都认为自己是领导者，记录只写着一个名字，看上去一切正常。"},
	Teaches:  i18n.Text{En: "A candidate leads when the record names its identity: make each identity unique, as hostname plus a random suffix.", Zh: "记录写着谁的身份标识，谁就是领导者：要让每个身份标识唯一，比如主机名加随机后缀。"},
	Incident: "https://github.com/kubernetes/kubernetes/issues/22775",
	Lease:    "kube-controller-manager",
	Cast: []Member{
		{Name: "node-1-a", Identity: "node-1"},
		{Identity: "node-2", Joins: 700 * time.Millisecond},
		{Name: "node-1-b", Identity: "node-1", Absent: true},
		{Identity: "node-1-7f3a", Absent: true},
	},
	Steps: []Step{
		{
			Say: i18n.Text{
				En: "Two controller managers start on two nodes, each taking its hostname as its identity, as kube-controller-manager did when this was reported. The one on node-1 creates the lease and leads; node-2 follows.",
				Zh: "两个控制器管理器在两个节点上启动，各自以主机名作为身份标识，正如报告此问题时的 kube-controller-manager 那样。node-1 上的那个创建租约并开始领导；node-2 跟随。",
			},
			Until:   func(w *World) bool { return leadsUnder(w, "node-1", "node-1-a") && followers(w, "node-2") },
			Waiting: i18n.Text{En: "until node-1 holds the lease and node-2 follows", Zh: "等待 node-1 持有租约、node-2 成为跟随者"},
		},
		{
			Say: i18n.Text{
				En: "A second controller manager starts on node-1: a new pod on the host network of the same node, or another node that got the same hostname. Its identity is node-1 too. It reads the lease and finds its own identity as holderIdentity; client-go's IsLeader compares nothing else, so it renews the lease as its own, at once.",
				Zh: "第二个控制器管理器在 node-1 上启动：同一节点上使用主机网络的新 Pod，或者恰好取了相同主机名的另一个节点。它的身份标识也是 node-1。它读取租约，发现 holderIdentity 正是自己的身份标识；client-go 的 IsLeader 只比较这一点，于是它立即把租约当作自己的来续约。",
			},
			Do:      func(a *Actions) { a.Join("node-1-b") },
			Until:   func(w *World) bool { return leadsUnder(w, "node-1", "node-1-a", "node-1-b") },
			Waiting: i18n.Text{En: "until the second process on node-1 leads", Zh: "等待 node-1 上的第二个进程开始领导"},
		},
		{
			Say: i18n.Text{
				En: "Two processes lead, and the record names one identity. Each renewal of one turns the other's next renewal over its cached copy into a 409; it reads the lease again, finds its own identity there, and renews. node-2 sees the record change every couple of seconds and waits for ever. leaseTransitions stays 0, and the split-brain checker, which compares beliefs by identity, finds nothing: both are node-1.",
				Zh: "两个进程都在领导，而记录只写着一个身份标识。其中一个的每次续约，都让另一个基于缓存副本的下一次续约变成 409；后者重新读取租约，在那里看到自己的身份标识，于是续约。node-2 每隔几秒就看到记录变化，于是永远等待下去。leaseTransitions 一直是 0，而按身份标识比较认知的脑裂检查器什么也没发现：两者都是 node-1。",
			},
			Until:   func(w *World) bool { return w.For(leaseDuration) && leadsUnder(w, "node-1", "node-1-a", "node-1-b") },
			Waiting: i18n.Text{En: "for a lease duration, with two leaders", Zh: "两个领导者并存一个租约时长"},
		},
		{
			Say: i18n.Text{
				En: "The fix is a unique identity: kube-controller-manager and kube-scheduler now append a random UUID to the hostname, so that two processes on one host never both become active. The second process restarts as node-1-7f3a, reads a lease held by node-1, and follows.",
				Zh: "解决办法是唯一的身份标识：kube-controller-manager 和 kube-scheduler 现在会在主机名后加上一个随机 UUID，使同一主机上的两个进程不会同时成为活跃的领导者。第二个进程以 node-1-7f3a 重新启动，读到由 node-1 持有的租约，于是跟随。",
			},
			Do: func(a *Actions) {
				a.Member("node-1-b").Crash()
				a.Join("node-1-7f3a")
			},
			Until: func(w *World) bool {
				return leadsUnder(w, "node-1", "node-1-a") && !w.Leads("node-1-b") && followers(w, "node-1-7f3a")
			},
			Waiting: i18n.Text{En: "until node-1-7f3a follows", Zh: "等待 node-1-7f3a 成为跟随者"},
		},
	},
	Claims: []Claim{
		{Kind: SharedIdentity, Who: "node-1", N: 2, Min: leaseDuration},
		{Kind: NoSplitBrain},
		{Kind: Transitions, N: 0},
	},
})

// stoppedFor reports whether member who stopped after the step began, at least d ago.
func stoppedFor(w *World, who string, d time.Duration) bool {
	at, ok := w.Since(w.StepStarted, "role", who+" stopped")
	return ok && !w.Now.Before(at.Add(d))
}

var zombieStandby = plain(Scenario{
	Name:     "zombie-standby",
	Length:   45 * time.Second,
	Title:    i18n.Text{En: "Zombie standby: Run returned", Zh: "僵尸备用：Run 已返回"},
	Summary:  i18n.Text{En: "A program calls client-go's Run once: a replica that loses the lease stays up and never competes again, until nobody can lead.", Zh: "程序只调用一次 client-go 的 Run：失去租约的副本仍在运行，却再也不参与竞选，直到没有任何副本能够领导。"},
	Teaches:  i18n.Text{En: "Run returns when leading ends: exit in OnStoppedLeading, or call Run again, or the replica never competes again.", Zh: "领导结束时 Run 就会返回：要在 OnStoppedLeading 中退出，或者再次调用 Run，否则这个副本再也不会参与竞选。"},
	Incident: "https://github.com/kubernetes/client-go/issues/1155",
	Cast:     []Member{{Identity: "alice", StopAfterLoss: true}, {Identity: "bob", Joins: 700 * time.Millisecond, StopAfterLoss: true}},
	Steps: []Step{
		aliceLeadsBobFollows(),
		{
			Say: i18n.Text{
				En: "Each replica's main calls client-go's RunOrDie once, and its OnStoppedLeading only logs, as in client-go#1155. Run does not return while the replica follows, and returns as soon as leading ends, whatever the reason.",
				Zh: "每个副本的 main 只调用一次 client-go 的 RunOrDie，它的 OnStoppedLeading 只记录一条日志，正如 client-go#1155 中那样。副本跟随期间 Run 不会返回；一旦领导结束，无论原因是什么，Run 都会立即返回。",
			},
		},
		{
			Say: i18n.Text{
				En: "alice's network fails. She cannot renew, and at her renew deadline she stops leading: Run returns, and main goes on waiting for a signal to stop. bob waits out her lease and takes it.",
				Zh: "alice 的网络断了。她无法续约，到续约期限时停止领导：Run 返回，而 main 继续等待停止信号。bob 等她的租约到期后接管。",
			},
			Do:      func(a *Actions) { a.Member("alice").Partition(candidate.PartitionFail) },
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until bob holds the lease", Zh: "等待 bob 持有租约"},
		},
		{
			Say: i18n.Text{
				En: "alice's network heals. Her process is up and would pass any liveness probe that does not ask about the election, yet nothing reads the lease for her any more: a zombie standby, as her card says. bob is the only replica left that can lead.",
				Zh: "alice 的网络恢复了。她的进程仍在运行，任何不过问选举的存活探针都会通过，但再也没有代码替她读取租约：这是一个僵尸备用副本，她的卡片上也这样写着。bob 是唯一还能领导的副本。",
			},
			Do:      func(a *Actions) { a.Member("alice").Heal() },
			Until:   func(w *World) bool { return w.For(leaseDuration) },
			Waiting: i18n.Text{En: "for a lease duration", Zh: "等待一个租约时长"},
		},
		{
			Say: i18n.Text{
				En: "Now bob's network fails, and the same happens to him: his Run returns at his renew deadline. His lease runs out, and nobody takes it.",
				Zh: "现在 bob 的网络也断了，同样的事发生在他身上：到续约期限时他的 Run 返回了。他的租约到期，没有人接管。",
			},
			Do:      func(a *Actions) { a.Member("bob").Partition(candidate.PartitionFail) },
			Until:   func(w *World) bool { return stoppedFor(w, "bob", leaseDuration) },
			Waiting: i18n.Text{En: "until bob's lease has run out", Zh: "等待 bob 的租约到期"},
		},
		{
			Say: i18n.Text{
				En: "bob's network heals too. Both replicas run and nobody leads: every replica that ever lost the lease has left the election for good. Exit the process in OnStoppedLeading, as kube-controller-manager does, so that it is restarted, or call Run again in a loop until the program is told to stop.",
				Zh: "bob 的网络也恢复了。两个副本都在运行，却没有任何领导者：每个曾经失去租约的副本都永久退出了选举。要在 OnStoppedLeading 中退出进程（kube-controller-manager 就是这样做的），让它被重新启动；或者在循环中再次调用 Run，直到程序被要求停止。",
			},
			Do:      func(a *Actions) { a.Member("bob").Heal() },
			Until:   func(w *World) bool { return w.For(2*time.Second) && len(w.Leaders()) == 0 },
			Waiting: i18n.Text{En: "for a moment, with nobody leading", Zh: "无人领导片刻"},
		},
	},
	Claims: []Claim{
		{Kind: StepsDownFirst, Who: "alice"},
		{Kind: NeverCompetesAgain, Who: "alice", Min: 2 * leaseDuration},
		{Kind: NeverCompetesAgain, Who: "bob", Min: leaseDuration},
		{Kind: Leaderless, Min: leaseDuration},
	},
})

var restartWaits = plain(Scenario{
	Name:     "restart-waits",
	Length:   32 * time.Second,
	Title:    i18n.Text{En: "Everyone restarted: the newcomers wait", Zh: "全部重启：新来者要等待"},
	Summary:  i18n.Text{En: "Every candidate dies at once; new ones with new names find a record long expired by its renewTime, and still wait a full leaseDuration.", Zh: "所有候选者同时死掉；换了新名字的新候选者发现记录按 renewTime 早已过期，却仍要等满一个 leaseDuration。"},
	Teaches:  i18n.Text{En: "A candidate counts leaseDuration from its own first look at the record, never from renewTime: a fresh start waits a full lease.", Zh: "候选者从自己第一次看到记录时开始计算 leaseDuration，从不依据 renewTime：全新启动要等满一个租约时长。"},
	Incident: "https://github.com/kubernetes/client-go/issues/448",
	Cast: append(trio(),
		Member{Identity: "dave", Absent: true},
		Member{Identity: "erin", Absent: true}),
	Steps: []Step{
		aliceLeads(),
		{
			Say: i18n.Text{
				En: "A rollout gone wrong, a drained node or a power cut takes every replica down at once: alice, bob and carol are killed, and none releases the lease. The record still names alice, and nobody is left to renew it or to take it.",
				Zh: "一次出错的滚动发布、一次节点排空或一次断电让所有副本同时下线：alice、bob 和 carol 都被杀死，没有一个释放租约。记录仍然写着 alice，却已没有人续约，也没有人接管。",
			},
			Do: func(a *Actions) {
				for _, id := range []string{"alice", "bob", "carol"} {
					a.Member(id).Crash()
				}
			},
			Until:   func(w *World) bool { return w.For(2 * leaseDuration) },
			Waiting: i18n.Text{En: "while the record grows old", Zh: "等待记录变旧"},
		},
		{
			Say: i18n.Text{
				En: "The record's renewTime is now over 20 s old, twice leaseDuration: by the server's clock the lease ran out long ago. Two new replicas start with new names, dave and erin, as a Deployment's new pods would. Neither takes the lease: client-go never compares renewTime with its own clock, as another clock wrote it; each counts leaseDuration from the moment it first saw the record, which is now.",
				Zh: "记录的 renewTime 已经超过 20 秒，是 leaseDuration 的两倍：按服务器的时钟，租约早就到期了。两个换了新名字的新副本 dave 和 erin 启动，就像 Deployment 的新 Pod 那样。它们都没有接管租约：client-go 从不拿 renewTime 与自己的时钟比较，因为它是另一个时钟写下的；每个候选者都从自己第一次看到记录的时刻，也就是现在，开始计算 leaseDuration。",
			},
			Ask: askRestart,
			Do: func(a *Actions) {
				a.Join("dave")
				a.Join("erin")
			},
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until dave or erin takes the lease", Zh: "等待 dave 或 erin 接管租约"},
		},
		{
			Say: i18n.Text{
				En: "Taken over 10 to 14.4 s after the newcomers started, a full leaseDuration after their first look, although the record had run out long before: nobody led for over 30 s. That is by design: client-go#448 asked to trust the recorded times and was closed, since they come from other clocks, and the documentation of LeaseDuration warns that new candidates with other names wait the full duration. Keep leaseDuration short, release the lease on a clean shutdown, or keep identities: a replacement named as the holder (a StatefulSet's pod) finds its own identity in the record and renews at once.",
				Zh: "新来者启动后 10 到 14.4 秒才接管，即在它们第一次看到记录之后整整一个 leaseDuration，尽管记录早已到期：超过 30 秒没有任何领导者。这是有意的设计：client-go#448 曾要求信任记录中的时间，但因为那些时间来自其他时钟而被关闭；LeaseDuration 的文档也提醒，换了名字的新候选者要等满整个时长。请让 leaseDuration 保持较短，正常退出时释放租约，或者保留身份标识：与持有者同名的替代者（StatefulSet 的 Pod）会在记录中看到自己的身份标识，立即续约。",
			},
		},
	},
	Claims: []Claim{
		// 10 to 14.4 s, and up to a second more for a loaded server at 4x to notice it.
		{Kind: TakeoverAfterStep, Who: "alice", N: 3, Min: leaseDuration, Max: leaseDuration + maxTry + time.Second},
		{Kind: Leaderless, Min: 3 * leaseDuration},
		{Kind: Transitions, N: 1},
	},
})

var apiserverOutage = plain(Scenario{
	Name:     "apiserver-outage",
	Length:   23 * time.Second,
	Title:    i18n.Text{En: "API server outage: nobody leads", Zh: "API 服务器中断：无人领导"},
	Summary:  i18n.Text{En: "The API server stops answering: the leader steps down at its renew deadline though nothing failed on its side, and nobody leads until the server is back.", Zh: "API 服务器不再应答：尽管领导者自身没有任何故障，它仍在续约期限到达时退位，直到服务器恢复之前无人领导。"},
	Teaches:  i18n.Text{En: "A leader that cannot reach the server steps down at its renew deadline: renewDeadline is the longest outage a leader rides out.", Zh: "联系不上服务器的领导者会在续约期限到达时退位：renewDeadline 就是领导者能扛过的最长中断。"},
	Incident: "https://github.com/kubernetes-sigs/cluster-api/pull/3980",
	Steps: []Step{
		aliceLeads(),
		{
			Say: i18n.Text{
				En: "The API server stops answering: etcd has lost its quorum, or kube-apiserver is restarting in a control-plane upgrade. Every request of every candidate now hangs, as the banner says. Nothing is wrong on alice's side, yet she cannot renew: her next renew round begins a retry period after her last renewal, and when its renew deadline passes she stops leading.",
				Zh: "API 服务器不再应答：etcd 失去了法定人数，或者 kube-apiserver 正在控制平面升级中重启。如横幅所示，每个候选者的每个请求现在都挂起了。alice 这边没有任何问题，但她无法续约：她的下一轮续约在最后一次续约一个重试周期之后开始，这一轮的续约期限一过，她就停止领导。",
			},
			Ask:     askOutage,
			Do:      func(a *Actions) { a.Outage(candidate.PartitionHang) },
			Until:   func(w *World) bool { return !w.Leads("alice") },
			Waiting: i18n.Text{En: "until alice's renew deadline passes", Zh: "等待 alice 的续约期限到达"},
		},
		{
			Say: i18n.Text{
				En: "alice stopped leading some 7 to 9 s into the outage, her process, network and clock all sound. bob and carol cannot read the lease either, so nobody takes it: while the server is down, nobody leads. A program that exits when it loses the lease, as kube-controller-manager does, restarts at every outage longer than its renew deadline.",
				Zh: "alice 在中断开始后约 7 到 9 秒停止了领导，而她的进程、网络和时钟都完好无损。bob 和 carol 也读不到租约，所以没有人接管：服务器中断期间没有任何领导者。像 kube-controller-manager 那样在失去租约时退出的程序，每遇到一次长于续约期限的中断就会重启一次。",
			},
			Until:   func(w *World) bool { return w.For(leaseDuration) && len(w.Leaders()) == 0 },
			Waiting: i18n.Text{En: "while the server is down", Zh: "服务器中断期间"},
		},
		{
			Say: i18n.Text{
				En: "The server answers again; the requests left waiting fail as their connections are reset, and each candidate tries again on its own schedule. The first to read the lease takes it: alice finds her own identity in the record and renews it at once; bob or carol, who last saw the record change long over leaseDuration ago, takes it over. No split brain, only a gap with no leader. That is why cluster-api lengthened its control-plane controller's timings from 15/10/2 s to 60/40/5 s (PR 3980), and microk8s raised its controller manager's and scheduler's lease to 60 s (PR 2203): a leader rides out an outage shorter than its renew deadline, at the price of a slower takeover when it really dies.",
				Zh: "服务器重新应答；仍在等待的请求因连接被重置而失败，每个候选者按各自的节奏重试。第一个读到租约的候选者拿下它：alice 在记录中看到自己的身份标识，立即续约；bob 或 carol 上次看到记录变化已远超 leaseDuration，于是接管。没有脑裂，只有一段无人领导的空白。这正是 cluster-api 把控制平面控制器的时间设置从 15/10/2 秒延长到 60/40/5 秒（PR 3980）、microk8s 把控制器管理器和调度器的租约提高到 60 秒（PR 2203）的原因：领导者能扛过短于续约期限的中断，代价是它真正死掉时接管会更慢。",
			},
			Do: func(a *Actions) { a.Outage(candidate.PartitionNone) },
			Until: func(w *World) bool {
				ls := w.Leaders()
				return len(ls) == 1 && w.Holder() == ls[0]
			},
			Waiting: i18n.Text{En: "until someone leads again", Zh: "等待重新有人领导"},
		},
	},
	Claims: []Claim{
		// 7 to 9 s on alice's clock, give or take what a server under load at 4x adds to when
		// a step begins and when the run sees her role change.
		{Kind: StepsDownAfterStep, Who: "alice", N: 2, Min: renewDeadline - time.Second, Max: retryPeriod + renewDeadline + time.Second},
		{Kind: Leaderless, Min: leaseDuration},
		{Kind: NoSplitBrain},
		{Kind: OneLeader},
	},
})

// deadFor is how long the stuck-connection lesson's dead connections stay unnoticed: about what
// kubernetes#125530 saw on a dead HTTP/2 connection.
const deadFor = 30 * time.Second

var stuckConnection = plain(Scenario{
	Name:     "stuck-connection",
	Length:   42 * time.Second,
	Title:    i18n.Text{En: "A renewal stuck on a dead connection", Zh: "卡在死连接上的续约"},
	Summary:  i18n.Text{En: "The leader's connection dies without a word; an elector that waits for its renewal believes it leads until the client finds the connection dead, long past its lease.", Zh: "领导者的连接悄无声息地断了；一个等待续约结果的选举器会一直以为自己在领导，直到客户端发现连接已死，那时早已超过它的租约。"},
	Teaches:  i18n.Text{En: "A renew deadline protects only if nothing outlives it: cut every renewal at the deadline, and give the election's client a timeout.", Zh: "续约期限只有在没有任何东西能越过它时才起保护作用：在期限处截断每次续约，并给选举用的客户端设置超时。"},
	Incident: "https://github.com/kubernetes/kubernetes/issues/125530",
	Cast: []Member{
		{Identity: "alice", WaitsOutRenewals: true, RequestTimeout: candidate.NoTimeout},
		{Identity: "bob", Joins: 700 * time.Millisecond},
	},
	Steps: []Step{
		aliceLeadsBobFollows(),
		{
			Say: i18n.Text{
				En: "alice runs an old elector: like client-go before Kubernetes 1.12, it waits for each renewal to return before it looks at its renew deadline, and her client sets no timeout, as the leader-election client of openshift/library-go set none before its PR 636. bob runs today's client-go: a renewal is cut off at the renew deadline, and every request times out.",
				Zh: "alice 运行的是一个旧的选举器：和 Kubernetes 1.12 之前的 client-go 一样，它要等每次续约返回后才查看续约期限；她的客户端也没有设置超时，正如 openshift/library-go 的选举客户端在其 PR 636 之前那样。bob 运行的是如今的 client-go：续约会在续约期限处被截断，每个请求都有超时。",
			},
		},
		{
			Say: i18n.Text{
				En: "alice's connection to the API server dies without a word: the node at its other end lost power, so no reset ever comes. Her next renewal goes out on it and hangs, and her client will find the connection dead only 30 s from now (an HTTP/2 health check, or TCP giving up). Her renew deadline passes unnoticed: she waits, believing she leads. bob's connection is sound: he waits out her lease and takes it.",
				Zh: "alice 与 API 服务器的连接悄无声息地断了：连接另一端的节点断了电，所以永远不会有重置。她的下一次续约在这条连接上发出后就挂起了，而她的客户端要到 30 秒后才会发现连接已死（HTTP/2 健康检查，或 TCP 放弃重传）。她的续约期限悄悄过去：她还在等待，仍以为自己在领导。bob 的连接完好：他等她的租约到期后接管。",
			},
			Do:      func(a *Actions) { a.Member("alice").KillConnection(deadFor) },
			Until:   func(w *World) bool { return someoneElseHolds(w, "alice") },
			Waiting: i18n.Text{En: "until bob holds the lease", Zh: "等待 bob 持有租约"},
		},
		{
			Say: i18n.Text{
				En: "Two leaders: the record names bob, and alice, her renewal still hanging, believes she leads. When her client finds the connection dead, the renewal fails; she reads the record on a new connection, sees bob, and, her renew deadline long past, stops leading: some 30 s after her last renewal, long after her lease ran out by bob's count.",
				Zh: "两个领导者：记录写的是 bob，而续约仍挂起的 alice 以为自己在领导。等她的客户端发现连接已死，续约失败；她在新连接上读取记录，看到 bob，而她的续约期限早已过去，于是停止领导：距她最后一次续约大约 30 秒，远在按 bob 的计算她的租约到期之后。",
			},
			Until:   func(w *World) bool { return !w.Leads("alice") && len(w.Overlaps()) > 0 },
			Waiting: i18n.Text{En: "until alice's client finds its connection dead", Zh: "等待 alice 的客户端发现连接已死"},
		},
		{
			Say: i18n.Text{
				En: "Now bob's connection dies the same way. His renewal is cut off at his renew deadline, 7 s into its round, and he stops leading before his lease runs out: no second split brain. His connection stays dead for his next tries, each of them cut off by its timeout, until his client finds it dead; alice takes the lease.",
				Zh: "现在 bob 的连接也以同样的方式断了。他的续约在续约期限处被截断，即这一轮开始后 7 秒，他在租约到期之前就停止了领导：没有第二次脑裂。他之后的尝试仍在这条死连接上，每次都被超时截断，直到他的客户端发现连接已死；alice 拿下了租约。",
			},
			Do:      func(a *Actions) { a.Member("bob").KillConnection(deadFor) },
			Until:   func(w *World) bool { return someoneElseHolds(w, "bob") },
			Waiting: i18n.Text{En: "until alice takes the lease", Zh: "等待 alice 接管租约"},
		},
		{
			Say: i18n.Text{
				En: "Let nothing outlive the renew deadline. client-go has cut a renewal off at the renew deadline since 1.12 and has handed the round's deadline down to the request since 1.18, and its NewFromKubeconfig gives the election's client a timeout of half the renew deadline. A dead connection still holds up a follower, whose tries have no deadline but the client's timeout: in kubernetes#125530 a controller manager's election requests hung about 30 s on a dead HTTP/2 connection, and the new leader came later than the lease.",
				Zh: "不要让任何东西越过续约期限。client-go 自 1.12 起就在续约期限处截断续约，自 1.18 起把这一轮的期限传给请求本身，它的 NewFromKubeconfig 还给选举用的客户端设置了续约期限一半的超时。死连接仍会拖住跟随者，因为它的尝试除了客户端超时之外没有期限：在 kubernetes#125530 中，一个控制器管理器的选举请求在一条死掉的 HTTP/2 连接上挂起了大约 30 秒，新的领导者比租约到期来得更晚。",
			},
		},
	},
	Claims: []Claim{
		// Over 11 s: she believes 30 s after the kill; bob takes over at most 18.8 s after her
		// last renewal, which came before it.
		{Kind: SplitBrain, Who: "alice", Cause: judge.CauseDeadConnection, Min: 8 * time.Second},
		{Kind: StepsDownFirst, Who: "bob"},
		{Kind: Transitions, N: 2},
	},
})
