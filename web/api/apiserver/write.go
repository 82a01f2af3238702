package apiserver

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	"github.com/leaselab/leaselab/web/api/apiserver/registry"
)

func optionsInvalid(kind string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

// decodeParams reads query parameters into one of the metav1 options types.
func (q *request) decodeParams(into runtime.Object) error {
	if err := q.s.params.DecodeParameters(q.r.URL.Query(), q.gv, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// decodeBody decodes a request body of the URL's version, applying fieldValidation: unknown
// and duplicate fields fail the request (Strict), become Warning headers (Warn, the default)
// or are dropped (Ignore). The result is converted to the storage version.
func (q *request) decodeBody(body []byte, validation string) (runtime.Object, error) {
	info, err := q.negotiateInput()
	if err != nil {
		return nil, err
	}
	gvk := q.gv.WithKind(q.kind.Kind)
	into, err := q.s.reg.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	dec := info.Serializer
	strict := info.StrictSerializer != nil && validation != metav1.FieldValidationIgnore
	if strict {
		dec = info.StrictSerializer
	}
	if info.MediaType == runtime.ContentTypeJSON {
		if decodeJSON(body, into, gvk, strict) {
			into.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			return q.toStorage(into)
		}
		if into, err = q.s.reg.Scheme.New(gvk); err != nil {
			return nil, err
		}
	}
	obj, actual, err := dec.Decode(body, &gvk, into)
	if err != nil {
		if runtime.IsNotRegisteredError(err) && actual != nil && q.upstreamVersion(*actual) {
			return nil, errVersionMismatch(actual.GroupVersion(), q.gv)
		}
		if !runtime.IsStrictDecodingError(err) || obj == nil || validation == metav1.FieldValidationStrict {
			return nil, q.decodeError(err, actual, body)
		}
		q.warnStrict(err)
	}
	if actual.GroupVersion() != q.gv {
		return nil, errVersionMismatch(actual.GroupVersion(), q.gv)
	}
	if actual.Kind != q.kind.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): kind %q", q.kind.Kind, actual.Kind))
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return q.toStorage(obj)
}

// decodeJSON decodes a JSON body into into, as the JSON serializer would, when the body names
// gvk as its apiVersion and kind and decodes without an error or a strict decoding warning:
// the serializer reads such a body twice, for its apiVersion and kind first (a third of a
// Lease's decoding), then as the object. Any other body is left to the serializer, which words
// its errors; into is then to be replaced. FuzzDecodeJSON holds it to the serializer.
func decodeJSON(body []byte, into runtime.Object, gvk schema.GroupVersionKind, strict bool) bool {
	if strict {
		if strictErrs, err := kjson.UnmarshalStrict(body, into); err != nil || len(strictErrs) > 0 {
			return false
		}
	} else if err := kjson.UnmarshalCaseSensitivePreserveInts(body, into); err != nil {
		return false
	}
	return into.GetObjectKind().GroupVersionKind() == gvk
}

// errVersionMismatch is the 400 of a body of another version than the URL's.
func errVersionMismatch(got, want schema.GroupVersion) error {
	return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", got, want))
}

// upstreamVersions are versions of the served kinds that kube-apiserver's scheme knows but
// leaselab does not serve them at: a body of one of them decodes there and is then refused
// as of another version, not as unreadable.
var upstreamVersions = map[schema.GroupVersionKind]bool{
	{Group: "coordination.k8s.io", Version: "v1beta1", Kind: "Lease"}: true,
}

// upstreamVersion reports whether gvk is the request's kind at a version kube-apiserver knows.
func (q *scope) upstreamVersion(gvk schema.GroupVersionKind) bool {
	return gvk.Kind == q.kind.Kind && gvk.Group == q.kind.Group && (q.kind.Serves(gvk.Version) || upstreamVersions[gvk])
}

// decodeError words a body that cannot be decoded as the real server's transformDecodeError
// does: by the kind and version the body claims when it could be read that far, else with the
// start of the body.
func (q *scope) decodeError(err error, actual *schema.GroupVersionKind, body []byte) error {
	if actual != nil && actual.Kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", actual.Kind, actual.Version, q.kind.Kind, err))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", q.kind.Kind, err, summarizeBody(body, 30)))
}

