package candidate

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// logLine is one sentence of the decision log, before it is stamped. Lines
// with the same kind and a non-empty fold key merge into the newest entry.
type logLine struct {
	kind LogKind
	fold string
	text string
}

// said is a log line with the message it says, for pages in other languages.
type said struct {
	logLine
	msg tabproto.Msg
}

// scene is what the narrator knows besides the outcome: the candidate's
// configuration, the clocks and, while leading, the current renew round's
// deadline.
type scene struct {
	cfg   Config
	now   time.Time // the real clock
	own   time.Time // the candidate's own clock (real plus offset)
	round time.Time // the renew round's deadline while leading; zero while following
}

// tell turns an outcome into the decision log's sentence, with the message it
// says. It reports false for outcomes the log does not tell (an interrupted
// step, a keeper look with nothing due, a network error on the fast path,
// which shows up again in the read that follows).
func tell(o outcome, s scene) (said, bool) {
	if l, ok := narrateAttempt(o, s); ok {
		return l, true
	}
	if l, ok := narrateFailure(o, s); ok {
		return l, true
	}
	if l, ok := narrateKeeper(o, s); ok {
		return l, true
	}
	return narrateLifecycle(o, s)
}

// narrateAttempt tells how an attempt of the elector ended, and what it did
// on the way.
func narrateAttempt(o outcome, s scene) (said, bool) {
	r := o.rec
	switch o.kind {
	case outCreated:
		return line(LogAcquired, "", say("log.created")), true
	case outAcquired:
		return line(LogAcquired, "", say("log.acquired", r.Transitions)), true
	case outRenewed:
		switch {
		case o.fast || !s.round.IsZero():
			return line(LogRenewed, "renew", say("log.renewed")), true
		case s.cfg.Coordinated:
			return line(LogAcquired, "", say("log.pickedMe")), true
		}
		return line(LogAcquired, "", say("log.stillMine", r.Transitions)), true
	case outHeld:
		return narrateHeld(o, s), true
	case outExpired:
		return line(LogWaiting, "wait:expired", say("log.expiredWaitServer", leadNote(s))), true
	case outNoLease:
		return line(LogWaiting, "wait:", say("log.noLeaseWaitServer", leadNote(s))), true
	case outEndOfTerm:
		if !s.round.IsZero() {
			return line(LogWaiting, "prefer:"+r.PreferredHolder, say("log.preferStepDown", r.PreferredHolder, leadNote(s))), true
		}
		return line(LogWaiting, "prefer:"+r.PreferredHolder, say("log.preferNotRenewing", r.PreferredHolder)), true
	case outLostRace:
		return line(LogConflict, "", say("log.lostRace", r.Holder)), true
	case outGoingFor:
		if r.Holder == "" {
			return line(LogTrying, "", say("log.free")), true
		}
		return line(LogTrying, "", say("log.goingFor", r.Holder, secsRound(o.unchangedFor))), true
	case outReleased:
		return line(LogReleased, "", say("log.released")), true
	case outNotReleased:
		return line(LogStopped, "", say("log.notReleased", nameOrNobody(r.Holder))), true
	case outGone:
		return line(LogStopped, "", say("log.gone")), true
	}
	return said{}, false
}

// narrateHeld tells that another candidate holds the lease: while leading,
// how long leadership lasts; while following, when the lease expires by this
// candidate's clock, and why an old renewTime does not make it expire sooner.
// In coordinated mode the server, not the expiry, decides what comes next.
func narrateHeld(o outcome, s scene) said {
	h := o.rec.Holder
	switch {
	case s.cfg.Coordinated && h == "":
		return line(LogWaiting, "wait:", say("log.noHolderWaitServer", leadNote(s)))
	case s.cfg.Coordinated:
		return line(LogWaiting, "wait:"+h, say("log.heldWaitServer", h, leadNote(s)))
	case !s.round.IsZero():
		return line(LogWaiting, "wait:"+h, say("log.nowHeld", h, secsRound(o.expiresIn), leadNote(s)))
	}
	return line(LogWaiting, "wait:"+h, say("log.heldWait", h, secsRound(o.expiresIn), recordAgeNote(o.rec, s)))
}

// narrateFailure tells a conflict or a failed request.
func narrateFailure(o outcome, s scene) (said, bool) {
	if o.kind == outConflict {
		switch o.op {
		case opCreate:
			return line(LogConflict, "", say("log.conflictCreate")), true
		case opRenew:
			return line(LogConflict, "", say("log.conflictRenew")), true
		}
		if s.cfg.Coordinated {
			return line(LogConflict, "", say("log.conflictCoordinated", leadNote(s))), true
		}
		return line(LogConflict, "", say("log.conflict", leadNote(s))), true
	}
	if o.kind != outFailed {
		return said{}, false
	}
	cause := say("log.cutOff")
	if !o.cutOff {
		cause = errSays(o.err)
	}
	c := cause.In("en")
	switch o.op {
	case opRead:
		return line(LogError, "read:"+c, say("log.readFailed", cause, leadNote(s))), true
	case opCreate:
		return line(LogError, "create:"+c, say("log.createFailed", cause)), true
	case opWrite:
		return line(LogError, "write:"+c, say("log.writeFailed", cause, leadNote(s))), true
	case opRenew:
		// A refusal is news; a network error shows up again in the read that follows.
		var ae *APIError
		if errors.As(o.err, &ae) {
			return line(LogError, "", say("log.renewRefused", o.err.Error())), true
		}
		return said{}, false
	case opReleaseRead:
		return line(LogError, "", say("log.releaseReadFailed", cause)), true
	case opReleaseWrite:
		return line(LogError, "", say("log.releaseFailed", cause)), true
	}
	var what string
	switch o.op {
	case opCandRead:
		what = "log.candReadFailed"
	case opCandCreate:
		what = "log.candCreateFailed"
	case opCandRenew:
		what = "log.candRenewFailed"
	default:
		return said{}, false
	}
	msg := errSays(o.err)
	if o.cutOff {
		msg = say("log.candCutOff")
	}
	whatEn := strings.TrimSuffix(say(what, "").In("en"), ": ")
	return line(LogError, "cand:"+whatEn+msg.In("en"), say(what, msg)), true
}

