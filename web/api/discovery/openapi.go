package discovery

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/leaselab/leaselab/web/api/kinds"
)

// The OpenAPI documents describe the REST surface the real API server has for the served
// kinds: one path per collection, item and watch URL, one operation per verb, with the
// operation ids, x-kubernetes-action and x-kubernetes-group-version-kind extensions, query
// parameters, request bodies and response types clients look for. kubectl, for one, decides
// whether the server validates fields by finding the fieldValidation parameter on the PATCH
// operation of a kind, and computes client-side apply patches only for PATCH operations that
// accept application/strategic-merge-patch+json.

// Media types of request and response bodies, as the real server advertises them.
var (
	bodyTypes         = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	streamingTypes    = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch"}
	anyType           = []string{"*/*"}
	patchContentTypes = []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"}
)

// Query parameters of each kind of request, by the json name of the options field that
// carries them (the options types' SwaggerDoc describes them).
var (
	listParams             = []string{"allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"}
	deleteCollectionParams = []string{"continue", "fieldSelector", "labelSelector", "limit", "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds"}
	writeParams            = []string{"dryRun", "fieldManager", "fieldValidation"}
	patchParams            = []string{"dryRun", "fieldManager", "fieldValidation", "force"}
	deleteParams           = []string{"dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy"}
)

const prettyDoc = "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."

var (
	typeStatus          = reflect.TypeFor[metav1.Status]()
	typeDeleteOptions   = reflect.TypeFor[metav1.DeleteOptions]()
	typeWatchEvent      = reflect.TypeFor[metav1.WatchEvent]()
	typePatch           = reflect.TypeFor[metav1.Patch]()
	typeAPIResourceList = reflect.TypeFor[metav1.APIResourceList]()
	statusDescriptions  = map[int]string{200: "OK", 201: "Created", 202: "Accepted"}
)

// Every operation also documents this response, as on the real server.
const unauthorizedResponse = http.StatusUnauthorized

// param is one parameter of an operation.
type param struct {
	name, in, description, typ string
	required                   bool
}

// requestBody is what an operation accepts.
type requestBody struct {
	typ          reflect.Type
	contentTypes []string
	required     bool
}

// response is one successful status of an operation and its body type.
type response struct {
	code int
	typ  reflect.Type
}

// operation is one method on one path.
type operation struct {
	method      string
	id          string
	description string
	action      string // x-kubernetes-action; empty for discovery
	gvk         *schema.GroupVersionKind
	tag         string
	params      []param
	body        *requestBody
	responses   []response
	produces    []string
}

// route is one path and its operations; params are those all operations share.
type route struct {
	path   string
	ops    []*operation
	params []param
}

// opGVK is x-kubernetes-group-version-kind on an operation; a struct, so the keys keep the
// real server's order.
type opGVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// options types whose SwaggerDoc describes the query parameters of each request.
var (
	listOptions   = reflect.TypeFor[metav1.ListOptions]()
	createOptions = reflect.TypeFor[metav1.CreateOptions]()
	updateOptions = reflect.TypeFor[metav1.UpdateOptions]()
	patchOptions  = reflect.TypeFor[metav1.PatchOptions]()
	deleteOptions = reflect.TypeFor[metav1.DeleteOptions]()
)

// queryParams describes the named fields of options type t as query parameters.
func queryParams(t reflect.Type, names ...string) []param {
	docs := docsOf(t)
	var out []param
	for _, name := range names {
		f, ok := fieldByJSONName(t, name)
		if !ok {
			panic(fmt.Sprintf("discovery: %s has no field %q", t, name))
		}
		typ := "string"
		switch derefType(f.Type).Kind() {
		case reflect.Bool:
			typ = "boolean"
		case reflect.Int, reflect.Int32, reflect.Int64:
			typ = "integer"
		}
		out = append(out, param{name: name, in: "query", description: docs[name], typ: typ})
	}
	return out
}

