package apiserver

import (
	"errors"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// DoublingJSONPatch is a JSON patch of n copy operations, each appending /spec/x to itself, so
// that the document doubles n times; a last test operation fails, so that nothing is stored.
func DoublingJSONPatch(n int) string {
	ops := []string{`{"op":"add","path":"/spec/x","value":[1]}`}
	for range n {
		ops = append(ops, `{"op":"copy","from":"/spec/x","path":"/spec/x/-"}`)
	}
	ops = append(ops, `{"op":"test","path":"/spec/x/0","value":2}`)
	return "[" + strings.Join(ops, ",") + "]"
}

// TestApplyJSONPatchCopyLimit: 24 doublings would take a few hundred MB; the copy limit stops
// them near 3 MiB.
func TestApplyJSONPatchCopyLimit(t *testing.T) {
	jp, err := jsonpatch.DecodePatch([]byte(DoublingJSONPatch(24)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = applyJSONPatch(jp, []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"a"},"spec":{}}`))
	var limit *jsonpatch.AccumulatedCopySizeError
	if !errors.As(err, &limit) {
		t.Fatalf("err = %v, want the accumulated copy size error", err)
	}
}
