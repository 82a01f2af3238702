package scenario

import (
	"time"

	"github.com/leaselab/leaselab/templates/i18n"
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

// leaderelectionDocs is client-go's tools/leaderelection package documentation, which says
// that the package gives no fencing.
const leaderelectionDocs = "https://pkg.go.dev/k8s.io/client-go/tools/leaderelection"

var fencing = plain(Scenario{
	Name:     "fencing",
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
				return stepsDownAfter(w, "alice", Effect.Damage) && len(w.Overlaps()) > 0
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
			Do: func(a *Actions) { a.Member("bob").Resume() },
			Until: func(w *World) bool {
				return stepsDownAfter(w, "bob", Effect.Refused) && len(w.Overlaps()) > 1
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
