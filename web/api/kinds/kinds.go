// Package kinds describes every resource the API server serves: names, versions, the scheme and
// codecs that read and write them, and the rules the real API server applies to them
// (defaulting, validation, immutable fields, table columns, selectable fields).
// It holds no HTTP and no storage: the REST handlers in web/api/apiserver apply these rules.
package kinds

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Kind is one served resource and the rules for it. Objects handed to its functions are always
// of the storage version (StorageVersion).
type Kind struct {
	Group      string // "" for the core group
	Resource   string // plural: "leases"
	Singular   string // "lease"
	Kind       string // "Lease"
	ListKind   string // "LeaseList"
	Namespaced bool
	// Versions lists the served versions in priority order. StorageVersion is the version
	// objects are converted to before they are validated and stored.
	Versions       []string
	StorageVersion string
	// NoProtobuf lists the served versions that have no protobuf encoding; they are served as
	// JSON and YAML only (406 and 415 for protobuf, as for a custom resource).
	NoProtobuf []string
	// Deprecated holds, for each deprecated served version, the warning the real server sends
	// with every request at that version.
	Deprecated map[string]string
	// Verbs are the discovery verbs, sorted.
	Verbs []string

	// AllowCreateOnUpdate lets a PUT to a missing name create the object (201).
	AllowCreateOnUpdate bool
	// AllowUnconditionalUpdate lets a PUT without metadata.resourceVersion overwrite.
	AllowUnconditionalUpdate bool

	// Default sets the defaults the real server's decoder gives a new object, before the field
	// manager records what the client wrote (so its fields are the client's); nil for none.
	Default func(obj runtime.Object)
	// PrepareForCreate clears or defaults fields of a new object before validation, after the
	// field manager has recorded the client's fields (the real registry's strategy).
	PrepareForCreate func(obj runtime.Object)
	// PrepareForUpdate adjusts an updated object given the stored one, before validation.
	PrepareForUpdate func(obj, old runtime.Object)
	// Validate checks a new object, metadata included. It already runs the generic registry's
	// metadata pass (path-segment name) after the kind's own rules, as the real server does, so
	// callers must not run it again.
	Validate func(obj runtime.Object) field.ErrorList
	// ValidateUpdate checks an updated object against the stored one, metadata included. It
	// already runs the generic registry's common-field checks (resourceVersion required,
	// immutable metadata) before the kind's own rules, so callers must not run them again.
	ValidateUpdate func(obj, old runtime.Object) field.ErrorList

	// ChangedScalars, when set, lists the scalar fields whose values differ between a stored
	// object and its update (both of the storage version) as the registry's comparison of
	// their JSON would list them, for the field manager's fast path; ok false when it cannot
	// tell, and the registry compares their JSON.
	ChangedScalars func(old, obj runtime.Object) (paths []fieldpath.Path, ok bool)

	// TableColumns are the columns of the Table format, as the real server prints them.
	TableColumns []metav1.TableColumnDefinition
	// TableCells returns one row's cells for obj, ages measured at now.
	TableCells func(obj runtime.Object, now time.Time) []any

	// FieldSet returns the values of the fields a fieldSelector may use for obj; its keys are
	// exactly the selectable field names.
	FieldSet func(obj runtime.Object) fields.Set

	// fieldLabel is the scheme's field-label conversion for the kind: it accepts or rejects one
	// fieldSelector key with the real server's message. Nil means the default of kinds that
	// register none (metadata.name and metadata.namespace only).
	fieldLabel func(label, value string) (string, string, error)
}

// GroupResource returns the kind's group and resource.
func (k *Kind) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: k.Group, Resource: k.Resource}
}

// StorageResource is the name the store files objects of this kind under: the resource,
// qualified by the group when there is one ("leases.coordination.k8s.io", "events").
func (k *Kind) StorageResource() string {
	return k.GroupResource().String()
}

// StorageGVK is the group, version and kind objects are stored as.
func (k *Kind) StorageGVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: k.Group, Version: k.StorageVersion, Kind: k.Kind}
}

// ServesProtobuf reports whether objects of version have a protobuf encoding.
func (k *Kind) ServesProtobuf(version string) bool {
	for _, v := range k.NoProtobuf {
		if v == version {
			return false
		}
	}
	return true
}

// Serves reports whether version is one of the kind's served versions.
func (k *Kind) Serves(version string) bool {
	for _, v := range k.Versions {
		if v == version {
			return true
		}
	}
	return false
}
