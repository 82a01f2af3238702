package judge

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/leaselab/leaselab/wasm/said"
	"github.com/leaselab/leaselab/wasm/tabproto"
)

// View is what one candidate said about itself at one moment, as the server recorded it: the
// candidates' side of the story, beside the server's record (the lease's changes).
type View struct {
	Identity string
	// At is when the candidate's role took this value, on the server's clock: the server's
	// receive time, less how long before reporting the candidate says its role changed (by its
	// own clock).
	At time.Time
	// Leads is true while the candidate believes it leads: from client-go's OnStartedLeading
	// to its OnStoppedLeading, paused, partitioned or not.
	Leads bool
	// State is the candidate's one word: leader, follower, paused, partitioned or stopped.
	State string
	// Holder is the holder in the lease record the candidate last read.
	Holder string
	// Faults are the faults in effect when it reported.
	Faults tabproto.Faults
	// Decision is the kind of its newest decision ("released", "lost", "renewed", ...).
	Decision string
}

// Causes of an overlap, from what the first stale believer recorded, in order of precedence.
const (
	CausePaused = "paused"
	// CauseDeadConnection: its connection had died without a word, and its renewal waited on
	// it past its renew deadline.
	CauseDeadConnection = "dead-connection"
	CausePartitioned    = "partitioned"
	CauseLoss           = "loss" // its network lost a share of its requests
	CauseSlowNetwork    = "slow-network"
	CauseClockOffset    = "clock-offset"
	CauseClockDrift     = "clock-drift" // its clock ran slow or fast
	CauseReleased       = "released"    // released the lease while still working
	CauseDeleted        = "deleted"     // the lease was deleted while it held it
	CauseUnknown        = "unknown"
)

