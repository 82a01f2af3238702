package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/web/api/status"
)

var metaGV = schema.GroupVersion{Group: metav1.GroupName, Version: "v1"}

// includeObject reads and checks the includeObject parameter of a Table request; a bad value is
// a 400 worded as the real server words it.
func (q *request) includeObject() (metav1.IncludeObjectPolicy, error) {
	opts := &metav1.TableOptions{IncludeObject: metav1.IncludeObjectPolicy(q.r.URL.Query().Get("includeObject"))}
	if errs := metav1validation.ValidateTableOptions(opts); len(errs) > 0 {
		return "", apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs[0].Error()))
	}
	if opts.IncludeObject == "" {
		return metav1.IncludeMetadata, nil
	}
	return opts.IncludeObject, nil
}

// table renders storage-version objects as a Table with the kind's columns; gv is the
// meta.k8s.io version of the Table, which the rows' PartialObjectMetadata share.
func (q *request) table(items []runtime.Object, lm metav1.ListMeta, headers bool, gv schema.GroupVersion) (*metav1.Table, error) {
	include, err := q.includeObject()
	if err != nil {
		return nil, err
	}
	t := &metav1.Table{ListMeta: lm, Rows: make([]metav1.TableRow, 0, len(items))}
	if headers {
		t.ColumnDefinitions = q.kind.TableColumns
	}
	now := q.s.opts.Now()
	for _, it := range items {
		row := metav1.TableRow{Cells: q.kind.TableCells(it, now)}
		switch include {
		case metav1.IncludeMetadata:
			pom, err := partialObjectMetadata(it, gv)
			if err != nil {
				return nil, err
			}
			row.Object.Object = pom
		case metav1.IncludeObject:
			v, err := q.toVersion(it.DeepCopyObject())
			if err != nil {
				return nil, err
			}
			v.GetObjectKind().SetGroupVersionKind(q.gv.WithKind(q.kind.Kind))
			row.Object.Object = v
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// partialObjectMetadata returns the metadata of obj as a PartialObjectMetadata of meta.k8s.io
// version gv.
func partialObjectMetadata(obj runtime.Object, gv schema.GroupVersion) (*metav1.PartialObjectMetadata, error) {
	// The typed objects embed an ObjectMeta; meta.Accessor would return the object itself.
	acc, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return nil, fmt.Errorf("no object metadata in %T", obj)
	}
	om, ok := acc.GetObjectMeta().(*metav1.ObjectMeta)
	if !ok {
		return nil, fmt.Errorf("unexpected metadata type %T", acc.GetObjectMeta())
	}
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: gv.String(), Kind: "PartialObjectMetadata"},
		ObjectMeta: *om.DeepCopy(),
	}, nil
}

// convertForOutput renders one storage-version object as the Table or PartialObjectMetadata
// the client asked for; it returns the object and the version to encode it at.
func (q *request) convertForOutput(out output, obj runtime.Object, noHeaders bool) (runtime.Object, schema.GroupVersion, error) {
	switch out.as {
	case asTable:
		acc, _ := meta.Accessor(obj)
		t, err := q.table([]runtime.Object{obj}, metav1.ListMeta{ResourceVersion: acc.GetResourceVersion()}, !noHeaders, out.metaGV())
		return t, out.metaGV(), err
	case asPartialObjectMetadata:
		pom, err := partialObjectMetadata(obj, out.metaGV())
		return pom, out.metaGV(), err
	case asPartialObjectMetadataList:
		return nil, schema.GroupVersion{}, status.New(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
			fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (%s)", q.internalType(q.kind.Kind)), nil)
	}
	return nil, schema.GroupVersion{}, apierrors.NewBadRequest("conversion to " + out.as + " is not supported for a single object")
}

// convertListForOutput renders a list as a Table or a PartialObjectMetadataList; a list asked
// for as one PartialObjectMetadata is a 406, as on the real server.
func (q *request) convertListForOutput(out output, items []runtime.Object, lm metav1.ListMeta) (runtime.Object, schema.GroupVersion, error) {
	switch out.as {
	case asTable:
		t, err := q.table(items, lm, true, out.metaGV())
		return t, out.metaGV(), err
	case asPartialObjectMetadata:
		return nil, schema.GroupVersion{}, status.New(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
			fmt.Sprintf("you requested PartialObjectMetadata, but the requested object is a list (%s)", q.internalType(q.kind.ListKind)), nil)
	}
	list := &metav1.PartialObjectMetadataList{ListMeta: lm, Items: make([]metav1.PartialObjectMetadata, 0, len(items))}
	for _, it := range items {
		// Each item keeps the apiVersion and kind partialObjectMetadata gives it, as the
		// real server's items carry them.
		pom, err := partialObjectMetadata(it, out.metaGV())
		if err != nil {
			return nil, schema.GroupVersion{}, err
		}
		list.Items = append(list.Items, *pom)
	}
	return list, out.metaGV(), nil
}

// internalType is how the real server's messages print the Go type of one of the kind's
// objects: its internal (unversioned) type, *coordination.Lease or *core.NamespaceList.
func (q *scope) internalType(kind string) string {
	pkg := "core"
	if q.kind.Group != "" {
		pkg, _, _ = strings.Cut(q.kind.Group, ".")
	}
	return "*" + pkg + "." + kind
}
