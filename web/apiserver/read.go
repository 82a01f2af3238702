package apiserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

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

	"github.com/leaselab/leaselab/store"
)

// tooLargeWait is how long a read at a future resourceVersion waits for the store to catch up
// before answering 504, as the real server's watch cache does.
const tooLargeWait = 3 * time.Second

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

// parseRV parses a resourceVersion parameter; "" and "0" are 0.
func parseRV(rv string) (int64, error) {
	if rv == "" || rv == "0" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 63)
	if err != nil {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q: %v", rv, err))
	}
	return int64(n), nil
}

// waitForRevision makes a "not older than rv" read wait until the store has reached rv, and
// answers 504 as the real server does when it does not get there in time.
func (s *Server) waitForRevision(ctx context.Context, gr schema.GroupResource, rv int64) error {
	if rv == 0 {
		return nil
	}
	deadline := time.Now().Add(tooLargeWait)
	for {
		cur, _, err := s.store.Revision(ctx)
		if err != nil {
			return storeError(err, gr, "")
		}
		if cur >= rv {
			return nil
		}
		if time.Now().After(deadline) {
			return errTooLargeResourceVersion(rv, cur)
		}
		select {
		case <-ctx.Done():
			return storeError(ctx.Err(), gr, "")
		case <-time.After(20 * time.Millisecond):
		}
	}
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

// inconsistentContinue is the real server's answer to a continue token whose revision was
// compacted; the Status carries a token to go on at the latest revision.
const inconsistentContinue = "The provided continue parameter is too old to display a consistent list result. " +
	"You can start a new list without the continue parameter, or use the continue token in this response to " +
	"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent " +
	"list - objects that were created, modified, or deleted between the time the first chunk was returned " +
	"and now may show up in the list."

// continueToken is the opaque continue token, in the real server's shape: the revision every
// page is read at and the key to start after.
type continueToken struct {
	APIVersion string `json:"v"`
	RV         int64  `json:"rv"`
	Start      string `json:"start"`
}

func encodeContinue(rv int64, after store.Key) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", RV: rv, Start: after.Namespace + "/" + after.Name + "\x00"})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(token string) (int64, store.Key, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, store.Key{}, fmt.Errorf("continue key is not valid: %v", err)
	}
	var t continueToken
	if err := json.Unmarshal(b, &t); err != nil {
		return 0, store.Key{}, fmt.Errorf("continue key is not valid: %v", err)
	}
	if t.APIVersion != "meta.k8s.io/v1" {
		return 0, store.Key{}, fmt.Errorf("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	if t.RV == 0 {
		// A negative revision is the real server's token for "continue at the latest
		// revision", which it hands out when the token's own revision was compacted.
		return 0, store.Key{}, fmt.Errorf("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	start, ok := strings.CutSuffix(t.Start, "\x00")
	ns, name, found := strings.Cut(start, "/")
	if !ok || !found || name == "" {
		return 0, store.Key{}, fmt.Errorf("continue key is not valid: bad start key %q", t.Start)
	}
	return t.RV, store.Key{Namespace: ns, Name: name}, nil
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
	if out.as == asTable || out.as == asPartialObjectMetadataList {
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
func (q *request) newList(items []runtime.Object, lm metav1.ListMeta) (runtime.Object, error) {
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
