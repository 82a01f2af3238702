package registry

import (
	"context"
	"errors"
	"strconv"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/leaselab/leaselab/store"
)

// WriteOptions are the options every write shares.
type WriteOptions struct {
	DryRun bool
	// Manager is the field manager that records the write.
	Manager string
	// GV is the version the client wrote in, whose field manager records the write.
	GV schema.GroupVersion
	// Applied is set for server-side apply, whose field manager already updated managedFields.
	Applied bool
	// fromCache is set for an update against a cached object (Update's first attempt).
	fromCache bool
	// implicit is set for an object the server creates on its own, a namespace first written
	// in: it skips admission and records no managed fields, as no client wrote it.
	implicit bool
}

// updateAttempts bounds the attempts of an update that retries when it loses a race with
// another write, as the real server's GuaranteedUpdate loop retries.
const updateAttempts = 8

// fieldManager is the field manager of the kind at version gv. The handlers have waited for
// the field managers to be built before a write runs.
func (ks *Store) FieldManager(gv schema.GroupVersion) *managedfields.FieldManager {
	<-ks.r.fieldManagersReady
	return ks.r.fieldManagers[gv.WithKind(ks.kind.Kind)]
}

// ServesAPIVersion reports whether apiVersion is a group/version the kind is served at.
func (ks *Store) ServesAPIVersion(apiVersion string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && apiVersion != "" && gv.Group == ks.kind.Group && ks.kind.Serves(gv.Version)
}

// Create stores a new storage-version object: server-set metadata, generateName, defaulting,
// validation, admission, managed fields, the namespace it lives in, then the store. checkRV
// refuses a client-set resourceVersion as the real server does for POST (a PUT or apply that
// creates ignores it). It returns 422 Invalid, 409 AlreadyExists, admission's errors and the
// store's.
func (ks *Store) Create(ctx context.Context, obj runtime.Object, wo WriteOptions, checkRV bool) (runtime.Object, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if checkRV && acc.GetResourceVersion() != "" && !wo.DryRun {
		return nil, InternalError("resourceVersion should not be set on objects to be created")
	}
	acc.SetResourceVersion("")
	acc.SetUID(uuid.NewUUID())
	acc.SetCreationTimestamp(metav1.NewTime(ks.r.opts.Now().Truncate(time.Second)))
	acc.SetDeletionTimestamp(nil)
	acc.SetDeletionGracePeriodSeconds(nil)
	acc.SetSelfLink("")
	// The real server's order: decoding defaults, the field manager (so that managedFields
	// hold what the client wrote), the namespace's admission, then the strategy, validation
	// and the other admission.
	if ks.kind.Default != nil {
		ks.kind.Default(obj)
	}
	// (Asked only when needed: the field managers may still be being built when the server
	// makes a namespace at start.)
	if fm := (*managedfields.FieldManager)(nil); !wo.Applied && !wo.implicit {
		if fm = ks.FieldManager(wo.GV); fm != nil {
			live, err := ks.r.reg.Scheme.New(ks.kind.StorageGVK())
			if err != nil {
				return nil, err
			}
			obj = fm.UpdateNoErrors(live, obj, wo.Manager)
			acc, _ = meta.Accessor(obj)
		}
	}
	if ks.kind.Namespaced && !wo.implicit {
		if err := ks.r.admitNamespace(ctx, ks.kind.GroupResource(), acc.GetNamespace(), acc.GetName()); err != nil {
			return nil, err
		}
	}
	generated := acc.GetName() == "" && acc.GetGenerateName() != ""
	if generated {
		acc.SetName(generateName(acc.GetGenerateName()))
	}
	if ks.kind.PrepareForCreate != nil {
		ks.kind.PrepareForCreate(obj)
	}
	if errs := ks.kind.Validate(obj); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: ks.kind.Group, Kind: ks.kind.Kind}, acc.GetName(), errs)
	}
	if admit := ks.r.opts.AdmitCreate; admit != nil && !wo.implicit {
		done, err := admit(ctx, ks.kind.GroupResource(), acc.GetNamespace(), acc.GetName())
		if err != nil {
			return nil, err
		}
		defer done()
	}
	if wo.DryRun {
		// The real server checks for an existing name even on a dry run.
		if _, err := ks.r.store.Get(ctx, ks.key(acc.GetNamespace(), acc.GetName())); err == nil {
			return nil, apierrors.NewAlreadyExists(ks.kind.GroupResource(), acc.GetName())
		}
		return obj, nil
	}
	if ks.kind.Namespaced {
		if err := ks.r.ensureNamespace(ctx, acc.GetNamespace()); err != nil {
			return nil, err
		}
	}
	return ks.insert(ctx, obj, acc, generated, wo.Applied)
}