// causeSentences are the judge's sentences of an overlap's cause, kept beside the causes: why
// the stale believer believed ("judge.why…"), and what real code does about it ("advice.…").
var causeSentences = said.Register(map[string]said.Text{
	"judge.whyPaused": {En: "%s was paused and did not see %s", Zh: "%s 被暂停，没有看到 %s"},

	"judge.whyPartitioned": {En: "%s was cut off from the server and did not see %s", Zh: "%s 与服务器断开了联系，没有看到 %s"},

	"judge.whyDeadConnection": {En: "%s's connection to the server had died without a word, and it went on waiting for its renewal on it, so it did not see %s", Zh: "%s 与服务器的连接悄无声息地断了，它却一直在这条连接上等待续约的结果，所以没有看到 %s"},

	"judge.whyLoss": {En: "%s's network lost %d%% of its requests, each hanging until it timed out, so it saw %s late", Zh: "%s 的网络丢失了 %d%% 的请求，每个都挂起直到超时，所以它很晚才看到%s"},

	"judge.whySlow": {En: "%s's network added %s to each round trip, so it saw %s late", Zh: "%s 的网络让每次往返多花 %s，所以它很晚才看到%s"},

	"judge.whyClockAhead": {En: "%s's clock ran %s ahead of the server's", Zh: "%s 的时钟比服务器快 %s"},

	"judge.whyClockBehind": {En: "%s's clock ran %s behind the server's", Zh: "%s 的时钟比服务器慢 %s"},

	"judge.whyClockFast": {En: "%s's clock ran fast (%s× the real rate), so it counted its renew deadline on a clock the others do not share", Zh: "%s 的时钟走得快（真实速率的 %s 倍），所以它按一个与其他候选者不同的时钟计算续约期限"},

	"judge.tookEarlyFast": {En: "%s took the lease %s before %s's ran out, its clock running fast (%s× the real rate)", Zh: "%[1]s 的时钟走得快（实际速度的 %[4]s 倍），在 %[3]s 的租约到期前 %[2]s 就获取了租约"},

	"judge.whyClockSlow": {En: "%s's clock ran slow (%s× the real rate), so it counted its renew deadline on a clock the others do not share", Zh: "%s 的时钟走得慢（真实速率的 %s 倍），所以它按一个与其他候选者不同的时钟计算续约期限"},

	"judge.whyReleasedNobody": {En: "the record named nobody", Zh: "记录中没有持有者"},

	"judge.whyReleased": {En: "%s had released it and kept working", Zh: "%s 已释放租约却仍在继续工作"},

	"judge.whyDeleted": {En: "the lease was deleted while %s held it, and a holder finds that out only at its next renewal", Zh: "租约在 %s 持有期间被删除，而持有者要到下一次续约时才会发现"},

	"judge.whyUnknown": {En: "nothing %s recorded explains it", Zh: "%s 记录的内容无法解释这一点"},

	"judge.whyOtherWriter": {En: "another writer, not a candidate (kubectl, say, or a program of its own), wrote %[2]s into the record before %[1]s's hold ran out; %[1]s sees it at its next renewal, yet, as client-go does, goes on leading until its renew deadline passes", Zh: "另一个写入者（不是候选者，比如 kubectl 或自己编写的程序）在 %[1]s 的持有到期之前把 %[2]s 写入了记录；%[1]s 在下一次续约时就会看到，但它会像 client-go 那样继续领导，直到续约期限过去"},

	"judge.thenSaw": {En: "; %s ran again by %s and read that %s held the lease, yet went on believing it led for another %s", Zh: "；%s 在 %s 前已恢复运行并读到 %s 持有租约，却仍认为自己是领导者，又持续了 %s"},

	"advice.fencing": {En: "guard side effects with a fencing token (the lease's resourceVersion or leaseTransitions) checked by the resource it writes", Zh: "用防护令牌（fencing token，即租约的 resourceVersion 或 leaseTransitions）保护副作用，并由被写入的资源来检查它"},

	"advice.exit": {En: "exit (os.Exit) in OnStoppedLeading as kube-controller-manager does", Zh: "像 kube-controller-manager 那样在 OnStoppedLeading 中退出（os.Exit）"},

	"advice.paused": {En: "client-go gives no fencing, and a paused process cannot check anything, not even its renew deadline, until it runs again: %[1]s, and %[2]s, so that it stops as soon as it notices.", Zh: "client-go 不提供防护，而被暂停的进程在重新运行之前什么也无法检查，连续约期限也不行：%[1]s，并且%[2]s，让它一发现就停止。"},

	"advice.partitioned": {En: "client-go gives no fencing: a leader acts on its belief until its renew deadline passes, however long ago another took over, so keep renewDeadline well under leaseDuration, %[2]s, and %[1]s.", Zh: "client-go 不提供防护：无论别人多久之前已经接管，领导者都会按自己的判断行事，直到续约期限过去；所以要让 renewDeadline 远小于 leaseDuration，%[2]s，并且%[1]s。"},

	"advice.dead-connection": {En: "client-go gives no fencing: let no renewal outlive the renew deadline (client-go has cut it there since Kubernetes 1.12), give the election's client a timeout well under the renew deadline (client-go's NewFromKubeconfig gives it half), %[1]s, and %[2]s.", Zh: "client-go 不提供防护：不要让任何续约超过续约期限（client-go 自 Kubernetes 1.12 起就在那里截断续约），给选举用的客户端设置远小于续约期限的超时（client-go 的 NewFromKubeconfig 设为其一半），%[1]s，并且%[2]s。"},

	"advice.loss": {En: "client-go gives no fencing: a leader acts on its belief until its renew deadline passes, and each lost request waits out its timeout before the next try, so keep renewDeadline well under leaseDuration with room for several lost tries, %[2]s, and %[1]s.", Zh: "client-go 不提供防护：领导者会按自己的判断行事，直到续约期限过去，而每个丢失的请求都要等到超时才会进行下一次尝试；所以要让 renewDeadline 远小于 leaseDuration，并为几次丢失的尝试留出余量，%[2]s，并且%[1]s。"},

	"advice.slow-network": {En: "client-go gives no fencing: a leader acts on its belief until its renew deadline passes, and slow requests tell it late that it lost, so keep renewDeadline well under leaseDuration with room for the slowest request (kube-controller-manager renews within 10 s a lease of 15 s), and %[1]s.", Zh: "client-go 不提供防护：领导者会按自己的判断行事，直到续约期限过去，而缓慢的请求让它很晚才知道自己已失去租约；所以要让 renewDeadline 远小于 leaseDuration，并为最慢的请求留出余量（kube-controller-manager 在 10 s 内续约一个 15 s 的租约），并且%[1]s。"},

	"advice.clock-offset": {En: "Offsets do not matter to client-go, which counts leaseDuration from its own observation of the record, not from renewTime; rate drift does, and the gap between renewDeadline and leaseDuration must cover it: never compare renewTime with the local clock.", Zh: "时钟偏移对 client-go 没有影响，它从自己观察到记录变化时开始计算 leaseDuration，而不是从 renewTime 开始；时钟速率的漂移才有影响，renewDeadline 与 leaseDuration 之间的差距必须能覆盖它：永远不要拿 renewTime 与本地时钟比较。"},

	"advice.clock-drift": {En: "client-go counts leaseDuration, renewDeadline and retryPeriod on the process's own clock: an offset cancels out, a clock that runs slow or fast does not. Keep the gap between renewDeadline and leaseDuration large enough to absorb drift, keep time synchronised, and %[1]s.", Zh: "client-go 按进程自己的时钟计算 leaseDuration、renewDeadline 和 retryPeriod：偏移会相互抵消，走慢或走快的时钟却不会。要让 renewDeadline 与 leaseDuration 之间的差距足以吸收漂移，保持时间同步，并且%[1]s。"},

	"advice.released": {En: "Release only after the work has stopped: with ReleaseOnCancel, client-go clears holderIdentity as soon as the context is cancelled, without waiting for the work begun in OnStartedLeading, so cancel only once that work has returned; else leave ReleaseOnCancel off, %[2]s, and let the lease run out.", Zh: "只在工作停止之后才释放：启用 ReleaseOnCancel 时，client-go 在 context 被取消后立即清空 holderIdentity，而不等待 OnStartedLeading 中开始的工作，所以只有在那些工作返回之后才取消；否则就不要启用 ReleaseOnCancel，%[2]s，让租约自然过期。"},

	"advice.deleted": {En: "Do not delete a held lease to force an election: its holder goes on leading until its next renewal, which creates the lease again, or, when another candidate created it first, until its renew deadline passes. Have the holder release it, or let it run out, and %[1]s.", Zh: "不要靠删除被持有的租约来强制重新选举：持有者会一直领导到下一次续约（那次续约会重新创建租约）；如果另一个候选者抢先创建了租约，则一直领导到它的续约期限过去。应让持有者释放租约，或让租约自然过期，并且%[1]s。"},

	"advice.unknown": {En: "client-go gives no fencing: %[1]s, and %[2]s.", Zh: "client-go 不提供防护：%[1]s，并且%[2]s。"},
})

