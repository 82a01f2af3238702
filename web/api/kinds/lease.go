package kinds

import (
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// verbs are the discovery verbs of every served resource, sorted.
var verbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// validLeaseStrategies are the built-in coordinated leader election strategies.
var validLeaseStrategies = []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion}

func leaseKind(opts Options) *Kind {
	k := &Kind{
		Group:                    coordinationv1.GroupName,
		Resource:                 "leases",
		Singular:                 "lease",
		Kind:                     "Lease",
		ListKind:                 "LeaseList",
		Namespaced:               true,
		Versions:                 []string{"v1"},
		StorageVersion:           "v1",
		Verbs:                    slices.Clone(verbs),
		AllowCreateOnUpdate:      true,
		AllowUnconditionalUpdate: false,
		PrepareForCreate:         func(runtime.Object) {},
		PrepareForUpdate:         func(_, _ runtime.Object) {},
		Validate:                 createValidation(true, validateLease),
		ValidateUpdate:           updateValidation(true, validateLeaseUpdate),
		ChangedScalars:           leaseChangedScalars,
		TableColumns: []metav1.TableColumnDefinition{
			nameColumn(),
			{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
			ageColumn(),
		},
		TableCells: leaseCells,
		FieldSet: func(obj runtime.Object) fields.Set {
			return objectMetaFields(obj, true)
		},
	}
	if !opts.CoordinatedLeaderElection {
		k.PrepareForCreate = prepareCreate(dropLeaseCoordination)
		k.PrepareForUpdate = prepareUpdate(dropNewLeaseCoordination)
	}
	return k
}

// dropLeaseCoordination clears the fields the CoordinatedLeaderElection gate guards: with the
// gate off, the real server silently discards them on create.
func dropLeaseCoordination(lease *coordinationv1.Lease) {
	lease.Spec.Strategy = nil
	lease.Spec.PreferredHolder = nil
}

// dropNewLeaseCoordination keeps gated fields only where the stored lease already uses them, so
// they cannot be newly set while the gate is off but existing values may be changed or removed.
func dropNewLeaseCoordination(lease, old *coordinationv1.Lease) {
	if old.Spec.Strategy == nil {
		lease.Spec.Strategy = nil
	}
	if old.Spec.PreferredHolder == nil {
		lease.Spec.PreferredHolder = nil
	}
}

func validateLease(lease *coordinationv1.Lease) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&lease.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validateLeaseSpec(&lease.Spec, field.NewPath("spec"))...)
}

// validateLeaseUpdate is the real server's ValidateLeaseUpdate: its metadata update rules
// (metaUpdate, as updateValidation found them), then the spec's.
func validateLeaseUpdate(lease, _ *coordinationv1.Lease, metaUpdate field.ErrorList) field.ErrorList {
	return append(metaUpdateAgain(metaUpdate), validateLeaseSpec(&lease.Spec, field.NewPath("spec"))...)
}

func validateLeaseSpec(spec *coordinationv1.LeaseSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	// The pointers are passed as values on purpose: the error then prints the number, as the
	// real server's does.
	if spec.LeaseDurationSeconds != nil && *spec.LeaseDurationSeconds <= 0 {
		errs = append(errs, field.Invalid(path.Child("leaseDurationSeconds"), spec.LeaseDurationSeconds, "must be greater than 0"))
	}
	if spec.LeaseTransitions != nil && *spec.LeaseTransitions < 0 {
		errs = append(errs, field.Invalid(path.Child("leaseTransitions"), spec.LeaseTransitions, "must be greater than or equal to 0"))
	}
	if spec.Strategy != nil {
		errs = append(errs, validateCoordinatedLeaseStrategy(*spec.Strategy, path.Child("strategy"))...)
	}
	if spec.PreferredHolder != nil && *spec.PreferredHolder != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		errs = append(errs, field.Forbidden(path.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}

// validateCoordinatedLeaseStrategy checks a Lease or LeaseCandidate strategy. path is already
// the strategy field and the errors are reported on path.strategy: the real server has the same
// doubled segment ("spec.strategy.strategy") and clients may match on it.
func validateCoordinatedLeaseStrategy(strategy coordinationv1.CoordinatedLeaseStrategy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !strings.Contains(string(strategy), "/") {
		if !slices.Contains(validLeaseStrategies, strategy) {
			errs = append(errs, field.NotSupported(path.Child("strategy"), strategy, validLeaseStrategies))
		}
		return errs
	}
	for _, msg := range utilvalidation.IsQualifiedName(string(strategy)) {
		errs = append(errs, field.Invalid(path.Child("strategy"), strategy, msg))
	}
	return errs
}

func leaseCells(obj runtime.Object, now time.Time) []any {
	lease, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return nil
	}
	var holder string
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	return []any{lease.Name, holder, age(lease.CreationTimestamp, now)}
}
