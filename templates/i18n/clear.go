package i18n

import "github.com/leaselab/leaselab/wasm/said"

// The words of the dashboard's clearing of finished lessons.
var _ = said.Register(map[string]Text{
	"dash.clearFinished": {En: "Clear finished lessons", Zh: "清理已结束的课程"},
	"dash.clearTitle":    {En: "Stop and clean up every lesson run that is done or no longer plays: its candidates leave the dashboard, and its Leases, LeaseCandidates and views are deleted (its recording stays downloadable). Lessons still playing are left alone.", Zh: "停止并清理每一个已完成或不再运行的课程：它的候选者离开仪表盘，它的 Lease、LeaseCandidate 和视图被删除（其录制仍可下载）。仍在运行的课程不受影响。"},
	"dash.cleared":       {En: "Finished lessons cleared: %s.", Zh: "已清理结束的课程：%s 个。"},
	"dash.clearedNone":   {En: "No finished lesson to clear.", Zh: "没有需要清理的已结束课程。"},
})
