package candidate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
)

// Group, version and kind of the LeaseCandidate, as they appear on the wire.
const (
	LeaseCandidateAPIVersion = "coordination.k8s.io/v1beta1"
	LeaseCandidateKind       = "LeaseCandidate"
	// StrategyOldestEmulationVersion is the only strategy the server's
	// controller implements.
	StrategyOldestEmulationVersion = "OldestEmulationVersion"
)

// LeaseCandidate is the wire form of a coordination.k8s.io/v1beta1
// LeaseCandidate. As with Lease, keys this package does not know are kept in
// Unknown and written back.
type LeaseCandidate struct {
	Kind       string
	APIVersion string
	Metadata   ObjectMeta
	Spec       LeaseCandidateSpec
	Unknown    map[string]json.RawMessage
}

// LeaseCandidateSpec mirrors coordination/v1beta1 LeaseCandidateSpec.
type LeaseCandidateSpec struct {
	LeaseName        string
	PingTime         *MicroTime
	RenewTime        *MicroTime
	BinaryVersion    string
	EmulationVersion string
	Strategy         string
	Unknown          map[string]json.RawMessage
}

var candidateSpecKeyOrder = []string{"leaseName", "pingTime", "renewTime", "binaryVersion", "emulationVersion", "strategy"}

// MarshalJSON encodes the LeaseCandidate, including its unknown keys.
func (l LeaseCandidate) MarshalJSON() ([]byte, error) {
	return marshalTopLevel(l.Kind, l.APIVersion, l.Metadata, l.Spec, l.Unknown)
}

// UnmarshalJSON decodes a LeaseCandidate, keeping unknown keys in Unknown.
func (l *LeaseCandidate) UnmarshalJSON(data []byte) error {
	var out LeaseCandidate
	unknown, ok, err := unmarshalTopLevel(data, &out.Kind, &out.APIVersion, &out.Metadata, &out.Spec)
	if err != nil {
		return fmt.Errorf("decode lease candidate: %w", err)
	}
	if ok {
		out.Unknown = unknown
		*l = out
	}
	return nil
}

// MarshalJSON encodes the spec as k8s.io/api does (strings omitempty, times
// omitted when nil), including its unknown keys.
func (s LeaseCandidateSpec) MarshalJSON() ([]byte, error) {
	o := newObjectWriter(s.Unknown)
	o.str("leaseName", s.LeaseName)
	if s.PingTime != nil {
		o.value("pingTime", s.PingTime)
	}
	if s.RenewTime != nil {
		o.value("renewTime", s.RenewTime)
	}
	o.str("binaryVersion", s.BinaryVersion)
	o.str("emulationVersion", s.EmulationVersion)
	o.str("strategy", s.Strategy)
	return o.encode(candidateSpecKeyOrder)
}

// UnmarshalJSON decodes the spec, keeping unknown keys in Unknown.
func (s *LeaseCandidateSpec) UnmarshalJSON(data []byte) error {
	r, err := newObjectReader(data)
	if err != nil || r == nil {
		return err
	}
	var out LeaseCandidateSpec
	r.field("leaseName", &out.LeaseName)
	r.field("pingTime", &out.PingTime)
	r.field("renewTime", &out.RenewTime)
	r.field("binaryVersion", &out.BinaryVersion)
	r.field("emulationVersion", &out.EmulationVersion)
	r.field("strategy", &out.Strategy)
	out.Unknown = r.rest()
	if r.err != nil {
		return r.err
	}
	*s = out
	return nil
}

// pinged reports whether the server asked for a renewal: pingTime after
// renewTime.
func (s LeaseCandidateSpec) pinged() bool {
	if s.PingTime == nil || s.PingTime.IsZero() {
		return false
	}
	return s.RenewTime == nil || s.PingTime.After(s.RenewTime.Time)
}

// LeaseCandidatePath returns the REST path of a LeaseCandidate, or of the
// collection when name is empty.
func LeaseCandidatePath(namespace, name string) string {
	p := "/apis/coordination.k8s.io/v1beta1/namespaces/" + url.PathEscape(namespace) + "/leasecandidates"
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// GetLeaseCandidate reads a LeaseCandidate (IsNotFound when it does not exist).
func (c *Client) GetLeaseCandidate(ctx context.Context, namespace, name string) (*LeaseCandidate, error) {
	var out LeaseCandidate
	if err := c.do(ctx, "GET", LeaseCandidatePath(namespace, name), nil, 200, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateLeaseCandidate creates lc and returns the stored object.
func (c *Client) CreateLeaseCandidate(ctx context.Context, lc *LeaseCandidate) (*LeaseCandidate, error) {
	var out LeaseCandidate
	if err := c.do(ctx, "POST", LeaseCandidatePath(lc.Metadata.Namespace, ""), lc, 201, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateLeaseCandidate replaces lc, guarded by its resourceVersion.
func (c *Client) UpdateLeaseCandidate(ctx context.Context, lc *LeaseCandidate) (*LeaseCandidate, error) {
	var out LeaseCandidate
	if err := c.do(ctx, "PUT", LeaseCandidatePath(lc.Metadata.Namespace, lc.Metadata.Name), lc, 200, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
