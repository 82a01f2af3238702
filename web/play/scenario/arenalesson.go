package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/candidate"
	"github.com/leaselab/leaselab/wasm/said"
	"github.com/leaselab/leaselab/wasm/tabproto"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// ArenaNamespace is the namespace the room lesson plays in: the arena of a workshop, where
// every participant may write (web/api/auth's ArenaNamespace), and on a server without
// workshop mode a namespace like any other.
const ArenaNamespace = "arena"

// What the room lesson's steps note, for the steps after and its claims.
const (
	notedFrozen    = "frozen"     // the leader the instructor froze
	notedCut       = "cut"        // the tabs whose network was cut, by name, comma-separated
	notedCutLeader = "cut-leader" // the leader among them
	notedRoomSize  = "room"       // how many tabs the room had as the network was cut
)

// arenaWords are the room lesson's sentences about what the room's tabs did (Step.Tell), and
// how its claims name the tabs it noted.
var arenaWords = said.Register(map[string]said.Text{
	"arena.told.joined":        {En: "Tabs on the lease: %[1]d; the leader: %[2]s.", Zh: "租约上的标签页：%[1]d 个；领导者：%[2]s。"},
	"arena.told.joinedNobody":  {En: "Tabs on the lease: %d; no leader yet.", Zh: "租约上的标签页：%d 个；还没有领导者。"},
	"arena.told.noLeader":      {En: "No tab led as the step began: none froze.", Zh: "这一步开始时没有标签页在领导：没有谁被冻结。"},
	"arena.told.frozen":        {En: "%s froze; the others wait for the lease to run out by their own clocks.", Zh: "%s 被冻结了；其他标签页按各自的时钟等待租约到期。"},
	"arena.told.tookOver":      {En: "%[1]s took over %[2]s after %[3]s froze.", Zh: "%[3]s 被冻结 %[2]s 后，%[1]s 接管了租约。"},
	"arena.told.waking":        {En: "%[1]s woke believing it leads: %[2]d tabs believe they lead now.", Zh: "%[1]s 醒来后以为自己在领导：现在有 %[2]d 个标签页以为自己是领导者。"},
	"arena.told.woke":          {En: "%[1]s woke believing it led, and stepped down %[2]s later; at most %[3]d tabs believed they led at once.", Zh: "%[1]s 醒来时以为自己仍在领导，%[2]s 后才退位；同一时刻最多有 %[3]d 个标签页以为自己是领导者。"},
	"arena.told.cut":           {En: "%[1]d of %[2]d tabs lost their network: %[3]s.", Zh: "%[2]d 个标签页中有 %[1]d 个断网：%[3]s。"},
	"arena.told.cutLeader":     {En: "The leader %s keeps trying to renew until its renew deadline.", Zh: "领导者 %s 一直尝试续约，直到续约期限到达。"},
	"arena.told.cutLeaderDone": {En: "The leader %[1]s stepped down %[2]s after the cut, and %[3]s took over %[4]s after it.", Zh: "领导者 %[1]s 在断网 %[2]s 后退位，%[3]s 在断网 %[4]s 后接管。"},
	"arena.told.summary":       {En: "Tabs that took part: %[1]d; changes of holder: %[2]d; split brains the checker found: %[3]d.", Zh: "参与的标签页：%[1]d 个；持有者变更：%[2]d 次；检查器发现的脑裂：%[3]d 次。"},
	"claim.noted.frozen":       {En: "the frozen leader", Zh: "被冻结的领导者"},
	"claim.noted.cut-leader":   {En: "the cut-off leader", Zh: "断网的领导者"},
})

// notedWho is how a claim names the member a step noted under key.
func notedWho(key string) i18n.Text { return i18n.Say("claim.noted." + key) }

// told is a sentence of the room lesson, in both languages.
func told(key string, args ...any) i18n.Text { return said.Say(key, args...).Both() }

