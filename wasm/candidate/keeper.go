package candidate

import (
	"context"
	"time"
)

// CandidateRenewInterval is how often the LeaseCandidate is renewed without
// a ping (client-go's requeueInterval).
const CandidateRenewInterval = 5 * time.Minute

// candidateKeeper is client-go's LeaseCandidate helper, for coordinated
// mode: it creates the LeaseCandidate when missing, renews it when the
// server pinged it (pingTime after renewTime), at the start of each run and
// every CandidateRenewInterval, and never deletes it. Only Step uses it, so
// it needs no lock.
type candidateKeeper struct {
	cfg     Config
	clock   Clock
	ownNow  func() time.Time // the candidate's own clock, which stamps renewTime
	client  *Client
	freezer *freezer

	// renewed is the last successful create or renew (real clock); zero
	// when there was none yet in this run.
	renewed time.Time
}

// keep is one look at the LeaseCandidate. The caller bounds ctx (one retry
// period, or a leader's renew deadline if sooner, cancelling with
// errCutOff) so that a hanging network cannot stall the elector.
func (k *candidateKeeper) keep(ctx context.Context) outcome {
	ns, name := k.cfg.Namespace, k.cfg.Identity
	lc, err := frozenCall(k.freezer, ctx, func(ctx context.Context) (*LeaseCandidate, error) {
		return k.client.GetLeaseCandidate(ctx, ns, name)
	})
	if err != nil && !IsNotFound(err) {
		return failed(ctx, opCandRead, err)
	}
	stamp := k.ownNow()
	if err != nil {
		return k.declare(ctx, stamp)
	}
	pinged := lc.Spec.pinged()
	due := k.renewed.IsZero() || !k.clock.Now().Before(k.renewed.Add(CandidateRenewInterval))
	if !pinged && !due {
		return outcome{kind: outIdle}
	}
	lc.Kind, lc.APIVersion = LeaseCandidateKind, LeaseCandidateAPIVersion
	lc.Spec.RenewTime = &MicroTime{Time: stamp}
	if _, err := frozenCall(k.freezer, ctx, func(ctx context.Context) (*LeaseCandidate, error) {
		return k.client.UpdateLeaseCandidate(ctx, lc)
	}); err != nil {
		return failed(ctx, opCandRenew, err)
	}
	k.renewed = k.clock.Now()
	if pinged {
		return outcome{kind: outPinged}
	}
	return outcome{kind: outCandidateRenewed}
}

// declare creates the LeaseCandidate, renewed at stamp (the candidate's own
// clock), with the configured versions and strategy.
func (k *candidateKeeper) declare(ctx context.Context, stamp time.Time) outcome {
	lc := &LeaseCandidate{
		Kind:       LeaseCandidateKind,
		APIVersion: LeaseCandidateAPIVersion,
		Metadata:   ObjectMeta{Name: k.cfg.Identity, Namespace: k.cfg.Namespace},
		Spec: LeaseCandidateSpec{
			LeaseName:        k.cfg.LeaseName,
			RenewTime:        &MicroTime{Time: stamp},
			BinaryVersion:    k.cfg.BinaryVersion,
			EmulationVersion: k.cfg.EmulationVersion,
			Strategy:         k.cfg.strategy(),
		},
	}
	if _, err := frozenCall(k.freezer, ctx, func(ctx context.Context) (*LeaseCandidate, error) {
		return k.client.CreateLeaseCandidate(ctx, lc)
	}); err != nil {
		return failed(ctx, opCandCreate, err)
	}
	k.renewed = k.clock.Now()
	return outcome{kind: outDeclared}
}
