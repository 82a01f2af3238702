package scenario

import (
	"context"
	"sync"

	"github.com/leaselab/leaselab/wasm/candidate"
)

// outage is the API server as a run's members reach it: a step may take it away from all of
// them at once (Actions.Outage), as when etcd loses quorum or kube-apiserver restarts. It sits
// below each member's own network faults, so nothing on a member's side says anything is
// wrong: its requests simply get no answer (they hang), or are refused (they fail at once).
// The run's own requests (its reads of the record for the page, the ledger) do not go through
// it: the narrator still sees the record, which nobody can change meanwhile.
type outage struct {
	mu   sync.Mutex
	mode candidate.PartitionMode
	back chan struct{} // closed while the server answers
}

func newOutage() *outage {
	back := make(chan struct{})
	close(back)
	return &outage{back: back}
}

// set takes the server away (PartitionHang: requests hang; PartitionFail: they are refused) or,
// with PartitionNone, brings it back. A request that hung until then fails as the server comes
// back, its connection reset, as a restarted kube-apiserver's are: each member tries again on
// its own schedule (a request that went through at the very instant would race with the
// others' in no fixed order).
func (o *outage) set(mode candidate.PartitionMode) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case mode == candidate.PartitionNone && o.mode != candidate.PartitionNone:
		close(o.back)
	case mode != candidate.PartitionNone && o.mode == candidate.PartitionNone:
		o.back = make(chan struct{})
	}
	o.mode = mode
}

// current is the outage in effect (PartitionNone for none).
func (o *outage) current() candidate.PartitionMode {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mode
}

// wrap returns next behind the outage.
func (o *outage) wrap(next candidate.Transport) candidate.Transport {
	return candidate.TransportFunc(func(ctx context.Context, req *candidate.Request) (*candidate.Response, error) {
		o.mu.Lock()
		mode, back := o.mode, o.back
		o.mu.Unlock()
		switch mode {
		case candidate.PartitionNone:
			return next.RoundTrip(ctx, req)
		case candidate.PartitionFail:
			return nil, candidate.ErrUnreachable
		}
		select {
		case <-back:
			return nil, candidate.ErrUnreachable
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
}
