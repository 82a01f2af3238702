package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/leaselab/leaselab/web/apiserver/registry"
	"github.com/leaselab/leaselab/web/mediatype"
)

// maxJSONPatchOperations bounds a JSON patch as the real server does.
const maxJSONPatchOperations = 10000

// jsonPatchMaxCopyBytes bounds what the copy operations of one JSON patch may add to the
// document, the real server's default (its JSONPatchMaxCopyBytes): without it a patch of a few
// dozen copies, each doubling a value, needs gigabytes.
const jsonPatchMaxCopyBytes = 3 << 20

func init() { jsonpatch.AccumulatedCopySizeLimit = jsonPatchMaxCopyBytes }

// patchType returns the patch type of a PATCH request's Content-Type. Any other type is refused
// with the 415 of the real server's router, which words it differently from a create's.
func patchType(r *http.Request) (types.PatchType, error) {
	// A bad parameter does not matter: the type alone says what the patch is.
	mt, _ := mediatype.Parse(r.Header.Get("Content-Type"))
	switch pt := types.PatchType(mt.String()); pt {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType:
		return pt, nil
	}
	return "", errRouterUnsupportedMediaType()
}

func (q *request) patch() error {
	pt, err := patchType(q.r)
	if err != nil {
		return err
	}
	var opts metav1.PatchOptions
	if err := q.decodeParams(&opts); err != nil {
		return err
	}
	if errs := metav1validation.ValidatePatchOptions(&opts, pt); len(errs) > 0 {
		return optionsInvalid("PatchOptions", errs)
	}
	out, err := q.negotiateOutput(false)
	if err != nil {
		return err
	}
	body, err := q.readBody()
	if err != nil {
		return err
	}
	wo := q.writeOptions(opts.DryRun, opts.FieldManager)
	var u registry.UpdatedObject
	if pt == types.ApplyYAMLPatchType {
		// The field manager records the applier itself: the create and update paths must not
		// add an Update entry on top.
		wo.Applied = true
		force := opts.Force != nil && *opts.Force
		u = registry.UpdatedObject{Transform: q.applyTransform(body, opts.FieldValidation, wo.Manager, force), ForceAllowCreate: true, Retry: true}
	} else {
		transform, err := q.patchTransform(pt, body, opts.FieldValidation)
		if err != nil {
			return err
		}
		// A patch without a resourceVersion applies to the latest object: it retries when it
		// lost a race, as the real server's GuaranteedUpdate loop.
		u = registry.UpdatedObject{Transform: transform, Retry: !patchSetsResourceVersion(pt, body)}
	}
	result, created, err := q.objects.Update(q.r.Context(), q.ri.Namespace, q.ri.Name, u, wo)
	if err != nil {
		return err
	}
	if created {
		return q.respond(http.StatusCreated, out, result)
	}
	return q.respond(http.StatusOK, out, result)
}

// patchTransform returns the update of a JSON, merge or strategic merge patch: the patch
// applied to the current object in the request's version. A JSON patch is decoded first.
func (q *request) patchTransform(pt types.PatchType, body []byte, validation string) (func(runtime.Object) (runtime.Object, error), error) {
	var jp jsonpatch.Patch
	if pt == types.JSONPatchType {
		var err error
		if jp, err = jsonpatch.DecodePatch(body); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if len(jp) > maxJSONPatchOperations {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(jp)))
		}
	}
	return func(cur runtime.Object) (runtime.Object, error) {
		if cur == nil {
			return nil, apierrors.NewNotFound(q.kind.GroupResource(), q.ri.Name)
		}
		curAcc, _ := meta.Accessor(cur)
		rv := curAcc.GetResourceVersion()
		patched, err := q.applyPatch(pt, jp, body, cur)
		if err != nil {
			return nil, err
		}
		obj, err := q.decodePatched(patched, body, pt, validation)
		if err != nil {
			return nil, err
		}
		acc, _ := meta.Accessor(obj)
		if err := q.checkNameAndNamespace(acc); err != nil {
			return nil, err
		}
		// A resourceVersion in the patched object is a precondition; none means last writer wins.
		if acc.GetResourceVersion() != rv {
			return nil, registry.Modified(q.kind.GroupResource(), q.ri.Name)
		}
		return obj, nil
	}, nil
}

