package i18n

import "github.com/leaselab/leaselab/wasm/said"

// The words of the session plan (/scenarios, /follow).
var _ = said.Register(map[string]Text{
	"scn.plan.title":       {En: "Session plan", Zh: "课程计划"},
	"scn.plan.lede":        {En: "The lessons in the order they are given, each with its run at 1×, a reading of its steps and time to talk it over; the clock says when each begins. It starts as a suggested 90-minute session, from the crash every election survives to the fencing that saves a split brain, and /follow shows the room where in it the lesson is.", Zh: "按授课顺序排列的课程，每一课都包括 1× 速度的运行、阅读步骤以及讨论的时间；时钟显示每一课何时开始。它起初是一个建议的 90 分钟课程，从每次选举都能挺过的崩溃，到挽救脑裂的隔离令牌；/follow 页面会告诉全场当前课程在计划中的位置。"},
	"scn.plan.editHint":    {En: "Add a lesson, move one up or down, or take one out; Reset brings the suggested plan back. The plan lasts until the server stops.", Zh: "可以添加课程、上移或下移、或移除课程；“重置”会恢复建议的计划。计划保留到服务器停止为止。"},
	"scn.plan.minutes":     {En: "%s min", Zh: "%s 分钟"},
	"scn.plan.total":       {En: "Total: %s (%s min)", Zh: "总计：%s（%s 分钟）"},
	"scn.plan.empty":       {En: "The plan is empty.", Zh: "计划是空的。"},
	"scn.plan.addLabel":    {En: "Lesson", Zh: "课程"},
	"scn.plan.add":         {En: "Add to the plan", Zh: "加入计划"},
	"scn.plan.reset":       {En: "Reset to the suggested plan", Zh: "重置为建议的计划"},
	"scn.plan.upLabel":     {En: "Move %s earlier", Zh: "把 %s 提前"},
	"scn.plan.downLabel":   {En: "Move %s later", Zh: "把 %s 推后"},
	"scn.plan.remove":      {En: "Remove", Zh: "移除"},
	"scn.plan.talkLabel":   {En: "Minutes to talk %s over", Zh: "讨论 %s 的分钟数"},
	"scn.plan.talkUnit":    {En: "talk, min", Zh: "讨论（分钟）"},
	"scn.plan.talkSet":     {En: "Set", Zh: "设定"},
	"scn.plan.badTalk":     {En: "The time to talk a lesson over is whole minutes from 0 to %s, not %s: the plan is unchanged.", Zh: "讨论一课的时间是 0 到 %s 之间的整数分钟，而不是 %s：计划未改变。"},
	"scn.plan.removeLabel": {En: "Remove %s from the plan", Zh: "从计划中移除 %s"},
	"scn.plan.unknown":     {En: "There is no lesson %s: the plan is unchanged.", Zh: "没有名为 %s 的课程：计划未改变。"},
	"scn.plan.inPlan":      {En: "%s is in the plan already: the plan is unchanged.", Zh: "%s 已经在计划中：计划未改变。"},
	"scn.plan.notInPlan":   {En: "%s is not in the plan: the plan is unchanged.", Zh: "%s 不在计划中：计划未改变。"},
	"follow.plan.label":    {En: "Session plan:", Zh: "课程计划："},
	"follow.plan.where":    {En: "Lesson %s of %s · starts at %s of %s", Zh: "第 %s 课，共 %s 课 · 开始于 %s，全程 %s"},
	"follow.plan.outside":  {En: "%s is not in the session plan.", Zh: "%s 不在课程计划中。"},
	"follow.plan.idle":     {En: "No lesson is being followed yet; the plan lasts %s.", Zh: "还没有正在跟随的课程；计划全程 %s。"},
	"follow.plan.empty":    {En: "The instructor has no session plan.", Zh: "讲师没有课程计划。"},
})
