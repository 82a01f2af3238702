package kinds_test

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/leaselab/leaselab/web/api/kinds"
)

func newCandidate(mutate func(*coordinationv1beta1.LeaseCandidate)) *coordinationv1beta1.LeaseCandidate {
	lc := &coordinationv1beta1.LeaseCandidate{
		ObjectMeta: metav1.ObjectMeta{Name: "sample-candidate", Namespace: "default"},
		Spec: coordinationv1beta1.LeaseCandidateSpec{
			LeaseName:        "sample-component",
			BinaryVersion:    "1.36.0",
			EmulationVersion: "1.35.0",
			Strategy:         coordinationv1.OldestEmulationVersion,
		},
	}
	if mutate != nil {
		mutate(lc)
	}
	return lc
}

func TestLeaseCandidateValidate(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "leasecandidates.coordination.k8s.io")
	slashKeyMsgs := utilvalidation.IsConfigMapKey("a/b")
	dotMsgs := utilvalidation.IsConfigMapKey(".")
	if len(slashKeyMsgs) != 1 || len(dotMsgs) != 1 {
		t.Fatalf("unexpected ConfigMap key messages: %q %q", slashKeyMsgs, dotMsgs)
	}
	tests := []struct {
		name   string
		mutate func(*coordinationv1beta1.LeaseCandidate)
		want   []fieldErr
	}{
		{name: "valid"},
		{name: "component identity name with upper case and underscore", mutate: func(lc *coordinationv1beta1.LeaseCandidate) {
			lc.Name = "Node-1_0b3e4f.example"
		}},
		{name: "name with slash", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Name = "a/b" }, want: []fieldErr{
			{"metadata.name", field.ErrorTypeInvalid, `Invalid value: "a/b": ` + slashKeyMsgs[0]},
		}},
		{name: "name dot", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Name = "." }, want: []fieldErr{
			{"metadata.name", field.ErrorTypeInvalid, `Invalid value: ".": ` + dotMsgs[0]},
		}},
		{name: "sample empty spec", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec = coordinationv1beta1.LeaseCandidateSpec{} }, want: []fieldErr{
			{"spec.leaseName", field.ErrorTypeRequired, "Required value"},
			{"spec.binaryVersion", field.ErrorTypeRequired, "Required value"},
			{"spec.strategy", field.ErrorTypeRequired, "Required value"},
		}},
		{name: "sample bad binaryVersion", mutate: func(lc *coordinationv1beta1.LeaseCandidate) {
			lc.Spec.BinaryVersion, lc.Spec.EmulationVersion = "not-a-version", "1.36.0"
		}, want: []fieldErr{
			{"spec.binaryVersion", field.ErrorTypeInvalid, `Invalid value: "not-a-version": must be a valid semantic version`},
			{"spec.binaryVersion", field.ErrorTypeInvalid, "Invalid value: \"not-a-version\": must be greater than or equal to `emulationVersion`"},
		}},
		{name: "sample emulation newer than binary", mutate: func(lc *coordinationv1beta1.LeaseCandidate) {
			lc.Spec.BinaryVersion, lc.Spec.EmulationVersion = "1.35.0", "1.36.0"
		}, want: []fieldErr{
			{"spec.binaryVersion", field.ErrorTypeInvalid, "Invalid value: \"1.35.0\": must be greater than or equal to `emulationVersion`"},
		}},
		{name: "equal versions", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.EmulationVersion = "1.36.0" }},
		{name: "pre-release binary sorts lower", mutate: func(lc *coordinationv1beta1.LeaseCandidate) {
			lc.Spec.BinaryVersion, lc.Spec.EmulationVersion = "1.36.0-alpha.1", "1.36.0"
		}, want: []fieldErr{
			{"spec.binaryVersion", field.ErrorTypeInvalid, "Invalid value: \"1.36.0-alpha.1\": must be greater than or equal to `emulationVersion`"},
		}},
		{name: "build metadata is fine", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.BinaryVersion = "1.36.0+abc.1" }},
		{name: "leading v", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.BinaryVersion = "v1.36.0" }, want: []fieldErr{
			{"spec.binaryVersion", field.ErrorTypeInvalid, `Invalid value: "v1.36.0": must be a valid semantic version`},
			{"spec.binaryVersion", field.ErrorTypeInvalid, "Invalid value: \"v1.36.0\": must be greater than or equal to `emulationVersion`"},
		}},
		{name: "two components", mutate: func(lc *coordinationv1beta1.LeaseCandidate) {
			lc.Spec.BinaryVersion, lc.Spec.EmulationVersion = "1.36.0", "1.31"
		},
			want: []fieldErr{
				{"spec.emulationVersion", field.ErrorTypeInvalid, `Invalid value: "1.31": must be a valid semantic version`},
				{"spec.emulationVersion", field.ErrorTypeRequired, "Required value: must be specified when `strategy` is 'OldestEmulationVersion'"},
			}},
		{name: "leading zero", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.EmulationVersion = "1.036.0" }, want: []fieldErr{
			{"spec.emulationVersion", field.ErrorTypeInvalid, `Invalid value: "1.036.0": must be a valid semantic version`},
			{"spec.emulationVersion", field.ErrorTypeRequired, "Required value: must be specified when `strategy` is 'OldestEmulationVersion'"},
		}},
		{name: "oldest emulation version without emulationVersion", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.EmulationVersion = "" }, want: []fieldErr{
			{"spec.emulationVersion", field.ErrorTypeRequired, "Required value: must be specified when `strategy` is 'OldestEmulationVersion'"},
		}},
		{name: "oldest emulation version with 0.0.0", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.EmulationVersion = "0.0.0" }, want: []fieldErr{
			{"spec.emulationVersion", field.ErrorTypeRequired, "Required value: must be specified when `strategy` is 'OldestEmulationVersion'"},
		}},
		{name: "custom strategy needs no emulationVersion", mutate: func(lc *coordinationv1beta1.LeaseCandidate) {
			lc.Spec.Strategy, lc.Spec.EmulationVersion = "example.com/newest", ""
		}},
		{name: "unknown strategy", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.Strategy = "Newest" }, want: []fieldErr{
			{"spec.strategy.strategy", field.ErrorTypeNotSupported, `Unsupported value: "Newest": supported values: "OldestEmulationVersion"`},
		}},
		{name: "leaseName format is free", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.LeaseName = "Not A DNS/Name" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, k.Validate(newCandidate(tt.mutate)), tt.want)
		})
	}
}

