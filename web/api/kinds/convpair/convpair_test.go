package convpair

import (
	"testing"

	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestRegister(t *testing.T) {
	s := runtime.NewScheme()
	err := Register(s,
		func(in *coordinationv1alpha2.LeaseCandidate) coordinationv1beta1.LeaseCandidate {
			return coordinationv1beta1.LeaseCandidate{ObjectMeta: in.ObjectMeta, Spec: coordinationv1beta1.LeaseCandidateSpec{LeaseName: in.Spec.LeaseName + "-b"}}
		},
		func(in *coordinationv1beta1.LeaseCandidate) coordinationv1alpha2.LeaseCandidate {
			return coordinationv1alpha2.LeaseCandidate{ObjectMeta: in.ObjectMeta, Spec: coordinationv1alpha2.LeaseCandidateSpec{LeaseName: in.Spec.LeaseName + "-a"}}
		},
		func(l *coordinationv1alpha2.LeaseCandidateList) (*metav1.ListMeta, *[]coordinationv1alpha2.LeaseCandidate) {
			return &l.ListMeta, &l.Items
		},
		func(l *coordinationv1beta1.LeaseCandidateList) (*metav1.ListMeta, *[]coordinationv1beta1.LeaseCandidate) {
			return &l.ListMeta, &l.Items
		})
	if err != nil {
		t.Fatal(err)
	}

	var b coordinationv1beta1.LeaseCandidate
	a := coordinationv1alpha2.LeaseCandidate{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: coordinationv1alpha2.LeaseCandidateSpec{LeaseName: "l"}}
	if err := s.Convert(&a, &b, nil); err != nil || b.Name != "c" || b.Spec.LeaseName != "l-b" {
		t.Errorf("object: %+v, %v", b, err)
	}

	al := coordinationv1alpha2.LeaseCandidateList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []coordinationv1alpha2.LeaseCandidate{a, a}}
	var bl coordinationv1beta1.LeaseCandidateList
	if err := s.Convert(&al, &bl, nil); err != nil || bl.ResourceVersion != "7" || len(bl.Items) != 2 || bl.Items[1].Spec.LeaseName != "l-b" {
		t.Errorf("list: %+v, %v", bl, err)
	}
	var back coordinationv1alpha2.LeaseCandidateList
	if err := s.Convert(&bl, &back, nil); err != nil || len(back.Items) != 2 || back.Items[0].Spec.LeaseName != "l-b-a" {
		t.Errorf("list back: %+v, %v", back, err)
	}

	// A nil list stays nil, and the output's old items are not kept.
	bl = coordinationv1beta1.LeaseCandidateList{Items: []coordinationv1beta1.LeaseCandidate{{}}}
	if err := s.Convert(&coordinationv1alpha2.LeaseCandidateList{}, &bl, nil); err != nil || bl.Items != nil {
		t.Errorf("nil list: %+v, %v", bl, err)
	}
}
