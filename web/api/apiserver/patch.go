package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

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

	"github.com/leaselab/leaselab/web/api/apiserver/registry"
	"github.com/leaselab/leaselab/web/api/mediatype"
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
		patchObj := &unstructured.Unstructured{Object: map[string]any{}}
		if err := yaml.Unmarshal(body, &patchObj.Object); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
		}
		// An applied resourceVersion is a precondition, as for a PUT: no retry then.
		u = registry.UpdatedObject{
			Transform:        q.applyTransform(patchObj, body, opts.FieldValidation, wo.Manager, force),
			ForceAllowCreate: true,
			Retry:            patchObj.GetResourceVersion() == "",
		}
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
	strictErrs, err := checkPatchDocument(pt, body, validation)
	if err != nil {
		return nil, err
	}
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
		obj, err := q.decodePatched(patched, body, pt, validation, strictErrs)
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

// jsonPatchOp is one operation of a JSON patch, as the real server's patch handler decodes it
// to check the document before applying it.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// checkPatchDocument decodes a JSON or merge patch document strictly, as the real server does
// unless fieldValidation is Ignore: a document of the wrong shape (a merge patch that is not
// an object, a JSON patch that is not a list of operations) is a 400 "error decoding patch";
// duplicate or unknown fields are returned, to become warnings or, under Strict, a 422.
func checkPatchDocument(pt types.PatchType, body []byte, validation string) ([]error, error) {
	if validation == metav1.FieldValidationIgnore {
		return nil, nil
	}
	var (
		strictErrs []error
		err        error
	)
	switch pt {
	case types.MergePatchType:
		strictErrs, err = kjson.UnmarshalStrict(body, &map[string]any{})
	case types.JSONPatchType:
		strictErrs, err = kjson.UnmarshalStrict(body, &[]jsonPatchOp{})
		for i, e := range strictErrs {
			strictErrs[i] = fmt.Errorf("json patch %v", e)
		}
	default:
		return nil, nil
	}
	if err != nil {
		// The real handler's type lives in its package "handlers"; people search for the
		// message as it prints it.
		msg := strings.ReplaceAll(err.Error(), "apiserver.jsonPatchOp", "handlers.jsonPatchOp")
		return nil, apierrors.NewBadRequest("error decoding patch: " + msg)
	}
	return strictErrs, nil
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
func (q *request) decodePatched(patched, body []byte, pt types.PatchType, validation string, patchErrs []error) (runtime.Object, error) {
	info := q.s.serializer(mediaJSON)
	gvk := q.gv.WithKind(q.kind.Kind)
	into, err := q.s.reg.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	patched = q.patchedVersion(patched)
	dec := info.Serializer
	if validation != metav1.FieldValidationIgnore {
		dec = info.StrictSerializer
	}
	invalid := func(msg string) error {
		return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
			field.Invalid(field.NewPath("patch"), patchBadValue(patched, body, pt), msg),
		})
	}
	// As the real server: a result that does not decode is the answer; otherwise the
	// problems of the patch document and of the result are reported together.
	obj, actual, err := dec.Decode(patched, &gvk, into)
	strictErrs := patchErrs
	if err != nil {
		se, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return nil, invalid(err.Error())
		}
		strictErrs = append(strictErrs, se.Errors()...)
	}
	if len(strictErrs) > 0 {
		if validation == metav1.FieldValidationStrict {
			return nil, invalid(runtime.NewStrictDecodingError(strictErrs).Error())
		}
		for _, e := range strictErrs {
			q.warn(e.Error())
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if actual != nil && actual.Version != q.gv.Version {
		// A patch that named another served version of the kind: the real server decodes
		// the result as that version and converts it, so the change has no effect of its own.
		stored, err := q.s.reg.Convert(obj, schema.GroupVersion{Group: q.kind.Group, Version: q.kind.StorageVersion})
		if err != nil {
			return nil, err
		}
		stored.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		return stored, nil
	}
	return q.toStorage(obj)
}

// patchedVersion returns a patched object whose apiVersion names another version of the
// kind's group that leaselab does not serve the kind at (coordination.k8s.io/v1beta1 for a
// Lease) with the URL's version instead: the real server knows those versions, decodes the
// object as one and converts it to the same fields, so the apiVersion changes nothing.
func (q *scope) patchedVersion(patched []byte) []byte {
	var tm metav1.TypeMeta
	if json.Unmarshal(patched, &tm) != nil {
		return patched
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil || gv.Group != q.kind.Group || gv.Version == q.gv.Version || q.kind.Serves(gv.Version) || tm.Kind != q.kind.Kind {
		return patched
	}
	var m map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(patched, &m); err != nil {
		return patched
	}
	m["apiVersion"] = q.gv.String()
	out, err := json.Marshal(m)
	if err != nil {
		return patched
	}
	return out
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
// the applied configuration patchObj (body decoded) into the current object (or a new one) and
// records ownership; conflicts are 409 unless forced. The checks run in the real server's
// order: the field manager's (the configuration's apiVersion and kind, then conflicts), strict
// decoding, the name and namespace against the URL, then a resourceVersion in the
// configuration against the current object's.
func (q *request) applyTransform(patchObj *unstructured.Unstructured, body []byte, validation, manager string, force bool) func(runtime.Object) (runtime.Object, error) {
	return func(cur runtime.Object) (runtime.Object, error) {
		missing := cur == nil
		live := cur
		var err error
		if missing {
			if live, err = q.s.reg.Scheme.New(q.kind.StorageGVK()); err != nil {
				return nil, err
			}
			acc, _ := meta.Accessor(live)
			acc.SetName(q.ri.Name)
			acc.SetNamespace(q.ri.Namespace)
		}
		applied, err := q.fieldManager().Apply(live, patchObj.DeepCopy(), manager, force)
		if err != nil {
			var st apierrors.APIStatus
			if !errors.As(err, &st) {
				// A plain error, such as a field the schema does not declare: the real server
				// sends its text as a 500 without a reason.
				return nil, registry.InternalError(err.Error())
			}
			return nil, err
		}
		if validation == metav1.FieldValidationStrict || validation == metav1.FieldValidationWarn || validation == "" {
			if err := yaml.UnmarshalStrict(body, &map[string]any{}); err != nil {
				if validation == metav1.FieldValidationStrict {
					return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
				}
				q.warn(err.Error())
			}
		}
		acc, _ := meta.Accessor(applied)
		if err := q.checkNameAndNamespace(acc); err != nil {
			return nil, err
		}
		if uid := acc.GetUID(); missing && uid != "" {
			// What the real patch handler answers for a uid it cannot compare with anything.
			return nil, apierrors.NewConflict(q.kind.GroupResource(), q.ri.Name, fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", uid))
		}
		if rv := patchObj.GetResourceVersion(); !missing && rv != "" {
			curAcc, _ := meta.Accessor(cur)
			if rv != curAcc.GetResourceVersion() {
				return nil, registry.Modified(q.kind.GroupResource(), q.ri.Name)
			}
		}
		return applied, nil
	}
}