func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// friendlyGroup is how operation ids name a group: "Core", "Coordination",
// "RbacAuthorization" (the .k8s.io suffix dropped, each dotted part capitalized).
func friendlyGroup(group string) string {
	if group == "" {
		return "Core"
	}
	group = strings.TrimSuffix(group, ".k8s.io")
	var b strings.Builder
	for _, part := range strings.FieldsFunc(group, func(r rune) bool { return r == '.' || r == '-' }) {
		b.WriteString(upperFirst(part))
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// groupVersionPrefix is the URL prefix of a group version: /api/v1 or /apis/<group>/<v>.
func groupVersionPrefix(group, version string) string {
	if group == "" {
		return "/api/" + version
	}
	return "/apis/" + group + "/" + version
}

// goTypeOf returns the Go type registered in scheme for gvk.
func goTypeOf(scheme *runtime.Scheme, gvk schema.GroupVersionKind) (reflect.Type, error) {
	obj, err := scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("type of %s: %w", gvk, err)
	}
	return reflect.TypeOf(obj).Elem(), nil
}

// groupVersionRoutes returns the routes of one group version: its discovery document and
// the collection, item and watch paths of each kind served there.
func groupVersionRoutes(scheme *runtime.Scheme, g *apiGroup, v string) ([]*route, error) {
	b := newRouteBuilder(g.name, v)
	for _, k := range g.resources[v] {
		kr, err := newKindRoutes(scheme, b, g.name, v, k)
		if err != nil {
			return nil, err
		}
		kr.collection()
		kr.item()
		kr.watch()
	}
	for _, r := range b.routes {
		r.hoistParams()
	}
	return b.routes, nil
}

// routeBuilder collects the routes of one group version in the order they are first added.
type routeBuilder struct {
	prefix string // the group version's path
	tag    string
	gvName string // the group version in operation ids
	routes []*route
	byPath map[string]*route
}

func newRouteBuilder(group, v string) *routeBuilder {
	b := &routeBuilder{
		prefix: groupVersionPrefix(group, v),
		tag:    lowerFirst(friendlyGroup(group)) + "_" + v,
		gvName: friendlyGroup(group) + upperFirst(v),
		byPath: map[string]*route{},
	}
	b.routes = []*route{{path: b.prefix + "/", ops: []*operation{{
		method:      "get",
		id:          "get" + b.gvName + "APIResources",
		description: "get available resources",
		tag:         b.tag,
		responses:   []response{{200, typeAPIResourceList}},
		produces:    bodyTypes,
	}}}}
	return b
}

// add adds an operation on path, with the group version's tag and the pretty parameter.
func (b *routeBuilder) add(path string, op *operation) {
	r := b.byPath[path]
	if r == nil {
		r = &route{path: path}
		b.byPath[path] = r
		b.routes = append(b.routes, r)
	}
	op.tag = b.tag
	op.params = append(op.params, param{name: "pretty", in: "query", description: prettyDoc, typ: "string"})
	r.ops = append(r.ops, op)
}

// kindRoutes adds the operations of one kind to a routeBuilder.
type kindRoutes struct {
	*routeBuilder
	k                 *kinds.Kind
	gvk               schema.GroupVersionKind
	objType, listType reflect.Type
	scope             string  // "Namespaced" in the operation ids of a namespaced kind
	nsParam           []param // the namespace path parameter of a namespaced kind
	nameParam         param
	collectionPath    string
	watchPath         string // the legacy watch path of the collection
}

func newKindRoutes(scheme *runtime.Scheme, b *routeBuilder, group, v string, k *kinds.Kind) (*kindRoutes, error) {
	kr := &kindRoutes{routeBuilder: b, k: k, gvk: schema.GroupVersionKind{Group: group, Version: v, Kind: k.Kind}}
	var err error
	if kr.objType, err = goTypeOf(scheme, kr.gvk); err != nil {
		return nil, err
	}
	listKind := k.ListKind
	if listKind == "" {
		listKind = k.Kind + "List"
	}
	if kr.listType, err = goTypeOf(scheme, kr.gvk.GroupVersion().WithKind(listKind)); err != nil {
		return nil, err
	}
	nsSegment := ""
	if k.Namespaced {
		kr.scope, nsSegment = "Namespaced", "/namespaces/{namespace}"
		kr.nsParam = []param{{name: "namespace", in: "path", description: "object name and auth scope, such as for teams and projects", typ: "string", required: true}}
	}
	kr.nameParam = param{name: "name", in: "path", description: "name of the " + k.Kind, typ: "string", required: true}
	kr.collectionPath = b.prefix + nsSegment + "/" + k.Resource
	kr.watchPath = b.prefix + "/watch" + nsSegment + "/" + k.Resource
	return kr, nil
}

func (kr *kindRoutes) newOp(method, description, action string) *operation {
	return &operation{method: method, action: action, gvk: &kr.gvk, produces: bodyTypes, description: description}
}

func (kr *kindRoutes) has(verb string) bool { return slices.Contains(kr.k.Verbs, verb) }

func withPath(ps ...[]param) []param {
	var out []param
	for _, p := range ps {
		out = append(out, p...)
	}
	return out
}

// collection adds the operations on the collection: list (also across namespaces), create and
// deletecollection.
func (kr *kindRoutes) collection() {
	k, objType := kr.k, kr.objType
	if kr.has("list") {
		op := kr.newOp("get", "list or watch objects of kind "+k.Kind, "list")
		op.id = "list" + kr.gvName + kr.scope + k.Kind
		op.params = withPath(kr.nsParam, queryParams(listOptions, listParams...))
		op.responses = []response{{200, kr.listType}}
		op.produces = streamingTypes
		kr.add(kr.collectionPath, op)
		if k.Namespaced {
			op := kr.newOp("get", "list or watch objects of kind "+k.Kind, "list")
			op.id = "list" + kr.gvName + k.Kind + "ForAllNamespaces"
			op.params = queryParams(listOptions, listParams...)
			op.responses = []response{{200, kr.listType}}
			op.produces = streamingTypes
			kr.add(kr.prefix+"/"+k.Resource, op)
		}
	}
	if kr.has("create") {
		op := kr.newOp("post", "create a"+article(k.Kind)+" "+k.Kind, "post")
		op.id = "create" + kr.gvName + kr.scope + k.Kind
		op.params = withPath(kr.nsParam, queryParams(createOptions, writeParams...))
		op.body = &requestBody{typ: objType, contentTypes: anyType, required: true}
		op.responses = []response{{200, objType}, {201, objType}, {202, objType}}
		kr.add(kr.collectionPath, op)
	}
	if kr.has("deletecollection") {
		op := kr.newOp("delete", "delete collection of "+k.Kind, "deletecollection")
		op.id = "delete" + kr.gvName + "Collection" + kr.scope + k.Kind
		op.params = withPath(kr.nsParam, queryParams(listOptions, deleteCollectionParams...), queryParams(deleteOptions, deleteParams...))
		op.body = &requestBody{typ: typeDeleteOptions, contentTypes: anyType}
		op.responses = []response{{200, typeStatus}}
		kr.add(kr.collectionPath, op)
	}
}

// item adds the operations on one object: get, update, delete and patch.
func (kr *kindRoutes) item() {
	k, objType, item := kr.k, kr.objType, kr.collectionPath+"/{name}"
	if kr.has("get") {
		op := kr.newOp("get", "read the specified "+k.Kind, "get")
		op.id = "read" + kr.gvName + kr.scope + k.Kind
		op.params = withPath(kr.nsParam, []param{kr.nameParam})
		op.responses = []response{{200, objType}}
		kr.add(item, op)
	}
	if kr.has("update") {
		op := kr.newOp("put", "replace the specified "+k.Kind, "put")
		op.id = "replace" + kr.gvName + kr.scope + k.Kind
		op.params = withPath(kr.nsParam, []param{kr.nameParam}, queryParams(updateOptions, writeParams...))
		op.body = &requestBody{typ: objType, contentTypes: anyType, required: true}
		op.responses = []response{{200, objType}, {201, objType}}
		kr.add(item, op)
	}
	if kr.has("delete") {
		op := kr.newOp("delete", "delete a"+article(k.Kind)+" "+k.Kind, "delete")
		op.id = "delete" + kr.gvName + kr.scope + k.Kind
		op.params = withPath(kr.nsParam, []param{kr.nameParam}, queryParams(deleteOptions, deleteParams...))
		op.body = &requestBody{typ: typeDeleteOptions, contentTypes: anyType}
		op.responses = []response{{200, typeStatus}, {202, typeStatus}}
		kr.add(item, op)
	}
	if kr.has("patch") {
		op := kr.newOp("patch", "partially update the specified "+k.Kind, "patch")
		op.id = "patch" + kr.gvName + kr.scope + k.Kind
		op.params = withPath(kr.nsParam, []param{kr.nameParam}, queryParams(patchOptions, patchParams...))
		op.body = &requestBody{typ: typePatch, contentTypes: patchContentTypes, required: true}
		op.responses = []response{{200, objType}, {201, objType}}
		kr.add(item, op)
	}
}

// watch adds the legacy watch operations: on the collection, on one object, and across
// namespaces.
func (kr *kindRoutes) watch() {
	k := kr.k
	if !kr.has("watch") {
		return
	}
	op := kr.newOp("get", "watch individual changes to a list of "+k.Kind+". deprecated: use the 'watch' parameter with a list operation instead.", "watchlist")
	op.id = "watch" + kr.gvName + kr.scope + k.Kind + "List"
	op.params = withPath(kr.nsParam, queryParams(listOptions, listParams...))
	op.responses = []response{{200, typeWatchEvent}}
	op.produces = streamingTypes
	kr.add(kr.watchPath, op)

	op = kr.newOp("get", "watch changes to an object of kind "+k.Kind+". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.", "watch")
	op.id = "watch" + kr.gvName + kr.scope + k.Kind
	op.params = withPath(kr.nsParam, []param{kr.nameParam}, queryParams(listOptions, listParams...))
	op.responses = []response{{200, typeWatchEvent}}
	op.produces = streamingTypes
	kr.add(kr.watchPath+"/{name}", op)

	if k.Namespaced {
		op := kr.newOp("get", "watch individual changes to a list of "+k.Kind+". deprecated: use the 'watch' parameter with a list operation instead.", "watchlist")
		op.id = "watch" + kr.gvName + k.Kind + "ListForAllNamespaces"
		op.params = queryParams(listOptions, listParams...)
		op.responses = []response{{200, typeWatchEvent}}
		op.produces = streamingTypes
		kr.add(kr.prefix+"/watch/"+k.Resource, op)
	}
}

// article is the indefinite article the real server's descriptions use before kind.
func article(kind string) string {
	if kind != "" && strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "n"
	}
	return ""
}

