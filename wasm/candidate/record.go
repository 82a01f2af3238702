package candidate

import (
	"encoding/json"
	"time"
)

// record is what the elector reads from and writes to the Lease spec:
// client-go's LeaderElectionRecord for a Lease lock.
type record struct {
	Holder          string
	DurationSeconds int32
	AcquireTime     time.Time
	RenewTime       time.Time
	Transitions     int32
	Strategy        string
	PreferredHolder string
}

// recordKey is the record as client-go compares it to detect a change: its
// JSON form uses metav1.Time, so timestamps count at second precision only.
type recordKey struct {
	holder          string
	durationSeconds int32
	acquire, renew  int64
	transitions     int32
	strategy        string
	preferredHolder string
}

func (r record) key() recordKey {
	return recordKey{
		holder:          r.Holder,
		durationSeconds: r.DurationSeconds,
		acquire:         unixSeconds(r.AcquireTime),
		renew:           unixSeconds(r.RenewTime),
		transitions:     r.Transitions,
		strategy:        r.Strategy,
		preferredHolder: r.PreferredHolder,
	}
}

// unixSeconds maps the zero time (JSON null) apart from every real second.
func unixSeconds(t time.Time) int64 {
	if t.IsZero() {
		return -1 << 63
	}
	return t.Unix()
}

func (r record) duration() time.Duration {
	return time.Duration(r.DurationSeconds) * time.Second
}

// recordFromSpec reads the record from a spec; nil fields become zero values.
func recordFromSpec(s LeaseSpec) record {
	var r record
	if s.HolderIdentity != nil {
		r.Holder = *s.HolderIdentity
	}
	if s.LeaseDurationSeconds != nil {
		r.DurationSeconds = *s.LeaseDurationSeconds
	}
	if s.AcquireTime != nil {
		r.AcquireTime = s.AcquireTime.Time
	}
	if s.RenewTime != nil {
		r.RenewTime = s.RenewTime.Time
	}
	if s.LeaseTransitions != nil {
		r.Transitions = *s.LeaseTransitions
	}
	if s.Strategy != nil {
		r.Strategy = *s.Strategy
	}
	if s.PreferredHolder != nil {
		r.PreferredHolder = *s.PreferredHolder
	}
	return r
}

// specFromRecord builds the spec client-go writes: holder, duration, both
// times (null when zero) and transitions always; strategy and preferredHolder
// only when non-empty. Spec keys this package does not know are kept.
func specFromRecord(r record, unknown map[string]json.RawMessage) LeaseSpec {
	s := LeaseSpec{
		HolderIdentity:       &r.Holder,
		LeaseDurationSeconds: &r.DurationSeconds,
		AcquireTime:          &MicroTime{Time: r.AcquireTime},
		RenewTime:            &MicroTime{Time: r.RenewTime},
		LeaseTransitions:     &r.Transitions,
		Unknown:              unknown,
	}
	if r.Strategy != "" {
		s.Strategy = &r.Strategy
	}
	if r.PreferredHolder != "" {
		s.PreferredHolder = &r.PreferredHolder
	}
	return s
}
