package judge

import "github.com/leaselab/leaselab/wasm/said"

// Said is a sentence of the judge (wasm/said): Text fields and the test kit carry its English;
// the screens put it in their reader's language.
type Said = said.Said

var (
	say    = said.Say
	same   = said.Same
	concat = said.Concat
)

// KeyList is the key of a list of identities ("a, b and c"; the arguments are the identities).
var KeyList = said.RegisterList("judge.list", names)

// english holds the judge's sentences, but for those of an overlap's cause (causeSentences, beside
// the causes in overlap.go).
var english = said.Register(map[string]said.Text{
	"judge.acquired": {En: "%s acquired %s (transitions %d)", Zh: "%s 获得了 %s（转换次数 %d）"},

	"judge.wroteAgain": {En: "%s wrote %s again after its hold had expired (transitions %d)", Zh: "%s 在持有过期之后再次写入了 %s（转换次数 %d）"},

	"judge.acquiredAfter": {En: "%s acquired %s after %s's hold expired (transitions %d)", Zh: "%[3]s 的持有过期后，%[1]s 获得了 %[2]s（转换次数 %[4]d）"},

	"judge.aCandidate": {En: "a candidate", Zh: "一个候选者"},

	"judge.splitNobody": {En: "split brain: %s believes it leads %s while the record names nobody", Zh: "脑裂：%s 认为自己是 %s 的领导者，而记录中没有持有者"},

	"judge.pastLease": {En: "%s went on leading %s for %s after its lease ran out at %s by the others' count: anyone could have taken it meanwhile", Zh: "按其他候选者的计算，%[1]s 的租约已在 %[4]s 到期，它却继续领导 %[2]s 达 %[3]s：这期间任何候选者都可能获取租约"},

	"judge.pastLeaseAdvice": {En: "client-go's leader stops only at its renew deadline, counted on its own clock from the start of a renew round: keep leaseDuration above renewDeadline plus a retry period, and guard side effects with a fencing token", Zh: "client-go 的领导者只在续约截止时停止，而截止时间按它自己的时钟、从一轮续约开始时计算：让 leaseDuration 大于 renewDeadline 加一个重试周期，并用隔离令牌（fencing token）保护副作用"},

	"judge.splitDeleted": {En: "split brain: %s believes it leads %s, which was deleted", Zh: "脑裂：%s 认为自己是 %s 的领导者，而该租约已被删除"},

	"judge.splitHolder": {En: "split brain: %s believes it leads %s while %s holds it", Zh: "脑裂：%s 认为自己是 %s 的领导者，而持有者是 %s"},

	"judge.released": {En: "%s released %s", Zh: "%s 释放了 %s"},

	"judge.tookOver": {En: "%s took %s over from %s", Zh: "%[1]s 从 %[3]s 手中接管了 %[2]s"},

	"judge.tookOverTransitions": {En: "%s took %s over from %s (transitions %d)", Zh: "%[1]s 从 %[3]s 手中接管了 %[2]s（转换次数 %[4]d）"},

	"judge.expired": {En: "%s's hold on %s expired: not renewed in time", Zh: "%s 对 %s 的持有已过期：未及时续约"},

	"judge.steppedDown": {En: "%s stepped down from %s: the election controller prefers %s", Zh: "%s 让出了 %s：选举控制器更倾向于 %s"},

	"judge.deleted": {En: "%s was deleted while %s held it", Zh: "%s 在由 %s 持有时被删除"},

	"judge.endHeld": {En: "still held", Zh: "仍被持有"},

	"judge.endReleased": {En: "released", Zh: "已释放"},

	"judge.endTakeover": {En: "taken over by %s", Zh: "被 %s 接管"},

	"judge.endSteppedDown": {En: "stepped down for %s", Zh: "为 %s 让位"},

	"judge.endExpiredLate": {En: "expired, then %s wrote it again late", Zh: "已过期，之后 %s 迟迟再次写入"},

	"judge.endExpiredTook": {En: "expired, then %s took it", Zh: "已过期，之后被 %s 获得"},

	"judge.endExpired": {En: "expired", Zh: "已过期"},

	"judge.endDeleted": {En: "lease deleted", Zh: "租约被删除"},

	"judge.roleLeader": {En: "%s leads %s, as it sees it", Zh: "%s 认为自己是 %s 的领导者"},

	"judge.roleFollower": {En: "%s follows on %s", Zh: "%s 是 %s 的跟随者"},

	"judge.rolePaused": {En: "%s was paused (a candidate of %s)", Zh: "%s 被暂停（%s 的候选者）"},

	"judge.rolePartitioned": {En: "%s was cut off from the API server (a candidate of %s)", Zh: "%s 与 API 服务器断开了联系（%s 的候选者）"},

	"judge.roleStopped": {En: "%s stopped (a candidate of %s)", Zh: "%s 已停止（%s 的候选者）"},

	"judge.roleOther": {En: "%s is %s (a candidate of %s)", Zh: "%s 处于 %s 状态（%s 的候选者）"},

	"judge.believed1": {En: "%s believed it led %s", Zh: "%s 认为自己是 %s 的领导者"},

	"judge.believed2": {En: "%s and %s both believed they led %s", Zh: "%s 和 %s 都认为自己是 %s 的领导者"},

	"judge.believedAll": {En: "%s all believed they led %s", Zh: "%s 都认为自己是 %s 的领导者"},

	"judge.forSoFar": {En: " for %s so far (since %s)", Zh: "，至今已持续 %s（自 %s 起）"},

	"judge.forSpan": {En: " for %s (%s to %s)", Zh: "，持续了 %s（%s 至 %s）"},

	"judge.joinedAt": {En: ", %s only from %s", Zh: "，其中 %s 从 %s 起才这样认为"},

	"judge.afterReleasing": {En: " after releasing it", Zh: "，而此前它已释放了租约"},

	"judge.afterReleased": {En: " after %s released it", Zh: "，而此前 %s 已释放了租约"},

	"judge.afterDeleted": {En: " after the lease was deleted", Zh: "，而此时租约已被删除"},

	"judge.whileRecordNamed": {En: " while the record named %s", Zh: "，而记录中的持有者是 %s"},

	"judge.secs": {En: "%s s", Zh: "%s 秒"},

	"judge.minSecs": {En: "%d min %d s", Zh: "%d 分 %d 秒"},

	"judge.nobody": {En: "nobody", Zh: "无人"},

	"judge.missedRecord": {En: "the record change", Zh: "记录的变化"},

	"judge.missedTakeover": {En: "%s take over", Zh: "%s 的接管"},

	"judge.because": {En: ": %s.", Zh: "：%s。"},

	"judge.scaledLength": {En: "%s of its candidates' clock (%s of the server's)", Zh: "候选者时钟上的 %s（服务器时钟上的 %s）"},

	"judge.alsoWhy": {En: "; and %s", Zh: "；而且%s"},
})
