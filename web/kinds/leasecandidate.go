package kinds

import (
	"fmt"
	"slices"
	"time"

	"github.com/blang/semver/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func leaseCandidateKind() *Kind {
	return &Kind{
		Group:          coordinationv1beta1.GroupName,
		Resource:       "leasecandidates",
		Singular:       "leasecandidate",
		Kind:           "LeaseCandidate",
		ListKind:       "LeaseCandidateList",
		Namespaced:     true,
		Versions:       []string{"v1beta1", "v1alpha2"},
		StorageVersion: "v1beta1",
		Deprecated: map[string]string{
			"v1beta1":  "coordination.k8s.io/v1beta1 LeaseCandidate is deprecated in v1.36+, unavailable in v1.39+",
			"v1alpha2": "coordination.k8s.io/v1alpha2 LeaseCandidate is deprecated in v1.35+, unavailable in v1.38+",
		},
		Verbs:                    slices.Clone(verbs),
		AllowCreateOnUpdate:      true,
		AllowUnconditionalUpdate: false,
		PrepareForCreate:         func(runtime.Object) {},
		PrepareForUpdate:         func(_, _ runtime.Object) {},
		Validate:                 createValidation(true, validateLeaseCandidate),
		ValidateUpdate:           updateValidation(true, validateLeaseCandidateUpdate),
		TableColumns: []metav1.TableColumnDefinition{
			nameColumn(),
			// The real printer takes this description from v1alpha2, and looks the two version
			// descriptions up in the ObjectMeta docs, where they do not exist: they are empty.
			{Name: "LeaseName", Type: "string", Description: coordinationv1alpha2.LeaseCandidateSpec{}.SwaggerDoc()["leaseName"]},
			{Name: "BinaryVersion", Type: "string"},
			{Name: "EmulationVersion", Type: "string"},
			ageColumn(),
		},
		TableCells: leaseCandidateCells,
		// The registry also offers spec.leaseName, but the field-label conversion (the default
		// one) rejects it before it could be used, so it is left out.
		FieldSet: func(obj runtime.Object) fields.Set {
			return objectMetaFields(obj, true)
		},
	}
}

// leaseCandidateName is the LeaseCandidate name rule: a ConfigMap key, so that component
// identities such as "host_1234" are valid.
func leaseCandidateName(name string, _ bool) []string {
	// A generateName prefix needs no special case: a trailing "-" is a valid key character.
	return utilvalidation.IsConfigMapKey(name)
}

func validateLeaseCandidate(lc *coordinationv1beta1.LeaseCandidate) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&lc.ObjectMeta, true, leaseCandidateName, metadataPath)
	return append(errs, validateLeaseCandidateSpec(&lc.Spec, field.NewPath("spec"))...)
}

func validateLeaseCandidateUpdate(lc, old *coordinationv1beta1.LeaseCandidate) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&lc.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validateLeaseCandidateSpec(&lc.Spec, field.NewPath("spec"))...)
	return append(errs, apivalidation.ValidateImmutableField(lc.Spec.LeaseName, old.Spec.LeaseName, field.NewPath("spec", "leaseName"))...)
}

func validateLeaseCandidateSpec(spec *coordinationv1beta1.LeaseCandidateSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.LeaseName == "" {
		errs = append(errs, field.Required(path.Child("leaseName"), ""))
	}

	// An unparsable version stays 0.0.0 for the comparisons below, so a bad binaryVersion is
	// reported twice (invalid, and lower than emulationVersion), as on the real server.
	var emulation, binary semver.Version
	if spec.EmulationVersion != "" {
		v, err := semver.Parse(spec.EmulationVersion)
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("emulationVersion"), spec.EmulationVersion, "must be a valid semantic version"))
		} else {
			emulation = v
		}
	}
	if spec.BinaryVersion == "" {
		errs = append(errs, field.Required(path.Child("binaryVersion"), ""))
	} else {
		v, err := semver.Parse(spec.BinaryVersion)
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("binaryVersion"), spec.BinaryVersion, "must be a valid semantic version"))
		} else {
			binary = v
		}
	}
	if spec.BinaryVersion != "" && spec.EmulationVersion != "" && binary.LT(emulation) {
		errs = append(errs, field.Invalid(path.Child("binaryVersion"), spec.BinaryVersion, "must be greater than or equal to `emulationVersion`"))
	}

	if spec.Strategy == "" {
		errs = append(errs, field.Required(path.Child("strategy"), ""))
		return errs
	}
	if spec.Strategy == coordinationv1.OldestEmulationVersion && emulation.EQ(semver.Version{}) {
		errs = append(errs, field.Required(path.Child("emulationVersion"), "must be specified when `strategy` is 'OldestEmulationVersion'"))
	}
	return append(errs, validateCoordinatedLeaseStrategy(spec.Strategy, path.Child("strategy"))...)
}