// insert writes a new object to the store, drawing another name for a generated one that is
// taken.
func (ks *Store) insert(ctx context.Context, obj runtime.Object, acc metav1.Object, generated, applied bool) (runtime.Object, error) {
	for attempt := 0; ; attempt++ {
		value, err := ks.r.encodeStored(ks.kind, obj)
		if err != nil {
			return nil, err
		}
		if err := ks.admitSize(ctx, acc, value); err != nil {
			return nil, err
		}
		if value, err = ks.storable(obj, acc, value, 0, applied); err != nil {
			return nil, err
		}
		o, err := ks.r.store.Create(ctx, ks.key(acc.GetNamespace(), acc.GetName()), value)
		if errors.Is(err, store.ErrExists) && !generated {
			return nil, ks.existsError(ctx, acc)
		}
		if errors.Is(err, store.ErrExists) && generated {
			if attempt < 7 {
				acc.SetName(generateName(acc.GetGenerateName()))
				continue
			}
			return nil, apierrors.NewGenerateNameConflict(ks.kind.GroupResource(), acc.GetName(), 1)
		}
		if err != nil {
			return nil, storeError(err, ks.kind.GroupResource(), acc.GetName())
		}
		acc.SetResourceVersion(strconv.FormatInt(o.Revision, 10))
		ks.keepDecoded(o, obj)
		if len(acc.GetOwnerReferences()) > 0 {
			ks.r.collect(ctx) // its owners may be gone already
		}
		return obj, nil
	}
}

// existsError is the 409 of a create of a name that exists, which says so when the object
// there is being deleted, as the real server's.
func (ks *Store) existsError(ctx context.Context, acc metav1.Object) error {
	st := apierrors.NewAlreadyExists(ks.kind.GroupResource(), acc.GetName())
	if o, err := ks.r.store.Get(ctx, ks.key(acc.GetNamespace(), acc.GetName())); err == nil {
		if cur, err := ks.decode(o); err == nil {
			if curAcc, _ := meta.Accessor(cur); curAcc.GetDeletionTimestamp() != nil {
				st.ErrStatus.Message = "object is being deleted: " + st.ErrStatus.Message
			}
		}
	}
	return st
}

// generateName appends five random characters to a generateName prefix, as the real server.
func generateName(prefix string) string {
	const maxPrefix = 63 - 5
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	return prefix + rand.String(5)
}

// UpdatedObject says how Update turns the current object into the new one.
type UpdatedObject struct {
	// UID, when set, is a storage precondition, checked before anything else against the
	// current object, or the empty one a missing name reads as.
	UID types.UID
	// Transform returns the new storage-version object from a copy of the current one, nil
	// for a missing name; its errors are the answer. It may run more than once.
	Transform func(cur runtime.Object) (runtime.Object, error)
	// ForceAllowCreate creates a missing name even for a kind that does not allow a create
	// on update (server-side apply).
	ForceAllowCreate bool
	// Retry runs the update again against the object read anew when it lost a race with
	// another write, up to updateAttempts times: for writes that did not pin a resourceVersion.
	Retry bool
	// CachedRev, when set, is the revision the client read (the new object's resourceVersion):
	// the update is first tried against that state of the object in the cache of decoded
	// objects, with the store's revision precondition as the only check that it is current.
	CachedRev int64
}

