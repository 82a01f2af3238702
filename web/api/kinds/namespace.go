package kinds

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// standardFinalizers are the finalizer names core objects may use without a domain prefix.
var standardFinalizers = []string{
	string(corev1.FinalizerKubernetes),
	metav1.FinalizerOrphanDependents,
	metav1.FinalizerDeleteDependents,
}

func namespaceKind() *Kind {
	return &Kind{
		Group:                    corev1.GroupName,
		Resource:                 "namespaces",
		Singular:                 "namespace",
		Kind:                     "Namespace",
		ListKind:                 "NamespaceList",
		Namespaced:               false,
		Versions:                 []string{"v1"},
		StorageVersion:           "v1",
		Verbs:                    slices.Clone(verbs),
		AllowCreateOnUpdate:      false,
		AllowUnconditionalUpdate: true,
		Default:                  prepareCreate(labelNamespaceName),
		PrepareForCreate:         prepareCreate(prepareNamespaceCreate),
		PrepareForUpdate:         prepareUpdate(prepareNamespaceUpdate),
		Validate:                 createValidation(false, validateNamespace),
		ValidateUpdate: updateValidation(false, func(ns, _ *corev1.Namespace, metaUpdate field.ErrorList) field.ErrorList {
			return append(validateNamespace(ns), validateCoreObjectMetaUpdate(&ns.ObjectMeta, metaUpdate)...)
		}),
		TableColumns: []metav1.TableColumnDefinition{
			nameColumn(),
			{Name: "Status", Type: "string", Description: "The status of the namespace"},
			ageColumn(),
		},
		TableCells: func(obj runtime.Object, now time.Time) []any {
			ns, ok := obj.(*corev1.Namespace)
			if !ok {
				return nil
			}
			return []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp, now)}
		},
		FieldSet: func(obj runtime.Object) fields.Set {
			ns, ok := obj.(*corev1.Namespace)
			if !ok {
				return nil
			}
			return fields.Set{"metadata.name": ns.Name, "status.phase": string(ns.Status.Phase)}
		},
		fieldLabel: namespaceFieldLabel,
	}
}

// prepareNamespaceCreate makes a new namespace Active, guarantees it the "kubernetes" finalizer
// and labels it with its own name (again: a generated name is only known now), as the real
// server's strategy does.
func prepareNamespaceCreate(ns *corev1.Namespace) {
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
	labelNamespaceName(ns)
}

// prepareNamespaceUpdate keeps the stored finalizers and status: a plain update cannot change
// them (the real server has /finalize and /status for that) and labels the namespace again.
func prepareNamespaceUpdate(ns, old *corev1.Namespace) {
	ns.Spec.Finalizers = old.Spec.Finalizers
	ns.Status = old.Status
	labelNamespaceName(ns)
}

// labelNamespaceName sets the kubernetes.io/metadata.name label to the name, overwriting any
// value a client sent. A namespace without a name yet (generateName) is left alone.
func labelNamespaceName(ns *corev1.Namespace) {
	if ns.Name == "" {
		return
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

func validateNamespace(ns *corev1.Namespace) field.ErrorList {
	errs := validateCoreObjectMeta(&ns.ObjectMeta, false, apivalidation.ValidateNamespaceName)
	// The real server reports each bad spec finalizer on the list itself, without an index.
	path := field.NewPath("spec", "finalizers")
	for _, f := range ns.Spec.Finalizers {
		errs = append(errs, apivalidation.ValidateFinalizerName(string(f), path)...)
		errs = append(errs, validateKubeFinalizerName(string(f), path)...)
	}
	return errs
}

// validateCoreObjectMeta is the metadata validation of core kinds: the generic rules plus the
// core rule that unqualified finalizer names must be standard ones.
func validateCoreObjectMeta(m *metav1.ObjectMeta, namespaced bool, name apivalidation.ValidateNameFunc) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(m, namespaced, name, metadataPath)
	for i, f := range m.Finalizers {
		errs = append(errs, validateKubeFinalizerName(f, metadataPath.Child("finalizers").Index(i))...)
	}
	return errs
}

// validateCoreObjectMetaUpdate is validateCoreObjectMeta's counterpart for updates, given the
// metadata update errors updateValidation found.
func validateCoreObjectMetaUpdate(m *metav1.ObjectMeta, metaUpdate field.ErrorList) field.ErrorList {
	errs := metaUpdateAgain(metaUpdate)
	for i, f := range m.Finalizers {
		errs = append(errs, validateKubeFinalizerName(f, metadataPath.Child("finalizers").Index(i))...)
	}
	return errs
}

// validateKubeFinalizerName rejects an unqualified finalizer name that is not a standard one.
func validateKubeFinalizerName(name string, path *field.Path) field.ErrorList {
	if strings.Contains(name, "/") || slices.Contains(standardFinalizers, name) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified")}
}