// tenths is a length as the room lesson tells it: "11.4 s".
func tenths(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// simulatedRoom is the cast that plays the room when there is none: five tabs that open the
// join link one after another.
func simulatedRoom() []Member {
	var out []Member
	for i, id := range []string{"alice", "bob", "carol", "dave", "erin"} {
		out = append(out, Member{Identity: id, Joins: time.Duration(i) * 700 * time.Millisecond})
	}
	return out
}

var arena = &Scenario{
	Name:          "arena",
	Room:          true,
	Namespace:     ArenaNamespace,
	Lease:         "arena",
	Length:        30 * time.Second,
	OfferedSeeds:  []uint64{1},
	LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
	Title:   i18n.Text{En: "The room is the cast", Zh: "全场都是候选者"},
	Summary: i18n.Text{En: "Every tab the room opens is a candidate for one lease: the instructor freezes the leader, wakes it up stale, and cuts a third of the room off the network.", Zh: "全场打开的每个标签页都是同一个租约的候选者：讲师冻结领导者，再把它唤醒成过期的领导者，然后让三分之一的标签页断网。"},
	Teaches: i18n.Text{En: "An election of a room of candidates works as one of three: one holder at a time, a frozen leader wakes up stale, a cut-off one steps down first.", Zh: "一整屋候选者的选举和三个候选者的一样：每次只有一个持有者，被冻结的领导者醒来时已经过期，断网的领导者先退位。"},
	Cast:    simulatedRoom(),
	Steps:   []Step{arenaJoin(), arenaFreeze(), arenaWake(), arenaCut(), arenaHeal()},
	Claims: []Claim{
		{Kind: TakeoverAfterStep, Noted: notedFrozen, N: 2, Max: leaseDuration + 2*maxTry},
		{Kind: SplitBrain, Noted: notedFrozen, Cause: judge.CausePaused},
		{Kind: StepsDownFirst, Noted: notedCutLeader, N: 4},
		{Kind: OneLeader},
	},
}

func arenaJoin() Step {
	return Step{
		Say: i18n.Text{
			En: "The room is the cast: every tab that opens the join link (or scans the QR code) is a candidate for the lease arena in the namespace arena, with the tab's timings: leaseDuration 10 s, renewDeadline 7 s, retryPeriod 2 s. The first tab to find the lease free takes it; every other reads the record, sees it held, and follows.",
			Zh: "全场就是演员阵容：每个打开加入链接（或扫描二维码）的标签页，都是命名空间 arena 中租约 arena 的候选者，使用标签页的时间设置：leaseDuration 10 秒、renewDeadline 7 秒、retryPeriod 2 秒。第一个发现租约空闲的标签页拿下它；其他标签页读取记录，看到它已被持有，于是跟随。",
		},
		Tell: func(w *World) i18n.Text {
			if h := w.Holder(); h != "" && w.Leads(h) {
				return told("arena.told.joined", len(running(w)), h)
			}
			return told("arena.told.joinedNobody", len(running(w)))
		},
		Until: func(w *World) bool {
			h := w.Holder()
			return h != "" && w.Leads(h) && slices.ContainsFunc(running(w), func(n string) bool { return n != h && followers(w, n) })
		},
		Waiting: i18n.Text{En: "until at least two tabs have joined and one of them leads", Zh: "等待至少两个标签页加入，并且其中一个成为领导者"},
	}
}

func arenaFreeze() Step {
	return Step{
		Say: i18n.Text{
			En: "The instructor freezes the leader's tab, as a long garbage-collection pause or SIGSTOP freezes a process: nothing runs in it, not even the timer that would tell it to give up, and it still believes it leads. The other tabs see the record stop changing, wait out leaseDuration on their own clocks, and the first to try after that takes the lease.",
			Zh: "讲师冻结了领导者的标签页，就像一次长时间的垃圾回收停顿或 SIGSTOP 冻结一个进程：其中什么都不运行，连提醒它放弃的定时器也不运行，它仍以为自己是领导者。其他标签页看到记录不再变化，在自己的时钟上等满 leaseDuration，之后第一个尝试的标签页拿下租约。",
		},
		Do: func(a *Actions) {
			if t, ok := leaderTab(a); ok {
				a.Note(notedFrozen, t.Name)
				a.Fault(t, tabproto.Command{Type: tabproto.CommandPause})
			}
		},
		Tell: func(w *World) i18n.Text {
			frozen := w.Notes[notedFrozen]
			if frozen == "" {
				return told("arena.told.noLeader")
			}
			began, _ := w.StepAt(2)
			if who, at, ok := holderAfter(w, began, frozen); ok {
				return told("arena.told.tookOver", who, tenths(at.Sub(began)), frozen)
			}
			return told("arena.told.frozen", frozen)
		},
		Until:   func(w *World) bool { return someoneElseHolds(w, w.Notes[notedFrozen]) },
		Waiting: i18n.Text{En: "until another tab takes the lease", Zh: "等待另一个标签页拿下租约"},
	}
}

func arenaWake() Step {
	return Step{
		Say: i18n.Text{
			En: "The frozen tab wakes up as if no time had passed, and still believes it leads: two leaders at once. Its renewals fail against the record, which names another, and it steps down only when its renew deadline (7 s) has passed. The split-brain checker marks the interval on the lease page.",
			Zh: "被冻结的标签页醒来，仿佛什么时间都没有过去，仍以为自己是领导者：同时出现两个领导者。它的续约都因记录写着别人而失败，直到它的续约期限（7 秒）过去才退位。脑裂检查器在租约页面上标出了这段区间。",
		},
		Do: func(a *Actions) { faultNoted(a, notedFrozen, tabproto.Command{Type: tabproto.CommandResume}) },
		Tell: func(w *World) i18n.Text {
			frozen := w.Notes[notedFrozen]
			if frozen == "" {
				return i18n.Text{}
			}
			began, _ := w.StepAt(3)
			if at, ok := steppedDown(w, began, frozen); ok {
				most := 0
				for _, o := range w.Overlaps() {
					most = max(most, len(o.Believers))
				}
				return told("arena.told.woke", frozen, tenths(at.Sub(began)), max(most, 2))
			}
			return told("arena.told.waking", frozen, len(w.Leaders()))
		},
		Until: func(w *World) bool {
			frozen := w.Notes[notedFrozen]
			_, here := w.Members[frozen]
			return !here || !w.Leads(frozen) && len(w.Overlaps()) > 0
		},
		Waiting: i18n.Text{En: "until the woken tab steps down", Zh: "等待醒来的标签页退位"},
	}
}

func arenaCut() Step {
	return Step{
		Say: i18n.Text{
			En: "Now a third of the room loses its network, the leader among them, the rest chosen at random: their requests hang. A cut-off follower only stops seeing the record: by its own clock the lease runs out, but its tries to take it hang too. The cut-off leader keeps trying to renew until its renew deadline, and steps down before any other tab may take the lease.",
			Zh: "现在全场三分之一的标签页断网了，领导者在其中，其余的随机选出：它们的请求都挂起。断网的跟随者只是再也看不到记录：按它自己的时钟租约到期了，但它去拿租约的尝试也都挂起。断网的领导者一直尝试续约，直到续约期限过去，并在任何其他标签页可以拿下租约之前就退位。",
		},
		Do:   cutAThird,
		Tell: tellCut,
		Until: func(w *World) bool {
			leader := w.Notes[notedCutLeader]
			return leader == "" && w.For(2*time.Second) || leader != "" && someoneElseHolds(w, leader)
		},
		Waiting: i18n.Text{En: "until a tab with a network holds the lease", Zh: "等待一个网络正常的标签页持有租约"},
	}
}

func arenaHeal() Step {
	return Step{
		Say: i18n.Text{
			En: "The network heals. The cut-off tabs read the record again and follow whoever holds it; none of them takes a lease that is still being renewed. However many candidates there are, the record names one holder at a time: what goes wrong is what each of them believes.",
			Zh: "网络恢复了。断网的标签页重新读取记录，跟随当前的持有者；它们谁也不会去拿一个仍在续约的租约。无论有多少候选者，记录每次只写一个持有者：出问题的是每个候选者自己以为的。",
		},
		Do: func(a *Actions) {
			for _, name := range strings.Split(a.Noted(notedCut), ",") {
				faultName(a, name, tabproto.Command{Type: tabproto.CommandHeal})
			}
		},
		Tell: func(w *World) i18n.Text {
			return told("arena.told.summary", len(tookPart(w)), holderChanges(w), len(w.Overlaps()))
		},
		Until: func(w *World) bool {
			ls := w.Leaders()
			if len(ls) != 1 || ls[0] != w.Holder() {
				return false
			}
			// A room goes on as it likes: a cut-off tab may have been stopped by its
			// participant, or be the one leader, having taken the lease after its holder's
			// tab was closed. Only one that still believes what the cut left it waits.
			for _, name := range strings.Split(w.Notes[notedCut], ",") {
				s, here := w.Members[name]
				if here && name != "" && name != ls[0] && s.State != candidate.StateFollower && s.State != candidate.StateStopped {
					return false
				}
			}
			return true
		},
		Waiting: i18n.Text{En: "until one tab leads, the record names it, and the cut-off tabs follow", Zh: "等待只有一个标签页在领导、记录写的正是它，并且断网的标签页都在跟随"},
	}
}

// cutAThird cuts the network of a third of the room: the leader, and others at random.
func cutAThird(a *Actions) {
	tabs := a.Room()
	leader, hasLeader := leaderTab(a)
	var cut, rest []RoomTab
	for _, t := range tabs {
		if hasLeader && t.ID == leader.ID {
			cut = append(cut, t)
		} else {
			rest = append(rest, t)
		}
	}
	cut = append(cut, a.Pick(rest, AThird(len(tabs))-len(cut))...)
	names := make([]string, len(cut))
	for i, t := range cut {
		names[i] = t.Name
		a.Fault(t, tabproto.Command{Type: tabproto.CommandPartition, Mode: tabproto.PartitionHang})
	}
	slices.Sort(names)
	a.Note(notedCut, strings.Join(names, ","))
	a.Note(notedRoomSize, fmt.Sprint(len(tabs)))
	if hasLeader {
		a.Note(notedCutLeader, leader.Name)
	}
}

// tellCut says whom the cut took, and what the cut-off leader did.
func tellCut(w *World) i18n.Text {
	names := strings.Split(w.Notes[notedCut], ",")
	if w.Notes[notedCut] == "" {
		return i18n.Text{}
	}
	list := make([]any, len(names))
	for i, n := range names {
		list[i] = n
	}
	var size int
	fmt.Sscan(w.Notes[notedRoomSize], &size)
	out := said.Say("arena.told.cut", len(names), size, said.Say(judge.KeyList, list...))
	leader := w.Notes[notedCutLeader]
	if leader == "" {
		return out.Both()
	}
	began, _ := w.StepAt(4)
	down, stepped := steppedDown(w, began, leader)
	who, took, ok := holderAfter(w, began, leader)
	next := said.Say("arena.told.cutLeader", leader)
	if stepped && ok {
		next = said.Say("arena.told.cutLeaderDone", leader, tenths(down.Sub(began)), who, tenths(took.Sub(began)))
	}
	return i18n.Concat(out.Both(), i18n.Text{En: " "}, next.Both())
}

// leaderTab is the tab the lease names as the step begins, if it is in the room.
func leaderTab(a *Actions) (RoomTab, bool) {
	leader := a.Leader()
	for _, t := range a.Room() {
		if leader != "" && t.Identity == leader {
			return t, true
		}
	}
	return RoomTab{}, false
}

// faultNoted sends cmd to the tab a step noted under key.
func faultNoted(a *Actions, key string, cmd tabproto.Command) { faultName(a, a.Noted(key), cmd) }

// faultName sends cmd to the tab called name, if it is still in the room.
func faultName(a *Actions, name string, cmd tabproto.Command) {
	for _, t := range a.Room() {
		if name != "" && t.Name == name {
			a.Fault(t, cmd)
		}
	}
}

// running are the names of the world's members that run, sorted.
func running(w *World) []string {
	var out []string
	for name, s := range w.Members {
		if s.State != candidate.StateStopped {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// holderAfter is the first holder other than not that the record named at or after from, and
// when.
func holderAfter(w *World, from time.Time, not string) (string, time.Time, bool) {
	for _, e := range w.Events {
		at := w.Started.Add(e.At)
		if e.Kind == "holder" && !at.Before(from) && e.What != not && e.What != "(none)" {
			return e.What, at, true
		}
	}
	return "", time.Time{}, false
}

// steppedDown is when name stopped believing it led, first at or after from.
func steppedDown(w *World, from time.Time, name string) (time.Time, bool) {
	for _, e := range w.Events {
		at := w.Started.Add(e.At)
		if who, role, _ := strings.Cut(e.What, " "); e.Kind == "role" && who == name && role != string(candidate.RoleLeader) && !at.Before(from) {
			return at, true
		}
	}
	return time.Time{}, false
}

// tookPart are the names of the members that had a role in the run.
func tookPart(w *World) map[string]bool {
	out := map[string]bool{}
	for _, e := range w.Events {
		if e.Kind == "role" {
			name, _, _ := strings.Cut(e.What, " ")
			out[name] = true
		}
	}
	return out
}

// holderChanges counts how often the record named a holder other than the one before it.
func holderChanges(w *World) int {
	n, last := 0, ""
	for _, e := range w.Events {
		if e.Kind != "holder" || e.What == "(none)" || e.What == last {
			continue
		}
		if last != "" {
			n++
		}
		last = e.What
	}
	return n
}
