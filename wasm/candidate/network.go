package candidate

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/leaselab/leaselab/wasm/tabproto"
)

// PartitionMode says how requests behave while the network is partitioned;
// the modes are the tab protocol's.
type PartitionMode = tabproto.Partition

// Partition modes (see tabproto).
const (
	PartitionNone = tabproto.PartitionNone
	PartitionHang = tabproto.PartitionHang
	PartitionFail = tabproto.PartitionFail
)

// ErrPartitioned is returned by requests that meet a failing partition.
var ErrPartitioned = errors.New("network unreachable (partitioned)")

// Network is a Transport that injects network faults in front of another
// one: a partition (requests hang or fail) and added latency (half on the way
// out, half on the way back, waited on the injected clock).
type Network struct {
	next  Transport
	clock Clock

	mu      sync.Mutex
	mode    PartitionMode
	healed  chan struct{} // closed while the network is healthy
	latency time.Duration
}

var _ Transport = (*Network)(nil)

// NewNetwork returns a healthy Network in front of next (nil means the
// platform's default: fetch in the browser, net/http natively), waiting on
// clock.
func NewNetwork(next Transport, clock Clock) *Network {
	if next == nil {
		next = defaultTransport()
	}
	healed := make(chan struct{})
	close(healed)
	return &Network{next: next, clock: clock, healed: healed}
}

// Partition cuts the network; mode PartitionNone heals it.
func (n *Network) Partition(mode PartitionMode) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if mode == PartitionNone {
		if n.mode != PartitionNone {
			close(n.healed)
		}
	} else if n.mode == PartitionNone {
		n.healed = make(chan struct{})
	}
	n.mode = mode
}

// SetLatency sets the round-trip time added to every request (0: none).
func (n *Network) SetLatency(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.latency = max(d, 0)
}

// State returns the current partition mode and latency.
func (n *Network) State() (PartitionMode, time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mode, n.latency
}

// RoundTrip sends req through the faults and then through the next
// transport. A partition met on the way back loses the response: the server
// may have applied the request although the caller sees an error.
func (n *Network) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	if err := n.travel(ctx); err != nil {
		return nil, err
	}
	resp, err := n.next.RoundTrip(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := n.travel(ctx); err != nil {
		return nil, err
	}
	return resp, nil
}

// travel is one direction of a trip: half the latency, then the partition.
func (n *Network) travel(ctx context.Context) error {
	n.mu.Lock()
	latency := n.latency
	n.mu.Unlock()
	if err := sleep(ctx, n.clock, latency/2); err != nil {
		return err
	}
	for {
		n.mu.Lock()
		mode, healed := n.mode, n.healed
		n.mu.Unlock()
		switch mode {
		case PartitionNone:
			return ctx.Err()
		case PartitionFail:
			return ErrPartitioned
		}
		select {
		case <-healed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