// hoistParams moves the parameters every operation of r has to r itself, and sorts all
// parameter lists by name, which is how the real server lays them out.
func (r *route) hoistParams() {
	key := func(p param) string { return p.in + "/" + p.name }
	count := map[string]int{}
	for _, op := range r.ops {
		for _, p := range op.params {
			count[key(p)]++
		}
	}
	for _, op := range r.ops {
		kept := op.params[:0:0]
		for _, p := range op.params {
			if count[key(p)] == len(r.ops) {
				if !slices.ContainsFunc(r.params, func(q param) bool { return key(q) == key(p) }) {
					r.params = append(r.params, p)
				}
				continue
			}
			kept = append(kept, p)
		}
		op.params = kept
		sortParams(op.params)
	}
	sortParams(r.params)
}

func sortParams(ps []param) {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].name < ps[j].name })
}

// openAPIInfoVersion is the info.version of the documents: "<major>.<minor>" of the server.
func openAPIInfoVersion(info apiversion.Info) string {
	digits := func(s string) string {
		return strings.TrimRightFunc(s, func(r rune) bool { return !unicode.IsDigit(r) })
	}
	if major, minor := digits(info.Major), digits(info.Minor); major != "" && minor != "" {
		return major + "." + minor
	}
	if info.GitVersion != "" {
		return info.GitVersion
	}
	return "unversioned"
}

