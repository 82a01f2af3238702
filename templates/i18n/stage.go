package i18n

// stageMessages are the stage's words (/stage): short, to be read from the back of a room.
var stageMessages = map[string]Text{
	"stage.title":              {En: "Stage: %s", Zh: "舞台：%s"},
	"stage.open":               {En: "Stage", Zh: "舞台"},
	"stage.openTitle":          {En: "One live picture of this lease's election", Zh: "这个租约选举的实时全景"},
	"stage.server":             {En: "API server", Zh: "API 服务器"},
	"stage.record":             {En: "Lease record", Zh: "租约记录"},
	"stage.holder":             {En: "holder", Zh: "持有者"},
	"stage.nobody":             {En: "nobody", Zh: "无人"},
	"stage.noLease":            {En: "no Lease yet", Zh: "尚无租约"},
	"stage.role.leader":        {En: "leader", Zh: "领导者"},
	"stage.role.follower":      {En: "follower", Zh: "跟随者"},
	"stage.role.stale":         {En: "stale leader", Zh: "过时的领导者"},
	"stage.role.paused":        {En: "paused", Zh: "已暂停"},
	"stage.role.partitioned":   {En: "cut off", Zh: "网络隔离"},
	"stage.role.stopped":       {En: "stopped", Zh: "已停止"},
	"stage.role.client":        {En: "client", Zh: "客户端"},
	"stage.ring.expiry":        {En: "the lease runs out, as it saw it", Zh: "它所见的租约到期"},
	"stage.ring.renew":         {En: "renew deadline", Zh: "续约截止"},
	"stage.ring.retry":         {En: "next try", Zh: "下次尝试"},
	"stage.lanes":              {En: "Whom the record named, and what each candidate believed", Zh: "记录中的持有者，以及每个候选者的认知"},
	"stage.lane.record":        {En: "record", Zh: "记录"},
	"stage.belief.leading":     {En: "leading", Zh: "领导中"},
	"stage.belief.following":   {En: "following", Zh: "跟随中"},
	"stage.belief.paused":      {En: "paused", Zh: "已暂停"},
	"stage.belief.partitioned": {En: "cut off", Zh: "网络隔离"},
	"stage.belief.stale":       {En: "believes it leads, wrongly", Zh: "误以为自己在领导"},
	"stage.term.held":          {En: "%s held it", Zh: "%s 持有"},
	"stage.term.expired":       {En: "%s's hold ran out", Zh: "%s 的租约已到期"},
	"stage.splitBrain":         {En: "split brain", Zh: "脑裂"},
	"stage.zoomIn":             {En: "Zoom in", Zh: "放大"},
	"stage.zoomOut":            {En: "Zoom out", Zh: "缩小"},
	"stage.zoomSplit":          {En: "Zoom to the split brain", Zh: "放大到脑裂"},
	"stage.zoomAll":            {En: "Show all", Zh: "显示全部"},
	"stage.quiet":              {En: "Nothing has happened yet: open a candidate tab.", Zh: "尚无动静：打开一个候选者标签页。"},
	"stage.aria":               {En: "The election of %s: the API server in the middle, its candidates around it", Zh: "%s 的选举：中间是 API 服务器，周围是候选者"},
	"stage.candidateAria":      {En: "%s, %s", Zh: "%s，%s"},
	"stage.crowd":              {En: "%d more", Zh: "另外 %d 个"},
	"stage.crowdAria":          {En: "%d more candidates, %s", Zh: "另外 %d 个候选者，%s"},
	"stage.crowdRequests":      {En: "%d requests", Zh: "%d 个请求"},
	"stage.requestGroup":       {En: "%d requests %s, %s", Zh: "%d 个 %s 请求，%s"},
	"stage.outcome.inFlight":   {En: "in flight", Zh: "进行中"},
	"stage.outcome.timeout":    {En: "timed out", Zh: "超时"},
	"stage.outcome.refused":    {En: "refused", Zh: "被拒绝"},
	"stage.outcome.status":     {En: "answered %s", Zh: "应答 %s"},
	"dash.castLabel":           {En: "Its candidates and their roles", Zh: "它的候选者及其角色"},
	"lease.pastLeaseCount":     {En: "%d past its lease", Zh: "%d 次超出租约"},
	"stage.pastLease":          {En: "leading past its lease", Zh: "租约到期后仍在领导"},
	"stage.leasePage":          {En: "Lease page", Zh: "租约页面"},
}

func init() {
	for k, v := range stageMessages {
		catalog[k] = v
	}
}