// summarizeBody is the start of a body for an error message: as text when it looks like JSON,
// else in hex.
func summarizeBody(b []byte, limit int) string {
	switch {
	case len(b) == 0:
		return "<empty>"
	case b[0] == '{':
		if len(b) > limit {
			return string(b[:limit]) + " ..."
		}
		return string(b)
	case len(b) > limit:
		return hex.EncodeToString(b[:limit]) + " ..."
	}
	return hex.EncodeToString(b)
}

// warnStrict turns the problems of a strict decoding error into Warning headers.
func (q *request) warnStrict(err error) {
	var se interface{ Errors() []error }
	if !errors.As(err, &se) {
		return
	}
	for _, e := range se.Errors() {
		q.warn(e.Error())
	}
}

// warn adds a Warning header in the format client-go prints.
func (q *request) warn(text string) {
	q.w.Header().Add("Warning", "299 - "+strconv.Quote(text))
}

// checkNamespace fills the namespace of a namespaced object from the URL and refuses a
// different one, as the real server does.
func (q *request) checkNamespace(acc metav1.Object) error {
	if !q.kind.Namespaced {
		acc.SetNamespace("")
		return nil
	}
	switch ns := acc.GetNamespace(); {
	case ns == "":
		acc.SetNamespace(q.ri.Namespace)
	case ns != q.ri.Namespace:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// readObject negotiates the response format, then reads and decodes the request body (see
// decodeBody).
func (q *request) readObject(validation string) (output, runtime.Object, metav1.Object, error) {
	out, err := q.negotiateOutput(false)
	if err != nil {
		return output{}, nil, nil, err
	}
	body, err := q.readBody()
	if err != nil {
		return output{}, nil, nil, err
	}
	obj, err := q.decodeBody(body, validation)
	if err != nil {
		return output{}, nil, nil, err
	}
	acc, err := meta.Accessor(obj)
	return out, obj, acc, err
}

// checkNameAndNamespace fills or checks the namespace of an object written to a URL that names
// one (checkNamespace), then refuses it without a name or with another name. The order and
// the words are the real update and patch handlers'.
func (q *request) checkNameAndNamespace(acc metav1.Object) error {
	if err := q.checkNamespace(acc); err != nil {
		return err
	}
	switch name := acc.GetName(); {
	case name == "":
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s based on URL) was undeterminable: name must be provided", q.ri.Name))
	case name != q.ri.Name:
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, q.ri.Name))
	}
	return nil
}

func (q *request) create() error {
	var opts metav1.CreateOptions
	if err := q.decodeParams(&opts); err != nil {
		return err
	}
	if errs := metav1validation.ValidateCreateOptions(&opts); len(errs) > 0 {
		return optionsInvalid("CreateOptions", errs)
	}
	out, obj, acc, err := q.readObject(opts.FieldValidation)
	if err != nil {
		return err
	}
	if err := q.checkNamespace(acc); err != nil {
		return err
	}
	created, err := q.objects.Create(q.r.Context(), obj, q.writeOptions(opts.DryRun, opts.FieldManager), true)
	if err != nil {
		return err
	}
	return q.respond(http.StatusCreated, out, created)
}

// writeOptions are the options of a write with the given dryRun and fieldManager parameters.
func (q *request) writeOptions(dryRun []string, fieldManager string) registry.WriteOptions {
	return registry.WriteOptions{DryRun: len(dryRun) > 0, Manager: q.managerName(fieldManager), GV: q.gv}
}

func (q *request) update() error {
	var opts metav1.UpdateOptions
	if err := q.decodeParams(&opts); err != nil {
		return err
	}
	if errs := metav1validation.ValidateUpdateOptions(&opts); len(errs) > 0 {
		return optionsInvalid("UpdateOptions", errs)
	}
	out, obj, acc, err := q.readObject(opts.FieldValidation)
	if err != nil {
		return err
	}
	if err := q.checkNameAndNamespace(acc); err != nil {
		return err
	}
	u := registry.UpdatedObject{
		UID: acc.GetUID(),
		// The object sent is the new one, once its resourceVersion names the current one.
		Transform: func(cur runtime.Object) (runtime.Object, error) {
			if cur == nil {
				return obj, nil
			}
			return obj, q.checkUpdateVersion(acc.GetResourceVersion(), cur)
		},
	}
	if rev, err := strconv.ParseInt(acc.GetResourceVersion(), 10, 64); err == nil {
		u.CachedRev = rev
	}
	result, created, err := q.objects.Update(q.r.Context(), q.ri.Namespace, q.ri.Name, u, q.writeOptions(opts.DryRun, opts.FieldManager))
	if err != nil {
		return err
	}
	if created {
		return q.respond(http.StatusCreated, out, result)
	}
	return q.respond(http.StatusOK, out, result)
}

