package kinds

import (
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"

	"github.com/leaselab/leaselab/web/api/kinds/coordinationv1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// Options switch server behaviour that the real API server ties to feature gates.
type Options struct {
	// CoordinatedLeaderElection is the kube-apiserver feature gate of the same name. Off, Lease
	// spec.strategy and spec.preferredHolder written by clients are dropped as on a default
	// 1.36 cluster; on, they are kept. leaselab runs with it on (see DefaultOptions).
	CoordinatedLeaderElection bool
}

// DefaultOptions returns leaselab's defaults: CoordinatedLeaderElection on.
func DefaultOptions() Options {
	return Options{CoordinatedLeaderElection: true}
}

// Registry holds every served kind together with the scheme and codecs that read and write them.
type Registry struct {
	// Scheme knows every served type under every served group/version, the meta.k8s.io/v1 types
	// (Table, PartialObjectMetadata, the option types), Status and the field-label conversions.
	Scheme *runtime.Scheme
	// Codecs serializes the scheme's types as JSON, YAML and Kubernetes protobuf. Each
	// runtime.SerializerInfo of Codecs.SupportedMediaTypes() has a lenient Serializer and a
	// StrictSerializer (unknown and duplicate fields reported as a runtime strict decoding error).
	Codecs serializer.CodecFactory

	kinds []*Kind
	types typeSchema
}

// NewRegistry builds the scheme, the codecs and the kinds. It panics if the scheme cannot be
// built, which only a programming error can cause.
func NewRegistry(opts Options) *Registry {
	scheme, err := newScheme()
	if err != nil {
		panic(fmt.Sprintf("kinds: build scheme: %v", err))
	}
	return &Registry{
		Scheme: scheme,
		Codecs: serializer.NewCodecFactory(scheme),
		kinds: []*Kind{
			leaseKind(opts),
			leaseCandidateKind(),
			namespaceKind(),
			eventKind(),
		},
	}
}

// Kinds returns the served kinds in a stable order: leases, leasecandidates, namespaces, events.
// The slice is a copy; the kinds are shared and must not be modified.
func (r *Registry) Kinds() []*Kind {
	return append([]*Kind(nil), r.kinds...)
}

// Lookup returns the kind served as resource in group/version, or nil when that group/version
// does not serve resource (for example leases in coordination.k8s.io/v1beta1).
func (r *Registry) Lookup(group, version, resource string) *Kind {
	for _, k := range r.kinds {
		if k.Group == group && k.Resource == resource && k.Serves(version) {
			return k
		}
	}
	return nil
}

// ByStorageResource returns the kind whose StorageResource is name, or nil.
func (r *Registry) ByStorageResource(name string) *Kind {
	for _, k := range r.kinds {
		if k.StorageResource() == name {
			return k
		}
	}
	return nil
}

// ForObject returns the kind of a typed object or list of any served version, or nil when obj is
// not one of the served types.
func (r *Registry) ForObject(obj runtime.Object) *Kind {
	gvks, _, err := r.Scheme.ObjectKinds(obj)
	if err != nil {
		return nil
	}
	for _, gvk := range gvks {
		for _, k := range r.kinds {
			if k.Group == gvk.Group && k.Serves(gvk.Version) && (k.Kind == gvk.Kind || k.ListKind == gvk.Kind) {
				return k
			}
		}
	}
	return nil
}

// Convert returns a copy of obj, a typed object or list of a served kind, converted to gv, which
// must be one of that kind's served versions. The copy's apiVersion and kind are set to the
// target; obj is never modified or returned. It returns an error for an unserved type or version.
func (r *Registry) Convert(obj runtime.Object, gv schema.GroupVersion) (runtime.Object, error) {
	k := r.ForObject(obj)
	if k == nil {
		return nil, fmt.Errorf("convert %T: not a served kind", obj)
	}
	if gv.Group != k.Group || !k.Serves(gv.Version) {
		return nil, fmt.Errorf("convert %s: %s does not serve %s", k.Kind, gv, k.Resource)
	}
	out, err := r.Scheme.ConvertToVersion(obj, gv)
	if err != nil {
		return nil, fmt.Errorf("convert %s to %s: %w", k.Kind, gv, err)
	}
	return out, nil
}

// newScheme registers exactly the served types, under their served group/versions only: a
// coordination.k8s.io/v1beta1 Lease, for instance, is unknown, as on the real server.
func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()

	// meta.k8s.io/v1: the option types (DeleteOptions, ListOptions, ...), WatchEvent, and the
	// Table and PartialObjectMetadata(List) that Table responses are made of. Status and the
	// discovery types are registered as unversioned "v1" types by every AddToGroupVersion call.
	metav1.AddToGroupVersion(s, metav1.SchemeGroupVersion)
	if err := metav1.AddMetaToScheme(s); err != nil {
		return nil, err
	}
	// meta.k8s.io/v1beta1: the older Table and PartialObjectMetadata(List) that clients may
	// still ask for; the first two are the v1 types under another version.
	if err := metav1beta1.AddMetaToScheme(s); err != nil {
		return nil, err
	}
	if err := metav1beta1.RegisterConversions(s); err != nil {
		return nil, err
	}

	s.AddKnownTypes(corev1.SchemeGroupVersion,
		&corev1.Namespace{}, &corev1.NamespaceList{},
		&corev1.Event{}, &corev1.EventList{},
	)
	metav1.AddToGroupVersion(s, corev1.SchemeGroupVersion)

	s.AddKnownTypes(coordinationv1.SchemeGroupVersion, &coordinationv1.Lease{}, &coordinationv1.LeaseList{})
	metav1.AddToGroupVersion(s, coordinationv1.SchemeGroupVersion)

	s.AddKnownTypes(coordinationv1beta1.SchemeGroupVersion,
		&coordinationv1beta1.LeaseCandidate{}, &coordinationv1beta1.LeaseCandidateList{})
	metav1.AddToGroupVersion(s, coordinationv1beta1.SchemeGroupVersion)

	s.AddKnownTypes(coordinationv1alpha2.SchemeGroupVersion,
		&coordinationv1alpha2.LeaseCandidate{}, &coordinationv1alpha2.LeaseCandidateList{})
	metav1.AddToGroupVersion(s, coordinationv1alpha2.SchemeGroupVersion)

	if err := coordinationv1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := addLeaseCandidateConversions(s); err != nil {
		return nil, err
	}
	if err := coordinationv1alpha1.RegisterConversions(s); err != nil {
		return nil, fmt.Errorf("add leasecandidate v1alpha1 conversions: %w", err)
	}

	// Core v1 registers its own field-label conversions; the coordination kinds register none and
	// so get the scheme's default (metadata.name and metadata.namespace).
	if err := s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("Namespace"), namespaceFieldLabel); err != nil {
		return nil, err
	}
	if err := s.AddFieldLabelConversionFunc(corev1.SchemeGroupVersion.WithKind("Event"), eventFieldLabel); err != nil {
		return nil, err
	}
	return s, nil
}
