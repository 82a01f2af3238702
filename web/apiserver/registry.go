package apiserver

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/kinds"
)

// kindStore is the registry of one kind, in the spirit of the real server's generic registry
// Store: it reads, writes and watches the kind's objects in the store, in the storage version,
// with the kind's rules (defaulting, validation, preconditions, retries), and answers with the
// API errors the real server's registry returns. It knows nothing of HTTP: the handlers
// negotiate, decode, call it and encode.
type kindStore struct {
	s    *Server
	kind *kinds.Kind
}

func (s *Server) kindStore(k *kinds.Kind) *kindStore { return &kindStore{s: s, kind: k} }

// key addresses an object of the kind.
func (ks *kindStore) key(namespace, name string) store.Key {
	return store.Key{Resource: ks.kind.StorageResource(), Namespace: namespace, Name: name}
}

// decode turns a stored object into its storage-version Go object with the resourceVersion set
// from the revision; the caller owns the result.
//
// A GET and the PUT that follows it (how clients renew leases) read the same revision: the
// decoded object is kept by key and revision, and each caller gets its own deep copy, which
// costs a fraction of decoding the JSON again.
func (ks *kindStore) decode(o store.Object) (runtime.Object, error) {
	key := decodedKey{Key: o.Key, rev: o.Revision}
	if obj, ok := ks.s.decoded.get(key); ok {
		return obj.DeepCopyObject(), nil
	}
	obj, err := ks.s.decodeStored(ks.kind, o)
	if err != nil {
		return nil, err
	}
	ks.s.decoded.add(key, obj.DeepCopyObject())
	return obj, nil
}

// matcher filters stored objects by label and field selectors, remembering what it decoded
// so that a list decodes each object once.
type matcher struct {
	ks      *kindStore
	label   labels.Selector
	field   fields.Selector
	decoded map[int64]runtime.Object
	err     error
}

func (ks *kindStore) newMatcher(opts *metainternalversion.ListOptions) *matcher {
	return &matcher{ks: ks, label: opts.LabelSelector, field: opts.FieldSelector, decoded: map[int64]runtime.Object{}}
}

func (m *matcher) everything() bool { return m.label.Empty() && m.field.Empty() }

// matches decodes o and tests it against the selectors.
func (m *matcher) matches(o store.Object) bool {
	// Not through the cache of decoded objects: a list would flush it.
	obj, err := m.ks.s.decodeStored(m.ks.kind, o)
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
	return m.ks.s.decodeStored(m.ks.kind, o)
}