// Update is the one path of update, patch and server-side apply, as the real server's
// GuaranteedUpdate: read the current object, check the preconditions, transform it, and write
// the result with the revision read as the store's precondition, or create it when the name is
// missing and the kind or the update allows that. created reports a create. It returns the
// transform's errors, 404 NotFound, 409 Conflict for a failed precondition or a lost race (after
// the retries the update allows), 422 Invalid and the store's errors.
func (ks *Store) Update(ctx context.Context, namespace, name string, u UpdatedObject, wo WriteOptions) (obj runtime.Object, created bool, err error) {
	if obj, ok := ks.updateFromCache(ctx, namespace, name, u, wo); ok {
		return obj, false, nil
	}
	for attempt := 1; ; attempt++ {
		obj, created, err = ks.tryUpdate(ctx, namespace, name, u, wo)
		if errors.Is(err, store.ErrConflict) && u.Retry && attempt < updateAttempts {
			continue
		}
		return obj, created, err
	}
}

// tryUpdate is one attempt of Update.
func (ks *Store) tryUpdate(ctx context.Context, namespace, name string, u UpdatedObject, wo WriteOptions) (runtime.Object, bool, error) {
	cur, err := ks.r.store.Get(ctx, ks.key(namespace, name))
	if errors.Is(err, store.ErrNotFound) {
		if u.UID != "" {
			return nil, false, preconditionConflict(ks.kind.GroupResource(), namespace, name, "UID", string(u.UID), "")
		}
		obj, err := u.Transform(nil)
		if err != nil {
			return nil, false, err
		}
		if !ks.kind.AllowCreateOnUpdate && !u.ForceAllowCreate {
			return nil, false, apierrors.NewNotFound(ks.kind.GroupResource(), name)
		}
		created, err := ks.Create(ctx, obj, wo, false)
		return created, true, err
	}
	if err != nil {
		return nil, false, storeError(err, ks.kind.GroupResource(), name)
	}
	old, err := ks.decode(cur)
	if err != nil {
		return nil, false, err
	}
	if err := ks.checkUID(namespace, name, u.UID, old); err != nil {
		return nil, false, err
	}
	obj, err := u.Transform(old.DeepCopyObject())
	if err != nil {
		return nil, false, err
	}
	result, err := ks.updateObject(ctx, obj, old, cur.Revision, wo)
	return result, false, err
}

// checkUID checks the uid precondition of an update against the current object.
func (ks *Store) checkUID(namespace, name string, uid types.UID, cur runtime.Object) error {
	curAcc, _ := meta.Accessor(cur)
	if uid != "" && uid != curAcc.GetUID() {
		return preconditionConflict(ks.kind.GroupResource(), namespace, name, "UID", string(uid), string(curAcc.GetUID()))
	}
	return nil
}

// errStaleCache ends an update against a cached object that cannot say what the update
// against the stored one would: the caller runs that instead.
var errStaleCache = errors.New("cached object is not the stored one")

// updateFromCache runs an update against the state of the object still in the cache of decoded
// objects that u.CachedRev names (the one its client read with the GET before), with the
// store's revision precondition as the only check that it is current: this saves reading and
// decoding the object again. It reports false, having written nothing, whenever the answer
// could differ from the update against a fresh read (a failure of any kind, or no change to
// write), and Update then runs that.
func (ks *Store) updateFromCache(ctx context.Context, namespace, name string, u UpdatedObject, wo WriteOptions) (runtime.Object, bool) {
	if wo.DryRun || u.CachedRev <= 0 {
		return nil, false
	}
	cached, ok := ks.r.decoded.Get(decodedKey{Key: ks.key(namespace, name), rev: u.CachedRev})
	if !ok {
		return nil, false
	}
	old := cached.DeepCopyObject()
	if ks.checkUID(namespace, name, u.UID, old) != nil {
		return nil, false
	}
	obj, err := u.Transform(old.DeepCopyObject())
	if err != nil {
		return nil, false
	}
	wo.fromCache = true
	result, err := ks.updateObject(ctx, obj.DeepCopyObject(), old, u.CachedRev, wo)
	if err != nil {
		return nil, false
	}
	return result, true
}