// checkUpdateVersion checks the resourceVersion rv of a PUT against the current object: it
// must be set unless the kind allows unconditional updates, and name the current state.
func (q *request) checkUpdateVersion(rv string, cur runtime.Object) error {
	curAcc, _ := meta.Accessor(cur)
	switch {
	case rv == "" && !q.kind.AllowUnconditionalUpdate:
		return apierrors.NewInvalid(schema.GroupKind{Group: q.kind.Group, Kind: q.kind.Resource}, q.ri.Name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
	case rv != "":
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil || n <= 0 {
			return apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: must be a positive integer", rv))
		}
		if strconv.FormatInt(n, 10) != curAcc.GetResourceVersion() {
			return registry.Modified(q.kind.GroupResource(), q.ri.Name)
		}
	}
	return nil
}

func (q *request) delete() error {
	opts, err := q.deleteOptions()
	if err != nil {
		return err
	}
	out, err := q.negotiateOutput(false)
	if err != nil {
		return err
	}
	obj, removed, err := q.objects.Delete(q.r.Context(), q.ri.Namespace, q.ri.Name, opts)
	if err != nil {
		return err
	}
	if !removed {
		// Kept for its finalizers, and answered with as it is now: 202 only for a client that
		// asked for its dependents to go first the old way, as the real handler.
		code := http.StatusOK
		if o := opts.OrphanDependents; o != nil && !*o { //nolint:staticcheck // still sent by old clients
			code = http.StatusAccepted
		}
		return q.respond(code, out, obj)
	}
	if q.objects.ReturnsDeletedObject() {
		return q.respond(http.StatusOK, out, obj)
	}
	acc, _ := meta.Accessor(obj)
	st := &metav1.Status{
		Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name:  q.ri.Name,
			Group: q.kind.Group,
			Kind:  q.kind.Resource,
			UID:   acc.GetUID(),
		},
	}
	q.writeObject(http.StatusOK, out, st, schema.GroupVersion{Version: "v1"})
	return nil
}

func (q *request) deleteCollection() error {
	dopts, err := q.deleteOptions()
	if err != nil {
		return err
	}
	out, err := q.negotiateOutput(false)
	if err != nil {
		return err
	}
	opts, err := q.listOptions()
	if err != nil {
		return err
	}
	items, lm, err := q.objects.DeleteCollection(q.r.Context(), q.ri.Namespace, opts, dopts)
	if err != nil {
		return err
	}
	// The answer is the list as it was read, as the real server's DeleteCollection returns
	// it: items at their last resourceVersions.
	list, err := q.newList(items, lm)
	if err != nil {
		return err
	}
	q.writeObject(http.StatusOK, out, list, q.gv)
	return nil
}

// deleteOptions reads DeleteOptions from the body (any format, meta.k8s.io/v1 or the group's
// version) and the query, and validates them.
func (q *request) deleteOptions() (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	// Query parameters first: a body, when sent, is what client-go uses and wins.
	if err := q.decodeParams(opts); err != nil {
		return nil, err
	}
	body, err := q.readBody()
	if err != nil {
		return nil, err
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		info, err := q.negotiateInput()
		if err != nil {
			return nil, err
		}
		def := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		obj, _, err := info.Serializer.Decode(body, &def, opts)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		d, ok := obj.(*metav1.DeleteOptions)
		if !ok {
			return nil, apierrors.NewBadRequest("decoded object cannot be converted to DeleteOptions")
		}
		opts = d
	}
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, optionsInvalid("DeleteOptions", errs)
	}
	return opts, nil
}