// structuralSchema returns client-go's structured-merge-diff schema of the built-in types,
// which knows the list and map semantics (+listType, +mapType) the Go types cannot tell by
// reflection. It returns nil if none of the kinds is known to it.
func structuralSchema(scheme *runtime.Scheme, ks []*kinds.Kind) *smdschema.Schema {
	tc := applyconfigurations.NewTypeConverter(scheme)
	for _, k := range ks {
		for _, v := range k.Versions {
			gvk := schema.GroupVersionKind{Group: k.Group, Version: v, Kind: k.Kind}
			obj, err := scheme.New(gvk)
			if err != nil {
				continue
			}
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			tv, err := tc.ObjectToTyped(obj)
			if err != nil {
				continue
			}
			return tv.Schema()
		}
	}
	return nil
}

// openAPIBuilder builds the v2 document and the v3 documents from the served groups.
type openAPIBuilder struct {
	scheme      *runtime.Scheme
	smd         *smdschema.Schema
	infoVersion string
}

// coreV1 is where the real server registers the meta types every group version shares
// (Status, and WatchEvent and DeleteOptions for the core group).
var coreV1 = schema.GroupVersion{Version: "v1"}

// v2 builds the Swagger 2.0 document of every served group version.
func (o *openAPIBuilder) v2(groups []*apiGroup) (*spec.Swagger, error) {
	served := map[schema.GroupVersion]bool{coreV1: true}
	for _, g := range groups {
		for _, v := range g.versions {
			served[schema.GroupVersion{Group: g.name, Version: v}] = true
		}
	}
	b := newSchemaBuilder(false, gvksByType(o.scheme, served), o.smd)
	paths := map[string]spec.PathItem{}
	for _, g := range groups {
		for _, v := range g.versions {
			routes, err := groupVersionRoutes(o.scheme, g, v)
			if err != nil {
				return nil, err
			}
			for _, r := range routes {
				paths[r.path] = r.v2(b)
			}
		}
	}
	defs := spec.Definitions{}
	for name, s := range b.defs {
		defs[name] = *s
	}
	return &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: o.infoVersion}},
		Paths:       &spec.Paths{Paths: paths},
		Definitions: defs,
		SecurityDefinitions: spec.SecurityDefinitions{"BearerToken": &spec.SecurityScheme{SecuritySchemeProps: spec.SecuritySchemeProps{
			Type: "apiKey", Name: "authorization", In: "header", Description: "Bearer Token authentication",
		}}},
		Security: []map[string][]string{{"BearerToken": {}}},
	}}, nil
}

