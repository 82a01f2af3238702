package election

import (
	"errors"
	"fmt"
	"strings"

	"github.com/leaselab/leaselab/wasm/said"
)

// Said is a sentence of the controller (wasm/said): the decision's Message and the log carry its
// English; the screens put a decision in their reader's language. Its arguments are strings (a
// name, a version, a duration, an API server's error, which read the same in every language)
// or sentences of their own.
type Said = said.Said

// KeyList is the key of a list ("a, b"; in Chinese "a、b"): its arguments are the items.
var KeyList = said.RegisterList("election.list", func(l said.Lang, items []string) string {
	return strings.Join(items, said.Text{En: ", ", Zh: "、"}.In(l))
})

var (
	same   = said.Same
	concat = said.Concat
)

// say is the sentence key with args; an argument that is not a Said is kept as its text, as
// the controller's formats take every argument with %s.
func say(key string, args ...any) Said {
	s := Said{Key: key, Args: make([]any, len(args))}
	for i, a := range args {
		if n, ok := a.(Said); ok {
			s.Args[i] = n
		} else {
			s.Args[i] = fmt.Sprint(a)
		}
	}
	return s
}

// list lists items.
func list(items []string) Said {
	args := make([]any, len(items))
	for i, it := range items {
		args[i] = it
	}
	return Said{Key: KeyList, Args: args}
}

// listSaid lists sentences.
func listSaid(items []Said) Said {
	args := make([]any, len(items))
	for i, it := range items {
		args[i] = it
	}
	return Said{Key: KeyList, Args: args}
}

// saidError is an error the controller words as a sentence.
type saidError struct{ said Said }

func (e *saidError) Error() string { return e.said.English() }

// Says is the error as a sentence.
func (e *saidError) Says() Said { return e.said }

// errorf is an error that says the sentence key with args.
func errorf(key string, args ...any) error { return &saidError{say(key, args...)} }

// ErrorSays is err as a sentence: its own when it words itself (the controller's errors, the
// strategy conflicts), else its text, which reads the same in every language.
func ErrorSays(err error) Said {
	var s interface{ Says() Said }
	if errors.As(err, &s) && error(s.(error)).Error() == err.Error() {
		return s.Says()
	}
	return same(err.Error())
}