func TestLeaseCandidateValidateUpdate(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "leasecandidates.coordination.k8s.io")
	stored := newCandidate(func(lc *coordinationv1beta1.LeaseCandidate) { lc.ResourceVersion = "3" })
	tests := []struct {
		name   string
		mutate func(*coordinationv1beta1.LeaseCandidate)
		want   []fieldErr
	}{
		{name: "renew", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.RenewTime = &metav1.MicroTime{} }},
		{name: "version bump", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.BinaryVersion = "1.37.0" }},
		{name: "leaseName is immutable", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.LeaseName = "other-component" }, want: []fieldErr{
			{"spec.leaseName", field.ErrorTypeInvalid, `Invalid value: "other-component": field is immutable`},
		}},
		{name: "emptied leaseName", mutate: func(lc *coordinationv1beta1.LeaseCandidate) { lc.Spec.LeaseName = "" }, want: []fieldErr{
			{"spec.leaseName", field.ErrorTypeRequired, "Required value"},
			{"spec.leaseName", field.ErrorTypeInvalid, `Invalid value: "": field is immutable`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			updated := stored.DeepCopy()
			tt.mutate(updated)
			checkErrs(t, k.ValidateUpdate(updated, stored), tt.want)
		})
	}
}

func TestLeaseCandidateStatusMatchesSamples(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.DefaultOptions()), "leasecandidates.coordination.k8s.io")
	gk := schema.GroupKind{Group: "coordination.k8s.io", Kind: "LeaseCandidate"}
	tests := []struct {
		name  string
		obj   *coordinationv1beta1.LeaseCandidate
		old   *coordinationv1beta1.LeaseCandidate
		wantJ string
	}{
		{
			name: "leasecandidate-create-empty-spec-422",
			obj: newCandidate(func(lc *coordinationv1beta1.LeaseCandidate) {
				lc.Name, lc.Spec = "sample-candidate-empty", coordinationv1beta1.LeaseCandidateSpec{}
			}),
			wantJ: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"LeaseCandidate.coordination.k8s.io \"sample-candidate-empty\" is invalid: [spec.leaseName: Required value, spec.binaryVersion: Required value, spec.strategy: Required value]","reason":"Invalid","details":{"name":"sample-candidate-empty","group":"coordination.k8s.io","kind":"LeaseCandidate","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.leaseName"},{"reason":"FieldValueRequired","message":"Required value","field":"spec.binaryVersion"},{"reason":"FieldValueRequired","message":"Required value","field":"spec.strategy"}]},"code":422}`,
		},
		{
			name: "leasecandidate-create-bad-binaryversion-422",
			obj: newCandidate(func(lc *coordinationv1beta1.LeaseCandidate) {
				lc.Name, lc.Spec.BinaryVersion, lc.Spec.EmulationVersion = "sample-candidate-bad", "not-a-version", "1.36.0"
			}),
			wantJ: "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"LeaseCandidate.coordination.k8s.io \\\"sample-candidate-bad\\\" is invalid: [spec.binaryVersion: Invalid value: \\\"not-a-version\\\": must be a valid semantic version, spec.binaryVersion: Invalid value: \\\"not-a-version\\\": must be greater than or equal to `emulationVersion`]\",\"reason\":\"Invalid\",\"details\":{\"name\":\"sample-candidate-bad\",\"group\":\"coordination.k8s.io\",\"kind\":\"LeaseCandidate\",\"causes\":[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"not-a-version\\\": must be a valid semantic version\",\"field\":\"spec.binaryVersion\"},{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"not-a-version\\\": must be greater than or equal to `emulationVersion`\",\"field\":\"spec.binaryVersion\"}]},\"code\":422}",
		},
		{
			name: "leasecandidate-create-emulation-gt-binary-422",
			obj: newCandidate(func(lc *coordinationv1beta1.LeaseCandidate) {
				lc.Name, lc.Spec.BinaryVersion, lc.Spec.EmulationVersion = "sample-candidate-emu", "1.35.0", "1.36.0"
			}),
			wantJ: "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"LeaseCandidate.coordination.k8s.io \\\"sample-candidate-emu\\\" is invalid: spec.binaryVersion: Invalid value: \\\"1.35.0\\\": must be greater than or equal to `emulationVersion`\",\"reason\":\"Invalid\",\"details\":{\"name\":\"sample-candidate-emu\",\"group\":\"coordination.k8s.io\",\"kind\":\"LeaseCandidate\",\"causes\":[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"1.35.0\\\": must be greater than or equal to `emulationVersion`\",\"field\":\"spec.binaryVersion\"}]},\"code\":422}",
		},
		{
			name: "leasecandidate-patch-leasename-immutable-422",
			obj: newCandidate(func(lc *coordinationv1beta1.LeaseCandidate) {
				lc.ResourceVersion, lc.Spec.LeaseName = "3", "other-component"
			}),
			old:   newCandidate(func(lc *coordinationv1beta1.LeaseCandidate) { lc.ResourceVersion = "3" }),
			wantJ: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"LeaseCandidate.coordination.k8s.io \"sample-candidate\" is invalid: spec.leaseName: Invalid value: \"other-component\": field is immutable","reason":"Invalid","details":{"name":"sample-candidate","group":"coordination.k8s.io","kind":"LeaseCandidate","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"other-component\": field is immutable","field":"spec.leaseName"}]},"code":422}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errs field.ErrorList
			if tt.old == nil {
				errs = k.Validate(tt.obj)
			} else {
				errs = k.ValidateUpdate(tt.obj, tt.old)
			}
			checkStatus(t, gk, tt.obj.Name, errs, tt.wantJ)
		})
	}
}

func TestLeaseCandidatePrepareIsNoOp(t *testing.T) {
	k := MustKind(t, kinds.NewRegistry(kinds.Options{}), "leasecandidates.coordination.k8s.io")
	lc := newCandidate(nil)
	k.PrepareForCreate(lc)
	k.PrepareForUpdate(lc, newCandidate(nil))
	if want := newCandidate(nil); lc.Spec != want.Spec {
		t.Errorf("spec changed: %+v", lc.Spec)
	}
	if !k.AllowCreateOnUpdate || k.AllowUnconditionalUpdate {
		t.Errorf("AllowCreateOnUpdate=%v AllowUnconditionalUpdate=%v, want true false", k.AllowCreateOnUpdate, k.AllowUnconditionalUpdate)
	}
}
