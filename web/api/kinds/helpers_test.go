package kinds_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/leaselab/leaselab/web/api/kinds"
)

// fieldErr is one expected validation error: its path, its cause type and its message without
// the path, exactly as a Status cause carries them.
type fieldErr struct {
	Field string
	Type  field.ErrorType
	Body  string
}

func (e fieldErr) String() string { return fmt.Sprintf("%s %s %q", e.Field, e.Type, e.Body) }

// MustKind returns the registry's kind for a storage resource name.
func MustKind(tb testing.TB, reg *kinds.Registry, storageResource string) *kinds.Kind {
	tb.Helper()
	k := reg.ByStorageResource(storageResource)
	if k == nil {
		tb.Fatalf("no kind %q", storageResource)
	}
	return k
}

// checkErrs compares a validation result with the expected errors, in order.
func checkErrs(tb testing.TB, got field.ErrorList, want []fieldErr) {
	tb.Helper()
	gotErrs := make([]fieldErr, 0, len(got))
	for _, e := range got {
		gotErrs = append(gotErrs, fieldErr{Field: e.Field, Type: e.Type, Body: e.ErrorBody()})
	}
	if len(gotErrs) != len(want) {
		tb.Fatalf("got %d errors, want %d:\ngot:  %v\nwant: %v", len(gotErrs), len(want), gotErrs, want)
	}
	for i := range want {
		if gotErrs[i] != want[i] {
			tb.Errorf("error %d:\ngot:  %v\nwant: %v", i, gotErrs[i], want[i])
		}
	}
}

// checkStatus renders errs the way the API server does and compares the Status JSON with want,
// a response body recorded from a real server.
func checkStatus(tb testing.TB, gk schema.GroupKind, name string, errs field.ErrorList, want string) {
	tb.Helper()
	status := apierrors.NewInvalid(gk, name, errs).ErrStatus
	status.Kind, status.APIVersion = "Status", "v1"
	got, err := json.Marshal(&status)
	if err != nil {
		tb.Fatal(err)
	}
	if string(got) != strings.TrimSpace(want) {
		tb.Errorf("status:\ngot:  %s\nwant: %s", got, want)
	}
}
