package discovery

import (
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	apiversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// The OpenAPI definitions are derived from the Go types by reflection, following the rules
// of kube-openapi's openapi-gen (which produces the real server's definitions from the same
// types' source): json tags decide names, inlining and optionality, SwaggerDoc() supplies
// descriptions, types with OpenAPISchemaType() are opaque scalars, every named struct is a
// definition referenced by $ref. What only the source comments carry (+required, +enum,
// +listType) comes from the tables below and from the structured-merge-diff schema that
// client-go ships for server-side apply.

// Interfaces implemented by API types with a custom OpenAPI representation.
type (
	modelNamer          interface{ OpenAPIModelName() string }
	schemaTyper         interface{ OpenAPISchemaType() []string }
	schemaFormatter     interface{ OpenAPISchemaFormat() string }
	v3OneOfTyper        interface{ OpenAPIV3OneOfTypes() []string }
	swaggerDocumented   interface{ SwaggerDoc() map[string]string }
	jsonUnmarshalerType interface{ UnmarshalJSON([]byte) error }
)

// typeDocs are descriptions of types that have no SwaggerDoc() method (it is generated only
// for types declared in types.go files). The "" key describes the type itself.
var typeDocs = map[reflect.Type]map[string]string{
	reflect.TypeFor[metav1.Time](): {
		"": "Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.  Wrappers are provided for many of the factory methods that the time package offers.",
	},
	reflect.TypeFor[metav1.MicroTime](): {
		"": "MicroTime is version of Time with microsecond level precision.",
	},
	reflect.TypeFor[metav1.FieldsV1](): {
		"": "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.\n\n" +
			"Each key is either a '.' representing the field itself, and will always map to an empty set, or a string representing a sub-field or item. " +
			"The string will follow one of these four formats: 'f:<name>', where <name> is the name of a field in a struct, or key in a map " +
			"'v:<value>', where <value> is the exact json formatted value of a list item " +
			"'i:<index>', where <index> is position of a item in a list " +
			"'k:<keys>', where <keys> is a map of  a list item's key fields to their unique values " +
			"If a key maps to an empty Fields value, the field that key represents is part of the set.\n\n" +
			"The exact format is defined in sigs.k8s.io/structured-merge-diff",
	},
	reflect.TypeFor[runtime.RawExtension](): {
		"": "RawExtension is used to hold extensions in external versions. On the wire it is the JSON of an embedded object, including its kind and apiVersion.",
	},
	reflect.TypeFor[metav1.WatchEvent](): {
		"":       "Event represents a single event to a watched resource.",
		"object": "Object is:\n * If Type is Added or Modified: the new state of the object.\n * If Type is Deleted: the state of the object immediately before deletion.\n * If Type is Error: *Status is recommended; other types may make sense\n   depending on context.",
	},
	reflect.TypeFor[intstr.IntOrString](): {
		"": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.",
	},
	reflect.TypeFor[resource.Quantity](): {
		"": "Quantity is a fixed-point representation of a number. It provides convenient marshaling/unmarshaling in JSON and YAML, in addition to String() and AsInt64() accessors.\n\n" +
			"The serialization format is:\n\n```\n<quantity>        ::= <signedNumber><suffix>\n```\n\n" +
			"Before serializing, Quantity will be put in \"canonical form\". Examples:\n\n- 1.5 will be serialized as \"1500m\" - 1.5Gi will be serialized as \"1536Mi\"",
	},
	reflect.TypeFor[apiversion.Info](): {
		"": "Info contains versioning information. how we'll want to distribute that information.",
	},
}

// requiredOverrides corrects the json-tag rule (required unless omitempty) where the source
// says otherwise with +required or +optional.
var requiredOverrides = map[string]map[string]bool{
	"io.k8s.api.coordination.v1beta1.LeaseCandidate":      {"spec": true},
	"io.k8s.api.coordination.v1beta1.LeaseCandidateSpec":  {"strategy": true},
	"io.k8s.api.coordination.v1alpha2.LeaseCandidate":     {"spec": true},
	"io.k8s.api.coordination.v1alpha2.LeaseCandidateSpec": {"strategy": true},
	"io.k8s.api.coordination.v1alpha1.LeaseCandidateSpec": {"preferredStrategies": true},
	"io.k8s.api.core.v1.Event":                            {"reportingComponent": false, "reportingInstance": false},
}

// enumValue is one documented value of a string type marked +enum.
type enumValue struct{ value, doc string }

// enums are the +enum string types reachable from the served kinds.
var enums = map[reflect.Type][]enumValue{
	reflect.TypeFor[corev1.NamespacePhase](): {
		{"Active", "means the namespace is available for use in the system"},
		{"Terminating", "means the namespace is undergoing graceful termination"},
	},
}

// gvkExtension is one entry of x-kubernetes-group-version-kind on a definition; a map, so
// the keys come out sorted as the real server writes them.
type gvkExtension = map[string]string

// definitionName is the OpenAPI name of a named Go type: its own OpenAPIModelName() when it
// has one, otherwise derived from the package path ("io.k8s.api.coordination.v1.Lease").
func definitionName(t reflect.Type) string {
	if n, ok := reflect.New(t).Interface().(modelNamer); ok {
		name := n.OpenAPIModelName()
		if !promoted(t, func(embedded reflect.Type) bool {
			e, ok := reflect.New(embedded).Interface().(modelNamer)
			return ok && e.OpenAPIModelName() == name
		}) {
			return name
		}
	}
	return util.ToRESTFriendlyName(t.PkgPath() + "." + t.Name())
}

// promoted reports whether a method result of struct t is really that of one of its
// embedded types, as told by same (reflection cannot tell declared from promoted methods).
func promoted(t reflect.Type, same func(embedded reflect.Type) bool) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.Anonymous && same(derefType(f.Type)) {
			return true
		}
	}
	return false
}

