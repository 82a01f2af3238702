package apiserver

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// listOptions reads and validates the list and watch query parameters.
func (q *request) listOptions() (*metainternalversion.ListOptions, error) {
	opts := &metainternalversion.ListOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q.r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if q.ri.Verb == "watch" {
		opts.Watch = true
	}
	if errs := metainternalversionvalidation.ValidateListOptions(opts, true); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	if opts.FieldSelector == nil {
		opts.FieldSelector = fields.Everything()
	}
	if opts.LabelSelector == nil {
		opts.LabelSelector = labels.Everything()
	}
	if err := q.kind.CheckFieldSelector(opts.FieldSelector); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return opts, nil
}

func (q *request) get() error {
	out, err := q.negotiateOutput(true)
	if err != nil {
		return err
	}
	var opts metav1.GetOptions
	if err := q.decodeParams(&opts); err != nil {
		return err
	}
	obj, err := q.objects.Get(q.r.Context(), q.ri.Namespace, q.ri.Name, &opts)
	if err != nil {
		return err
	}
	return q.respond(http.StatusOK, out, obj)
}

func (q *request) list() error {
	out, err := q.negotiateOutput(true)
	if err != nil {
		return err
	}
	opts, err := q.listOptions()
	if err != nil {
		return err
	}
	items, meta, err := q.objects.List(q.r.Context(), q.ri.Namespace, opts)
	if err != nil {
		return err
	}
	if out.as != asObject {
		conv, gv, err := q.convertListForOutput(out, items, meta)
		if err != nil {
			return err
		}
		q.writeObject(http.StatusOK, out, conv, gv)
		return nil
	}
	list, err := q.newList(items, meta)
	if err != nil {
		return err
	}
	q.writeObject(http.StatusOK, out, list, q.gv)
	return nil
}

// newList builds the list object of the request's version.
func (q *scope) newList(items []runtime.Object, lm metav1.ListMeta) (runtime.Object, error) {
	list, err := q.s.reg.Scheme.New(q.gv.WithKind(q.kind.ListKind))
	if err != nil {
		return nil, err
	}
	versioned := make([]runtime.Object, 0, len(items))
	for _, it := range items {
		v, err := q.toVersion(it)
		if err != nil {
			return nil, err
		}
		v.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		versioned = append(versioned, v)
	}
	if err := meta.SetList(list, versioned); err != nil {
		return nil, err
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	la.SetResourceVersion(lm.ResourceVersion)
	la.SetContinue(lm.Continue)
	la.SetRemainingItemCount(lm.RemainingItemCount)
	return list, nil
}