// v3 builds the OpenAPI 3.0 document of one group version.
func (o *openAPIBuilder) v3(g *apiGroup, v string) (*spec3.OpenAPI, error) {
	served := map[schema.GroupVersion]bool{coreV1: true, {Group: g.name, Version: v}: true}
	b := newSchemaBuilder(true, gvksByType(o.scheme, served), o.smd)
	routes, err := groupVersionRoutes(o.scheme, g, v)
	if err != nil {
		return nil, err
	}
	paths := map[string]*spec3.Path{}
	for _, r := range routes {
		paths[r.path] = r.v3(b)
	}
	return &spec3.OpenAPI{
		Version: "3.0.0",
		Info:    &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: o.infoVersion}},
		Paths:   &spec3.Paths{Paths: paths},
		Components: &spec3.Components{
			Schemas: b.defs,
			SecuritySchemes: spec3.SecuritySchemes{"BearerToken": &spec3.SecurityScheme{SecuritySchemeProps: spec3.SecuritySchemeProps{
				Type: "apiKey", Description: "Bearer Token authentication", Name: "authorization", In: "header",
			}}},
		},
	}, nil
}

func (op *operation) extensions() spec.Extensions {
	ext := spec.Extensions{}
	if op.action != "" {
		ext["x-kubernetes-action"] = op.action
	}
	if op.gvk != nil {
		ext["x-kubernetes-group-version-kind"] = opGVK{Group: op.gvk.Group, Version: op.gvk.Version, Kind: op.gvk.Kind}
	}
	if len(ext) == 0 {
		return nil
	}
	return ext
}

