package registry

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/kinds"
)

// Store is the registry of one kind, in the spirit of the real server's generic registry
// Store: it reads, writes and watches the kind's objects in the store, in the storage version,
// with the kind's rules (defaulting, validation, preconditions, retries), and answers with the
// API errors the real server's registry returns.
type Store struct {
	r    *Registry
	kind *kinds.Kind
}

// key addresses an object of the kind.
func (ks *Store) key(namespace, name string) store.Key {
	return store.Key{Resource: ks.kind.StorageResource(), Namespace: namespace, Name: name}
}

// decode turns a stored object into its storage-version Go object with the resourceVersion set
// from the revision; the caller owns the result.
//
// A GET and the PUT that follows it (how clients renew leases) read the same revision: the
// decoded object is kept by key and revision, and each caller gets its own deep copy, which
// costs a fraction of decoding the JSON again.
func (ks *Store) decode(o store.Object) (runtime.Object, error) {
	key := decodedKey{Key: o.Key, rev: o.Revision}
	if obj, ok := ks.r.decoded.Get(key); ok {
		return obj.DeepCopyObject(), nil
	}
	obj, err := ks.r.decodeStored(ks.kind, o)
	if err != nil {
		return nil, err
	}
	ks.r.decoded.Add(key, obj.DeepCopyObject())
	return obj, nil
}

// matcher filters stored objects by label and field selectors, remembering what it decoded
// so that a list decodes each object once.
type matcher struct {
	ks      *Store
	label   labels.Selector
	field   fields.Selector
	all     bool // no selector: everything matches
	decoded map[int64]runtime.Object
	err     error
}

func (ks *Store) newMatcher(opts *metainternalversion.ListOptions) *matcher {
	m := &matcher{ks: ks, label: opts.LabelSelector, field: opts.FieldSelector, decoded: map[int64]runtime.Object{}}
	m.all = (m.label == nil || m.label.Empty()) && (m.field == nil || m.field.Empty())
	return m
}

// everything reports whether the matcher has no selector (asked for every event of a watch).
func (m *matcher) everything() bool { return m.all }

// matches decodes o and tests it against the selectors.
func (m *matcher) matches(o store.Object) bool {
	// Not through the cache of decoded objects: a list would flush it.
	obj, err := m.ks.r.decodeStored(m.ks.kind, o)
	if err != nil {
		m.err = err
		return false
	}
	m.decoded[o.Revision] = obj
	return m.matchesObject(obj)
}