func leaseCandidateCells(obj runtime.Object, now time.Time) []any {
	lc, ok := obj.(*coordinationv1beta1.LeaseCandidate)
	if !ok {
		return nil
	}
	return []any{lc.Name, lc.Spec.LeaseName, lc.Spec.BinaryVersion, lc.Spec.EmulationVersion, age(lc.CreationTimestamp, now)}
}

// addLeaseCandidateConversions registers conversions between the two served LeaseCandidate
// versions. Their schemas are identical, so the specs convert with a plain Go conversion: should
// the two ever differ, this stops compiling instead of silently dropping a field.
func addLeaseCandidateConversions(s *runtime.Scheme) error {
	pairs := []struct {
		a, b any
		fn   conversion.ConversionFunc
	}{
		{(*coordinationv1alpha2.LeaseCandidate)(nil), (*coordinationv1beta1.LeaseCandidate)(nil), func(a, b any, _ conversion.Scope) error {
			*b.(*coordinationv1beta1.LeaseCandidate) = alpha2ToBeta1(a.(*coordinationv1alpha2.LeaseCandidate))
			return nil
		}},
		{(*coordinationv1beta1.LeaseCandidate)(nil), (*coordinationv1alpha2.LeaseCandidate)(nil), func(a, b any, _ conversion.Scope) error {
			*b.(*coordinationv1alpha2.LeaseCandidate) = beta1ToAlpha2(a.(*coordinationv1beta1.LeaseCandidate))
			return nil
		}},
		{(*coordinationv1alpha2.LeaseCandidateList)(nil), (*coordinationv1beta1.LeaseCandidateList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*coordinationv1alpha2.LeaseCandidateList), b.(*coordinationv1beta1.LeaseCandidateList)
			out.ListMeta = in.ListMeta
			out.Items = nil
			if in.Items != nil {
				out.Items = make([]coordinationv1beta1.LeaseCandidate, len(in.Items))
				for i := range in.Items {
					out.Items[i] = alpha2ToBeta1(&in.Items[i])
				}
			}
			return nil
		}},
		{(*coordinationv1beta1.LeaseCandidateList)(nil), (*coordinationv1alpha2.LeaseCandidateList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*coordinationv1beta1.LeaseCandidateList), b.(*coordinationv1alpha2.LeaseCandidateList)
			out.ListMeta = in.ListMeta
			out.Items = nil
			if in.Items != nil {
				out.Items = make([]coordinationv1alpha2.LeaseCandidate, len(in.Items))
				for i := range in.Items {
					out.Items[i] = beta1ToAlpha2(&in.Items[i])
				}
			}
			return nil
		}},
	}
	for _, p := range pairs {
		if err := s.AddConversionFunc(p.a, p.b, p.fn); err != nil {
			return fmt.Errorf("add leasecandidate conversion: %w", err)
		}
	}
	return nil
}

// alpha2ToBeta1 converts one LeaseCandidate. The result shares pointers and maps with in; the
// scheme deep-copies before converting. TypeMeta is left for the caller to set.
func alpha2ToBeta1(in *coordinationv1alpha2.LeaseCandidate) coordinationv1beta1.LeaseCandidate {
	return coordinationv1beta1.LeaseCandidate{
		ObjectMeta: in.ObjectMeta,
		Spec:       coordinationv1beta1.LeaseCandidateSpec(in.Spec),
	}
}

// beta1ToAlpha2 is the reverse of alpha2ToBeta1.
func beta1ToAlpha2(in *coordinationv1beta1.LeaseCandidate) coordinationv1alpha2.LeaseCandidate {
	return coordinationv1alpha2.LeaseCandidate{
		ObjectMeta: in.ObjectMeta,
		Spec:       coordinationv1alpha2.LeaseCandidateSpec(in.Spec),
	}
}