// schemaBuilder collects the definitions reachable from a set of root types, for one
// OpenAPI document: Swagger 2.0 (v3 false) or OpenAPI 3.0.
type schemaBuilder struct {
	v3    bool
	defs  map[string]*spec.Schema
	names map[reflect.Type]string
	// gvks lists the group-version-kinds each type is served as in this document.
	gvks map[reflect.Type][]gvkExtension
	// smd is client-go's structural schema of the built-in types (list and map semantics);
	// nil when unavailable.
	smd *smdschema.Schema
}

func newSchemaBuilder(v3 bool, gvks map[reflect.Type][]gvkExtension, smd *smdschema.Schema) *schemaBuilder {
	return &schemaBuilder{v3: v3, defs: map[string]*spec.Schema{}, names: map[reflect.Type]string{}, gvks: gvks, smd: smd}
}

// refSchema is a schema holding only a reference to the definition of t, which is added to
// the document if it is not there yet.
func (b *schemaBuilder) refSchema(t reflect.Type) *spec.Schema {
	prefix := "#/definitions/"
	if b.v3 {
		prefix = "#/components/schemas/"
	}
	return &spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(prefix + b.define(t))}}
}

// define adds the definition of the named type t (and of everything it references) and
// returns its name.
func (b *schemaBuilder) define(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if name, ok := b.names[t]; ok {
		return name
	}
	name := definitionName(t)
	b.names[t] = name
	s := &spec.Schema{}
	// Registered before the fields are walked, so self-references terminate.
	b.defs[name] = s
	docs := docsOf(t)
	s.Description = docs[""]

	if typer, ok := reflect.Zero(t).Interface().(schemaTyper); ok {
		format := ""
		if f, ok := reflect.Zero(t).Interface().(schemaFormatter); ok {
			format = f.OpenAPISchemaFormat()
		}
		s.Format = format
		if oneOf, ok := reflect.Zero(t).Interface().(v3OneOfTyper); ok && b.v3 {
			for _, typ := range oneOf.OpenAPIV3OneOfTypes() {
				s.OneOf = append(s.OneOf, spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}}})
			}
		} else {
			s.Type = typer.OpenAPISchemaType()
		}
		return name
	}

	s.Type = spec.StringOrArray{"object"}
	props := map[string]spec.Schema{}
	var required []string
	b.addFields(t, name, props, &required)
	if len(props) > 0 {
		s.Properties = props
	}
	s.Required = required
	if gvks := b.gvks[t]; len(gvks) > 0 {
		s.AddExtension("x-kubernetes-group-version-kind", gvks)
	}
	if b.smd != nil {
		if td, ok := b.smd.FindNamedType(name); ok && td.Map != nil && td.Map.ElementRelationship == smdschema.Atomic {
			s.AddExtension("x-kubernetes-map-type", "atomic")
		}
	}
	return name
}

