package i18n

// catalog holds every message of the pages, keyed by a short name. Chinese follows the
// Kubernetes Chinese documentation's terms: 租约 (Lease), 领导者选举 (leader election),
// 持有者 (holder), 候选者 (candidate), 命名空间 (namespace).
var catalog = map[string]Text{
	"lang.switch": {En: "中文", Zh: "English"},
}
