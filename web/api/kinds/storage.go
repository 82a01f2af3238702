package kinds

import (
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The stored form of an object is JSON of its storage version without resourceVersion: the
// store's revision is the resourceVersion, and JSON keeps the database readable with any
// SQLite shell. EncodeStored and DecodeStored are the one place that knows it.

// EncodeStored returns the stored form of a storage-version object of kind k. obj is left as
// it was.
func (r *Registry) EncodeStored(k *Kind, obj runtime.Object) ([]byte, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	rv := acc.GetResourceVersion()
	gvk := obj.GetObjectKind().GroupVersionKind()
	acc.SetResourceVersion("")
	obj.GetObjectKind().SetGroupVersionKind(k.StorageGVK())
	b, err := json.Marshal(obj)
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	acc.SetResourceVersion(rv)
	return b, err
}

// DecodeStored turns a stored object of kind k back into its storage-version Go object, with
// an empty TypeMeta and the resourceVersion set from the revision it was stored at.
func (r *Registry) DecodeStored(k *Kind, value []byte, revision int64) (runtime.Object, error) {
	obj, err := r.Scheme.New(k.StorageGVK())
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(value, obj); err != nil {
		return nil, fmt.Errorf("decode stored %s: %w", k.Resource, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	acc.SetResourceVersion(strconv.FormatInt(revision, 10))
	return obj, nil
}