// addFields adds the JSON properties of struct t to props, flattening inlined embedded
// structs the way encoding/json does. defName is the definition the properties belong to.
func (b *schemaBuilder) addFields(t reflect.Type, defName string, props map[string]spec.Schema, required *[]string) {
	docs := docsOf(t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if et := derefType(f.Type); et.Kind() == reflect.Struct {
				b.addFields(et, defName, props, required)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if !hasTag || name == "" {
			name = f.Name
		}
		omitEmpty := slices.Contains(strings.Split(opts, ","), "omitempty")
		props[name] = b.property(f, defName, name, opts, omitEmpty, docs[name])
		isRequired := !omitEmpty
		if override, ok := requiredOverrides[defName][name]; ok {
			isRequired = override
		}
		if isRequired {
			*required = append(*required, name)
		}
	}
}

// property is the schema of one struct field.
func (b *schemaBuilder) property(f reflect.StructField, defName, name, opts string, omitEmpty bool, doc string) spec.Schema {
	if slices.Contains(strings.Split(opts, ","), "string") {
		return spec.Schema{SchemaProps: spec.SchemaProps{Description: doc, Type: spec.StringOrArray{"string"}}}
	}
	s := b.typeSchema(f.Type)
	if values, ok := enums[derefType(f.Type)]; ok {
		var lines []string
		for _, v := range values {
			s.Enum = append(s.Enum, v.value)
			lines = append(lines, " - `\""+v.value+"\"` "+v.doc)
		}
		doc = strings.TrimSpace(doc + "\n\nPossible enum values:\n" + strings.Join(lines, "\n"))
	}
	s = b.describe(s, doc, enforcedDefault(f.Type, omitEmpty))

	if v := f.Tag.Get("patchStrategy"); v != "" {
		s.AddExtension("x-kubernetes-patch-strategy", v)
	}
	if v := f.Tag.Get("patchMergeKey"); v != "" {
		s.AddExtension("x-kubernetes-patch-merge-key", v)
	}
	b.addStructuralExtensions(&s, f, defName, name)
	return s
}

// describe attaches a description and a default to s. A reference cannot carry siblings in
// OpenAPI 3, so there it is wrapped in allOf, as the real server does.
func (b *schemaBuilder) describe(s spec.Schema, doc string, def any) spec.Schema {
	if s.Ref.String() != "" && b.v3 && (doc != "" || def != nil) {
		s = spec.Schema{SchemaProps: spec.SchemaProps{AllOf: []spec.Schema{s}}}
	}
	s.Description = doc
	s.Default = def
	return s
}

// addStructuralExtensions adds x-kubernetes-list-type, -list-map-keys and -map-type from the
// structured-merge-diff schema of the field. For types that schema does not know, a list
// gets the semantics server-side apply gives an untagged list: keyed by its patch merge key
// when it has one, atomic otherwise.
func (b *schemaBuilder) addStructuralExtensions(s *spec.Schema, f reflect.StructField, defName, field string) {
	isList := derefType(f.Type).Kind() == reflect.Slice && derefType(f.Type).Elem().Kind() != reflect.Uint8
	ref, atom, ok := b.structuralField(defName, field)
	if !ok {
		if !isList {
			return
		}
		strategy, key := f.Tag.Get("patchStrategy"), f.Tag.Get("patchMergeKey")
		switch {
		case slices.Contains(strings.Split(strategy, ","), "merge") && key != "":
			atom = smdschema.Atom{List: &smdschema.List{ElementRelationship: smdschema.Associative, Keys: []string{key}}}
		case slices.Contains(strings.Split(strategy, ","), "merge"):
			atom = smdschema.Atom{List: &smdschema.List{ElementRelationship: smdschema.Associative}}
		default:
			atom = smdschema.Atom{List: &smdschema.List{ElementRelationship: smdschema.Atomic}}
		}
	}
	switch {
	case atom.List != nil && isList:
		switch {
		case atom.List.ElementRelationship == smdschema.Atomic:
			s.AddExtension("x-kubernetes-list-type", "atomic")
		case atom.List.ElementRelationship == smdschema.Associative && len(atom.List.Keys) > 0:
			s.AddExtension("x-kubernetes-list-type", "map")
			s.AddExtension("x-kubernetes-list-map-keys", slices.Clone(atom.List.Keys))
		case atom.List.ElementRelationship == smdschema.Associative:
			s.AddExtension("x-kubernetes-list-type", "set")
		}
	case atom.Map != nil && ref.NamedType == nil && atom.Map.ElementRelationship == smdschema.Atomic:
		s.AddExtension("x-kubernetes-map-type", "atomic")
	case atom.Map != nil && ref.ElementRelationship != nil && *ref.ElementRelationship == smdschema.Atomic:
		s.AddExtension("x-kubernetes-map-type", "atomic")
	}
}

// structuralField looks a field up in the structured-merge-diff schema.
func (b *schemaBuilder) structuralField(defName, field string) (smdschema.TypeRef, smdschema.Atom, bool) {
	if b.smd == nil {
		return smdschema.TypeRef{}, smdschema.Atom{}, false
	}
	td, ok := b.smd.FindNamedType(defName)
	if !ok || td.Map == nil {
		return smdschema.TypeRef{}, smdschema.Atom{}, false
	}
	sf, ok := td.Map.FindField(field)
	if !ok {
		return smdschema.TypeRef{}, smdschema.Atom{}, false
	}
	atom, ok := b.smd.Resolve(sf.Type)
	return sf.Type, atom, ok
}

// typeSchema is the schema of a value of type t, without description or default.
func (b *schemaBuilder) typeSchema(t reflect.Type) spec.Schema {
	t = derefType(t)
	if t.Name() != "" && t.PkgPath() != "" {
		if _, ok := reflect.Zero(t).Interface().(schemaTyper); ok || t.Kind() == reflect.Struct {
			return *b.refSchema(t)
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return simpleSchema("boolean", "")
	case reflect.Int, reflect.Int32, reflect.Int16, reflect.Int8, reflect.Uint16, reflect.Uint8:
		return simpleSchema("integer", "int32")
	case reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return simpleSchema("integer", "int64")
	case reflect.Float32:
		return simpleSchema("number", "float")
	case reflect.Float64:
		return simpleSchema("number", "double")
	case reflect.String:
		return simpleSchema("string", "")
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return simpleSchema("string", "byte")
		}
		item := b.describe(b.typeSchema(t.Elem()), "", enforcedDefault(t.Elem(), false))
		return spec.Schema{SchemaProps: spec.SchemaProps{
			Type:  spec.StringOrArray{"array"},
			Items: &spec.SchemaOrArray{Schema: &item},
		}}
	case reflect.Map:
		value := b.describe(b.typeSchema(t.Elem()), "", enforcedDefault(t.Elem(), false))
		return spec.Schema{SchemaProps: spec.SchemaProps{
			Type:                 spec.StringOrArray{"object"},
			AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &value},
		}}
	case reflect.Struct:
		// An anonymous struct: describe it in place.
		props := map[string]spec.Schema{}
		var required []string
		b.addFields(t, "", props, &required)
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: props, Required: required}}
	default:
		// Interfaces and anything else JSON cannot describe: no constraint.
		return spec.Schema{}
	}
}

