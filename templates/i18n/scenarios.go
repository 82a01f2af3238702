package i18n

// The words of the scenario pages (the narrations are beside their scripts, in web/play/scenario).
var scenarioMessages = map[string]Text{
	"scn.nav":            {En: "Scenarios", Zh: "场景"},
	"scn.library":        {En: "Scenarios", Zh: "场景"},
	"scn.library.lede":   {En: "The classic lease incidents as guided lessons: one click starts candidates on the server, and the narration says what to look at and why, one step at a time.", Zh: "把经典的租约事故做成引导式课程：点击一下就在服务器上启动候选者，旁白一步一步告诉你该看什么、为什么。"},
	"scn.running":        {En: "running", Zh: "运行中"},
	"scn.controls":       {En: "scenario controls", Zh: "场景控制"},
	"scn.speed":          {En: "Speed", Zh: "速度"},
	"scn.start":          {En: "Start", Zh: "开始"},
	"scn.restart":        {En: "Restart", Zh: "重新开始"},
	"scn.back":           {En: "Back", Zh: "上一步"},
	"scn.next":           {En: "Next", Zh: "下一步"},
	"scn.auto":           {En: "Auto-play", Zh: "自动播放"},
	"scn.watchonly":      {En: "The instructor runs this scenario; it follows here live.", Zh: "该场景由讲师运行；这里会实时跟随。"},
	"scn.more":           {En: "Links, keys and timings", Zh: "链接、快捷键与时间设置"},
	"scn.leasepage":      {En: "The lease page, with its timeline and split-brain checks:", Zh: "租约页面，包含时间线和脑裂检查："},
	"scn.dashboard":      {En: "The dashboard, showing this run's namespace", Zh: "仪表盘，显示本次运行的命名空间"},
	"scn.join":           {En: "Join the run with a candidate tab of your own", Zh: "打开一个自己的候选者标签页加入本次运行"},
	"scn.share":          {En: "A link that gives this lesson again:", Zh: "可重现本课程的链接："},
	"scn.keys":           {En: "Keys: space or → start, then next; ← back, A auto-play, F presenter mode, B blank screen.", Zh: "快捷键：空格或 → 开始，之后下一步；← 上一步，A 自动播放，F 演示模式，B 黑屏。"},
	"scn.otherseed":      {En: "The same lesson with another seed", Zh: "换一个种子重上这一课"},
	"scn.idle":           {En: "Not running. Start it to bring its candidates up on the server.", Zh: "尚未运行。点击开始，在服务器上启动它的候选者。"},
	"scn.idle.watch":     {En: "Not running yet: it appears here as soon as the instructor starts it.", Zh: "尚未运行：讲师一开始，这里就会显示。"},
	"scn.believes":       {En: "still believes it leads", Zh: "仍认为自己在领导"},
	"scn.stale":          {En: "STALE LEADER: the lease names %s", Zh: "过期的领导者：租约写的是 %s"},
	"scn.holder":         {En: "Holder:", Zh: "持有者："},
	"scn.nobody":         {En: "nobody", Zh: "无"},
	"scn.transitions":    {En: "transitions", Zh: "转换次数"},
	"scn.overlap":        {En: "%d split brain found", Zh: "发现 %d 次脑裂"},
	"scn.overlaps":       {En: "%d split brains found", Zh: "发现 %d 次脑裂"},
	"scn.moment":         {En: "the lease at this moment", Zh: "此刻的租约"},
	"scn.waiting":        {En: "Waiting %s…", Zh: "%s……"},
	"scn.behind":         {En: "Looking back at step %d. The lesson is at step %d: the cards and the record show it now. Next goes forward.", Zh: "正在回看第 %d 步。课程已到第 %d 步：卡片和记录显示的是现在的状态。点击下一步向前。"},
	"scn.done":           {En: "The end of the lesson. Restart it, or try another seed.", Zh: "课程结束。可以重新开始，或换一个种子再试。"},
	"scn.ready":          {En: "Done: Next when you are ready.", Zh: "本步完成：准备好后点击下一步。"},
	"scn.autoOn":         {En: "Auto-play: the next step follows once this one has had time to be read.", Zh: "自动播放：留出阅读本步的时间后，自动进入下一步。"},
	"scn.ready.watch":    {En: "Done: the instructor goes on when ready.", Zh: "本步完成：讲师准备好后会继续。"},
	"scn.progress":       {En: "Step %d of %d", Zh: "第 %d 步，共 %d 步"},
	"scn.expires":        {En: "lease expires, by its clock, in", Zh: "按它的时钟，租约到期还有"},
	"scn.expired":        {En: "lease expired, by its clock: it tries to take it at its next try", Zh: "按它的时钟，租约已到期：它会在下一次尝试时去接管"},
	"scn.deadlinePassed": {En: "renew deadline passed, by its clock: it stops leading", Zh: "按它的时钟，续约期限已过：它停止领导"},
	"scn.deadline":       {En: "must renew, by its clock, within", Zh: "按它的时钟，须在此时间内续约"},
	"scn.err.seed":       {En: "seed must be a whole number from 0 to 9223372036854775807", Zh: "种子必须是 0 到 9223372036854775807 之间的整数"},
	"scn.err.realTime":   {En: "This lesson runs at 1× only: the election controller decides on the server's clock, which a lesson cannot speed up.", Zh: "本课程只能以 1× 速度运行：选举控制器按服务器的时钟做决定，而课程无法加快服务器的时钟。"},
	"scn.err.speed":      {En: "speed must be between 0.25 and 4", Zh: "速度必须在 0.25 到 4 之间"},
	"scn.notfound":       {En: "no scenario is called %s", Zh: "没有名为 %s 的场景"},
	"scn.notrunning":     {En: "this scenario is not running with seed %s: start it first", Zh: "该场景没有以种子 %s 运行：请先开始"},
	"scn.instructor":     {En: "only the instructor may run scenarios", Zh: "只有讲师可以运行场景"},
}

func init() {
	for k, v := range scenarioMessages {
		catalog[k] = v
	}
}
