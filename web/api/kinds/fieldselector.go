package kinds

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

// CheckFieldSelector reports whether every key of sel is a field the kind can be selected by. The
// error text is the real server's, e.g. `"spec.leaseName" is not a known field selector: only
// "metadata.name", "metadata.namespace"` for the coordination kinds and `field label not
// supported: foo` for core ones; the REST layer returns it as a 400 BadRequest. A nil or empty
// selector is always accepted.
func (k *Kind) CheckFieldSelector(sel fields.Selector) error {
	if sel == nil || sel.Empty() {
		return nil
	}
	convert := k.fieldLabel
	if convert == nil {
		convert = runtime.DefaultMetaV1FieldSelectorConversion
	}
	_, err := sel.Transform(convert)
	return err
}

// objectMetaFields is the field set every kind offers: metadata.name and, for namespaced kinds,
// metadata.namespace. It returns nil for an object without metadata.
func objectMetaFields(obj runtime.Object, namespaced bool) fields.Set {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	set := fields.Set{"metadata.name": m.GetName()}
	if namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	}
	return set
}

// namespaceFieldLabel is core v1's field-label conversion for Namespaces.
func namespaceFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "status.phase":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// eventFieldLabel is core v1's field-label conversion for Events.
func eventFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "metadata.namespace",
		"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
		"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
		"reason", "reportingComponent", "source", "type":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}