func simpleSchema(typ, format string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{typ}, Format: format}}
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// enforcedDefault is the default openapi-gen records for a field of type t: the zero value
// of non-pointer scalars that are always serialized, {} for non-pointer structs, nothing for
// pointers, collections and types with their own JSON decoding (their zero value is null).
func enforcedDefault(t reflect.Type, omitEmpty bool) any {
	if t.Kind() == reflect.Pointer {
		return nil
	}
	if _, ok := reflect.New(t).Interface().(jsonUnmarshalerType); ok && (t.Kind() == reflect.Struct) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return map[string]any{}
	case reflect.Bool:
		if !omitEmpty {
			return false
		}
	case reflect.String:
		if !omitEmpty {
			return ""
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !omitEmpty {
			return 0
		}
	case reflect.Float32, reflect.Float64:
		if !omitEmpty {
			return 0.0
		}
	}
	return nil
}

// docsOf returns the field descriptions of t: its own SwaggerDoc() (not one promoted from an
// embedded type), else the typeDocs table.
func docsOf(t reflect.Type) map[string]string {
	if d, ok := typeDocs[t]; ok {
		return d
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	doc, ok := reflect.Zero(t).Interface().(swaggerDocumented)
	if !ok {
		return nil
	}
	docs := doc.SwaggerDoc()
	if promoted(t, func(embedded reflect.Type) bool {
		e, ok := reflect.Zero(embedded).Interface().(swaggerDocumented)
		return ok && reflect.DeepEqual(e.SwaggerDoc(), docs)
	}) {
		return nil // about the embedded type, not t
	}
	return docs
}

// gvksByType indexes, for the types registered in scheme, the group-version-kinds they are
// served as among the group versions in served. Every such type gets the extension, as on
// the real server (Lease, LeaseList, but also DeleteOptions and WatchEvent in each group
// version, and the unversioned Status under "v1").
func gvksByType(scheme *runtime.Scheme, served map[schema.GroupVersion]bool) map[reflect.Type][]gvkExtension {
	out := map[reflect.Type][]gvkExtension{}
	for gvk, t := range scheme.AllKnownTypes() {
		if !served[gvk.GroupVersion()] {
			continue
		}
		out[t] = append(out[t], gvkExtension{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind})
	}
	for _, list := range out {
		slices.SortFunc(list, func(a, b gvkExtension) int {
			if c := strings.Compare(a["group"], b["group"]); c != 0 {
				return c
			}
			if c := strings.Compare(a["version"], b["version"]); c != 0 {
				return c
			}
			return strings.Compare(a["kind"], b["kind"])
		})
	}
	return out
}
