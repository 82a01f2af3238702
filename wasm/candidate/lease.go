package candidate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Group, version and kind of the Lease, as they appear on the wire.
const (
	LeaseAPIVersion = "coordination.k8s.io/v1"
	LeaseKind       = "Lease"
)

// Lease is the wire form of a coordination.k8s.io/v1 Lease.
//
// Only the fields the candidate reads or writes are typed. Every other key, at
// the top level, in metadata and in spec, is kept verbatim in Unknown and
// written back on marshal, so a read-modify-write never drops fields written
// by newer servers or other clients (status, managedFields, future spec
// fields). Keys are emitted in the order k8s.io/api uses, so an object
// produced by the real types marshals back to the same bytes.
type Lease struct {
	Kind       string
	APIVersion string
	Metadata   ObjectMeta
	Spec       LeaseSpec
	// Unknown holds top-level keys other than kind, apiVersion, metadata and
	// spec, as raw JSON.
	Unknown map[string]json.RawMessage
}

// ObjectMeta is the subset of metav1.ObjectMeta the candidate uses.
type ObjectMeta struct {
	Name            string
	GenerateName    string
	Namespace       string
	UID             string
	ResourceVersion string
	Labels          map[string]string
	Annotations     map[string]string
	// Unknown holds every other metadata key (creationTimestamp, generation,
	// managedFields, ownerReferences, ...) as raw JSON.
	Unknown map[string]json.RawMessage
}

// LeaseSpec mirrors coordination/v1 LeaseSpec. Every field is a pointer, as in
// k8s.io/api: nil is omitted, a pointer to a zero value is written.
type LeaseSpec struct {
	HolderIdentity       *string
	LeaseDurationSeconds *int32
	AcquireTime          *MicroTime
	RenewTime            *MicroTime
	LeaseTransitions     *int32
	Strategy             *string
	PreferredHolder      *string
	// Unknown holds spec keys this package does not know, as raw JSON.
	Unknown map[string]json.RawMessage
}

// Canonical key orders of k8s.io/api (Go struct order). Keys not listed
// follow in lexical order.
var (
	leaseKeyOrder = []string{"kind", "apiVersion", "metadata", "spec", "status"}
	metaKeyOrder  = []string{
		"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
		"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
		"annotations", "ownerReferences", "finalizers", "managedFields",
	}
	specKeyOrder = []string{
		"holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime", "leaseTransitions",
		"strategy", "preferredHolder",
	}
)

// MarshalJSON encodes the Lease as k8s.io/api does, including its unknown keys.
func (l Lease) MarshalJSON() ([]byte, error) {
	return marshalTopLevel(l.Kind, l.APIVersion, l.Metadata, l.Spec, l.Unknown)
}

// UnmarshalJSON decodes a Lease, keeping unknown keys in Unknown.
func (l *Lease) UnmarshalJSON(data []byte) error {
	var out Lease
	unknown, ok, err := unmarshalTopLevel(data, &out.Kind, &out.APIVersion, &out.Metadata, &out.Spec)
	if err != nil {
		return fmt.Errorf("decode lease: %w", err)
	}
	if ok {
		out.Unknown = unknown
		*l = out
	}
	return nil
}

// MarshalJSON encodes the metadata as metav1.ObjectMeta does.
func (m ObjectMeta) MarshalJSON() ([]byte, error) {
	o := newObjectWriter(m.Unknown)
	o.str("name", m.Name)
	o.str("generateName", m.GenerateName)
	o.str("namespace", m.Namespace)
	o.str("uid", m.UID)
	o.str("resourceVersion", m.ResourceVersion)
	if len(m.Labels) > 0 {
		o.value("labels", m.Labels)
	}
	if len(m.Annotations) > 0 {
		o.value("annotations", m.Annotations)
	}
	return o.encode(metaKeyOrder)
}

// UnmarshalJSON decodes metadata, keeping unknown keys in Unknown.
func (m *ObjectMeta) UnmarshalJSON(data []byte) error {
	r, err := newObjectReader(data)
	if err != nil || r == nil {
		return err
	}
	var out ObjectMeta
	r.field("name", &out.Name)
	r.field("generateName", &out.GenerateName)
	r.field("namespace", &out.Namespace)
	r.field("uid", &out.UID)
	r.field("resourceVersion", &out.ResourceVersion)
	r.field("labels", &out.Labels)
	r.field("annotations", &out.Annotations)
	out.Unknown = r.rest()
	if r.err != nil {
		return fmt.Errorf("decode metadata: %w", r.err)
	}
	*m = out
	return nil
}