// OverlapGrace is the shortest disagreement reported: a candidate's report of a role change
// reaches the server a little after the write that caused it, and a clean release or
// takeover must not read as split brain.
const OverlapGrace = 250 * time.Millisecond

// Overlap is one interval in which more than one candidate believed it led the same lease, or
// a candidate believed it led while the server's record named another holder (or nobody).
type Overlap struct {
	// Identities are everyone involved, sorted: the believers and the record's holders while
	// they disagreed.
	Identities []string
	// Believers are those who believed they led, sorted; Stale those of them the record did
	// not name.
	Believers []string
	Stale     []string
	// Holder is the record's holder when the interval began ("" for nobody).
	Holder string
	Start  time.Time
	// End is when it ended; zero while it lasts (Length counts to now then).
	End time.Time
	// Cause is one of the Cause constants, read from the views of the first stale believer.
	Cause string
	// Text says in a sentence who, for how long and why; Advice what real code does about it.
	Text   string
	Advice string
	// Says and AdviceSays are Text and Advice as sentences the screens put in their reader's
	// language (Text and Advice are their English).
	Says, AdviceSays Said
}

// Length is how long o lasted, up to now while it lasts.
func (o Overlap) Length(now time.Time) time.Duration {
	if o.End.IsZero() {
		return now.Sub(o.Start)
	}
	return o.End.Sub(o.Start)
}

// Overlaps finds every split-brain interval of one lease up to now, oldest first. lease names
// it ("namespace/name"). changes are the lease's changes, oldest first, as Compact leaves them:
// the holder of the latest change at or before an instant is the record's holder then, and a
// deletion leaves no record. views are every candidate's views, ordered by At: the latest view
// of an identity at or before an instant is its view then, and an identity without one yet
// believes nothing. Changes and views after now are not read; either, out of order, is read
// from a sorted copy.
//
// At an instant, the believers are the identities whose view has Leads (and is not stopped),
// and the stale ones are the believers the record does not name. There is a disagreement while
// some believer is stale: two that believed they led (the record names one of them at most),
// or one that believed while the record named another or nobody. An Overlap is a disagreement
// that lasted at least OverlapGrace, disagreements less than OverlapGrace apart counting as
// one; its Identities, Believers and Stale gather those of its instants of disagreement. Its
// Cause comes from the first stale believer's views (paused, partitioned, packet loss, slow
// network, clock offset, in that order; then a release of its own term), and its Text and
// Advice say it in words.
func Overlaps(lease string, changes []Change, views []View, now time.Time) []Overlap {
	changes = sortedBy(changes, func(c *Change) time.Time { return c.At })
	views = believedAfterWriting(changes, sortedBy(views, func(v *View) time.Time { return v.At }))
	var (
		out       []Overlap
		believers = map[string]bool{}
		holder    string
		duration  time.Duration // the record's leaseDurationSeconds, as last written
		cur       span          // the disagreement being gathered, if started
		started   bool
		open      bool // whether cur still lasts at the current instant
		ci, vi    int
	)
	for {
		t, ok := nextEvent(changes, ci, views, vi)
		if !ok || t.After(now) {
			break
		}
		changed := false // whether the holder or the believers changed at t
		for ; ci < len(changes) && !changes[ci].At.After(t); ci++ {
			c := &changes[ci]
			h := c.holder()
			changed = changed || h != holder
			holder = h
			if c.Duration > 0 {
				duration = c.Duration
			}
		}
		for ; vi < len(views) && !views[vi].At.After(t); vi++ {
			v := &views[vi]
			if b := believes(v); b != believers[v.Identity] {
				changed = true
				if b {
					believers[v.Identity] = true
				} else {
					delete(believers, v.Identity)
				}
			}
		}
		// Some believer is stale unless the holder is the only one.
		if len(believers) == 0 || len(believers) == 1 && believers[holder] {
			if open {
				cur.end, open = t, false
			}
			continue
		}
		// A disagreement less than OverlapGrace after the last one ended continues it: a
		// belief flickering on late reports is one overlap, not several.
		if !started || !open && t.Sub(cur.end) >= OverlapGrace {
			if started {
				out = cur.emit(out, lease, changes, views, now, false)
			}
			cur.reset(t, holder, duration)
			started, changed = true, true
		}
		open = true
		if changed {
			cur.add(t, believers, holder)
		}
	}
	if started {
		out = cur.emit(out, lease, changes, views, now, open)
	}
	return out
}

