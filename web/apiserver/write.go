package apiserver

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/leaselab/leaselab/store"
)

// writeOptions are the options every write shares.
type writeOptions struct {
	dryRun          bool
	fieldValidation string
	manager         string
	// applied is set for server-side apply, whose field manager already updated managedFields.
	applied bool
	// fromCache is set for an update against a cached object (updateFromCache).
	fromCache bool
}

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
	if info.StrictSerializer != nil && validation != metav1.FieldValidationIgnore {
		dec = info.StrictSerializer
	}
	obj, actual, err := dec.Decode(body, &gvk, into)
	if err != nil {
		if !runtime.IsStrictDecodingError(err) || obj == nil || validation == metav1.FieldValidationStrict {
			return nil, q.decodeError(err, actual, body)
		}
		q.warnStrict(err)
	}
	if actual.GroupVersion() != q.gv {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", actual.GroupVersion(), q.gv))
	}
	if actual.Kind != q.kind.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): kind %q", q.kind.Kind, actual.Kind))
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return q.toStorage(obj)
}

// decodeError words a body that cannot be decoded as the real server's transformDecodeError
// does: by the kind and version the body claims when it could be read that far, else with the
// start of the body.
func (q *request) decodeError(err error, actual *schema.GroupVersionKind, body []byte) error {
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
	if !errorsAs(err, &se) {
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
	wo := writeOptions{dryRun: len(opts.DryRun) > 0, manager: q.managerName(opts.FieldManager)}
	created, err := q.createObject(obj, wo, true)
	if err != nil {
		return err
	}
	return q.respond(http.StatusCreated, out, created)
}

// createObject runs the create path for a storage-version object: server-set metadata,
// generateName, defaulting, validation, managed fields, then the store. checkRV refuses a
// client-set resourceVersion as the real server does for POST (a PUT that creates ignores it).
func (q *request) createObject(obj runtime.Object, wo writeOptions, checkRV bool) (runtime.Object, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if checkRV && acc.GetResourceVersion() != "" && !wo.dryRun {
		return nil, internalError("resourceVersion should not be set on objects to be created")
	}
	acc.SetResourceVersion("")
	acc.SetUID(uuid.NewUUID())
	acc.SetCreationTimestamp(metav1.NewTime(q.s.opts.Now().Truncate(time.Second)))
	acc.SetDeletionTimestamp(nil)
	acc.SetDeletionGracePeriodSeconds(nil)
	acc.SetSelfLink("")
	generated := acc.GetName() == "" && acc.GetGenerateName() != ""
	if generated {
		acc.SetName(generateName(acc.GetGenerateName()))
	}
	if q.kind.PrepareForCreate != nil {
		q.kind.PrepareForCreate(obj)
	}
	if errs := q.kind.Validate(obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: q.kind.Group, Kind: q.kind.Kind}, acc.GetName(), errs)
	}
	if admit := q.s.opts.AdmitCreate; admit != nil {
		done, err := admit(q.r.Context(), q.kind.GroupResource(), acc.GetNamespace(), acc.GetName())
		if err != nil {
			return nil, err
		}
		defer done()
	}
	if fm := q.fieldManager(); fm != nil && !wo.applied {
		live, err := q.s.reg.Scheme.New(q.kind.StorageGVK())
		if err != nil {
			return nil, err
		}
		obj = fm.UpdateNoErrors(live, obj, wo.manager)
		acc, _ = meta.Accessor(obj)
	}
	if wo.dryRun {
		// The real server checks for an existing name even on a dry run.
		if _, err := q.s.store.Get(q.r.Context(), q.key(acc.GetName())); err == nil {
			return nil, apierrors.NewAlreadyExists(q.kind.GroupResource(), acc.GetName())
		}
		return obj, nil
	}
	if q.kind.Namespaced {
		if err := q.s.ensureNamespace(q.r.Context(), acc.GetNamespace()); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		value, err := q.s.encodeStored(q.kind, obj)
		if err != nil {
			return nil, err
		}
		o, err := q.s.store.Create(q.r.Context(), q.key(acc.GetName()), value)
		if errorsIs(err, store.ErrExists) && generated {
			if attempt < 7 {
				acc.SetName(generateName(acc.GetGenerateName()))
				continue
			}
			return nil, apierrors.NewGenerateNameConflict(q.kind.GroupResource(), acc.GetName(), 1)
		}
		if err != nil {
			return nil, storeError(err, q.kind.GroupResource(), acc.GetName())
		}
		acc.SetResourceVersion(strconv.FormatInt(o.Revision, 10))
		return obj, nil
	}
}