// MarshalJSON encodes the spec as coordination/v1 LeaseSpec does.
func (s LeaseSpec) MarshalJSON() ([]byte, error) {
	o := newObjectWriter(s.Unknown)
	if s.HolderIdentity != nil {
		o.value("holderIdentity", *s.HolderIdentity)
	}
	if s.LeaseDurationSeconds != nil {
		o.value("leaseDurationSeconds", *s.LeaseDurationSeconds)
	}
	if s.AcquireTime != nil {
		o.value("acquireTime", *s.AcquireTime)
	}
	if s.RenewTime != nil {
		o.value("renewTime", *s.RenewTime)
	}
	if s.LeaseTransitions != nil {
		o.value("leaseTransitions", *s.LeaseTransitions)
	}
	if s.Strategy != nil {
		o.value("strategy", *s.Strategy)
	}
	if s.PreferredHolder != nil {
		o.value("preferredHolder", *s.PreferredHolder)
	}
	return o.encode(specKeyOrder)
}

// UnmarshalJSON decodes the spec, keeping unknown keys in Unknown.
func (s *LeaseSpec) UnmarshalJSON(data []byte) error {
	r, err := newObjectReader(data)
	if err != nil || r == nil {
		return err
	}
	var out LeaseSpec
	r.field("holderIdentity", &out.HolderIdentity)
	r.field("leaseDurationSeconds", &out.LeaseDurationSeconds)
	r.field("acquireTime", &out.AcquireTime)
	r.field("renewTime", &out.RenewTime)
	r.field("leaseTransitions", &out.LeaseTransitions)
	r.field("strategy", &out.Strategy)
	r.field("preferredHolder", &out.PreferredHolder)
	out.Unknown = r.rest()
	if r.err != nil {
		return fmt.Errorf("decode spec: %w", r.err)
	}
	*s = out
	return nil
}

// RFC3339Micro is the only layout metav1.MicroTime writes and accepts.
const RFC3339Micro = "2006-01-02T15:04:05.000000Z07:00"

// MicroTime is a time with microsecond precision on the wire, encoded exactly
// like metav1.MicroTime: RFC 3339 in UTC with six fractional digits
// (nanoseconds truncated), and null for the zero time.
type MicroTime struct {
	time.Time
}

// MarshalJSON writes null for the zero time and RFC3339Micro in UTC otherwise.
func (t MicroTime) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.UTC().Format(RFC3339Micro))
}

// UnmarshalJSON accepts null (the zero time) or a string in RFC3339Micro.
// Like metav1.MicroTime it requires exactly six fractional digits.
func (t *MicroTime) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	pt, err := time.Parse(RFC3339Micro, s)
	if err != nil {
		return err
	}
	t.Time = pt
	return nil
}