// OverlapsBetween returns the overlaps whose interval meets [from, to], in their order: the
// ones a screen showing that window draws. One that still lasts meets every window that ends
// after its start.
func OverlapsBetween(overlaps []Overlap, from, to time.Time) []Overlap {
	var out []Overlap
	for _, o := range overlaps {
		if !o.Start.After(to) && (o.End.IsZero() || !o.End.Before(from)) {
			out = append(out, o)
		}
	}
	return out
}

// Disagreeing reports whether, by the latest of each candidate's views (ordered by At), one
// believes it leads while holder does not name it: a disagreement that Overlaps reports once
// it has lasted OverlapGrace.
func Disagreeing(views []View, holder string) bool {
	leads := map[string]bool{}
	for i := range views {
		leads[views[i].Identity] = believes(&views[i])
	}
	for id, l := range leads {
		if l && id != holder {
			return true
		}
	}
	return false
}

// believedAfterWriting moves a view in which a candidate believes it leads, dated while the
// record named another holder, to the change that made it the holder when that change follows
// within OverlapGrace: a candidate leads only once its write has succeeded, and a report's
// dating is approximate (it is counted back on the candidate's own clock). Left as it is, such
// a view would begin a disagreement with the previous holder that never was, and a split brain
// that follows at once would name that holder as the one its believer missed. views and
// changes are ordered by At; views is copied before any view moves.
func believedAfterWriting(changes []Change, views []View) []View {
	copied := false
	ci, holder := 0, ""
	for i := range views {
		v := &views[i]
		for ; ci < len(changes) && !changes[ci].At.After(v.At); ci++ {
			holder = changes[ci].holder()
		}
		if !believes(v) || holder == v.Identity {
			continue
		}
		for _, c := range changes[ci:] {
			if c.At.Sub(v.At) > OverlapGrace {
				break
			}
			if h := c.holder(); h == v.Identity {
				if !copied {
					views, copied = slices.Clone(views), true
				}
				views[i].At = c.At
				break
			} else if h != holder {
				break // someone else wrote in between: the view is not early for its own write
			}
		}
	}
	if copied {
		slices.SortStableFunc(views, func(a, b View) int { return a.At.Compare(b.At) })
	}
	return views
}

// holder is the holder the change leaves in the record; "" when it deleted the Lease.
func (c Change) holder() string {
	if c.Deleted {
		return ""
	}
	return c.Holder
}

// believes reports whether v is the view of a candidate that believes it leads.
func believes(v *View) bool { return v.Leads && v.State != "stopped" }

// sortedBy returns s if it is ordered by the time key, else a sorted copy; stable, so that of
// two at the same instant the later in s still wins.
func sortedBy[E any](s []E, key func(*E) time.Time) []E {
	for i := 1; i < len(s); i++ {
		if key(&s[i]).Before(key(&s[i-1])) {
			s = slices.Clone(s)
			slices.SortStableFunc(s, func(a, b E) int { return key(&a).Compare(key(&b)) })
			return s
		}
	}
	return s
}

// nextEvent is the instant of the earlier of the next change and the next view.
func nextEvent(changes []Change, ci int, views []View, vi int) (time.Time, bool) {
	switch {
	case ci < len(changes) && vi < len(views):
		if views[vi].At.Before(changes[ci].At) {
			return views[vi].At, true
		}
		return changes[ci].At, true
	case ci < len(changes):
		return changes[ci].At, true
	case vi < len(views):
		return views[vi].At, true
	}
	return time.Time{}, false
}

