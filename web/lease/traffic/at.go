package traffic

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leaselab/leaselab/store"
)

// How far around a moment At reads the batches.
const (
	// Lookback is how long before a moment a request may have begun and still be drawn in
	// flight then: longer than any request runs before it is given up.
	Lookback = time.Minute
	// Settle is how long after a moment the batches that tell of its requests may be written:
	// a candidate reports a request within a fraction of a second (a paused tab, within
	// seconds), and the Keeper writes within FlushEvery.
	Settle = 10 * time.Second
)

// At returns the requests on namespace/lease the stage draws at the moment at: those that had
// begun by then and had not ended more than recent before it, oldest first. A request that was
// still running at at is returned without its end and outcome, as it was then. It returns an
// error of the store, or one decoding a stored batch.
func At(ctx context.Context, st store.Interface, namespace, lease string, at time.Time, recent time.Duration) ([]Request, error) {
	after, err := st.RevisionAt(ctx, at.Add(-Lookback))
	if ce := (*store.CompactedError)(nil); errors.As(err, &ce) {
		after, err = ce.Compacted, nil // read what the log still holds
	}
	if err != nil {
		return nil, fmt.Errorf("lease requests: %w", err)
	}
	through, err := st.RevisionAt(ctx, at.Add(Settle))
	if err != nil {
		return nil, fmt.Errorf("lease requests: %w", err)
	}
	evs, err := st.HistoryBetween(ctx, Key(namespace, lease), after, through)
	if err != nil {
		return nil, fmt.Errorf("lease requests: %w", err)
	}
	ms, since := at.UnixMilli(), at.Add(-recent).UnixMilli()
	byID := map[string]Request{}
	for _, ev := range evs {
		if ev.Type == store.Deleted {
			continue
		}
		b, err := BatchOf(ev.Object)
		if err != nil {
			return nil, err
		}
		for _, r := range b.Requests {
			if r.StartMs <= ms {
				byID[r.ID] = r // a later batch knows more of it
			}
		}
	}
	out := make([]Request, 0, len(byID))
	for _, r := range byID {
		switch {
		case r.EndMs == 0:
		case r.EndMs > ms:
			r.EndMs, r.Outcome = 0, "" // still running then
		case r.EndMs < since:
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Request) int { return cmp.Or(cmp.Compare(a.StartMs, b.StartMs), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}
