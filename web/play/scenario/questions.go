package scenario

import (
	"time"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// The questions the lessons ask before a step runs. Each states, as claims, how the run shows
// its answer, and TestEveryLessonKeepsItsClaims checks them like the lesson's own.

var askCrash = &Question{
	Ask: i18n.Text{
		En: "alice, the leader, is about to be killed (kill -9): nothing will release her lease. When will bob or carol lead?",
		Zh: "领导者 alice 即将被杀死（kill -9）：没有任何东西会释放她的租约。bob 或 carol 什么时候会成为领导者？",
	},
	Choices: []i18n.Text{
		{En: "At once: the server notices alice is gone", Zh: "立刻：服务器会发现 alice 已经不在了"},
		{En: "10 to 18.8 s after alice's last renewal", Zh: "在 alice 最后一次续约后的 10 到 18.8 秒之间"},
		{En: "Never, until someone deletes the Lease", Zh: "永远不会，除非有人删除这个租约"},
	},
	Answer: 1,
	Why: i18n.Text{
		En: "Nothing tells the followers that alice died: the API server keeps no sessions. Each waits leaseDuration (10 s) from when it last saw the record change, then takes the lease at its next try. Tries are up to 4.4 s apart, and a follower may have seen alice's last renewal up to 4.4 s late.",
		Zh: "没有任何东西告诉跟随者 alice 已经死了：API 服务器不保留会话。每个跟随者从最后一次看到记录变化起等待 leaseDuration（10 秒），再在下一次尝试时获取租约。两次尝试最多相隔 4.4 秒，而跟随者看到 alice 最后一次续约也可能晚了最多 4.4 秒。",
	},
	Shown: []Claim{{Kind: TakeoverAfterRenewal, Who: "alice", Min: leaseDuration, Max: leaseDuration + 2*maxTry}},
}

var askRelease = &Question{
	Ask: i18n.Text{
		En: "alice is about to shut down cleanly, with ReleaseOnCancel. How long will the lease go without a leader?",
		Zh: "alice 即将以 ReleaseOnCancel 正常退出。租约会有多长时间没有领导者？",
	},
	Choices: []i18n.Text{
		{En: "A whole leaseDuration (10 s), as after a crash", Zh: "整整一个 leaseDuration（10 秒），和崩溃时一样"},
		{En: "Until a follower's next try: at most about 4.4 s", Zh: "直到某个跟随者的下一次尝试：最多约 4.4 秒"},
		{En: "No time at all: alice hands the lease to bob", Zh: "一点也不会：alice 把租约直接交给 bob"},
	},
	Answer: 1,
	Why: i18n.Text{
		En: "Releasing writes an empty holderIdentity, so the lease is free at once, and a follower takes it at its next try, a retry period (2 s) with jitter after its last. client-go never hands a lease to a chosen successor.",
		Zh: "释放会写入空的 holderIdentity，租约立刻空闲，跟随者在下一次尝试时获取它，距上一次尝试一个重试周期（2 秒）加抖动。client-go 从不把租约交给指定的继任者。",
	},
	Shown: []Claim{{Kind: TakeoverAfterStep, Who: "alice", N: 3, Max: maxTry + maxTry/4}},
}

var askWake = &Question{
	Ask: i18n.Text{
		En: "alice wakes from her pause, and the record names another holder. What does she do?",
		Zh: "alice 从停顿中醒来，而记录写着另一个持有者。她会怎么做？",
	},
	Choices: []i18n.Text{
		{En: "She sees the new holder and stops leading at once", Zh: "她看到新的持有者，立刻停止领导"},
		{En: "She goes on leading, her renewals failing, until her renew deadline passes", Zh: "她继续领导，续约不断失败，直到续约期限过去"},
		{En: "She takes the lease back: she held it first", Zh: "她把租约抢回来：是她先持有的"},
	},
	Answer: 1,
	Why: i18n.Text{
		En: "A leader reads the lease only to renew it, and retries a failed renewal until its round's renew deadline (7 s) passes. Until then she acts as the leader, beside the real one: only fencing stops her writes.",
		Zh: "领导者只在续约时读取租约，续约失败就一直重试，直到这一轮的续约期限（7 秒）过去。在此之前，她和真正的领导者并存，一直以领导者身份行事：只有防护（fencing）能挡住她的写入。",
	},
	Shown: []Claim{{Kind: SplitBrain, Who: "alice", Cause: judge.CausePaused}},
}

var askPartition = &Question{
	Ask: i18n.Text{
		En: "alice's network is about to be cut while she leads. Will two candidates believe they lead at the same moment?",
		Zh: "alice 在领导期间即将断网。会不会有两个候选者在同一时刻都认为自己是领导者？",
	},
	Choices: []i18n.Text{
		{En: "Yes: bob or carol takes over while alice still believes she leads", Zh: "会：bob 或 carol 接管时，alice 仍认为自己是领导者"},
		{En: "No: alice stops leading before anyone may take the lease", Zh: "不会：alice 在任何人可以接管之前就停止领导"},
	},
	Answer: 1,
	Why: i18n.Text{
		En: "alice gives up a retry period plus her renew deadline (2 + 7 = 9 s) after her last renewal; the others wait leaseDuration (10 s) from when they saw that renewal, which was no earlier. That second between is the margin the timings keep.",
		Zh: "alice 在最后一次续约后过了一个重试周期加续约期限（2 + 7 = 9 秒）就放弃；其他候选者从看到那次续约起等待 leaseDuration（10 秒），而它们看到的时刻不会更早。中间这一秒就是这组时间参数留出的余量。",
	},
	Shown: []Claim{{Kind: StepsDownFirst, Who: "alice"}, {Kind: NoSplitBrain}},
}

var askSlow = &Question{
	Ask: i18n.Text{
		En: "Every request of alice's is about to take 8 s to come back, and her renewDeadline is 7 s. Her renewals still reach the server. Does she stay the leader?",
		Zh: "alice 的每个请求即将需要 8 秒才能返回，而她的 renewDeadline 是 7 秒。她的续约仍会到达服务器。她还能继续当领导者吗？",
	},
	Choices: []i18n.Text{
		{En: "Yes: her renewals still land", Zh: "能：她的续约仍然写入成功"},
		{En: "No: she gives up at her renew deadline, though her last renewal landed", Zh: "不能：她在续约期限到时放弃，尽管最后一次续约已经写入"},
	},
	Answer: 1,
	Why: i18n.Text{
		En: "What counts for a leader is an answer within renewDeadline. Her PUT lands 4 s after she sends it, but its answer comes 4 s later, after her deadline: she gives up, and the others take the lease once it runs out.",
		Zh: "对领导者来说，要紧的是在 renewDeadline 之内得到答复。她的 PUT 发出 4 秒后写入成功，但答复还要再过 4 秒才到，已经过了期限：她放弃了，租约过期后由其他候选者接管。",
	},
	Shown: []Claim{{Kind: StepsDownFirst, Who: "alice"}, {Kind: HandedOver, Who: "alice"}},
}

var askSkew = &Question{
	Ask: i18n.Text{
		En: "bob's clock is about to jump 30 s ahead. By renewTime + leaseDuration on his clock, alice's lease will have expired 20 s ago. Does bob take it?",
		Zh: "bob 的时钟即将向前跳 30 秒。按他的时钟计算 renewTime + leaseDuration，alice 的租约已经在 20 秒前过期。bob 会接管吗？",
	},
	Choices: []i18n.Text{
		{En: "Yes, at his next try", Zh: "会，在他的下一次尝试时"},
		{En: "No: he counts from when he saw the record change, on his own clock", Zh: "不会：他从自己看到记录变化的时刻起，用自己的时钟计时"},
	},
	Answer: 1,
	Why: i18n.Text{
		En: "client-go never compares renewTime with its own clock. A follower counts leaseDuration from when it observed the record change, on its own clock, so a constant offset cancels out.",
		Zh: "client-go 从不拿 renewTime 与自己的时钟比较。跟随者从观察到记录变化的时刻起，用自己的时钟计算 leaseDuration，所以固定的偏差会被抵消。",
	},
	Shown: []Claim{{Kind: TakeoverAfterStep, Who: "alice", N: 2, Min: 2 * leaseDuration}},
}

var askFenced = &Question{
	Ask: i18n.Text{
		En: "bob wakes, still believing he leads, and his work writes to the ledger, which now takes a fencing token. alice holds the lease now, with token 2. What becomes of bob's writes?",
		Zh: "bob 醒来，仍认为自己是领导者，他的工作继续写账本，而账本现在要求防护令牌。现在持有租约的是 alice，令牌为 2。bob 的写入会怎样？",
	},
	Choices: []i18n.Text{
		{En: "They land, as alice's did when she woke", Zh: "写入成功，就像 alice 醒来时那样"},
		{En: "Each is refused: the ledger holds a newer token than his 1", Zh: "每次都被拒绝：账本里的令牌比他的 1 更新"},
		{En: "None is sent: the API server stops a stale leader", Zh: "一次也发不出去：API 服务器会拦住过期的领导者"},
	},
	Answer: 1,
	Why: i18n.Text{
		En: "The API server takes any write made over the latest copy, from anyone. The ledger refuses a token older than the newest it has seen, so a stale leader cannot write once its successor has: that check is fencing.",
		Zh: "API 服务器接受任何基于最新副本的写入，不管是谁写的。账本拒绝比它见过的最新令牌更旧的令牌，所以继任者一旦写过，过期的领导者就再也写不进去：这项检查就是防护（fencing）。",
	},
	Shown: []Claim{{Kind: StaleWritesRefused, Who: "bob", N: 1}},
}

var askOutage = &Question{
	Ask: i18n.Text{
		En: "The API server is about to stop answering everyone. alice, the leader, is healthy. What happens?",
		Zh: "API 服务器即将对所有人停止响应。领导者 alice 本身一切正常。会发生什么？",
	},
	Choices: []i18n.Text{
		{En: "alice goes on leading: nothing is wrong with her", Zh: "alice 继续领导：她自己没有任何问题"},
		{En: "alice stops leading at her renew deadline, and nobody leads until the server is back", Zh: "alice 在续约期限到时停止领导，服务器恢复前没有任何人领导"},
		{En: "bob takes over once alice's lease runs out", Zh: "alice 的租约过期后由 bob 接管"},
	},
	Answer: 1,
	Why: i18n.Text{
		En: "A leader that cannot renew within renewDeadline stops, whatever the reason, and nobody can take a lease they cannot read or write. An outage of the API server leaves every election without a leader.",
		Zh: "无法在 renewDeadline 内续约的领导者都会停下，不管原因是什么；而读不到也写不了租约，就没有人能接管。API 服务器宕机会让每一个选举都没有领导者。",
	},
	Shown: []Claim{{Kind: StepsDownAfterStep, Who: "alice", N: 2, Min: renewDeadline - time.Second, Max: retryPeriod + renewDeadline + time.Second}, {Kind: Leaderless, Min: leaseDuration}},
}

var askRestart = &Question{
	Ask: i18n.Text{
		En: "Every replica was killed, and the record's renewTime is over 20 s old, twice leaseDuration. Two new replicas, dave and erin, are about to start. When does one of them lead?",
		Zh: "所有副本都被杀死了，记录中的 renewTime 已超过 20 秒，是 leaseDuration 的两倍。两个新副本 dave 和 erin 即将启动。它们中的一个什么时候成为领导者？",
	},
	Choices: []i18n.Text{
		{En: "At once: the record has run out", Zh: "立刻：记录早已过期"},
		{En: "A whole leaseDuration after they first read it", Zh: "在它们第一次读到记录之后，再等整整一个 leaseDuration"},
	},
	Answer: 1,
	Why: i18n.Text{
		En: "A newcomer cannot trust renewTime against its own clock, so it counts leaseDuration from its own first look at the record, however old the record is.",
		Zh: "新来的候选者不能拿 renewTime 与自己的时钟比较，所以无论记录有多旧，它都从自己第一次看到记录时开始计算 leaseDuration。",
	},
	Shown: []Claim{{Kind: TakeoverAfterStep, Who: "alice", N: 3, Min: leaseDuration, Max: leaseDuration + maxTry + time.Second}},
}