// span gathers one disagreement while Overlaps sweeps the history. Its lists are short (the
// identities of one lease's candidates) and reused from one disagreement to the next, as most
// are shorter than OverlapGrace and dropped.
type span struct {
	start, end time.Time
	holder     string        // the record's holder at start
	duration   time.Duration // the record's leaseDurationSeconds at start
	// identities, believers and stale gather those of each instant of disagreement; holders
	// the record's holders, in order.
	identities, believers, stale, holders []string
	// joined is when each believer first believed during s.
	joined map[string]time.Time
}

// reset starts s over as a disagreement from t.
func (s *span) reset(t time.Time, holder string, duration time.Duration) {
	s.start, s.end, s.holder, s.duration = t, time.Time{}, holder, duration
	s.identities, s.believers, s.stale, s.holders = s.identities[:0], s.believers[:0], s.stale[:0], s.holders[:0]
	s.joined = map[string]time.Time{}
}

// add counts the believers and the holder of the instant t of disagreement.
func (s *span) add(t time.Time, believers map[string]bool, holder string) {
	for id := range believers {
		if _, ok := s.joined[id]; !ok {
			s.joined[id] = t
		}
		s.believers = with(s.believers, id)
		s.identities = with(s.identities, id)
		if id != holder {
			s.stale = with(s.stale, id)
		}
	}
	if holder != "" {
		s.identities = with(s.identities, holder)
		s.holders = with(s.holders, holder)
	}
}

// with is list with id appended, unless it is there.
func with(list []string, id string) []string {
	if slices.Contains(list, id) {
		return list
	}
	return append(list, id)
}

// sorted is a sorted copy of list.
func sorted(list []string) []string {
	list = slices.Clone(list)
	slices.Sort(list)
	return list
}

// emit appends s to out as an Overlap, unless it lasted less than OverlapGrace. lasting says
// it still lasts at now.
func (s *span) emit(out []Overlap, lease string, changes []Change, views []View, now time.Time, lasting bool) []Overlap {
	end := s.end
	if lasting {
		end = now
	}
	if end.Sub(s.start) < OverlapGrace {
		return out
	}
	o := Overlap{
		Identities: sorted(s.identities),
		Believers:  sorted(s.believers),
		Stale:      sorted(s.stale),
		Holder:     s.holder,
		Start:      s.start,
	}
	if !lasting {
		o.End = s.end
	}
	stale, other := o.Stale[0], s.other(o.Stale[0])
	c := s.cause(stale, other, changes, views, end)
	scale := writersScale(changes, end)
	c.scale = scale
	o.Cause = c.cause
	// Every other stale believer's cause too (two leaders frozen one after the other, a paused
	// leader and a follower whose clock ran fast): each believed for a reason of its own, and
	// the sentence names them all.
	var also []Said
	for _, id := range o.Stale[1:] {
		oth := s.other(id)
		c2 := s.cause(id, oth, changes, views, end)
		c2.scale = scale
		also = append(also, whyOf(o, id, oth, c2, end))
	}
	// The taker's part too: a follower whose clock ran fast takes a lease before it ran out.
	for _, id := range o.Identities {
		if w, ok := tookEarly(id, changes, views, end); ok {
			also = append(also, w)
		}
	}
	o.Says = overlapText(lease, o, stale, other, c, end, now, s.late(), also)
	o.AdviceSays = overlapAdviceSays(c.cause)
	o.Text, o.Advice = o.Says.English(), o.AdviceSays.English()
	return append(out, o)
}

// late says, for each believer who first believed more than OverlapGrace into s, from when:
// the sentence names everyone who believed during the interval, not all from its start.
func (s *span) late() []Said {
	type join struct {
		id string
		at time.Time
	}
	var joins []join
	for id, at := range s.joined {
		if at.Sub(s.start) > OverlapGrace {
			joins = append(joins, join{id, at})
		}
	}
	slices.SortFunc(joins, func(a, b join) int { return cmp.Or(a.at.Compare(b.at), strings.Compare(a.id, b.id)) })
	out := make([]Said, len(joins))
	for i, j := range joins {
		out[i] = say("judge.joinedAt", Shown(j.id), clock(j.at))
	}
	return out
}

// other is the first holder the record named during s that is not id; "" if none.
func (s *span) other(id string) string {
	for _, h := range s.holders {
		if h != id {
			return h
		}
	}
	return ""
}

