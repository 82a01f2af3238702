//go:build !js

package candidate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// TestNarrate pins the decision log's sentences: the page shows them, and the
// workshop's material quotes them.
func TestNarrate(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cfg := Config{Namespace: "default", LeaseName: "demo", Identity: "tab-1",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
	coord := cfg
	coord.Coordinated, coord.BinaryVersion, coord.EmulationVersion = true, "1.36.0", "1.35.0"
	following := scene{cfg: cfg, now: now, own: now}
	leading := scene{cfg: cfg, now: now, own: now, round: now.Add(4500 * time.Millisecond)}
	late := scene{cfg: cfg, now: now, own: now, round: now}
	coordFollowing := scene{cfg: coord, now: now, own: now}
	coordLeading := scene{cfg: coord, now: now, own: now, round: now.Add(3 * time.Second)}
	refused := &APIError{StatusCode: 422, Status: Status{Message: "Lease is invalid"}}
	offline := ErrPartitioned
	ghost := record{Holder: "ghost", DurationSeconds: 10, RenewTime: now.Add(-time.Minute)}

	for _, tc := range []struct {
		name string
		o    outcome
		s    scene
		want logLine
	}{
		{"created", outcome{kind: outCreated}, following, logLine{LogAcquired, "", "the lease did not exist: created it and acquired it (transitions 0)"}},
		{"acquired", outcome{kind: outAcquired, rec: record{Transitions: 4}}, following, logLine{LogAcquired, "", "acquired (transitions 4)"}},
		{"renewed fast", outcome{kind: outRenewed, fast: true}, following, logLine{LogRenewed, "renew", "renewed"}},
		{"renewed leading", outcome{kind: outRenewed}, leading, logLine{LogRenewed, "renew", "renewed"}},
		{"still mine", outcome{kind: outRenewed, rec: record{Transitions: 2}}, following,
			logLine{LogAcquired, "", "the lease still names me: renewed it and lead again (transitions 2)"}},
		{"picked", outcome{kind: outRenewed}, coordFollowing, logLine{LogAcquired, "", "the server picked me: renewed the lease and lead"}},
		{"held", outcome{kind: outHeld, rec: record{Holder: "tab-2", DurationSeconds: 15, RenewTime: now}, expiresIn: 12340 * time.Millisecond}, following,
			logLine{LogWaiting, "wait:tab-2", "lease held by tab-2, expires in 12.3 s by my clock: waiting"}},
		{"held, old renewTime", outcome{kind: outHeld, rec: ghost, expiresIn: 10 * time.Second}, following,
			logLine{LogWaiting, "wait:ghost", "lease held by ghost, expires in 10.0 s by my clock (its renewTime says it expired 50.0 s ago, but I count from when I saw it change): waiting"}},
		{"held while leading", outcome{kind: outHeld, rec: record{Holder: "tab-2"}, expiresIn: 15 * time.Second}, leading,
			logLine{LogWaiting, "wait:tab-2", "lease now held by tab-2 (expires in 15.0 s by my clock); I keep leading until my renew deadline, in 4.5 s"}},
		{"coordinated held", outcome{kind: outHeld, rec: record{Holder: "tab-2"}}, coordFollowing,
			logLine{LogWaiting, "wait:tab-2", "lease held by tab-2: waiting for the server to pick a leader"}},
		{"coordinated no holder", outcome{kind: outHeld}, coordLeading,
			logLine{LogWaiting, "wait:", "the lease has no holder: waiting for the server to pick a leader; I keep leading until my renew deadline, in 3.0 s"}},
		{"coordinated expired", outcome{kind: outExpired}, coordFollowing,
			logLine{LogWaiting, "wait:expired", "the lease has expired by my clock: waiting for the server to pick a leader"}},
		{"coordinated no lease", outcome{kind: outNoLease}, coordFollowing,
			logLine{LogWaiting, "wait:", "no lease yet: waiting for the server to pick a leader"}},
		{"end of term leading", outcome{kind: outEndOfTerm, rec: record{PreferredHolder: "tab-2"}}, coordLeading,
			logLine{LogWaiting, "prefer:tab-2", "the server prefers tab-2: stepping down at my renew deadline; I keep leading until my renew deadline, in 3.0 s"}},
		{"end of term following", outcome{kind: outEndOfTerm, rec: record{PreferredHolder: "tab-2"}}, coordFollowing,
			logLine{LogWaiting, "prefer:tab-2", "the lease names me but the server prefers tab-2: not renewing it"}},
		{"lost race", outcome{kind: outLostRace, rec: record{Holder: "tab-2"}}, following, logLine{LogConflict, "", "conflict: tab-2 was faster"}},
		{"going for free", outcome{kind: outGoingFor}, following, logLine{LogTrying, "", "lease is free (no holder): trying to acquire"}},
		{"going for expired", outcome{kind: outGoingFor, rec: record{Holder: "ghost"}, unchangedFor: 15 * time.Second}, following,
			logLine{LogTrying, "", "lease held by ghost expired by my clock (no change seen for 15.0 s): trying to acquire"}},
		{"create conflict", outcome{kind: outConflict, op: opCreate}, following, logLine{LogConflict, "", "conflict: someone else created the lease first"}},
		{"renew conflict", outcome{kind: outConflict, op: opRenew}, leading,
			logLine{LogConflict, "", "renewal conflict: the lease changed since my last write; reading it again"}},
		{"write conflict", outcome{kind: outConflict, op: opWrite}, following,
			logLine{LogConflict, "", "conflict: the lease changed after I read it; someone else was faster"}},
		{"coordinated write conflict", outcome{kind: outConflict, op: opWrite}, coordLeading,
			logLine{LogConflict, "", "conflict: the lease changed after I read it; reading it again; I keep leading until my renew deadline, in 3.0 s"}},
		{"read failed", outcome{kind: outFailed, op: opRead, err: offline}, late,
			logLine{LogError, "read:network unreachable (partitioned)", "could not read the lease: network unreachable (partitioned); my renew deadline has passed"}},
		{"read cut off", outcome{kind: outFailed, op: opRead, err: context.Canceled, cutOff: true}, late,
			logLine{LogError, "read:cut off by the renew deadline", "could not read the lease: cut off by the renew deadline; my renew deadline has passed"}},
		{"create failed", outcome{kind: outFailed, op: opCreate, err: refused}, following,
			logLine{LogError, "create:Lease is invalid", "could not create the lease: Lease is invalid"}},
		{"write failed", outcome{kind: outFailed, op: opWrite, err: offline}, following,
			logLine{LogError, "write:network unreachable (partitioned)", "could not write the lease: network unreachable (partitioned)"}},
		{"renewal refused", outcome{kind: outFailed, op: opRenew, err: refused}, leading,
			logLine{LogError, "", "renewal refused (Lease is invalid); reading the lease again"}},
		{"release read failed", outcome{kind: outFailed, op: opReleaseRead, err: offline}, following,
			logLine{LogError, "", "could not release: could not read the lease: network unreachable (partitioned)"}},
		{"release write failed", outcome{kind: outFailed, op: opReleaseWrite, err: context.Canceled, cutOff: true}, following,
			logLine{LogError, "", "could not release: cut off by the renew deadline"}},
		{"candidate read failed", outcome{kind: outFailed, op: opCandRead, err: offline}, coordFollowing,
			logLine{LogError, "cand:could not read my LeaseCandidatenetwork unreachable (partitioned)", "could not read my LeaseCandidate: network unreachable (partitioned)"}},
		{"candidate renew cut off", outcome{kind: outFailed, op: opCandRenew, err: context.Canceled, cutOff: true}, coordFollowing,
			logLine{LogError, "cand:could not renew my LeaseCandidateno answer in time (cut off so that the elector is not held up)",
				"could not renew my LeaseCandidate: no answer in time (cut off so that the elector is not held up)"}},
		{"released", outcome{kind: outReleased}, following,
			logLine{LogReleased, "", "released the lease: holder cleared and leaseDurationSeconds 1, so another candidate can take it at once"}},
		{"not released", outcome{kind: outNotReleased}, following, logLine{LogStopped, "", "not releasing: the last record I saw names nobody"}},
		{"gone", outcome{kind: outGone}, following, logLine{LogStopped, "", "nothing to release: the lease is gone"}},
		{"declared", outcome{kind: outDeclared}, coordFollowing,
			logLine{LogCandidate, "candidate", "declared my LeaseCandidate default/tab-1 for demo (binary 1.36.0, emulation 1.35.0)"}},
		{"candidate renewed", outcome{kind: outCandidateRenewed}, coordFollowing, logLine{LogCandidate, "candidate", "renewed my LeaseCandidate"}},
		{"pinged", outcome{kind: outPinged}, coordFollowing, logLine{LogPinged, "pinged", "pinged by the server: answering (renewed my LeaseCandidate)"}},
		{"joined", outcome{kind: outJoined}, following,
			logLine{LogJoined, "", "joined: competing for default/demo as tab-1 (lease 15 s, renew deadline 10 s, retry every 2 s)"}},
		{"coordinated mode", outcome{kind: outCoordinatedMode}, coordFollowing,
			logLine{LogJoined, "", "coordinated mode: binary 1.36.0, emulation 1.35.0; the server picks the leader among the candidates"}},
		{"rejoined", outcome{kind: outRejoined}, following, logLine{LogJoined, "", "rejoined as a fresh candidate: nothing observed yet"}},
		{"starting over", outcome{kind: outStartingOver}, following,
			logLine{LogJoined, "", "starting over as a fresh candidate, as a restarted process would: nothing observed yet"}},
		{"lost", outcome{kind: outLost}, late, logLine{LogLost, "", "renew deadline passed without a successful renewal: stopped leading"}},
		{"crashed", outcome{kind: outCrashed}, following, logLine{LogStopped, "", "crashed: stopped"}},
		{"crashed leading", outcome{kind: outCrashedLeading}, leading,
			logLine{LogStopped, "", "crashed while leading: stopped without releasing, so the others must wait for the lease to expire"}},
		{"stopping", outcome{kind: outStopping}, following, logLine{LogStopped, "", "stopping cleanly"}},
		{"nothing to release", outcome{kind: outNothingToRelease}, following, logLine{LogStopped, "", "I was not leading, so there is nothing to release"}},
		{"paused", outcome{kind: outFault, cmd: tabproto.CommandPause}, following, logLine{LogFault, "", "paused: frozen as in a long GC pause; the world goes on without me"}},
		{"resumed", outcome{kind: outFault, cmd: tabproto.CommandResume, d: 12345 * time.Millisecond}, following,
			logLine{LogFault, "", "resumed after 12.3 s: acting on what I knew before the pause"}},
		{"partition hang", outcome{kind: outFault, cmd: tabproto.CommandPartition, faults: tabproto.Faults{Partition: PartitionHang}}, following,
			logLine{LogFault, "", "network partitioned: my requests hang until it heals"}},
		{"partition fail", outcome{kind: outFault, cmd: tabproto.CommandPartition, faults: tabproto.Faults{Partition: PartitionFail}}, following,
			logLine{LogFault, "", "network partitioned: my requests fail at once"}},
		{"healed", outcome{kind: outFault, cmd: tabproto.CommandPartition}, following, logLine{LogFault, "", "network healed"}},
		{"slow", outcome{kind: outFault, cmd: tabproto.CommandSlow, faults: tabproto.Faults{LatencyMs: 1500}}, following, logLine{LogFault, "", "slow network: +1.5 s per request"}},
		{"fast again", outcome{kind: outFault, cmd: tabproto.CommandSlow}, following, logLine{LogFault, "", "network back to normal speed"}},
		{"clock behind", outcome{kind: outFault, cmd: tabproto.CommandClockOffset, faults: tabproto.Faults{ClockOffsetMs: -5000}}, following, logLine{LogFault, "", "my clock 5 s behind"}},
		{"clock in sync", outcome{kind: outFault, cmd: tabproto.CommandClockOffset}, following, logLine{LogFault, "", "my clock is back in sync"}},
		{"loss", outcome{kind: outFault, cmd: tabproto.CommandLoss, faults: tabproto.Faults{LossPercent: 30}}, following,
			logLine{LogFault, "", "packet loss: 30% of my requests are lost, each hanging until it times out"}},
		{"no loss", outcome{kind: outFault, cmd: tabproto.CommandLoss}, following, logLine{LogFault, "", "no more packet loss"}},
	} {
		got, ok := narrate(tc.o, tc.s)
		if !ok || got != tc.want {
			t.Errorf("%s:\n got %v %+v\nwant %+v", tc.name, ok, got, tc.want)
		}
	}

	// Some outcomes are not told.
	for _, o := range []outcome{
		{kind: outInterrupted},
		{kind: outIdle},
		{kind: outFailed, op: opRenew, err: offline}, // shows up again in the read that follows
	} {
		if got, ok := narrate(o, leading); ok {
			t.Errorf("%+v told: %+v", o, got)
		}
	}
}

// TestFailed classifies a failed request: interrupted by a command, cut off
// by a deadline, lost a race, or failed.
func TestFailed(t *testing.T) {
	conflict := &APIError{StatusCode: 409, Status: Status{Reason: ReasonConflict}}
	exists := &APIError{StatusCode: 409, Status: Status{Reason: ReasonAlreadyExists}}
	live := context.Background()
	interrupted, cancel := context.WithCancelCause(live)
	cancel(errInterrupted)
	cut, cancel := context.WithCancelCause(live)
	cancel(errCutOff)
	for _, tc := range []struct {
		ctx    context.Context
		op     op
		err    error
		kind   outcomeKind
		cutOff bool
	}{
		{interrupted, opRead, context.Canceled, outInterrupted, false},
		{cut, opRead, context.Canceled, outFailed, true},
		{live, opWrite, conflict, outConflict, false},
		{live, opRenew, conflict, outConflict, false},
		{live, opCreate, exists, outConflict, false},
		{live, opCreate, conflict, outFailed, false},
		{live, opReleaseWrite, conflict, outFailed, false},
		{live, opRead, errors.New("boom"), outFailed, false},
	} {
		o := failed(tc.ctx, tc.op, tc.err)
		if o.kind != tc.kind || o.cutOff != tc.cutOff {
			t.Errorf("failed(op %d, %v) = kind %d cutOff %v, want kind %d cutOff %v", tc.op, tc.err, o.kind, o.cutOff, tc.kind, tc.cutOff)
		}
	}
}

// narrate is tell without the message: the English line the tests pin.
func narrate(o outcome, s scene) (logLine, bool) {
	l, ok := tell(o, s)
	return l.logLine, ok
}
