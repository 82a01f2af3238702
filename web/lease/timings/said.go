package timings

import "github.com/leaselab/leaselab/wasm/said"

// Said is a sentence of the calculator (wasm/said): the command and the Message, Reason, Label,
// Value and Detail fields carry its English; a screen puts it in its reader's language.
type Said = said.Said

var say = said.Say

// same is s, which reads the same in every language (a figure).
func same(s string) Said { return Said{Key: KeySame, Args: []any{s}} }

// KeySame is the key of a sentence that reads the same in every language: its one argument.
const KeySame = "timings.same"

// english holds the calculator's sentences.
var english = said.Register(map[string]said.Text{
	KeySame: {En: "%s", Zh: "%s"},

	"timings.leads": {En: "A leader that cannot reach the API server keeps leading until its renew deadline passes: up to retryPeriod + renewDeadline = %s after its last renewal.", Zh: "无法连接 API 服务器的领导者会一直领导到续约期限过去：最多在最后一次续约之后 retryPeriod + renewDeadline = %s。"},

	"timings.twoLeaders": {En: "A leader cut off from the API server may still be leading when another candidate takes the lease.", Zh: "与 API 服务器断开的领导者，在另一个候选者获得租约时可能仍在领导。"},

	"timings.twoLeadersWhy": {En: "%s A follower that saw that renewal at once may take the lease %s after it (leaseDurationSeconds %d), so both may lead for up to %s. client-go only checks that leaseDuration exceeds renewDeadline; keep leaseDuration above renewDeadline + retryPeriod, with room to spare.", Zh: "%s立即看到那次续约的跟随者可能在其后 %s 获得租约（leaseDurationSeconds %d），所以两者可能同时领导长达 %s。client-go 只检查 leaseDuration 是否大于 renewDeadline；请让 leaseDuration 大于 renewDeadline + retryPeriod，并留有余量。"},

	"timings.thinMargin": {En: "A leader cut off from the API server stops only %s before another candidate may take the lease.", Zh: "与 API 服务器断开的领导者，只比另一个候选者可能获得租约的时刻早 %s 停止。"},

	"timings.thinMarginWhy": {En: "%s A follower may take the lease %s after that renewal. A garbage-collection pause, a slow last response or a follower's clock running %s fast eats a margin that thin; the Kubernetes components keep %s.", Zh: "%s跟随者可能在那次续约之后 %s 获得租约。一次垃圾回收停顿、一个缓慢的最后响应，或跟随者的时钟快了 %s，都会吃掉这么薄的余量；Kubernetes 组件保留 %s。"},

	"timings.notWhole": {En: "leaseDuration %s is written to the Lease as leaseDurationSeconds %d: the lease lasts %s, not %s.", Zh: "leaseDuration %s 被写入 Lease 为 leaseDurationSeconds %d：租约持续 %s，而不是 %s。"},

	"timings.notWholeWhy": {En: "client-go writes int32(leaseDuration / time.Second), dropping the fraction, and every candidate, the leader included, counts the lease from that field.", Zh: "client-go 写入 int32(leaseDuration / time.Second)，舍去小数部分，而每个候选者（包括领导者）都按这个字段计算租约。"},

	"timings.fewAttempts": {En: "Only %d renew attempts fit in the renew deadline.", Zh: "续约期限内只能容纳 %d 次续约尝试。"},

	"timings.fewAttemptsWhy": {En: "A leader whose renewal fails tries again every retryPeriod (%s) until renewDeadline (%s) has passed, so %d failed requests in a row, as a restarting API server or a slow etcd gives, end its leadership. Make renewDeadline more than %d × retryPeriod.", Zh: "续约失败的领导者每隔 retryPeriod（%s）重试一次，直到 renewDeadline（%s）过去，所以连续 %d 次失败的请求（重启中的 API 服务器或缓慢的 etcd 就会造成）便会结束它的领导。请让 renewDeadline 大于 %d × retryPeriod。"},

	"timings.shortDeadline": {En: "A leader stops leading after only %s of failed renewals.", Zh: "续约失败仅 %s 后，领导者就会停止领导。"},

	"timings.shortDeadlineWhy": {En: "API-server and etcd hiccups (a restart, an etcd leader election, a long compaction) often last a few seconds; each one then costs the lease and restarts the work the leader was doing. The Kubernetes components allow %s.", Zh: "API 服务器和 etcd 的小故障（一次重启、一次 etcd 领导者选举、一次漫长的压缩）常常持续几秒；每一次都会因此失去租约，并让领导者正在做的工作从头开始。Kubernetes 组件允许 %s。"},

	"timings.busy": {En: "Every candidate calls the API server more than once a second.", Zh: "每个候选者每秒调用 API 服务器不止一次。"},

	"timings.busyWhy": {En: "The leader writes the Lease every retryPeriod (%s: %s writes a second, each one an etcd write and an event to every watcher) and each follower reads it every %s to %s. Across every component that elects a leader this loads the API server and etcd for little gain; the Kubernetes components retry every %s.", Zh: "领导者每个 retryPeriod（%s：每秒写入 %s 次，每次都是一次 etcd 写入和发给每个监视者的一个事件）写一次 Lease，每个跟随者每 %s 到 %s 读一次。在所有进行领导者选举的组件中，这会给 API 服务器和 etcd 带来负载却收效甚微；Kubernetes 组件每 %s 重试一次。"},

	"timings.slowFailover": {En: "After a crash, nobody may lead for up to %s.", Zh: "崩溃之后，可能长达 %s 没有领导者。"},

	"timings.slowFailoverWhy": {En: "Followers wait leaseDurationSeconds (%d) after they last saw the lease change before they take it: a long lease rides out a slow API server, but a crashed leader's work waits as long. Release the lease on a clean shutdown (ReleaseOnCancel) so that a planned restart fails over within %s.", Zh: "跟随者在最后一次看到租约变化之后要等待 leaseDurationSeconds（%d）才会获取它：长租约能扛过缓慢的 API 服务器，但崩溃的领导者的工作也要等同样久。请在正常关闭时释放租约（ReleaseOnCancel），让计划中的重启在 %s 内完成故障转移。"},

	"timings.toSpare": {En: "%s to spare", Zh: "富余 %s"},

	"timings.clocks": {En: "A follower's clock may run %s fast against the leader's before the two overlap.", Zh: "跟随者的时钟可以比领导者的快 %s，两者才会重叠。"},

	"timings.noMargin": {En: "none: up to %s of two leaders", Zh: "没有：最多 %s 的双领导者"},

	"timings.clocksOverlap": {En: "They overlap even when every clock keeps perfect time.", Zh: "即使每个时钟都完全准确，它们也会重叠。"},

	"timings.crashFailover": {En: "failover after a crash", Zh: "崩溃后的故障转移"},

	"timings.crashFailoverHow": {En: "A follower takes the lease %s after it last saw it change, at its next try (tries come %s to %s apart). It saw the leader's last renewal up to %s late, and the leader crashed up to %s after that renewal.", Zh: "跟随者在最后一次看到租约变化 %s 之后，于下一次尝试时获得租约（两次尝试相隔 %s 到 %s）。它看到领导者的最后一次续约最多晚了 %s，而领导者在那次续约之后最多 %s 崩溃。"},

	"timings.releaseFailover": {En: "failover after a release", Zh: "释放后的故障转移"},

	"timings.releaseFailoverHow": {En: "With ReleaseOnCancel the leader empties holderIdentity as it stops; a follower takes the lease at its next try, without waiting for it to expire.", Zh: "启用 ReleaseOnCancel 时，领导者在停止时清空 holderIdentity；跟随者在下一次尝试时获得租约，无需等它过期。"},

	"timings.renewAttempts": {En: "renew attempts in the renew deadline", Zh: "续约期限内的续约尝试次数"},

	"timings.renewAttemptsHow": {En: "When a renewal fails the leader tries again every %s until the round's deadline, %s after it began: at %s s, when each request fails fast. A request that hangs takes the rest of the deadline with it.", Zh: "续约失败时，领导者每 %s 重试一次，直到本轮的截止时间，即开始后 %s：当每个请求都快速失败时，分别在第 %s s。一个挂起的请求会把剩余的期限一并耗掉。"},

	"timings.outage": {En: "API-server outage the leader rides out", Zh: "领导者能扛过的 API 服务器中断"},

	"timings.upTo": {En: "up to %s", Zh: "最多 %s"},

	"timings.outageHow": {En: "Its last try comes %s after its last renewal (an outage of %s is ridden out whenever it begins). If that try fails too, it stops leading %s after the last renewal (retryPeriod + renewDeadline); a follower takes over only once the lease has expired by its own clock, %s after it last saw it change.", Zh: "它的最后一次尝试在最后一次续约之后 %s（无论何时开始，%s 的中断都能扛过）。如果那次尝试也失败，它在最后一次续约之后 %s 停止领导（retryPeriod + renewDeadline）；跟随者只有在租约按它自己的时钟过期之后才会接管，即在它最后一次看到租约变化之后 %s。"},

	"timings.margin": {En: "cut-off leader stops before a takeover", Zh: "断开的领导者先于接管停止"},

	"timings.marginHow": {En: "A leader that cannot renew leads up to %s after its last renewal; a follower may take the lease %s after it. %s", Zh: "无法续约的领导者在最后一次续约之后最多领导 %s；跟随者可能在其后 %s 获得租约。%s"},

	"timings.writtenToLease": {En: "written to the Lease", Zh: "写入 Lease 的值"},

	"timings.writtenToLeaseHow": {En: "client-go writes whole seconds (int32(leaseDuration / time.Second)); every candidate counts the lease from this field.", Zh: "client-go 写入整数秒（int32(leaseDuration / time.Second)）；每个候选者都按这个字段计算租约。"},

	"timings.load": {En: "API requests per candidate", Zh: "每个候选者的 API 请求"},

	"timings.loadValue": {En: "leader %s/s, follower %s/s", Zh: "领导者 %s/s，跟随者 %s/s"},

	"timings.loadHow": {En: "The leader writes the Lease once per retryPeriod; a follower reads it once per try, on average every 1.6 × retryPeriod.", Zh: "领导者每个 retryPeriod 写一次 Lease；跟随者每次尝试读一次，平均每 1.6 × retryPeriod 一次。"},

	"timings.span": {En: "%s to %s", Zh: "%s 至 %s"},
})