// cause is why a stale believer believed, with the figures its sentence needs.
type cause struct {
	cause   string
	latency time.Duration // the largest added round trip, for CauseSlowNetwork
	loss    int           // the largest share of requests lost, in percent, for CauseLoss
	offset  time.Duration // the clock offset, for CauseClockOffset
	rate    float64       // the clock's rate, for CauseClockDrift
	// saw is, for CausePaused, when the believer, running again, had read that the other
	// holder held the lease and still believed it led; zero when it never did.
	saw time.Time
	// otherWriter is, for CauseUnknown, whether the other holder is no candidate (it never
	// reported a view) and wrote itself into the record before the believer's hold ran out:
	// a writer that follows no election's rules, such as kubectl.
	otherWriter bool
	// scale is how many of the lease's writers' seconds pass in one of the server's
	// (TimeScaleAnnotation): a lesson run at 2x tells its lengths on its own clock.
	scale float64
}

// length is a span of the server's clock in words: on the writers' clock too when it runs at
// another rate, so that a lesson at 2x reads the seconds its narration counts.
func (c cause) length(d time.Duration) any {
	if c.scale == 0 || c.scale == 1 {
		return seconds(d)
	}
	return say("judge.scaledLength", seconds(time.Duration(float64(d)*c.scale)), seconds(d))
}

// writersScale is the TimeScaleAnnotation of the last change up to end that wrote a duration:
// its leaseDurationSeconds on its writers' clock against its hold on the server's.
func writersScale(changes []Change, end time.Time) float64 {
	for i := len(changes) - 1; i >= 0; i-- {
		c := &changes[i]
		if c.At.After(end) || c.Duration <= 0 {
			continue
		}
		return float64(c.Written()) / float64(c.Duration)
	}
	return 1
}

// SlowNetworkLatency is the added round trip from which a stale belief is put down to the
// network.
const SlowNetworkLatency = time.Second

// cause finds why id believed it led during s (up to end) from what it recorded: its views
// from one lease duration before the start to the end (and the one in effect then), and the
// record's changes in that time. Its faults come first, in the order of the Cause constants;
// then a release of its own term. other is the holder it missed ("" when none).
func (s *span) cause(id, other string, changes []Change, views []View, end time.Time) cause {
	from := s.start.Add(-s.duration)
	var (
		c                                   cause
		paused, dead, partitioned, released bool
	)
	see := func(v *View) {
		f := &v.Faults
		paused = paused || f.Paused
		dead = dead || f.DeadConnection
		partitioned = partitioned || f.Partition != tabproto.PartitionNone
		released = released || v.Decision == "released"
		c.latency = max(c.latency, f.Latency())
		c.loss = max(c.loss, f.LossPercent)
		if c.offset == 0 {
			c.offset = f.ClockOffset()
		}
		if c.rate == 0 && f.ClockRate != 0 && f.ClockRate != 1 {
			c.rate = f.ClockRate
		}
	}
	first := sort.Search(len(views), func(i int) bool { return views[i].At.After(from) })
	// The view in effect as the window opens may be much older: a pause that began long
	// before another took over.
	for i := first - 1; i >= 0; i-- {
		if views[i].Identity == id {
			see(&views[i])
			break
		}
	}
	for i := first; i < len(views) && !views[i].At.After(end); i++ {
		if views[i].Identity == id {
			see(&views[i])
		}
	}
	switch {
	case s.holder == "" && deletedUnder(id, changes, s.start):
		// Whatever else was wrong with it, a holder believes until its next renewal that a
		// lease deleted under it is still its own.
		c.cause = CauseDeleted
	case paused:
		c.cause = CausePaused
	case dead:
		// Whatever else was wrong with its network, it waited on a dead connection.
		c.cause = CauseDeadConnection
	case c.rate != 0 && c.rate < 1:
		// A partition alone is safe (the leader gives up at its renew deadline, before the
		// lease runs out); counted on a slow clock, that deadline outlasts the lease.
		c.cause = CauseClockDrift
	case partitioned:
		c.cause = CausePartitioned
	case c.loss > 0:
		c.cause = CauseLoss
	case c.latency >= SlowNetworkLatency:
		c.cause = CauseSlowNetwork
	case c.rate != 0:
		c.cause = CauseClockDrift
	case c.offset != 0:
		c.cause = CauseClockOffset
	case released || releasedBy(id, changes, from, end):
		c.cause = CauseReleased
	default:
		c.cause = CauseUnknown
		c.otherWriter = other != "" && !reported(other, views) && tookOver(id, other, changes, from, end)
	}
	if c.cause == CausePaused && other != "" {
		// Running again, it read the record and went on believing: the pause alone does not
		// explain the rest.
		for i := first; i < len(views) && !views[i].At.After(end); i++ {
			if v := &views[i]; v.Identity == id && v.At.After(s.start) && !v.Faults.Paused && believes(v) && v.Holder == other {
				if end.Sub(v.At) >= OverlapGrace {
					c.saw = v.At
				}
				break
			}
		}
	}
	return c
}

