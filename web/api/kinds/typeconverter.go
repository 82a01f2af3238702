package kinds

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// typeSchema is the structured-merge-diff schema of the served types, built once: parsing it
// takes longer than the rest of start-up.
type typeSchema struct {
	once      sync.Once
	schema    *smdschema.Schema
	converter managedfields.TypeConverter
	err       error
}

// TypeConverter returns the converter between served objects and the typed values the field
// manager works on. It knows the schemas client-go ships for the built-in types, and
// LeaseCandidate v1alpha1, which client-go no longer ships. The first call is slow (~150 ms).
func (r *Registry) TypeConverter() (managedfields.TypeConverter, error) {
	r.types.once.Do(r.buildTypes)
	return r.types.converter, r.types.err
}

// StructuralSchema returns the structured-merge-diff schema of the served types (list and map
// semantics the Go types cannot tell), the one TypeConverter uses.
func (r *Registry) StructuralSchema() (*smdschema.Schema, error) {
	r.types.once.Do(r.buildTypes)
	return r.types.schema, r.types.err
}

func (r *Registry) buildTypes() {
	builtin, err := builtinSchema(r)
	if err != nil {
		r.types.err = err
		return
	}
	extra, err := leaseCandidateV1alpha1Schema(builtin)
	if err != nil {
		r.types.err = err
		return
	}
	parser := &typed.Parser{Schema: smdschema.Schema{Types: append(slices.Clone(builtin.Types), extra...)}}
	r.types.schema = &parser.Schema
	r.types.converter = managedfields.NewSchemeTypeConverter(r.Scheme, parser)
}

// builtinSchema returns the schema client-go ships, reached through any object it knows.
func builtinSchema(r *Registry) (*smdschema.Schema, error) {
	tc := applyconfigurations.NewTypeConverter(r.Scheme)
	obj := &coordinationv1beta1.LeaseCandidate{}
	obj.SetGroupVersionKind(coordinationv1beta1.SchemeGroupVersion.WithKind("LeaseCandidate"))
	tv, err := tc.ObjectToTyped(obj)
	if err != nil {
		return nil, fmt.Errorf("built-in type schema: %w", err)
	}
	return tv.Schema(), nil
}

// leaseCandidateV1alpha1Schema derives the v1alpha1 LeaseCandidate types from v1alpha2's:
// the same fields, with the atomic list preferredStrategies in place of strategy, and
// binaryVersion without a default (it is omitempty in v1alpha1).
func leaseCandidateV1alpha1Schema(builtin *smdschema.Schema) ([]smdschema.TypeDef, error) {
	const from, to = "io.k8s.api.coordination.v1alpha2.", "io.k8s.api.coordination.v1alpha1."
	obj, ok := builtin.FindNamedType(from + "LeaseCandidate")
	if !ok || obj.Map == nil {
		return nil, fmt.Errorf("schema has no %sLeaseCandidate", from)
	}
	spec, ok := builtin.FindNamedType(from + "LeaseCandidateSpec")
	if !ok || spec.Map == nil {
		return nil, fmt.Errorf("schema has no %sLeaseCandidateSpec", from)
	}

	// The maps are built field by field: a schema.Map holds a lock and is never copied whole.
	objMap := &smdschema.Map{Fields: slices.Clone(obj.Map.Fields), ElementRelationship: obj.Map.ElementRelationship}
	for i, f := range objMap.Fields {
		if f.Type.NamedType != nil && strings.HasPrefix(*f.Type.NamedType, from) {
			name := to + strings.TrimPrefix(*f.Type.NamedType, from)
			objMap.Fields[i].Type.NamedType = &name
		}
	}

	specMap := &smdschema.Map{ElementRelationship: spec.Map.ElementRelationship}
	str := smdschema.Scalar("string")
	for _, f := range spec.Map.Fields {
		switch f.Name {
		case "strategy":
			continue
		case "binaryVersion":
			f.Default = nil
		}
		specMap.Fields = append(specMap.Fields, f)
	}
	specMap.Fields = append(specMap.Fields, smdschema.StructField{
		Name: "preferredStrategies",
		Type: smdschema.TypeRef{Inlined: smdschema.Atom{List: &smdschema.List{
			ElementType:         smdschema.TypeRef{Inlined: smdschema.Atom{Scalar: &str}},
			ElementRelationship: smdschema.Atomic,
		}}},
	})
	slices.SortFunc(specMap.Fields, func(a, b smdschema.StructField) int { return strings.Compare(a.Name, b.Name) })

	return []smdschema.TypeDef{
		{Name: to + "LeaseCandidate", Atom: smdschema.Atom{Map: objMap}},
		{Name: to + "LeaseCandidateSpec", Atom: smdschema.Atom{Map: specMap}},
	}, nil
}