// narrateKeeper tells what the LeaseCandidate keeper did.
func narrateKeeper(o outcome, s scene) (said, bool) {
	c := s.cfg
	switch o.kind {
	case outDeclared:
		return line(LogCandidate, string(LogCandidate), say("log.declared", c.Namespace, c.Identity, c.LeaseName, c.BinaryVersion, c.EmulationVersion)), true
	case outCandidateRenewed:
		return line(LogCandidate, string(LogCandidate), say("log.candRenewed")), true
	case outPinged:
		return line(LogPinged, string(LogPinged), say("log.pinged")), true
	}
	return said{}, false
}

// narrateLifecycle tells how the candidate started, stopped and started
// again, and which faults were switched on or off.
func narrateLifecycle(o outcome, s scene) (said, bool) {
	c := s.cfg
	switch o.kind {
	case outJoined:
		return line(LogJoined, "", say("log.joined", c.Namespace, c.LeaseName, c.Identity, secs(c.LeaseDuration), secs(c.RenewDeadline), secs(c.RetryPeriod))), true
	case outCoordinatedMode:
		return line(LogJoined, "", say("log.coordinatedMode", c.BinaryVersion, c.EmulationVersion)), true
	case outRejoined:
		return line(LogJoined, "", say("log.rejoined")), true
	case outStartingOver:
		return line(LogJoined, "", say("log.startingOver")), true
	case outLost:
		return line(LogLost, "", say("log.lost")), true
	case outCrashed:
		return line(LogStopped, "", say("log.crashed")), true
	case outCrashedLeading:
		return line(LogStopped, "", say("log.crashedLeading")), true
	case outStopping:
		return line(LogStopped, "", say("log.stopping")), true
	case outNothingToRelease:
		return line(LogStopped, "", say("log.nothingToRelease")), true
	case outIgnored:
		switch o.cmd {
		case tabproto.CommandPause, tabproto.CommandRelease, tabproto.CommandCrash, tabproto.CommandRejoin:
			key := "log.ignored." + o.cmd
			return line(LogStopped, key, say(key)), true
		}
	}
	return narrateFault(o)
}

// leadNote reminds, while leading, how long leadership lasts without a
// successful renewal.
func leadNote(s scene) tabproto.Msg {
	if s.round.IsZero() {
		return tabproto.Msg{}
	}
	left := s.round.Sub(s.now)
	if left <= 0 {
		return say("log.leadNotePassed")
	}
	return say("log.leadNote", secsRound(left))
}

// recordAgeNote explains, when the server's record looks long expired, why
// the candidate still waits: expiry counts from its own observation.
func recordAgeNote(r record, s scene) tabproto.Msg {
	if r.RenewTime.IsZero() {
		return tabproto.Msg{}
	}
	late := s.own.Sub(r.RenewTime.Add(r.duration()))
	if late < time.Second {
		return tabproto.Msg{}
	}
	return say("log.recordAge", secsRound(late))
}

// secsRound formats a duration to a tenth of a second: "4.1 s".
func secsRound(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

// nameOrNobody names a holder, or nobody.
func nameOrNobody(s string) tabproto.Msg {
	if s == "" {
		return say("log.nobody")
	}
	return plain(s)
}

// say is the narration's message key with args (tabproto.Say).
func say(key string, args ...any) tabproto.Msg { return tabproto.Say(key, args...) }

// errSays is a failed request's error as a message: the candidate's own errors (a timeout, a
// partition, an unreachable server) in every language, any other as it was written (the
// server's refusals stay as kube-apiserver words them).
func errSays(err error) tabproto.Msg {
	if te, ok := err.(*TimeoutError); ok {
		return te.Says()
	}
	switch err {
	case ErrPartitioned:
		return say("log.errPartitioned")
	case ErrUnreachable:
		return say("log.errUnreachable")
	case ErrConnectionLost:
		return say("log.errConnectionLost")
	}
	return plain(err.Error())
}

// plain is a string that reads the same in every language, as a message.
func plain(s string) tabproto.Msg { return tabproto.Say("log.plain", s) }

// line is a log line of kind that folds by fold and says m; its text is m in English.
func line(kind LogKind, fold string, m tabproto.Msg) said {
	return said{logLine{kind: kind, fold: fold, text: m.In("en")}, m}
}
