package kinds

import (
	"slices"
	"time"

	"github.com/blang/semver/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/leaselab/leaselab/web/api/kinds/convpair"
	"github.com/leaselab/leaselab/web/api/kinds/coordinationv1alpha1"
)

func leaseCandidateKind() *Kind {
	return &Kind{
		Group:          coordinationv1beta1.GroupName,
		Resource:       "leasecandidates",
		Singular:       "leasecandidate",
		Kind:           "LeaseCandidate",
		ListKind:       "LeaseCandidateList",
		Namespaced:     true,
		Versions:       []string{"v1beta1", "v1alpha2", "v1alpha1"},
		StorageVersion: "v1beta1",
		// v1alpha1 has no generated protobuf code: like a custom resource, it is served as
		// JSON and YAML only.
		NoProtobuf: []string{"v1alpha1"},
		Deprecated: map[string]string{
			"v1beta1":  "coordination.k8s.io/v1beta1 LeaseCandidate is deprecated in v1.36+, unavailable in v1.39+",
			"v1alpha2": "coordination.k8s.io/v1alpha2 LeaseCandidate is deprecated in v1.35+, unavailable in v1.38+",
			// The lifecycle an alpha introduced in 1.31 gets: deprecated three releases later,
			// removed three after that. leaselab serves it past that point, for its history.
			"v1alpha1": "coordination.k8s.io/v1alpha1 LeaseCandidate is deprecated in v1.34+, unavailable in v1.37+",
		},
		Verbs:                    slices.Clone(verbs),
		AllowCreateOnUpdate:      true,
		AllowUnconditionalUpdate: false,
		PrepareForCreate:         prepareCreate(dropStalePreferredStrategies),
		PrepareForUpdate:         prepareUpdate(func(lc, _ *coordinationv1beta1.LeaseCandidate) { dropStalePreferredStrategies(lc) }),
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
	return append(errs, validateLeaseCandidateSpec(lc, field.NewPath("spec"))...)
}

func validateLeaseCandidateUpdate(lc, old *coordinationv1beta1.LeaseCandidate, metaUpdate field.ErrorList) field.ErrorList {
	errs := append(metaUpdateAgain(metaUpdate), validateLeaseCandidateSpec(lc, field.NewPath("spec"))...)
	return append(errs, apivalidation.ValidateImmutableField(lc.Spec.LeaseName, old.Spec.LeaseName, field.NewPath("spec", "leaseName"))...)
}

// dropStalePreferredStrategies removes a v1alpha1 preferred-strategies annotation that no longer
// agrees with spec.strategy (a newer client changed the strategy), so that it is not stored.
func dropStalePreferredStrategies(lc *coordinationv1beta1.LeaseCandidate) {
	if _, ok := lc.Annotations[coordinationv1alpha1.PreferredStrategiesAnnotation]; !ok {
		return
	}
	if _, alpha1 := coordinationv1alpha1.PreferredStrategies(lc); !alpha1 {
		delete(lc.Annotations, coordinationv1alpha1.PreferredStrategiesAnnotation)
		if len(lc.Annotations) == 0 {
			lc.Annotations = nil
		}
	}
}

// validateLeaseCandidateSpec checks a stored candidate's spec by the rules of the version it
// speaks: v1alpha1's when it was written through v1alpha1, v1beta1's (which v1alpha2 shares)
// otherwise.
func validateLeaseCandidateSpec(lc *coordinationv1beta1.LeaseCandidate, path *field.Path) field.ErrorList {
	if _, alpha1 := coordinationv1alpha1.PreferredStrategies(lc); alpha1 {
		alpha := coordinationv1alpha1.FromV1beta1(lc)
		return validateLeaseCandidateSpecV1alpha1(&alpha.Spec, path)
	}
	return validateLeaseCandidateSpecV1beta1(&lc.Spec, path)
}

// candidateVersions checks emulationVersion and binaryVersion, which every version checks
// alike, and returns them parsed (0.0.0 when absent or unparsable). requireBinary is v1beta1's
// rule that binaryVersion is always required.
//
// An unparsable version stays 0.0.0 for the comparisons, so a bad binaryVersion is reported
// twice (invalid, and lower than emulationVersion), as on the real server.
func candidateVersions(emulationVersion, binaryVersion string, requireBinary bool, path *field.Path) (emulation, binary semver.Version, errs field.ErrorList) {
	if emulationVersion != "" {
		v, err := semver.Parse(emulationVersion)
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("emulationVersion"), emulationVersion, "must be a valid semantic version"))
		} else {
			emulation = v
		}
	}
	switch {
	case binaryVersion != "":
		v, err := semver.Parse(binaryVersion)
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("binaryVersion"), binaryVersion, "must be a valid semantic version"))
		} else {
			binary = v
		}
	case requireBinary:
		errs = append(errs, field.Required(path.Child("binaryVersion"), ""))
	}
	if binaryVersion != "" && emulationVersion != "" && binary.LT(emulation) {
		errs = append(errs, field.Invalid(path.Child("binaryVersion"), binaryVersion, "must be greater than or equal to `emulationVersion`"))
	}
	return emulation, binary, errs
}

// validateLeaseCandidateSpecV1alpha1 is the 1.31 validation: preferredStrategies is required
// (the API marks it so), each entry is checked as a strategy, and both versions are required
// when OldestEmulationVersion is among them. Like 1.31, which meant to but never did, it does
// not report duplicate strategies; the election controller then treats the list as 1.31's did
// (a strategy named twice in a row supersedes itself, and the Lease is left alone).
func validateLeaseCandidateSpecV1alpha1(spec *coordinationv1alpha1.LeaseCandidateSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.LeaseName == "" {
		errs = append(errs, field.Required(path.Child("leaseName"), ""))
	}
	emulation, binary, verrs := candidateVersions(spec.EmulationVersion, spec.BinaryVersion, false, path)
	errs = append(errs, verrs...)
	if len(spec.PreferredStrategies) == 0 {
		return append(errs, field.Required(path.Child("preferredStrategies"), ""))
	}
	for i, s := range spec.PreferredStrategies {
		fld := path.Child("preferredStrategies").Index(i)
		if s == coordinationv1.OldestEmulationVersion {
			if binary.EQ(semver.Version{}) {
				errs = append(errs, field.Required(path.Child("binaryVersion"), "must be specified when `strategy` is 'OldestEmulationVersion'"))
			}
			if emulation.EQ(semver.Version{}) {
				errs = append(errs, field.Required(path.Child("emulationVersion"), "must be specified when `strategy` is 'OldestEmulationVersion'"))
			}
		}
		errs = append(errs, validateCoordinatedLeaseStrategy(s, fld)...)
	}
	return errs
}

func validateLeaseCandidateSpecV1beta1(spec *coordinationv1beta1.LeaseCandidateSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.LeaseName == "" {
		errs = append(errs, field.Required(path.Child("leaseName"), ""))
	}

	emulation, _, verrs := candidateVersions(spec.EmulationVersion, spec.BinaryVersion, true, path)
	errs = append(errs, verrs...)

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
	return convpair.Register(s, alpha2ToBeta1, beta1ToAlpha2,
		func(l *coordinationv1alpha2.LeaseCandidateList) (*metav1.ListMeta, *[]coordinationv1alpha2.LeaseCandidate) {
			return &l.ListMeta, &l.Items
		},
		func(l *coordinationv1beta1.LeaseCandidateList) (*metav1.ListMeta, *[]coordinationv1beta1.LeaseCandidate) {
			return &l.ListMeta, &l.Items
		})
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
