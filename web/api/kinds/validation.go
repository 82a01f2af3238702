package kinds

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// metadataPath is the root of every metadata error.
var metadataPath = field.NewPath("metadata")

// pathSegmentName is the name rule the generic registry applies to every kind: the name must be
// usable as one URL path segment.
func pathSegmentName(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}

// createValidation wraps a kind's own create validation the way the generic registry runs it:
// the kind's rules first and, only when they pass, the generic metadata rules with the
// path-segment name check, so that the kind's more specific messages win.
func createValidation[T runtime.Object](namespaced bool, validate func(T) field.ErrorList) func(runtime.Object) field.ErrorList {
	return func(obj runtime.Object) field.ErrorList {
		typed, ok := obj.(T)
		if !ok {
			return wrongType[T](obj)
		}
		if errs := validate(typed); len(errs) > 0 {
			return errs
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return field.ErrorList{field.InternalError(metadataPath, err)}
		}
		return apivalidation.ValidateObjectMetaAccessor(m, namespaced, pathSegmentName, metadataPath)
	}
}

// updateValidation wraps a kind's own update validation the way the generic registry runs it:
// the common metadata rules (path-segment name, immutable metadata, resourceVersion required)
// first, then the kind's rules. Both lists are reported together; like the real server, rules
// that both check (metadata immutability) may appear twice. The kind's rules get the common
// metadata update errors, so that those that check them again (see metaUpdateAgain) need not
// run them a second time: a renewal would otherwise validate its labels three times.
func updateValidation[T runtime.Object](namespaced bool, validate func(obj, old T, metaUpdate field.ErrorList) field.ErrorList) func(obj, old runtime.Object) field.ErrorList {
	return func(obj, old runtime.Object) field.ErrorList {
		typed, ok := obj.(T)
		if !ok {
			return wrongType[T](obj)
		}
		typedOld, ok := old.(T)
		if !ok {
			return wrongType[T](old)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return field.ErrorList{field.InternalError(metadataPath, err)}
		}
		oldMeta, err := meta.Accessor(old)
		if err != nil {
			return field.ErrorList{field.InternalError(metadataPath, err)}
		}
		errs := apivalidation.ValidateObjectMetaAccessor(m, namespaced, pathSegmentName, metadataPath)
		metaUpdate := apivalidation.ValidateObjectMetaAccessorUpdate(checkedOnce(m, errs), oldMeta, metadataPath)
		errs = append(errs, metaUpdate...)
		return append(errs, validate(typed, typedOld, metaUpdate)...)
	}
}

// checkedOnce returns m with its labels, annotations, owner references and managed fields
// hidden when ValidateObjectMetaAccessor found nothing wrong with them (errs): the update rules
// run the same checks of the same values, so they would find nothing either.
// TestUpdateMetadataRulesAsComposed compares the outcome with apimachinery's own composition:
// an apimachinery whose update rules read these values for something else fails it.
func checkedOnce(m metav1.Object, errs field.ErrorList) metav1.Object {
	for _, e := range errs {
		for _, p := range checkedTwice {
			if e.Field == p || strings.HasPrefix(e.Field, p+".") || strings.HasPrefix(e.Field, p+"[") {
				return m
			}
		}
	}
	return checkedMeta{m}
}

// checkedTwice are the metadata both ValidateObjectMetaAccessor and
// ValidateObjectMetaAccessorUpdate validate, each the same way.
var checkedTwice = []string{"metadata.labels", "metadata.annotations", "metadata.ownerReferences", "metadata.managedFields"}

// checkedMeta is metadata whose checkedTwice parts have been validated already.
type checkedMeta struct{ metav1.Object }

func (checkedMeta) GetLabels() map[string]string                  { return nil }
func (checkedMeta) GetAnnotations() map[string]string             { return nil }
func (checkedMeta) GetOwnerReferences() []metav1.OwnerReference   { return nil }
func (checkedMeta) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }

// metaUpdateAgain is what apivalidation.ValidateObjectMetaUpdate returns for the object and
// its old version, given updateValidation's metadata update errors: the same function of the
// same metadata. The kinds whose own update rules begin with it in the real server report
// these errors a second time; the copies keep the two reports apart.
func metaUpdateAgain(metaUpdate field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, 0, len(metaUpdate))
	for _, e := range metaUpdate {
		c := *e
		out = append(out, &c)
	}
	return out
}

// wrongType reports an object that is not of the kind's storage type: a programming error in
// the caller, surfaced as an internal error rather than a panic.
func wrongType[T runtime.Object](obj runtime.Object) field.ErrorList {
	var want T
	return field.ErrorList{field.InternalError(nil, fmt.Errorf("expected %T, got %T", want, obj))}
}

// prepareCreate adapts a typed PrepareForCreate; objects of another type are left alone.
func prepareCreate[T runtime.Object](fn func(T)) func(runtime.Object) {
	return func(obj runtime.Object) {
		if typed, ok := obj.(T); ok {
			fn(typed)
		}
	}
}

// prepareUpdate adapts a typed PrepareForUpdate; objects of another type are left alone.
func prepareUpdate[T runtime.Object](fn func(obj, old T)) func(obj, old runtime.Object) {
	return func(obj, old runtime.Object) {
		typed, ok := obj.(T)
		typedOld, okOld := old.(T)
		if ok && okOld {
			fn(typed, typedOld)
		}
	}
}