// generateName appends five random characters to a generateName prefix, as the real server.
func generateName(prefix string) string {
	const maxPrefix = 63 - 5
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	return prefix + rand.String(5)
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
	wo := writeOptions{dryRun: len(opts.DryRun) > 0, manager: q.managerName(opts.FieldManager)}
	if result, ok := q.updateFromCache(obj, wo); ok {
		return q.respond(http.StatusOK, out, result)
	}

	cur, err := q.s.store.Get(q.r.Context(), q.key(q.ri.Name))
	if errorsIs(err, store.ErrNotFound) {
		// The uid of a PUT is a storage precondition, checked before anything else against
		// the empty object a missing name reads as.
		if uid := acc.GetUID(); uid != "" {
			return preconditionConflict(q.kind.GroupResource(), acc.GetNamespace(), acc.GetName(), "UID", string(uid), "")
		}
		if !q.kind.AllowCreateOnUpdate {
			return apierrors.NewNotFound(q.kind.GroupResource(), q.ri.Name)
		}
		created, err := q.createObject(obj, wo, false)
		if err != nil {
			return err
		}
		return q.respond(http.StatusCreated, out, created)
	}
	if err != nil {
		return storeError(err, q.kind.GroupResource(), q.ri.Name)
	}
	old, err := q.objects.decode(cur)
	if err != nil {
		return err
	}
	oldAcc, _ := meta.Accessor(old)
	if uid := acc.GetUID(); uid != "" && uid != oldAcc.GetUID() {
		return preconditionConflict(q.kind.GroupResource(), acc.GetNamespace(), acc.GetName(), "UID", string(uid), string(oldAcc.GetUID()))
	}
	expect := cur.Revision
	switch rv := acc.GetResourceVersion(); {
	case rv == "" && !q.kind.AllowUnconditionalUpdate:
		return apierrors.NewInvalid(schema.GroupKind{Group: q.kind.Group, Kind: q.kind.Resource}, q.ri.Name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
	case rv != "":
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil || n <= 0 {
			return apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: must be a positive integer", rv))
		}
		if n != cur.Revision {
			return errModified(q.kind.GroupResource(), q.ri.Name)
		}
	}
	result, err := q.updateObject(obj, old, expect, wo)
	if err != nil {
		return err
	}
	return q.respond(http.StatusOK, out, result)
}

// errStaleCache ends an update against a cached object that cannot say what the update
// against the stored one would: the caller runs that instead.
var errStaleCache = errors.New("cached object is not the stored one")

// updateFromCache runs an update whose resourceVersion names a state of the object still in the
// cache of decoded objects (the one its client read with the GET before), with the store's
// revision precondition as the only check that it is current: this saves reading and decoding
// the object again. It reports false, having written nothing, whenever the answer could differ
// from the update against a fresh read (a failure of any kind, or no change to write), and the
// caller then runs that.
func (q *request) updateFromCache(obj runtime.Object, wo writeOptions) (runtime.Object, bool) {
	if wo.dryRun {
		return nil, false
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, false
	}
	rev, err := strconv.ParseInt(acc.GetResourceVersion(), 10, 64)
	if err != nil || rev <= 0 {
		return nil, false
	}
	cached, ok := q.s.decoded.get(decodedKey{Key: q.key(q.ri.Name), rev: rev})
	if !ok {
		return nil, false
	}
	wo.fromCache = true
	result, err := q.updateObject(obj.DeepCopyObject(), cached.DeepCopyObject(), rev, wo)
	if err != nil {
		return nil, false
	}
	return result, true
}

// updateObject runs the update path for a storage-version object against the stored old one
// at revision expect: immutable metadata, defaulting, validation, managed fields, the no-op
// check and the store's revision precondition.
func (q *request) updateObject(obj, old runtime.Object, expect int64, wo writeOptions) (runtime.Object, error) {
	acc, _ := meta.Accessor(obj)
	oldAcc, _ := meta.Accessor(old)
	acc.SetGeneration(oldAcc.GetGeneration())
	acc.SetSelfLink("")
	acc.SetResourceVersion(oldAcc.GetResourceVersion())
	if q.kind.PrepareForUpdate != nil {
		q.kind.PrepareForUpdate(obj, old)
	}
	// What the real server's BeforeUpdate takes from the stored object. Only the creation
	// time is always kept: a changed uid or deletion metadata is left for the update
	// validation to refuse as immutable (a PUT's uid was already checked as a precondition).
	if acc.GetUID() == "" {
		acc.SetUID(oldAcc.GetUID())
	}
	if t := oldAcc.GetCreationTimestamp(); !t.IsZero() {
		acc.SetCreationTimestamp(t)
	}
	if t := oldAcc.GetDeletionTimestamp(); !t.IsZero() {
		acc.SetDeletionTimestamp(t)
	}
	if g := oldAcc.GetDeletionGracePeriodSeconds(); g != nil && acc.GetDeletionGracePeriodSeconds() == nil {
		acc.SetDeletionGracePeriodSeconds(g)
	}
	if errs := q.kind.ValidateUpdate(obj, old); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: q.kind.Group, Kind: q.kind.Kind}, acc.GetName(), errs)
	}
	changed := false // known to differ from old
	if fm := q.fieldManager(); fm != nil && !wo.applied {
		if q.gv.Version == q.kind.StorageVersion {
			// The objects are of the field manager's version: its fast path applies.
			obj, changed = updateManagedFields(fm, old, obj, q.gv.String(), q.servesAPIVersion, wo.manager)
		} else {
			obj = fm.UpdateNoErrors(old, obj, wo.manager)
		}
		acc, _ = meta.Accessor(obj)
	}
	if !changed && unchanged(obj, old) {
		if wo.fromCache {
			return nil, errStaleCache // the stored object may have moved on
		}
		return old, nil
	}
	if wo.dryRun {
		return obj, nil
	}
	value, err := q.s.encodeStored(q.kind, obj)
	if err != nil {
		return nil, err
	}
	o, err := q.s.store.Update(q.r.Context(), q.key(acc.GetName()), expect, value)
	if errorsIs(err, store.ErrNotFound) || errorsIs(err, store.ErrConflict) {
		return nil, storeConflict{errModified(q.kind.GroupResource(), acc.GetName())}
	}
	if err != nil {
		return nil, storeError(err, q.kind.GroupResource(), acc.GetName())
	}
	acc.SetResourceVersion(strconv.FormatInt(o.Revision, 10))
	return obj, nil
}

