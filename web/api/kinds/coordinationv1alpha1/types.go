// Package coordinationv1alpha1 holds LeaseCandidate as Kubernetes 1.31 served it
// (coordination.k8s.io/v1alpha1), which k8s.io/api no longer ships: the same candidate as in
// v1alpha2 and v1beta1, but with an ordered list of preferred strategies instead of a single
// strategy. leaselab stores every LeaseCandidate as v1beta1; this package converts between the
// two shapes without loss (see convert.go).
package coordinationv1alpha1

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the package's types.
const GroupName = "coordination.k8s.io"

// SchemeGroupVersion is the group and version the types are served as.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// AddToScheme registers the types under SchemeGroupVersion.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &LeaseCandidate{}, &LeaseCandidateList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}

// LeaseCandidate declares that a component wants to hold a Lease, for coordinated leader
// election to choose among the candidates.
type LeaseCandidate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec LeaseCandidateSpec `json:"spec,omitempty"`
}

// LeaseCandidateSpec is what a candidate declares. The JSON names and omitempty rules are those
// of the 1.31 API.
type LeaseCandidateSpec struct {
	LeaseName        string            `json:"leaseName"`
	PingTime         *metav1.MicroTime `json:"pingTime,omitempty"`
	RenewTime        *metav1.MicroTime `json:"renewTime,omitempty"`
	BinaryVersion    string            `json:"binaryVersion,omitempty"`
	EmulationVersion string            `json:"emulationVersion,omitempty"`
	// PreferredStrategies is ordered by preference: each entry supersedes the ones after it.
	PreferredStrategies []coordinationv1.CoordinatedLeaseStrategy `json:"preferredStrategies,omitempty"`
}

// LeaseCandidateList is a page of LeaseCandidates.
type LeaseCandidateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []LeaseCandidate `json:"items"`
}

// The OpenAPI model names are those of the real 1.31 definitions, so that the OpenAPI
// documents, kubectl explain and the server-side apply schema name the types as clients expect.

func (LeaseCandidate) OpenAPIModelName() string {
	return "io.k8s.api.coordination.v1alpha1.LeaseCandidate"
}

func (LeaseCandidateSpec) OpenAPIModelName() string {
	return "io.k8s.api.coordination.v1alpha1.LeaseCandidateSpec"
}

func (LeaseCandidateList) OpenAPIModelName() string {
	return "io.k8s.api.coordination.v1alpha1.LeaseCandidateList"
}

// SwaggerDoc describes the fields in the OpenAPI documents and kubectl explain.
func (LeaseCandidate) SwaggerDoc() map[string]string {
	return map[string]string{
		"":         "LeaseCandidate declares a component that wants to hold a Lease. Coordinated leader election picks the leader among the candidates of a Lease.",
		"metadata": "Standard object metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
		"spec":     "spec is what the candidate declares. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status",
	}
}

// SwaggerDoc describes the fields in the OpenAPI documents and kubectl explain.
func (LeaseCandidateSpec) SwaggerDoc() map[string]string {
	return map[string]string{
		"":                    "LeaseCandidateSpec is what a LeaseCandidate declares.",
		"leaseName":           "LeaseName names the Lease, in the candidate's namespace, that the candidate contends for. It cannot be changed.",
		"pingTime":            "PingTime is set by the server when it starts an election, asking the candidate to show it is alive by updating RenewTime.",
		"renewTime":           "RenewTime is when the candidate last renewed itself. Candidates that stop renewing are left out of elections and eventually deleted.",
		"binaryVersion":       "BinaryVersion is the candidate's binary version, a semantic version without a leading `v`. Required when PreferredStrategies contains \"OldestEmulationVersion\".",
		"emulationVersion":    "EmulationVersion is the version the candidate emulates, a semantic version without a leading `v`, no higher than BinaryVersion. Required when PreferredStrategies contains \"OldestEmulationVersion\".",
		"preferredStrategies": "PreferredStrategies lists the strategies the candidate accepts for choosing the leader, most preferred first; every entry supersedes the entries after it. When every candidate lists strategy X first, X is used. When one candidate lists [X] and another [Y, X], Y supersedes X and Y is used. When one lists [X, Y] and another [Y, X], the candidates contradict each other: this is a user error, and the Lease is not operated until it is resolved.",
	}
}

// SwaggerDoc describes the fields in the OpenAPI documents and kubectl explain.
func (LeaseCandidateList) SwaggerDoc() map[string]string {
	return map[string]string{
		"":         "LeaseCandidateList is a list of LeaseCandidates.",
		"metadata": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
		"items":    "items are the LeaseCandidates.",
	}
}

// DeepCopyInto copies in into out; out shares nothing with in afterwards.
func (in *LeaseCandidate) DeepCopyInto(out *LeaseCandidate) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
}

// DeepCopy returns a copy of in that shares nothing with it.
func (in *LeaseCandidate) DeepCopy() *LeaseCandidate {
	if in == nil {
		return nil
	}
	out := new(LeaseCandidate)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *LeaseCandidate) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies in into out; out shares nothing with in afterwards.
func (in *LeaseCandidateSpec) DeepCopyInto(out *LeaseCandidateSpec) {
	*out = *in
	if in.PingTime != nil {
		out.PingTime = in.PingTime.DeepCopy()
	}
	if in.RenewTime != nil {
		out.RenewTime = in.RenewTime.DeepCopy()
	}
	if in.PreferredStrategies != nil {
		out.PreferredStrategies = append([]coordinationv1.CoordinatedLeaseStrategy(nil), in.PreferredStrategies...)
	}
}

// DeepCopyInto copies in into out; out shares nothing with in afterwards.
func (in *LeaseCandidateList) DeepCopyInto(out *LeaseCandidateList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]LeaseCandidate, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of in that shares nothing with it.
func (in *LeaseCandidateList) DeepCopy() *LeaseCandidateList {
	if in == nil {
		return nil
	}
	out := new(LeaseCandidateList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *LeaseCandidateList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}