// updateObject runs the update of a storage-version object against the stored old one at
// revision expect: immutable metadata, defaulting, validation, managed fields, the no-op
// check and the store's revision precondition.
func (ks *Store) updateObject(ctx context.Context, obj, old runtime.Object, expect int64, wo WriteOptions) (runtime.Object, error) {
	acc, _ := meta.Accessor(obj)
	keepStoredMetadata(acc, old)
	if ks.kind.PrepareForUpdate != nil {
		ks.kind.PrepareForUpdate(obj, old)
	}
	if errs := ks.kind.ValidateUpdate(obj, old); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: ks.kind.Group, Kind: ks.kind.Kind}, acc.GetName(), errs)
	}
	changed := false // known to differ from old
	if fm := ks.FieldManager(wo.GV); fm != nil && !wo.Applied {
		if wo.GV.Version == ks.kind.StorageVersion {
			// The objects are of the field manager's version: its fast path applies.
			obj, changed = updateManagedFields(fm, old, obj, wo.GV.String(), ks.ServesAPIVersion, ks.kind.ChangedScalars, wo.Manager)
		} else {
			obj = fm.UpdateNoErrors(old, obj, wo.Manager)
		}
		acc, _ = meta.Accessor(obj)
	}
	if !changed && unchanged(obj, old) {
		if wo.fromCache {
			return nil, errStaleCache // the stored object may have moved on
		}
		return old, nil
	}
	if oldAcc, _ := meta.Accessor(old); removedByUpdate(acc, oldAcc) && namespaceFinalized(obj) {
		// The last finalizer of an object being deleted is gone: the update removes it, and
		// answers with the object as the update made it.
		return ks.removeByUpdate(ctx, obj, acc, expect, wo.DryRun)
	}
	if wo.DryRun {
		return obj, nil
	}
	value, err := ks.r.encodeStored(ks.kind, obj)
	if err != nil {
		return nil, err
	}
	if err := ks.admitSize(ctx, acc, value); err != nil {
		return nil, err
	}
	if value, err = ks.storable(obj, acc, value, expect, wo.Applied); err != nil {
		return nil, err
	}
	o, err := ks.r.store.Update(ctx, ks.key(acc.GetNamespace(), acc.GetName()), expect, value)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		return nil, storeConflict{Modified(ks.kind.GroupResource(), acc.GetName())}
	}
	if err != nil {
		return nil, storeError(err, ks.kind.GroupResource(), acc.GetName())
	}
	acc.SetResourceVersion(strconv.FormatInt(o.Revision, 10))
	ks.keepDecoded(o, obj)
	if oldAcc, _ := meta.Accessor(old); ownersChanged(acc, oldAcc) {
		ks.r.collect(ctx) // its remaining owners may be gone
	}
	return obj, nil
}

// removeByUpdate removes the object at revision expect that an update emptied of finalizers.
func (ks *Store) removeByUpdate(ctx context.Context, obj runtime.Object, acc metav1.Object, expect int64, dryRun bool) (runtime.Object, error) {
	if dryRun {
		return obj, nil
	}
	_, err := ks.r.store.Delete(ctx, ks.key(acc.GetNamespace(), acc.GetName()), expect)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		return nil, storeConflict{Modified(ks.kind.GroupResource(), acc.GetName())}
	}
	if err != nil {
		return nil, storeError(err, ks.kind.GroupResource(), acc.GetName())
	}
	ks.r.afterDelete(ctx, ks.kind, acc.GetNamespace())
	return obj, nil
}

// keepStoredMetadata sets what an update never changes, or what the real server's
// BeforeUpdate takes from the stored object old. Only the creation time is always kept: a
// changed uid or deletion metadata is left for the update validation to refuse as immutable (a
// PUT's uid was already checked as a precondition).
func keepStoredMetadata(acc metav1.Object, old runtime.Object) {
	oldAcc, _ := meta.Accessor(old)
	acc.SetGeneration(oldAcc.GetGeneration())
	acc.SetSelfLink("")
	acc.SetResourceVersion(oldAcc.GetResourceVersion())
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

// storeConflict is the 409 of a write that lost a race in the store. It matches
// store.ErrConflict, so that Update can tell it from a 409 that is final, such as a field
// manager conflict.
type storeConflict struct{ *apierrors.StatusError }

func (e storeConflict) Is(target error) bool { return target == store.ErrConflict }

// admitSize asks Options.AdmitSize whether the object may be stored as value.
func (ks *Store) admitSize(ctx context.Context, acc metav1.Object, value []byte) error {
	if admit := ks.r.opts.AdmitSize; admit != nil {
		return admit(ctx, ks.kind.GroupResource(), acc.GetNamespace(), acc.GetName(), len(value))
	}
	return nil
}