// unchanged reports whether an update would store the same object, ignoring the timestamps of
// managedFields entries that did not otherwise change, as the real server skips such writes.
func unchanged(obj, old runtime.Object) bool {
	acc, _ := meta.Accessor(obj)
	oldAcc, _ := meta.Accessor(old)
	mf := acc.GetManagedFields()
	oldMF := oldAcc.GetManagedFields()
	if len(mf) != len(oldMF) {
		return false
	}
	normalized := make([]metav1.ManagedFieldsEntry, len(mf))
	for i := range mf {
		normalized[i] = mf[i]
		o := oldMF[i]
		if mf[i].Manager == o.Manager && mf[i].Operation == o.Operation && mf[i].APIVersion == o.APIVersion && mf[i].Subresource == o.Subresource {
			normalized[i].Time = o.Time
		}
	}
	acc.SetManagedFields(normalized)
	same := apiequality.Semantic.DeepEqual(obj, old)
	acc.SetManagedFields(mf)
	return same
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
	ctx := q.r.Context()
	for {
		cur, err := q.s.store.Get(ctx, q.key(q.ri.Name))
		if err != nil {
			return storeError(err, q.kind.GroupResource(), q.ri.Name)
		}
		obj, err := q.objects.decode(cur)
		if err != nil {
			return err
		}
		acc, _ := meta.Accessor(obj)
		if err := q.checkDeletePreconditions(opts.Preconditions, acc); err != nil {
			return err
		}
		dryRun := len(opts.DryRun) > 0
		if q.kind.Resource == "namespaces" && q.kind.Group == "" {
			return q.deleteNamespace(out, obj, cur.Revision, dryRun)
		}
		if !dryRun {
			if _, err := q.s.store.Delete(ctx, q.key(q.ri.Name), cur.Revision); err != nil {
				if errorsIs(err, store.ErrConflict) && opts.Preconditions == nil {
					continue // changed between our read and the delete: look again
				}
				if errorsIs(err, store.ErrConflict) {
					return errModified(q.kind.GroupResource(), q.ri.Name)
				}
				return storeError(err, q.kind.GroupResource(), q.ri.Name)
			}
		}
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
}

// checkDeletePreconditions fails a delete whose preconditions the object does not meet, with the
// real server's words (rest.BeforeDelete): a Conflict on the kind, not the resource.
func (q *request) checkDeletePreconditions(p *metav1.Preconditions, acc metav1.Object) error {
	if p == nil {
		return nil
	}
	byKind := schema.GroupResource{Group: q.kind.Group, Resource: q.kind.Kind}
	if p.UID != nil && *p.UID != acc.GetUID() {
		return apierrors.NewConflict(byKind, acc.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, acc.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != acc.GetResourceVersion() {
		return apierrors.NewConflict(byKind, acc.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, acc.GetResourceVersion()))
	}
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
			return nil, apierrors.NewBadRequest(fmt.Sprintf("expected DeleteOptions, got %T", obj))
		}
		opts = d
	}
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, optionsInvalid("DeleteOptions", errs)
	}
	return opts, nil
}

// storeConflict is the 409 of a write that lost a race in the store. It matches
// store.ErrConflict, so that paths which may retry (patch, apply) can tell it from a 409 that
// is final, such as a field manager conflict.
type storeConflict struct{ *apierrors.StatusError }

func (e storeConflict) Is(target error) bool { return target == store.ErrConflict }