// reported reports whether id ever reported a view of itself: whether it is a candidate.
func reported(id string, views []View) bool {
	return slices.ContainsFunc(views, func(v View) bool { return v.Identity == id })
}

// tookOver reports whether the record went from naming id to naming other before id's hold ran
// out, after from and by end.
func tookOver(id, other string, changes []Change, from, end time.Time) bool {
	return handedOver(id, other, changes, from, end, continuous)
}

// deletedUnder reports whether, at t, the record was gone, deleted while it named id.
func deletedUnder(id string, changes []Change, t time.Time) bool {
	i := sort.Search(len(changes), func(i int) bool { return changes[i].At.After(t) }) - 1
	return i >= 1 && changes[i].Deleted && !changes[i-1].Deleted && changes[i-1].Holder == id
}

// releasedBy reports whether the record went from naming id to naming nobody (a release, not
// a deletion) after from and by end.
func releasedBy(id string, changes []Change, from, end time.Time) bool {
	return handedOver(id, "", changes, from, end, func(Change, Change) bool { return true })
}

// handedOver reports whether a change after from and by end wrote next as the holder over a
// record that named id, neither a deletion, the two as within demands.
func handedOver(id, next string, changes []Change, from, end time.Time, within func(prev, c Change) bool) bool {
	first := sort.Search(len(changes), func(i int) bool { return changes[i].At.After(from) })
	for i := max(first, 1); i < len(changes) && !changes[i].At.After(end); i++ {
		c, prev := &changes[i], &changes[i-1]
		if !c.Deleted && c.Holder == next && !prev.Deleted && prev.Holder == id && within(*prev, *c) {
			return true
		}
	}
	return false
}

// overlapText says o in a sentence: who believed they led, for how long, what the record said
// and why stale (the first stale believer) believed, other being the holder it missed; end is
// when o ended, or now.
func overlapText(lease string, o Overlap, stale, other string, c cause, end, now time.Time, late, also []Said) Said {
	var parts []Said
	switch len(o.Believers) {
	case 1:
		parts = append(parts, say("judge.believed1", Shown(o.Believers[0]), lease))
	case 2:
		parts = append(parts, say("judge.believed2", Shown(o.Believers[0]), Shown(o.Believers[1]), lease))
	default:
		parts = append(parts, say("judge.believedAll", namesSays(o.Believers), lease))
	}
	if o.End.IsZero() {
		parts = append(parts, say("judge.forSoFar", c.length(now.Sub(o.Start)), clock(o.Start)))
	} else {
		parts = append(parts, say("judge.forSpan", c.length(o.End.Sub(o.Start)), clock(o.Start), clock(o.End)))
	}
	parts = append(parts, late...)
	released := c.cause == CauseReleased && o.Holder == ""
	switch {
	case released && len(o.Believers) == 1:
		parts = append(parts, say("judge.afterReleasing"))
	case released:
		parts = append(parts, say("judge.afterReleased", Shown(stale)))
	case c.cause == CauseDeleted:
		parts = append(parts, say("judge.afterDeleted"))
	case !slices.Contains(o.Believers, o.Holder):
		parts = append(parts, say("judge.whileRecordNamed", nobody(o.Holder)))
	}
	why := whyOf(o, stale, other, c, end)
	for _, a := range also {
		why = concat(why, say("judge.alsoWhy", a))
	}
	parts = append(parts, say("judge.because", why))
	return concat(parts...)
}

// tookEarly says, when id took the lease from another holder before that holder's lease ran
// out by the server's count, with its own clock running fast, that it did: a cause of the split
// brain beside the stale believer's own.
func tookEarly(id string, changes []Change, views []View, end time.Time) (Said, bool) {
	for i, c := range changes {
		if c.At.After(end) {
			break
		}
		if i == 0 || c.Holder != id {
			continue
		}
		prev := changes[i-1]
		if prev.Holder == "" || prev.Holder == id || prev.Deleted || !c.At.Before(prev.Expiry()) {
			continue
		}
		if v := viewAt(views, id, c.At); v != nil && v.Faults.ClockRate > 1 {
			return say("judge.tookEarlyFast", Shown(id), seconds(prev.Expiry().Sub(c.At)), Shown(prev.Holder), fmt.Sprintf("%.2f", v.Faults.ClockRate)), true
		}
	}
	return Said{}, false
}