// Status is the part of metav1.Status an error response carries.
type Status struct {
	Kind       string         `json:"kind,omitempty"`
	APIVersion string         `json:"apiVersion,omitempty"`
	Status     string         `json:"status,omitempty"`
	Message    string         `json:"message,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Details    *StatusDetails `json:"details,omitempty"`
	Code       int32          `json:"code,omitempty"`
}

// StatusDetails is metav1.StatusDetails without the causes' structure.
type StatusDetails struct {
	Name              string          `json:"name,omitempty"`
	Group             string          `json:"group,omitempty"`
	Kind              string          `json:"kind,omitempty"`
	UID               string          `json:"uid,omitempty"`
	Causes            json.RawMessage `json:"causes,omitempty"`
	RetryAfterSeconds int32           `json:"retryAfterSeconds,omitempty"`
}

// Status reasons the candidate acts on.
const (
	ReasonNotFound      = "NotFound"
	ReasonAlreadyExists = "AlreadyExists"
	ReasonConflict      = "Conflict"
)

// objectWriter collects the keys of one JSON object and writes them in a
// canonical order.
type objectWriter struct {
	keys map[string]json.RawMessage
	err  error
}

// marshalTopLevel encodes what every object shares at its top level (kind, apiVersion,
// metadata, spec) with its unknown keys, in k8s.io/api's key order.
func marshalTopLevel(kind, apiVersion string, meta ObjectMeta, spec any, unknown map[string]json.RawMessage) ([]byte, error) {
	o := newObjectWriter(unknown)
	o.str("kind", kind)
	o.str("apiVersion", apiVersion)
	o.value("metadata", meta)
	o.value("spec", spec)
	return o.encode(leaseKeyOrder)
}

// unmarshalTopLevel decodes the top level of an object into the given fields and returns the
// keys it did not know. It reports false for JSON null, which leaves the object as it was.
func unmarshalTopLevel(data []byte, kind, apiVersion *string, meta *ObjectMeta, spec any) (map[string]json.RawMessage, bool, error) {
	r, err := newObjectReader(data)
	if err != nil || r == nil {
		return nil, false, err
	}
	r.field("kind", kind)
	r.field("apiVersion", apiVersion)
	r.field("metadata", meta)
	r.field("spec", spec)
	unknown := r.rest()
	return unknown, true, r.err
}

func newObjectWriter(unknown map[string]json.RawMessage) *objectWriter {
	o := &objectWriter{keys: make(map[string]json.RawMessage, len(unknown)+8)}
	for k, v := range unknown {
		o.keys[k] = v
	}
	return o
}

// str adds a string key, omitting it when empty (omitempty).
func (o *objectWriter) str(key, v string) {
	if v != "" {
		o.value(key, v)
	}
}

func (o *objectWriter) value(key string, v any) {
	b, err := json.Marshal(v)
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("encode %s: %w", key, err)
	}
	o.keys[key] = b
}

func (o *objectWriter) encode(order []string) ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	rank := func(k string) int {
		if i := slices.Index(order, k); i >= 0 {
			return i
		}
		return len(order)
	}
	names := make([]string, 0, len(o.keys))
	for k := range o.keys {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		// Marshalling a RawMessage validates and compacts it (with the same
		// HTML escaping encoding/json applies everywhere else).
		vb, err := json.Marshal(o.keys[k])
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", k, err)
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// objectReader takes the known keys out of one JSON object and leaves the rest.
type objectReader struct {
	keys map[string]json.RawMessage
	err  error
}

// newObjectReader returns nil, nil for a JSON null.
func newObjectReader(data []byte) (*objectReader, error) {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, err
	}
	return &objectReader{keys: keys}, nil
}

func (r *objectReader) field(key string, dst any) {
	raw, ok := r.keys[key]
	if !ok {
		return
	}
	delete(r.keys, key)
	if err := json.Unmarshal(raw, dst); err != nil && r.err == nil {
		r.err = fmt.Errorf("%s: %w", key, err)
	}
}

func (r *objectReader) rest() map[string]json.RawMessage {
	if len(r.keys) == 0 {
		return nil
	}
	return r.keys
}

// DeepCopy returns a copy of l that shares no maps or pointers with it.
func (l *Lease) DeepCopy() *Lease {
	if l == nil {
		return nil
	}
	out := *l
	out.Unknown = copyRaw(l.Unknown)
	out.Metadata.Labels = copyStrings(l.Metadata.Labels)
	out.Metadata.Annotations = copyStrings(l.Metadata.Annotations)
	out.Metadata.Unknown = copyRaw(l.Metadata.Unknown)
	s := &out.Spec
	s.HolderIdentity = copyPtr(l.Spec.HolderIdentity)
	s.LeaseDurationSeconds = copyPtr(l.Spec.LeaseDurationSeconds)
	s.AcquireTime = copyPtr(l.Spec.AcquireTime)
	s.RenewTime = copyPtr(l.Spec.RenewTime)
	s.LeaseTransitions = copyPtr(l.Spec.LeaseTransitions)
	s.Strategy = copyPtr(l.Spec.Strategy)
	s.PreferredHolder = copyPtr(l.Spec.PreferredHolder)
	s.Unknown = copyRaw(l.Spec.Unknown)
	return &out
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copyStrings(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func copyRaw(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}