func (r *route) v2(b *schemaBuilder) spec.PathItem {
	item := spec.PathItem{}
	for _, p := range r.params {
		item.Parameters = append(item.Parameters, p.v2())
	}
	for _, op := range r.ops {
		o := &spec.Operation{
			OperationProps: spec.OperationProps{
				Description: op.description,
				Produces:    op.produces,
				Tags:        []string{op.tag},
				ID:          op.id,
				Responses:   &spec.Responses{ResponsesProps: spec.ResponsesProps{StatusCodeResponses: map[int]spec.Response{}}},
			},
			VendorExtensible: spec.VendorExtensible{Extensions: op.extensions()},
		}
		if op.body != nil {
			o.Consumes = op.body.contentTypes
			o.Parameters = append(o.Parameters, spec.Parameter{ParamProps: spec.ParamProps{
				Name: "body", In: "body", Required: op.body.required, Schema: b.refSchema(op.body.typ),
			}})
		}
		for _, p := range op.params {
			o.Parameters = append(o.Parameters, p.v2())
		}
		for _, resp := range op.responses {
			o.Responses.StatusCodeResponses[resp.code] = spec.Response{ResponseProps: spec.ResponseProps{
				Description: statusDescriptions[resp.code], Schema: b.refSchema(resp.typ),
			}}
		}
		o.Responses.StatusCodeResponses[unauthorizedResponse] = spec.Response{ResponseProps: spec.ResponseProps{Description: "Unauthorized"}}
		switch op.method {
		case "get":
			item.Get = o
		case "post":
			item.Post = o
		case "put":
			item.Put = o
		case "patch":
			item.Patch = o
		case "delete":
			item.Delete = o
		}
	}
	return item
}

func (p param) v2() spec.Parameter {
	return spec.Parameter{
		ParamProps:        spec.ParamProps{Name: p.name, In: p.in, Description: p.description, Required: p.required},
		SimpleSchema:      spec.SimpleSchema{Type: p.typ},
		CommonValidations: spec.CommonValidations{UniqueItems: true},
	}
}

func (p param) v3() *spec3.Parameter {
	return &spec3.Parameter{ParameterProps: spec3.ParameterProps{
		Name: p.name, In: p.in, Description: p.description, Required: p.required,
		Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{p.typ}, UniqueItems: true}},
	}}
}

func (r *route) v3(b *schemaBuilder) *spec3.Path {
	path := &spec3.Path{}
	for _, p := range r.params {
		path.Parameters = append(path.Parameters, p.v3())
	}
	content := func(types []string, t reflect.Type) map[string]*spec3.MediaType {
		m := map[string]*spec3.MediaType{}
		for _, ct := range types {
			m[ct] = &spec3.MediaType{MediaTypeProps: spec3.MediaTypeProps{Schema: b.refSchema(t)}}
		}
		return m
	}
	for _, op := range r.ops {
		o := &spec3.Operation{
			OperationProps: spec3.OperationProps{
				Tags:        []string{op.tag},
				Description: op.description,
				OperationId: op.id,
				Responses:   &spec3.Responses{ResponsesProps: spec3.ResponsesProps{StatusCodeResponses: map[int]*spec3.Response{}}},
			},
			VendorExtensible: spec.VendorExtensible{Extensions: op.extensions()},
		}
		for _, p := range op.params {
			o.Parameters = append(o.Parameters, p.v3())
		}
		if op.body != nil {
			o.RequestBody = &spec3.RequestBody{RequestBodyProps: spec3.RequestBodyProps{
				Content: content(op.body.contentTypes, op.body.typ), Required: op.body.required,
			}}
		}
		for _, resp := range op.responses {
			o.Responses.StatusCodeResponses[resp.code] = &spec3.Response{ResponseProps: spec3.ResponseProps{
				Description: statusDescriptions[resp.code], Content: content(op.produces, resp.typ),
			}}
		}
		o.Responses.StatusCodeResponses[unauthorizedResponse] = &spec3.Response{ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}}
		switch op.method {
		case "get":
			path.Get = o
		case "post":
			path.Post = o
		case "put":
			path.Put = o
		case "patch":
			path.Patch = o
		case "delete":
			path.Delete = o
		}
	}
	return path
}
