package i18n

import "github.com/leaselab/leaselab/wasm/said"

// The words of the room lesson's panel (templates/arena.templ); what its narration says of the
// room is beside its script, in web/play/scenario.
var _ = said.Register(map[string]Text{
	"arena.room":          {En: "the room", Zh: "全场"},
	"arena.qrAlt":         {En: "QR code of the join link", Zh: "加入链接的二维码"},
	"arena.join":          {En: "Join from a phone or a laptop: scan the code, or open", Zh: "用手机或电脑加入：扫描二维码，或打开"},
	"arena.tabs":          {En: "Tabs on the lease %s: %d", Zh: "租约 %s 上的标签页：%d 个"},
	"arena.cutCount":      {En: "network cut: %d", Zh: "断网：%d 个"},
	"arena.actions":       {En: "faults for the whole room", Zh: "针对全场的故障"},
	"arena.third":         {En: "Cut a random third", Zh: "随机断开三分之一"},
	"arena.thirdTitle":    {En: "Partition a random third of the room's tabs, those whose network is whole first: their requests hang until you heal them", Zh: "让全场随机三分之一的标签页网络分区，优先选择网络正常的：它们的请求会一直挂起，直到你恢复网络"},
	"arena.healAll":       {En: "Heal every network", Zh: "恢复全部网络"},
	"arena.healAllTitle":  {En: "Heal the network of every tab of the room whose network is cut", Zh: "恢复全场所有断网标签页的网络"},
	"arena.simulate":      {En: "Add a simulated tab", Zh: "添加一个模拟标签页"},
	"arena.simulateTitle": {En: "The server runs one more candidate on the lease, as a tab of the room: for a room too small to play the lesson", Zh: "由服务器在这个租约上多运行一个候选者，作为全场的一个标签页：用于人数太少、不足以上这一课的时候"},
	"arena.empty":         {En: "No tab on the lease yet: open the join link in a few tabs, or have the room scan the code.", Zh: "租约上还没有标签页：在几个标签页中打开加入链接，或者请全场扫描二维码。"},
	"arena.more":          {En: "and %d more tabs, following", Zh: "还有 %d 个标签页，都在跟随"},
	"arena.err.action":    {En: "no such action of the room: %s", Zh: "全场没有这样的操作：%s"},
})
