package kinds_test

import (
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/leaselab/leaselab/web/api/kinds"
)

const dnsSubdomainMsg = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`

func newLease(mutate func(*coordinationv1.Lease)) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default"}}
	if mutate != nil {
		mutate(l)
	}
	return l
}

func TestLeaseValidate(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "leases.coordination.k8s.io")
	qualifiedMsgs := utilvalidation.IsQualifiedName("a/b/c")
	if len(qualifiedMsgs) != 1 {
		t.Fatalf("qualified name messages for a/b/c: %q", qualifiedMsgs)
	}
	tests := []struct {
		name   string
		mutate func(*coordinationv1.Lease)
		want   []fieldErr
	}{
		{name: "empty spec is valid"},
		{name: "full spec is valid", mutate: func(l *coordinationv1.Lease) {
			l.Spec = coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To("anything goes: ÄÖ/_"),
				LeaseDurationSeconds: ptr.To[int32](15),
				LeaseTransitions:     ptr.To[int32](0),
				AcquireTime:          &metav1.MicroTime{},
				RenewTime:            &metav1.MicroTime{},
				Strategy:             ptr.To(coordinationv1.OldestEmulationVersion),
				PreferredHolder:      ptr.To("b"),
			}
		}},
		{name: "sample lease-create-invalid-422", mutate: func(l *coordinationv1.Lease) {
			l.Name = "Bad_Name"
			l.Spec = coordinationv1.LeaseSpec{HolderIdentity: ptr.To("x"), LeaseDurationSeconds: ptr.To[int32](0), LeaseTransitions: ptr.To[int32](-1)}
		}, want: []fieldErr{
			{"metadata.name", field.ErrorTypeInvalid, `Invalid value: "Bad_Name": ` + dnsSubdomainMsg},
			{"spec.leaseDurationSeconds", field.ErrorTypeInvalid, "Invalid value: 0: must be greater than 0"},
			{"spec.leaseTransitions", field.ErrorTypeInvalid, "Invalid value: -1: must be greater than or equal to 0"},
		}},
		{name: "negative duration", mutate: func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = ptr.To[int32](-5) }, want: []fieldErr{
			{"spec.leaseDurationSeconds", field.ErrorTypeInvalid, "Invalid value: -5: must be greater than 0"},
		}},
		{name: "unknown strategy with preferredHolder", mutate: func(l *coordinationv1.Lease) {
			l.Spec.Strategy = ptr.To[coordinationv1.CoordinatedLeaseStrategy]("NoSuchStrategy")
			l.Spec.PreferredHolder = ptr.To("b")
		}, want: []fieldErr{
			{"spec.strategy.strategy", field.ErrorTypeNotSupported, `Unsupported value: "NoSuchStrategy": supported values: "OldestEmulationVersion"`},
		}},
		{name: "custom qualified strategy", mutate: func(l *coordinationv1.Lease) {
			l.Spec.Strategy = ptr.To[coordinationv1.CoordinatedLeaseStrategy]("example.com/mine")
		}},
		{name: "custom strategy with two slashes", mutate: func(l *coordinationv1.Lease) {
			l.Spec.Strategy = ptr.To[coordinationv1.CoordinatedLeaseStrategy]("a/b/c")
		}, want: []fieldErr{
			{"spec.strategy.strategy", field.ErrorTypeInvalid, `Invalid value: "a/b/c": ` + qualifiedMsgs[0]},
		}},
		{name: "preferredHolder without strategy", mutate: func(l *coordinationv1.Lease) { l.Spec.PreferredHolder = ptr.To("b") }, want: []fieldErr{
			{"spec.preferredHolder", field.ErrorTypeForbidden, "Forbidden: may only be specified if `strategy` is defined"},
		}},
		{name: "empty preferredHolder without strategy", mutate: func(l *coordinationv1.Lease) { l.Spec.PreferredHolder = ptr.To("") }},
		{name: "preferredHolder with empty strategy", mutate: func(l *coordinationv1.Lease) {
			l.Spec.Strategy = ptr.To[coordinationv1.CoordinatedLeaseStrategy]("")
			l.Spec.PreferredHolder = ptr.To("b")
		}, want: []fieldErr{
			{"spec.strategy.strategy", field.ErrorTypeNotSupported, `Unsupported value: "": supported values: "OldestEmulationVersion"`},
			{"spec.preferredHolder", field.ErrorTypeForbidden, "Forbidden: may only be specified if `strategy` is defined"},
		}},
		{name: "no name", mutate: func(l *coordinationv1.Lease) { l.Name = "" }, want: []fieldErr{
			{"metadata.name", field.ErrorTypeRequired, "Required value: name or generateName is required"},
		}},
		{name: "bad generateName", mutate: func(l *coordinationv1.Lease) { l.GenerateName = "Bad-" }, want: []fieldErr{
			{"metadata.generateName", field.ErrorTypeInvalid, `Invalid value: "Bad-": ` + dnsSubdomainMsg},
		}},
		{name: "generateName may end with a dash", mutate: func(l *coordinationv1.Lease) { l.GenerateName = "demo-" }},
		{name: "no namespace", mutate: func(l *coordinationv1.Lease) { l.Namespace = "" }, want: []fieldErr{
			{"metadata.namespace", field.ErrorTypeRequired, "Required value"},
		}},
		{name: "dotted name", mutate: func(l *coordinationv1.Lease) { l.Name = "kube-system.scheduler" }},
		{name: "name too long", mutate: func(l *coordinationv1.Lease) { l.Name = strings.Repeat("a", 254) }, want: []fieldErr{
			{"metadata.name", field.ErrorTypeInvalid, `Invalid value: "` + strings.Repeat("a", 254) + `": must be no more than 253 characters`},
		}},
		{name: "negative generation", mutate: func(l *coordinationv1.Lease) { l.Generation = -1 }, want: []fieldErr{
			{"metadata.generation", field.ErrorTypeInvalid, "Invalid value: -1: must be greater than or equal to 0"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, k.Validate(newLease(tt.mutate)), tt.want)
		})
	}
}

func TestLeaseValidateStatusMatchesSamples(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "leases.coordination.k8s.io")
	gk := schema.GroupKind{Group: "coordination.k8s.io", Kind: "Lease"}

	bad := newLease(func(l *coordinationv1.Lease) {
		l.Name = "Bad_Name"
		l.Spec = coordinationv1.LeaseSpec{HolderIdentity: ptr.To("x"), LeaseDurationSeconds: ptr.To[int32](0), LeaseTransitions: ptr.To[int32](-1)}
	})
	checkStatus(t, gk, bad.Name, k.Validate(bad), `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Lease.coordination.k8s.io \"Bad_Name\" is invalid: [metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]","reason":"Invalid","details":{"name":"Bad_Name","group":"coordination.k8s.io","kind":"Lease","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')","field":"metadata.name"},{"reason":"FieldValueInvalid","message":"Invalid value: 0: must be greater than 0","field":"spec.leaseDurationSeconds"},{"reason":"FieldValueInvalid","message":"Invalid value: -1: must be greater than or equal to 0","field":"spec.leaseTransitions"}]},"code":422}`)

	strategy := newLease(func(l *coordinationv1.Lease) {
		l.Name = "sample-cle-bad"
		l.Spec = coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a"), Strategy: ptr.To[coordinationv1.CoordinatedLeaseStrategy]("NoSuchStrategy"), PreferredHolder: ptr.To("b")}
	})
	checkStatus(t, gk, strategy.Name, k.Validate(strategy), `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Lease.coordination.k8s.io \"sample-cle-bad\" is invalid: spec.strategy.strategy: Unsupported value: \"NoSuchStrategy\": supported values: \"OldestEmulationVersion\"","reason":"Invalid","details":{"name":"sample-cle-bad","group":"coordination.k8s.io","kind":"Lease","causes":[{"reason":"FieldValueNotSupported","message":"Unsupported value: \"NoSuchStrategy\": supported values: \"OldestEmulationVersion\"","field":"spec.strategy.strategy"}]},"code":422}`)
}

func TestLeaseValidateUpdate(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "leases.coordination.k8s.io")
	stored := newLease(func(l *coordinationv1.Lease) {
		l.UID = "uid-1"
		l.ResourceVersion = "7"
		l.Spec.HolderIdentity = ptr.To("a")
	})
	tests := []struct {
		name   string
		mutate func(*coordinationv1.Lease)
		want   []fieldErr
	}{
		{name: "holder change", mutate: func(l *coordinationv1.Lease) { l.Spec.HolderIdentity = ptr.To("b") }},
		{name: "invalid spec", mutate: func(l *coordinationv1.Lease) { l.Spec.LeaseTransitions = ptr.To[int32](-2) }, want: []fieldErr{
			{"spec.leaseTransitions", field.ErrorTypeInvalid, "Invalid value: -2: must be greater than or equal to 0"},
		}},
		// The generic registry and the lease validation both check metadata updates, so the
		// real server reports these twice (Status.message removes the duplicate, causes keep it).
		{name: "no resourceVersion", mutate: func(l *coordinationv1.Lease) { l.ResourceVersion = "" }, want: []fieldErr{
			{"metadata.resourceVersion", field.ErrorTypeInvalid, `Invalid value: "": must be specified for an update`},
			{"metadata.resourceVersion", field.ErrorTypeInvalid, `Invalid value: "": must be specified for an update`},
		}},
		{name: "uid change", mutate: func(l *coordinationv1.Lease) { l.UID = "uid-2" }, want: []fieldErr{
			{"metadata.uid", field.ErrorTypeInvalid, `Invalid value: "uid-2": field is immutable`},
			{"metadata.uid", field.ErrorTypeInvalid, `Invalid value: "uid-2": field is immutable`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			updated := stored.DeepCopy()
			tt.mutate(updated)
			checkErrs(t, k.ValidateUpdate(updated, stored), tt.want)
		})
	}
}

func TestLeaseStrategyFlags(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "leases.coordination.k8s.io")
	if !k.AllowCreateOnUpdate || k.AllowUnconditionalUpdate || !k.Namespaced {
		t.Errorf("AllowCreateOnUpdate=%v AllowUnconditionalUpdate=%v Namespaced=%v, want true false true",
			k.AllowCreateOnUpdate, k.AllowUnconditionalUpdate, k.Namespaced)
	}
}

func TestLeasePrepare(t *testing.T) {
	strategy := ptr.To(coordinationv1.OldestEmulationVersion)
	withCLE := func(s *coordinationv1.CoordinatedLeaseStrategy, holder *string) *coordinationv1.Lease {
		return newLease(func(l *coordinationv1.Lease) {
			l.Spec.HolderIdentity = ptr.To("a")
			l.Spec.Strategy = s
			l.Spec.PreferredHolder = holder
		})
	}
	type spec struct {
		strategy *coordinationv1.CoordinatedLeaseStrategy
		holder   *string
	}
	tests := []struct {
		name     string
		gate     bool
		old      *coordinationv1.Lease // nil: create
		in, want spec
	}{
		{name: "gate off create drops both", in: spec{strategy, ptr.To("b")}, want: spec{nil, nil}},
		{name: "gate on create keeps both", gate: true, in: spec{strategy, ptr.To("b")}, want: spec{strategy, ptr.To("b")}},
		{name: "gate off update cannot set new", old: withCLE(nil, nil), in: spec{strategy, ptr.To("b")}, want: spec{nil, nil}},
		{name: "gate off update keeps existing", old: withCLE(strategy, ptr.To("b")), in: spec{strategy, ptr.To("c")}, want: spec{strategy, ptr.To("c")}},
		{name: "gate off update may remove existing", old: withCLE(strategy, ptr.To("b")), in: spec{nil, nil}, want: spec{nil, nil}},
		{name: "gate off update keeps strategy, drops new holder", old: withCLE(strategy, nil), in: spec{strategy, ptr.To("c")}, want: spec{strategy, nil}},
		{name: "gate on update keeps new", gate: true, old: withCLE(nil, nil), in: spec{strategy, ptr.To("b")}, want: spec{strategy, ptr.To("b")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := MustKind(t, kinds.NewRegistry(kinds.Options{CoordinatedLeaderElection: tt.gate}), "leases.coordination.k8s.io")
			lease := withCLE(tt.in.strategy, tt.in.holder)
			if tt.old == nil {
				k.PrepareForCreate(lease)
			} else {
				k.PrepareForUpdate(lease, tt.old)
			}
			if got := lease.Spec.Strategy; !ptrEqual(got, tt.want.strategy) {
				t.Errorf("strategy = %v, want %v", ptr.Deref(got, "<nil>"), ptr.Deref(tt.want.strategy, "<nil>"))
			}
			if got := lease.Spec.PreferredHolder; !ptrEqual(got, tt.want.holder) {
				t.Errorf("preferredHolder = %v, want %v", ptr.Deref(got, "<nil>"), ptr.Deref(tt.want.holder, "<nil>"))
			}
			if got := ptr.Deref(lease.Spec.HolderIdentity, ""); got != "a" {
				t.Errorf("holderIdentity = %q, want it untouched", got)
			}
		})
	}
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