func (m *matcher) matchesObject(obj runtime.Object) bool {
	if m.everything() {
		return true
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if !m.label.Matches(labels.Set(acc.GetLabels())) {
		return false
	}
	return m.field.Empty() || m.field.Matches(m.ks.kind.FieldSet(obj))
}

func (m *matcher) object(o store.Object) (runtime.Object, error) {
	if obj, ok := m.decoded[o.Revision]; ok {
		return obj, nil
	}
	return m.ks.r.decodeStored(m.ks.kind, o)
}

// Get returns the object at the latest revision, after waiting for the store to reach the
// resourceVersion of opts. It returns 404 NotFound, 400 for a bad resourceVersion, 504 when the
// store does not reach it in time, and the store's errors.
func (ks *Store) Get(ctx context.Context, namespace, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	rv, err := parseRV(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if err := ks.r.waitForRevision(ctx, ks.kind.GroupResource(), rv); err != nil {
		return nil, err
	}
	o, err := ks.r.store.Get(ctx, ks.key(namespace, name))
	if err != nil {
		return nil, storeError(err, ks.kind.GroupResource(), name)
	}
	return ks.decode(o)
}

// List lists the kind's objects in namespace (all when empty) that match opts, with the real
// server's resourceVersion and paging rules, and returns them in the storage version with the
// list metadata. It returns 400 for bad options, 410 Expired for a compacted revision, 504 for
// a future one, and the store's errors.
func (ks *Store) List(ctx context.Context, namespace string, opts *metainternalversion.ListOptions) ([]runtime.Object, metav1.ListMeta, error) {
	so, err := ks.listStart(ctx, namespace, opts)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	m := ks.newMatcher(opts)
	if !m.everything() {
		so.Match = m.matches
	}
	res, err := ks.r.store.List(ctx, so)
	if m.err != nil {
		return nil, metav1.ListMeta{}, m.err
	}
	if err != nil {
		return nil, metav1.ListMeta{}, ks.listError(ctx, err, so, opts.Continue != "")
	}
	items := make([]runtime.Object, 0, len(res.Objects))
	for _, o := range res.Objects {
		obj, err := m.object(o)
		if err != nil {
			return nil, metav1.ListMeta{}, err
		}
		items = append(items, obj)
	}
	lm := metav1.ListMeta{ResourceVersion: strconv.FormatInt(res.Revision, 10)}
	if res.More && len(res.Objects) > 0 {
		last := res.Objects[len(res.Objects)-1]
		lm.Continue = encodeContinue(res.Revision, last.Key)
		if so.Match == nil {
			n := res.Remaining
			lm.RemainingItemCount = &n
		}
	}
	return items, lm, nil
}

// listStart turns the resourceVersion, continue and limit options of a list into the store's
// options: where and at which revision the page starts.
func (ks *Store) listStart(ctx context.Context, namespace string, opts *metainternalversion.ListOptions) (store.ListOptions, error) {
	so := store.ListOptions{
		Resource:  ks.kind.StorageResource(),
		Namespace: namespace,
		Limit:     int(max(opts.Limit, 0)), // the real server reads a limit <= 0 as none
	}
	rv, err := parseRV(opts.ResourceVersion)
	if err != nil {
		return so, err
	}
	switch {
	case opts.Continue != "":
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return so, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		crv, after, err := decodeContinue(opts.Continue)
		if err != nil {
			return so, apierrors.NewBadRequest("invalid continue token: " + err.Error())
		}
		so.Revision, so.After = max(crv, 0), after
	case opts.ResourceVersion == "0":
		// "Any" resourceVersion: the real server answers from its cache and ignores limit.
		so.Limit = 0
	case rv > 0 && (opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact ||
		opts.ResourceVersionMatch == "" && opts.Limit > 0):
		so.Revision = rv
	case rv > 0:
		if err := ks.r.waitForRevision(ctx, ks.kind.GroupResource(), rv); err != nil {
			return so, err
		}
	}
	return so, nil
}

// listError maps the store's refusal of a list to the real server's answers.
func (ks *Store) listError(ctx context.Context, err error, so store.ListOptions, continued bool) error {
	var ce *store.CompactedError
	switch {
	case errors.As(err, &ce) && continued:
		// As the real server: a token that goes on from the same key at the latest
		// revision, for clients that accept an inconsistent list.
		st := apierrors.NewResourceExpired(inconsistentContinue)
		st.ErrStatus.ListMeta.Continue = encodeContinue(-1, so.After)
		return st
	case errors.As(err, &ce):
		return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
	case errors.Is(err, store.ErrFutureRevision):
		cur, _, _ := ks.r.store.Revision(ctx)
		return errTooLargeResourceVersion(so.Revision, cur)
	}
	return storeError(err, ks.kind.GroupResource(), "")
}

// keepDecoded puts a copy of obj, just stored as o, in the cache of decoded objects, as
// decoding o would have made it: the watch events of the write and the writer's next GET then
// skip decoding what was just encoded (a renewal's change would otherwise be decoded once more
// for its watchers, the election controller's informer among them). Its times are cut to the
// precision the stored JSON keeps (seconds, micro-seconds for MicroTime) and put in the local
// zone, as JSON decoding gives them; nothing else in an object differs from its decoded form.
func (ks *Store) keepDecoded(o store.Object, obj runtime.Object) {
	c := obj.DeepCopyObject()
	c.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	acc, err := meta.Accessor(c)
	if err != nil {
		return
	}
	normalizeTimes(reflect.ValueOf(c))
	acc.SetResourceVersion(strconv.FormatInt(o.Revision, 10))
	ks.r.decoded.Add(decodedKey{Key: o.Key, rev: o.Revision}, c)
}

var (
	timeType      = reflect.TypeFor[metav1.Time]()
	microTimeType = reflect.TypeFor[metav1.MicroTime]()
)

// normalizeTimes cuts every metav1.Time and metav1.MicroTime reachable from v (through
// pointers, structs and slices) to what its JSON form keeps, in the local zone.
func normalizeTimes(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			normalizeTimes(v.Elem())
		}
	case reflect.Struct:
		switch v.Type() {
		case timeType:
			if t := v.Addr().Interface().(*metav1.Time); !t.IsZero() {
				t.Time = t.Time.Truncate(time.Second).Local()
			}
			return
		case microTimeType:
			if t := v.Addr().Interface().(*metav1.MicroTime); !t.IsZero() {
				t.Time = t.Time.Truncate(time.Microsecond).Local()
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				normalizeTimes(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		switch v.Type().Elem().Kind() {
		case reflect.Struct, reflect.Pointer, reflect.Interface, reflect.Slice:
			for i := range v.Len() {
				normalizeTimes(v.Index(i))
			}
		}
	}
}