// applyPatch applies a patch of type pt to the JSON of cur in the request's version.
func (q *request) applyPatch(pt types.PatchType, jp jsonpatch.Patch, body []byte, cur runtime.Object) ([]byte, error) {
	versioned, err := q.toVersion(cur)
	if err != nil {
		return nil, err
	}
	versioned.GetObjectKind().SetGroupVersionKind(q.gv.WithKind(q.kind.Kind))
	original, err := json.Marshal(versioned)
	if err != nil {
		return nil, err
	}
	var patched []byte
	switch pt {
	case types.JSONPatchType:
		if patched, err = applyJSONPatch(jp, original); err != nil {
			return nil, errJSONPatchFailed()
		}
	case types.MergePatchType:
		if patched, err = jsonpatch.MergePatch(original, body); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case types.StrategicMergePatchType:
		if patched, err = strategicpatch.StrategicMergePatch(original, body, versioned); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	return patched, nil
}

// applyJSONPatch applies a JSON patch. The library dereferences the value of add, replace and
// test operations without checking that there is one, so those are refused first; the recover
// keeps any other malformed patch from taking the request down with a panic.
func applyJSONPatch(jp jsonpatch.Patch, doc []byte) (out []byte, err error) {
	for _, op := range jp {
		switch op.Kind() {
		case "add", "replace", "test":
			if _, ok := op["value"]; !ok {
				return nil, fmt.Errorf("%s operation without a value", op.Kind())
			}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("apply JSON patch: %v", r)
		}
	}()
	return jp.Apply(doc)
}

// patchSetsResourceVersion reports whether a merge-style patch pins metadata.resourceVersion,
// which makes a conflict final instead of a reason to retry.
func patchSetsResourceVersion(pt types.PatchType, body []byte) bool {
	if pt == types.JSONPatchType {
		return true // a JSON patch may test or set it anywhere: do not guess, do not retry
	}
	var m struct {
		Metadata struct {
			ResourceVersion *string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	return json.Unmarshal(body, &m) == nil && m.Metadata.ResourceVersion != nil
}

// decodePatched decodes the JSON result of a patch of type pt (body). A result that does not
// decode, or that has unknown fields under Strict validation, is a 422 on the field "patch",
// whose value is what the real server shows: the patched object for JSON and merge patches,
// the patch itself (as a Go map) for strategic merge patches.
func (q *request) decodePatched(patched, body []byte, pt types.PatchType, validation string) (runtime.Object, error) {
	info := q.s.serializer(mediaJSON)
	gvk := q.gv.WithKind(q.kind.Kind)
	into, err := q.s.reg.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	dec := info.Serializer
	if validation != metav1.FieldValidationIgnore {
		dec = info.StrictSerializer
	}
	obj, _, err := dec.Decode(patched, &gvk, into)
	if err != nil {
		strict := runtime.IsStrictDecodingError(err) && obj != nil
		if !strict || validation == metav1.FieldValidationStrict {
			return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
				field.Invalid(field.NewPath("patch"), patchBadValue(patched, body, pt), err.Error()),
			})
		}
		q.warnStrict(err)
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return q.toStorage(obj)
}

// patchBadValue is the value a refused patch reports: the patched object, or for a strategic
// merge patch the patch decoded to a map and printed with %+v (keys sorted, integers kept).
func patchBadValue(patched, body []byte, pt types.PatchType) string {
	if pt != types.StrategicMergePatchType {
		return string(patched)
	}
	var m map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(body, &m); err != nil {
		return string(body)
	}
	return fmt.Sprintf("%+v", m)
}

// applyTransform returns the update of a server-side apply patch: the field manager merges
// the applied configuration into the current object (or a new one) and records ownership;
// conflicts are 409 unless forced.
func (q *request) applyTransform(body []byte, validation, manager string, force bool) func(runtime.Object) (runtime.Object, error) {
	return func(cur runtime.Object) (runtime.Object, error) {
		patchObj, err := q.decodeApplied(body, validation)
		if err != nil {
			return nil, err
		}
		missing := cur == nil
		live := cur
		if missing {
			if live, err = q.s.reg.Scheme.New(q.kind.StorageGVK()); err != nil {
				return nil, err
			}
			acc, _ := meta.Accessor(live)
			acc.SetName(q.ri.Name)
			acc.SetNamespace(q.ri.Namespace)
		}
		applied, err := q.fieldManager().Apply(live, patchObj, manager, force)
		if err != nil {
			var st apierrors.APIStatus
			if !errors.As(err, &st) {
				// A plain error, such as a field the schema does not declare: the real server
				// sends its text as a 500 without a reason.
				return nil, registry.InternalError(err.Error())
			}
			return nil, err
		}
		acc, _ := meta.Accessor(applied)
		if uid := acc.GetUID(); missing && uid != "" {
			// What the real patch handler answers for a uid it cannot compare with anything.
			return nil, apierrors.NewConflict(q.kind.GroupResource(), q.ri.Name, fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", uid))
		}
		acc.SetName(q.ri.Name)
		if err := q.checkNamespace(acc); err != nil {
			return nil, err
		}
		return applied, nil
	}
}

// decodeApplied decodes the configuration of a server-side apply patch and checks its kind,
// version, name and namespace against the URL.
func (q *request) decodeApplied(body []byte, validation string) (*unstructured.Unstructured, error) {
	patchObj := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal(body, &patchObj.Object); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if validation == metav1.FieldValidationStrict {
		if err := yaml.UnmarshalStrict(body, &map[string]any{}); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
		}
	}
	gvk := patchObj.GroupVersionKind()
	if gvk.GroupVersion() != q.gv || gvk.Kind != q.kind.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", gvk.GroupVersion(), q.gv))
	}
	if n := patchObj.GetName(); n != "" && n != q.ri.Name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, q.ri.Name))
	}
	if ns := patchObj.GetNamespace(); q.kind.Namespaced && ns != "" && ns != q.ri.Namespace {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return patchObj, nil
}