// whyOf says why stale believed it led during o, up to end: its cause c, and other, the holder
// it missed ("" when none).
func whyOf(o Overlap, stale, other string, c cause, end time.Time) Said {
	missed := say("judge.missedRecord")
	if other != "" {
		missed = say("judge.missedTakeover", Shown(other))
	}
	var why Said
	switch c.cause {
	case CausePaused:
		why = say("judge.whyPaused", Shown(stale), missed)
		if !c.saw.IsZero() {
			why = concat(why, say("judge.thenSaw", Shown(stale), clock(c.saw), Shown(other), c.length(end.Sub(c.saw))))
		}
	case CausePartitioned:
		why = say("judge.whyPartitioned", Shown(stale), missed)
	case CauseDeadConnection:
		why = say("judge.whyDeadConnection", Shown(stale), missed)
	case CauseLoss:
		why = say("judge.whyLoss", Shown(stale), c.loss, missed)
	case CauseSlowNetwork:
		why = say("judge.whySlow", Shown(stale), seconds(c.latency), missed)
	case CauseClockOffset:
		key, d := "judge.whyClockAhead", c.offset
		if d < 0 {
			key, d = "judge.whyClockBehind", -d
		}
		why = say(key, Shown(stale), seconds(d))
	case CauseClockDrift:
		key := "judge.whyClockFast"
		if c.rate < 1 {
			key = "judge.whyClockSlow"
		}
		why = say(key, Shown(stale), fmt.Sprintf("%.2f", c.rate))
	case CauseReleased:
		if o.Holder == "" {
			why = say("judge.whyReleasedNobody")
		} else {
			why = say("judge.whyReleased", Shown(stale))
		}
	case CauseDeleted:
		why = say("judge.whyDeleted", Shown(stale))
	default:
		why = say("judge.whyUnknown", Shown(stale))
		if c.otherWriter {
			why = say("judge.whyOtherWriter", Shown(stale), Shown(other))
		}
	}
	return why
}

// namesSays is the list of identities, in whichever language.
func namesSays(ids []string) Said {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return Said{Key: KeyList, Args: args}
}

// names lists identities for a sentence in l: "a, b and c", "a、b 和 c"; past four, "a, b, c and
// 5 others", "a、b、c 等 8 个".
func names(l said.Lang, ids []string) string {
	const most = 4
	var shown []string
	for _, id := range ids[:min(len(ids), most-1)] {
		shown = append(shown, Shown(id))
	}
	sep := listWords["judge.listSep"].In(l)
	switch {
	case len(ids) > most:
		return listWords["judge.listMore"].In(l, strings.Join(shown, sep), len(ids), len(ids)-len(shown))
	case len(ids) == most:
		shown = append(shown, Shown(ids[most-1]))
	}
	if len(shown) < 2 {
		return strings.Join(shown, "")
	}
	return listWords["judge.listAnd"].In(l, strings.Join(shown[:len(shown)-1], sep), shown[len(shown)-1])
}

// listWords are the words that join a list of identities.
var listWords = said.Register(map[string]said.Text{
	"judge.listSep":  {En: ", ", Zh: "、"},
	"judge.listAnd":  {En: "%s and %s", Zh: "%s 和 %s"},
	"judge.listMore": {En: "%[1]s and %[3]d others", Zh: "%[1]s 等 %[2]d 个"},
})

// nobody is a holder in words: "nobody" for none.
func nobody(holder string) Said {
	if holder == "" {
		return say("judge.nobody")
	}
	return same(Shown(holder))
}

// seconds is a duration in words, to a tenth of a second ("3.2 s", in Chinese "3.2 秒"), and
// from 100 s in minutes and seconds (MinutesAndSeconds).
func seconds(d time.Duration) Said {
	if d >= 100*time.Second {
		return MinutesAndSeconds(d)
	}
	return say("judge.secs", fmt.Sprintf("%.1f", d.Seconds()))
}

// MinutesAndSeconds is a length in words to the second: "1 min 51 s", "1 分 51 秒". A length of
// 100 s or more reads so in the judge's sentences and in the screens' tables alike.
func MinutesAndSeconds(d time.Duration) Said {
	s := int(d.Round(time.Second) / time.Second)
	return say("judge.minSecs", s/60, s%60)
}

// clock is an instant in words, in the server's local time (as the screens' other times, and
// as the browser on the same machine shows them), rounded to a tenth of a second: "14:02:11.3"
// (the screens show 14:02:11.286 as that, not as .2).
func clock(t time.Time) string { return t.Local().Round(100 * time.Millisecond).Format("15:04:05.0") }

// overlapAdviceSays says in a sentence what real code does about an overlap of the cause.
func overlapAdviceSays(cause string) Said {
	switch cause {
	case CauseClockOffset:
		return say("advice." + cause)
	case CausePaused, CauseDeadConnection, CausePartitioned, CauseLoss, CauseSlowNetwork, CauseClockDrift, CauseReleased, CauseDeleted:
		return say("advice."+cause, say("advice.fencing"), say("advice.exit"))
	}
	return say("advice.unknown", say("advice.fencing"), say("advice.exit"))
}