// english holds the controller's sentences.
var english = said.Register(map[string]said.Text{
	// Why a strategy.
	"election.strategyOnly": {En: "strategy %s: asked by the only candidate %s", Zh: "策略 %s：由唯一的候选者 %s 提出"},

	"election.strategyEvery": {En: "strategy %s: asked by every candidate", Zh: "策略 %s：所有候选者都提出了它"},

	"election.strategyTop": {En: "strategy %s: asked by %s, at the highest binary version %s", Zh: "策略 %s：由二进制版本最高（%[3]s）的 %[2]s 提出"},

	"election.strategyFirst": {En: "strategy %s: first choice of every candidate", Zh: "策略 %s：所有候选者的首选"},

	"election.strategySupersedes": {En: "strategy %s: it supersedes every other preferred strategy", Zh: "策略 %s：它优先于其他所有偏好的策略"},

	// kube-apiserver's message for a strategy conflict, and the v1alpha1 disagreement.
	"election.conflictError": {En: "candidates %s, %s at same binary version but received differing strategies %s, %s", Zh: "候选者 %s、%s 的二进制版本相同，却提出了不同的策略 %s、%s"},

	"election.disagree": {En: "candidates disagree on the strategy: %s; %s", Zh: "候选者在策略上意见不一：%s；%s"},

	"election.prefers": {En: "%s prefers %s", Zh: "%s 偏好 %s"},

	"election.contradict": {En: "their preferences contradict each other", Zh: "它们的偏好相互矛盾"},

	"election.supersedesItself": {En: "%s follows itself, so it supersedes itself", Zh: "%s 紧跟在自身之后，因此它优先于自身"},

	"election.noRoot": {En: "no strategy supersedes all others (%s)", Zh: "没有一个策略优先于其他所有策略（%s）"},

	// Why a candidate wins.
	"election.skippedEmulation": {En: "%s (emulationVersion %s does not parse)", Zh: "%s（emulationVersion %s 无法解析）"},

	"election.skippedBinary": {En: "%s (binaryVersion %s does not parse)", Zh: "%s（binaryVersion %s 无法解析）"},

	"election.skipped": {En: "; skipped %s", Zh: "；跳过了 %s"},

	"election.noParsable": {En: "no candidate has parsable versions%s", Zh: "没有候选者的版本可以解析%s"},

	"election.pickedOnly": {En: "picked %s: the only candidate (emulation %s, binary %s)%s", Zh: "选中 %s：唯一的候选者（模拟版本 %s，二进制版本 %s）%s"},

	"election.picked": {En: "picked %s: %s%s", Zh: "选中 %s：%s%s"},

	"election.whyEmulation": {En: "emulation %s < %s of %s", Zh: "模拟版本 %s < %[3]s 的 %[2]s"},

	"election.whyBinary": {En: "emulation %s like %s, binary %s < %s", Zh: "模拟版本 %s 与 %s 相同，二进制版本 %s < %s"},

	"election.whyCreated": {En: "same versions as %s (emulation %s, binary %s), created earlier (%s < %s)", Zh: "版本与 %s 相同（模拟版本 %s，二进制版本 %s），创建得更早（%s < %s）"},

	"election.whyName": {En: "same versions and creation time as %s (emulation %s, binary %s), first by name", Zh: "版本和创建时间都与 %s 相同（模拟版本 %s，二进制版本 %s），按名称排在前面"},

	// Why an election is needed, or not.
	"election.noLease": {En: "the lease does not exist", Zh: "租约不存在"},

	"election.noRenewTime": {En: "the lease has no renewTime", Zh: "租约没有 renewTime"},

	"election.noDuration": {En: "the lease has no leaseDurationSeconds", Zh: "租约没有 leaseDurationSeconds"},

	"election.expired": {En: "the lease expired %s ago", Zh: "租约已在 %s 前过期"},

	"election.noHolder": {En: "the lease has no holder", Zh: "租约没有持有者"},

	"election.notRenewed": {En: "%s has not renewed for %s", Zh: "%s 已有 %s 没有续约"},

	"election.leftToOther": {En: "%s is left to another controller", Zh: "%s，交由其他控制器处理"},

	"election.holderBest": {En: "holder %s is already the best candidate: %s", Zh: "持有者 %s 已是最佳候选者：%s"},

	"election.holderNotBest": {En: "holder %s is not the best candidate: %s", Zh: "持有者 %s 不是最佳候选者：%s"},

	"election.notHandled": {En: "%s is not handled here: the lease gets no holder", Zh: "%s，这里不处理：租约不设持有者"},

	"election.noAvailable": {En: "no available candidates", Zh: "没有可用的候选者"},

	"election.noSuitable": {En: "could not find a suitable candidate: %s", Zh: "找不到合适的候选者：%s"},

	"election.noCandidates": {En: "no candidates", Zh: "没有候选者"},

	"election.noPreference": {En: "no candidate prefers any strategy", Zh: "没有候选者偏好任何策略"},

	// What an update changes.
	"election.strategyWas": {En: "strategy %s (was %s)", Zh: "策略 %s（原为 %s）"},

	"election.none": {En: "none", Zh: "无"},

	"election.assignedNoHolder": {En: "assigned %s (the lease had no holder)", Zh: "指定了 %s（租约没有持有者）"},

	"election.assignedExpired": {En: "assigned %s (the lease of %s expired)", Zh: "指定了 %s（%s 的租约已过期）"},

	"election.setPreferred": {En: "set preferredHolder %s (holder %s must step down)", Zh: "设置 preferredHolder 为 %s（持有者 %s 须让位）"},

	"election.asWanted": {En: "the lease already is as the election wants", Zh: "租约已符合选举的要求"},

	"election.changes": {En: "%s, %s", Zh: "%s，%s"},

	"election.because": {En: "%s: %s", Zh: "%s：%s"},

	// The controller's decisions.
	"election.noElection": {En: "no election: %s", Zh: "无需选举：%s"},

	"election.conflict": {En: "strategy conflict: %s; the lease is left alone until the candidates agree", Zh: "策略冲突：%s；在候选者达成一致之前不改动租约"},

	"election.pinged": {En: "pinged %s: election needed because %s", Zh: "已 ping %s：需要选举，因为%s"},

	"election.stillWaiting": {En: "; still waiting for %s", Zh: "；仍在等待 %s"},

	"election.noAnswerFrom": {En: "; no answer from %s", Zh: "；%s 没有应答"},

	"election.waiting": {En: "waiting up to %s for %s to answer the ping", Zh: "最多等待 %s，等 %s 应答 ping"},

	"election.noneAnswered": {En: "no candidates answered: %s did not answer the ping within %s", Zh: "没有候选者应答：%s 没有在 %s 内应答 ping"},

	"election.created": {En: "created the lease with holder %s: %s", Zh: "已创建租约，持有者为 %s：%s"},

	"election.createdStrategy": {En: "created the lease with strategy %s and no holder: %s", Zh: "已创建租约，策略为 %s，没有持有者：%s"},

	"election.deleted": {En: "deleted candidate %s: %s", Zh: "已删除候选者 %s：%s"},

	"election.gcNoRenewTime": {En: "it has no renewTime", Zh: "它没有 renewTime"},

	"election.gcLastRenewed": {En: "it last renewed %s ago (more than %s)", Zh: "它最后一次续约是在 %s 前（超过了 %s）"},

	"election.errPing": {En: "ping: %s", Zh: "ping：%s"},

	"election.retryPing": {En: "ping met a newer version, and is tried again: %s", Zh: "ping 遇到了更新的版本，将重试：%s"},

	"election.errCreate": {En: "create lease: %s", Zh: "创建租约：%s"},

	"election.errGet": {En: "get lease: %s", Zh: "读取租约：%s"},

	"election.errUpdate": {En: "update lease: %s", Zh: "更新租约：%s"},
})
