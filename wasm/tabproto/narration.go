package tabproto

// narration holds the candidate's sentences, English then Chinese: its decision log and, from
// faultWords, its faults. The Chinese follows the Kubernetes Chinese documentation's terms: 租约 (Lease),
// 持有者 (holder), 候选者 (candidate), 领导者 (leader), 续约 (renew), 命名空间 (namespace).
// Arguments are strings (%s, or %[n]s where the languages order them differently).
var narration = withWords(map[string][2]string{
	// The decision log.
	"log.created":             {"the lease did not exist: created it and acquired it (transitions 0)", "租约不存在：已创建并获得它（转换次数 0）"},
	"log.acquired":            {"acquired (transitions %s)", "已获得租约（转换次数 %s）"},
	"log.renewed":             {"renewed", "已续约"},
	"log.pickedMe":            {"the server picked me: renewed the lease and lead", "服务器选中了我：已续约，我是领导者"},
	"log.stillMine":           {"the lease still names me: renewed it and lead again (transitions %s)", "租约仍写着我：已续约，再次成为领导者（转换次数 %s）"},
	"log.expiredWaitServer":   {"the lease has expired by my clock: waiting for the server to pick a leader%s", "按我的时钟租约已过期：等待服务器选出领导者%s"},
	"log.noLeaseWaitServer":   {"no lease yet: waiting for the server to pick a leader%s", "还没有租约：等待服务器选出领导者%s"},
	"log.preferStepDown":      {"the server prefers %s: stepping down at my renew deadline%s", "服务器更倾向于 %s：我将在续约期限让位%s"},
	"log.preferNotRenewing":   {"the lease names me but the server prefers %s: not renewing it", "租约写着我，但服务器更倾向于 %s：不再续约"},
	"log.lostRace":            {"conflict: %s was faster", "冲突：%s 更快"},
	"log.free":                {"lease is free (no holder): trying to acquire", "租约空闲（没有持有者）：尝试获得"},
	"log.goingFor":            {"lease held by %s expired by my clock (no change seen for %s): trying to acquire", "按我的时钟，%s 持有的租约已过期（%s 内未见变化）：尝试获得"},
	"log.released":            {"released the lease: holder cleared and leaseDurationSeconds 1, so another candidate can take it at once", "已释放租约：清空持有者并把 leaseDurationSeconds 设为 1，其他候选者可以立即获得它"},
	"log.notReleased":         {"not releasing: the last record I saw names %s", "不释放：我最后看到的记录写的是 %s"},
	"log.gone":                {"nothing to release: the lease is gone", "无可释放：租约已不存在"},
	"log.noHolderWaitServer":  {"the lease has no holder: waiting for the server to pick a leader%s", "租约没有持有者：等待服务器选出领导者%s"},
	"log.heldWaitServer":      {"lease held by %s: waiting for the server to pick a leader%s", "租约由 %s 持有：等待服务器选出领导者%s"},
	"log.nowHeld":             {"lease now held by %s (expires in %s by my clock)%s", "租约现由 %s 持有（按我的时钟 %s 后过期）%s"},
	"log.heldWait":            {"lease held by %s, expires in %s by my clock%s: waiting", "租约由 %s 持有，按我的时钟 %s 后过期%s：等待"},
	"log.conflictCreate":      {"conflict: someone else created the lease first", "冲突：别人先创建了租约"},
	"log.conflictRenew":       {"renewal conflict: the lease changed since my last write; reading it again", "续约冲突：租约在我上次写入后已改变；重新读取"},
	"log.conflictCoordinated": {"conflict: the lease changed after I read it; reading it again%s", "冲突：我读取之后租约已改变；重新读取%s"},
	"log.conflict":            {"conflict: the lease changed after I read it; someone else was faster%s", "冲突：我读取之后租约已改变；别人更快%s"},
	"log.cutOff":              {"cut off by the renew deadline", "被续约期限打断"},
	"log.readFailed":          {"could not read the lease: %s%s", "无法读取租约：%s%s"},
	"log.createFailed":        {"could not create the lease: %s", "无法创建租约：%s"},
	"log.writeFailed":         {"could not write the lease: %s%s", "无法写入租约：%s%s"},
	"log.renewRefused":        {"renewal refused (%s); reading the lease again", "续约被拒绝（%s）；重新读取租约"},
	"log.releaseReadFailed":   {"could not release: could not read the lease: %s", "无法释放：无法读取租约：%s"},
	"log.releaseFailed":       {"could not release: %s", "无法释放：%s"},
	"log.candReadFailed":      {"could not read my LeaseCandidate: %s", "无法读取我的 LeaseCandidate：%s"},
	"log.candCreateFailed":    {"could not create my LeaseCandidate: %s", "无法创建我的 LeaseCandidate：%s"},
	"log.candRenewFailed":     {"could not renew my LeaseCandidate: %s", "无法续约我的 LeaseCandidate：%s"},
	"log.candCutOff":          {"no answer in time (cut off so that the elector is not held up)", "未及时应答（已打断，以免拖住选举）"},
	"log.declared":            {"declared my LeaseCandidate %s/%s for %s (binary %s, emulation %s)", "已为 %[3]s 声明我的 LeaseCandidate %[1]s/%[2]s（二进制版本 %[4]s，模拟版本 %[5]s）"},
	"log.candRenewed":         {"renewed my LeaseCandidate", "已续约我的 LeaseCandidate"},
	"log.pinged":              {"pinged by the server: answering (renewed my LeaseCandidate)", "收到服务器的 ping：应答（已续约我的 LeaseCandidate）"},
	"log.joined":              {"joined: competing for %s/%s as %s (lease %s, renew deadline %s, retry every %s)", "已加入：以 %[3]s 的身份竞争 %[1]s/%[2]s（租约时长 %[4]s，续约期限 %[5]s，每 %[6]s 重试）"},
	"log.coordinatedMode":     {"coordinated mode: binary %s, emulation %s; the server picks the leader among the candidates", "协调模式：二进制版本 %s，模拟版本 %s；由服务器在候选者中选出领导者"},
	"log.rejoined":            {"rejoined as a fresh candidate: nothing observed yet", "作为全新的候选者重新加入：尚未观察到任何东西"},
	"log.startingOver":        {"starting over as a fresh candidate, as a restarted process would: nothing observed yet", "像重启的进程一样，作为全新的候选者从头开始：尚未观察到任何东西"},
	"log.lost":                {"renew deadline passed without a successful renewal: stopped leading", "续约期限已过且未能续约：不再是领导者"},
	"log.crashed":             {"crashed: stopped", "崩溃：已停止"},
	"log.crashedLeading":      {"crashed while leading: stopped without releasing, so the others must wait for the lease to expire", "作为领导者时崩溃：未释放就停止了，其他候选者只能等租约过期"},
	"log.stopping":            {"stopping cleanly", "正常停止"},
	"log.nothingToRelease":    {"I was not leading, so there is nothing to release", "我不是领导者，无可释放"},
	"log.ignored.pause":       {"pause: nothing happened, I am stopped and have nothing to pause; rejoin (J) first", "暂停：什么也没发生，我已停止，无可暂停；请先重新加入（J）"},
	"log.ignored.release":     {"release: nothing happened, I am stopped and hold nothing to release; rejoin (J) first", "释放：什么也没发生，我已停止，没有可释放的；请先重新加入（J）"},
	"log.ignored.crash":       {"crash: nothing happened, I am stopped already; rejoin (J) first", "崩溃：什么也没发生，我已经停止了；请先重新加入（J）"},
	"log.ignored.rejoin":      {"rejoin: nothing happened, I am running already; rejoin starts a stopped candidate again", "重新加入：什么也没发生，我正在运行；重新加入只会重启已停止的候选者"},
	"log.leadNotePassed":      {"; my renew deadline has passed", "；我的续约期限已过"},
	"log.leadNote":            {"; I keep leading until my renew deadline, in %s", "；在续约期限（%s 后）之前我仍是领导者"},
	"log.recordAge":           {" (its renewTime says it expired %s ago, but I count from when I saw it change)", "（其 renewTime 表明它已在 %s 前过期，但我从看到它变化时开始计时）"},
	"log.nobody":              {"nobody", "无人"},
	"log.plain":               {"%s", "%s"},
	"log.timedOut":            {"no answer within the %s request timeout", "在 %s 的请求超时内没有应答"},
	"log.errPartitioned":      {"network unreachable (partitioned)", "网络不可达（网络分区）"},
	"log.errUnreachable":      {"the server could not be reached", "无法连接到服务器"},

	// What a network delay does at a candidate's timings (the slow-network fault's choices).
	"delay.cutOff": {"with Slow on, a renewal (one request) takes %s, not less than the %s renew deadline: it is cut off, the leader gives up leading and the others take the lease once it has run out; %s", "开启慢速网络时，一次续约（一个请求）需要 %s，不短于 %s 的续约期限：续约被打断，领导者放弃领导，其他候选者在租约耗尽后获得它；%s"},
	"delay.late":   {"with Slow on, a renewal (one request) takes %s, within the %s renew deadline: the leader keeps the lease, renewing it late; %s", "开启慢速网络时，一次续约（一个请求）需要 %s，在 %s 的续约期限之内：领导者保住租约，只是续约迟了；%s"},
	"delay.take":   {"taking a free lease (a read and a write) takes %s", "获得空闲的租约（一次读取和一次写入）需要 %s"},

	// Why a candidate's configuration is refused.
	"config.identity":          {"identity must not be empty: it is what the lease records as its holder", "身份不能为空：租约把它记录为持有者"},
	"config.leaseName":         {"lease name must not be empty", "租约名称不能为空"},
	"config.namespace":         {"namespace must not be empty", "命名空间不能为空"},
	"config.number":            {"%s must be a number of seconds, not %s", "%s 必须是秒数，而不是 %s"},
	"config.bool":              {"%s must be true or false, not %s", "%s 必须是 true 或 false，而不是 %s"},
	"config.positive":          {"%s must be greater than zero", "%s 必须大于零"},
	"config.whole":             {"leaseDuration (%s) must be a whole number of seconds: the lease stores leaseDurationSeconds", "leaseDuration（%s）必须是整数秒：租约存储的是 leaseDurationSeconds"},
	"config.leaseOverDeadline": {"leaseDuration (%s) must be greater than renewDeadline (%s), as client-go's NewLeaderElector checks. That alone guarantees nothing: a leader gives up at the end of a renew round, which starts up to a retry period after its last renewal, so the others may take the lease while it still leads unless leaseDuration also covers that wait", "leaseDuration（%s）必须大于 renewDeadline（%s），这是 client-go 的 NewLeaderElector 所检查的。仅此并不能保证什么：领导者在一轮续约结束时才放弃领导，而这一轮最多在上次续约之后一个重试周期才开始；除非 leaseDuration 也涵盖这段等待，否则其他候选者可能在它仍在领导时获取租约"},
	"config.deadlineOverRetry": {"renewDeadline (%s) must be greater than %s × retryPeriod (%s): a leader needs time for more than one renewal attempt", "renewDeadline（%s）必须大于 %s × retryPeriod（%s）：领导者需要时间进行不止一次续约尝试"},
	"config.atMost":            {"leaseDuration (%s) must be at most %s", "leaseDuration（%s）不能超过 %s"},
	"config.versionRequired":   {"%s is required in coordinated mode: the server elects by version", "协调模式下必须填写 %s：服务器按版本进行选举"},
	"config.versionBad":        {"%s (%s) must be a version MAJOR.MINOR.PATCH such as 1.36.0", "%s（%s）必须是 MAJOR.MINOR.PATCH 形式的版本，例如 1.36.0"},
	"config.emulationNewer":    {"emulationVersion (%s) must not be newer than binaryVersion (%s): a binary can only emulate its own or older versions", "emulationVersion（%s）不能比 binaryVersion（%s）更新：二进制文件只能模拟自身或更旧的版本"},
	"config.floor":             {"retryPeriod (%s) must be at least %s on a shared playground", "在共享的演练场上，retryPeriod（%s）至少为 %s"},
}, faultWords)

// withWords is sentences with more added: a key twice is a mistake, caught as the program starts.
func withWords(sentences, more map[string][2]string) map[string][2]string {
	for k, v := range more {
		if _, dup := sentences[k]; dup {
			panic("tabproto: sentence " + k + " twice")
		}
		sentences[k] = v
	}
	return sentences
}
