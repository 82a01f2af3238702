// Package registry reads, writes and watches the objects of each kind in web/api/kinds over a
// store.Interface, in the spirit of the real API server's generic registry Store: one Create,
// Get, List, Update (the one retry loop of update, patch and apply), Delete, DeleteCollection
// and Watch per kind, in the storage version, with the kind's rules, answering with the API
// errors the real server's registry returns. It knows nothing of HTTP: the handlers in
// web/api/apiserver negotiate, decode, call it and encode.
package registry

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/apiserver/ring"
	"github.com/leaselab/leaselab/web/api/kinds"
)

// decodedCacheSize is how many decoded objects the registry keeps for the writes that follow
// reads of the same revision.
const decodedCacheSize = 4096

// Options configure a Registry.
type Options struct {
	// Now is the clock for creationTimestamp and deletionTimestamp; default time.Now.
	Now func() time.Time
	// BookmarkInterval is how often an idle watch that asked for bookmarks gets one; default 1m.
	BookmarkInterval time.Duration
	// AdmitCreate, when set, is asked after validation before any object is created (see
	// apiserver.Options.AdmitCreate).
	AdmitCreate func(ctx context.Context, gr schema.GroupResource, namespace, name string) (done func(), err error)
	// AdmitSize, when set, is asked before an object of size bytes (as stored) is written by a
	// create or an update (see apiserver.Options.AdmitSize).
	AdmitSize func(ctx context.Context, gr schema.GroupResource, namespace, name string, size int) error
	// NoImplicitNamespaces refuses a create in a namespace that does not exist with 404, as the
	// real server does, instead of creating the namespace (leaselab's default).
	NoImplicitNamespaces bool
}

// Registry holds the registries of the kinds of a kinds.Registry over one store, and what they
// share: the field managers, the cache of decoded objects and the namespaces known to exist.
type Registry struct {
	log   *slog.Logger
	reg   *kinds.Registry
	store store.Interface
	opts  Options

	fieldManagers map[schema.GroupVersionKind]*managedfields.FieldManager // complete when fieldManagersReady is closed
	// fieldManagersReady is closed when fieldManagers is built, or fieldManagersErr set.
	fieldManagersReady chan struct{}
	fieldManagersErr   error

	decoded *ring.Ring[decodedKey, runtime.Object] // decoded stored objects, never handed out

	nsMu    sync.Mutex
	knownNS map[string]bool // namespaces known to exist and not being deleted

	gcMu      sync.Mutex
	gcRunning bool // a garbage collection runs (collect)
	gcAgain   bool // and is to run again when done: something changed meanwhile
}

// New returns a Registry. The field managers are built in the background (WaitFieldManagers).
func New(logger *slog.Logger, reg *kinds.Registry, st store.Interface, opts Options) *Registry {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BookmarkInterval <= 0 {
		opts.BookmarkInterval = time.Minute
	}
	r := &Registry{
		log:                logger,
		reg:                reg,
		store:              st,
		opts:               opts,
		fieldManagers:      map[schema.GroupVersionKind]*managedfields.FieldManager{},
		fieldManagersReady: make(chan struct{}),
		decoded:            ring.New[decodedKey, runtime.Object](decodedCacheSize),
		knownNS:            map[string]bool{},
	}
	// The type converter parses the OpenAPI schema of every built-in type, which takes
	// longer than the rest of the start-up: it is built in the background, and the first
	// write waits for it.
	go func() {
		defer close(r.fieldManagersReady)
		r.fieldManagersErr = r.buildFieldManagers()
		if r.fieldManagersErr != nil {
			logger.Error("field managers", slog.Any("error", r.fieldManagersErr))
		}
	}()
	return r
}

// buildFieldManagers builds the field manager of every served version of every kind.
func (r *Registry) buildFieldManagers() error {
	typeConverter, err := r.reg.TypeConverter()
	if err != nil {
		return err
	}
	for _, k := range r.reg.Kinds() {
		hub := schema.GroupVersion{Group: k.Group, Version: k.StorageVersion}
		for _, v := range k.Versions {
			gvk := schema.GroupVersionKind{Group: k.Group, Version: v, Kind: k.Kind}
			fm, err := managedfields.NewDefaultFieldManager(typeConverter, r.reg.Scheme, r.reg.Scheme, r.reg.Scheme, gvk, hub, "", nil)
			if err != nil {
				return fmt.Errorf("field manager for %s: %w", gvk, err)
			}
			r.fieldManagers[gvk] = fm
		}
	}
	return nil
}

// WaitFieldManagers waits until the field managers are built, which every write needs; it
// returns a 504 when ctx ends first and a 500 when they could not be built (which only a kind
// without a schema can cause).
func (r *Registry) WaitFieldManagers(ctx context.Context) error {
	select {
	case <-r.fieldManagersReady:
	case <-ctx.Done():
		return apierrors.NewTimeoutError("the server is starting", 1)
	}
	if r.fieldManagersErr != nil {
		return InternalError(r.fieldManagersErr.Error())
	}
	return nil
}

// For returns the registry of kind k.
func (r *Registry) For(k *kinds.Kind) *Store { return &Store{r: r, kind: k} }

// decodedKey identifies one state of one object.
type decodedKey struct {
	store.Key
	rev int64
}

func (r *Registry) decodeStored(k *kinds.Kind, o store.Object) (runtime.Object, error) {
	obj, err := r.reg.DecodeStored(k, o.Value, o.Revision)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", o.Namespace, o.Name, err)
	}
	return obj, nil
}

// encodeStored is the stored form of a storage-version object (kinds.Registry.EncodeStored).
func (r *Registry) encodeStored(k *kinds.Kind, obj runtime.Object) ([]byte, error) {
	return r.reg.EncodeStored(k, obj)
}
