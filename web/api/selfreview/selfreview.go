// Package selfreview answers `kubectl auth can-i` (SelfSubjectAccessReview) and `kubectl auth
// whoami` (SelfSubjectReview) from the rules every request is judged by: in a workshop they are
// how a participant learns what they may do. Every signed-in identity may create them, as
// RBAC's system:basic-user role allows. Nothing is stored.
package selfreview

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/labstack/echo/v4"

	"github.com/leaselab/leaselab/web/api/mediatype"
	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/status"
)

// Paths of the self reviews kubectl posts.
const (
	accessReviewPath = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	selfReviewPath   = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
)

var reviewCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	if err := authorizationv1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := authenticationv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(s)
}()

// Subject is who a review is about.
type Subject struct {
	Name, UID string
	Groups    []string
}

// Judge is the server's authorization, as the reviews report it.
type Judge interface {
	// Who returns the caller of a request, from its context.
	Who(ctx context.Context) Subject
	// Allowed decides ri for the caller of ctx as the server would, and says why.
	Allowed(ctx context.Context, ri request.Info) (bool, string)
}

// Register serves the self reviews on e, judged by j; with a nil j (an open server on
// loopback) everything is allowed to everyone, as with kube-apiserver's AlwaysAllow.
func Register(e *echo.Echo, j Judge) {
	if j == nil {
		j = open{}
	}
	e.POST(accessReviewPath, func(c echo.Context) error { return accessReview(c, j) })
	e.POST(selfReviewPath, func(c echo.Context) error { return selfReview(c, j) })
}

// Reviewable says whether ri is the creation of a self review, which everyone signed in may do.
func Reviewable(ri request.Info) bool {
	return ri.Verb == "create" && ri.Namespace == "" && ri.Name == "" &&
		(ri.Group == "authorization.k8s.io" && ri.Resource == "selfsubjectaccessreviews" ||
			ri.Group == "authentication.k8s.io" && ri.Resource == "selfsubjectreviews")
}

// open is the judge of a server without tokens: an anonymous caller allowed everything.
type open struct{}

func (open) Who(context.Context) Subject {
	return Subject{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}
}

func (open) Allowed(context.Context, request.Info) (bool, string) {
	return true, "leaselab: a server without tokens, on loopback, allows everything"
}

func accessReview(c echo.Context, j Judge) error {
	var review authorizationv1.SelfSubjectAccessReview
	if err := decodeReview(c.Request(), &review, authorizationv1.SchemeGroupVersion); err != nil {
		return fail(c, err)
	}
	ctx := c.Request().Context()
	review.Status = authorizationv1.SubjectAccessReviewStatus{}
	switch spec := review.Spec; {
	case spec.ResourceAttributes != nil:
		ra := spec.ResourceAttributes
		review.Status.Allowed, review.Status.Reason = j.Allowed(ctx, request.Info{IsResourceRequest: true, Verb: ra.Verb,
			Namespace: ra.Namespace, Group: ra.Group, Resource: ra.Resource, Subresource: ra.Subresource, Name: ra.Name})
	case spec.NonResourceAttributes != nil:
		review.Status.Allowed, review.Status.Reason = j.Allowed(ctx, request.Info{Verb: spec.NonResourceAttributes.Verb,
			Path: spec.NonResourceAttributes.Path})
	default:
		return fail(c, apierrors.NewInvalid(schema.GroupKind{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview"}, "",
			field.ErrorList{field.Invalid(field.NewPath("spec"), "", "exactly one of nonResourceAttributes or resourceAttributes must be specified")}))
	}
	return writeReview(c, &review, authorizationv1.SchemeGroupVersion)
}

func selfReview(c echo.Context, j Judge) error {
	var review authenticationv1.SelfSubjectReview
	if err := decodeReview(c.Request(), &review, authenticationv1.SchemeGroupVersion); err != nil {
		return fail(c, err)
	}
	s := j.Who(c.Request().Context())
	groups := append([]string(nil), s.Groups...)
	if s.Name != "system:anonymous" {
		groups = append(groups, "system:authenticated") // as kube-apiserver adds it
	}
	review.Status.UserInfo = authenticationv1.UserInfo{Username: s.Name, UID: s.UID, Groups: groups}
	return writeReview(c, &review, authenticationv1.SchemeGroupVersion)
}

func fail(c echo.Context, err error) error {
	status.Write(c.Response(), c.Request(), err, status.Filter)
	return nil
}

// decodeReview reads a review from the request body in any format the codecs know.
func decodeReview(r *http.Request, into runtime.Object, gv schema.GroupVersion) error {
	ct := r.Header.Get("Content-Type")
	mt, err := mediatype.Parse(ct)
	if ct == "" || err != nil {
		mt, _ = mediatype.Parse(runtime.ContentTypeJSON)
	}
	info, ok := runtime.SerializerInfoForMediaType(reviewCodecs.SupportedMediaTypes(), mt.Type+"/"+mt.Subtype)
	if !ok {
		return status.New(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
			"the body of the request was in an unknown format - accepted media types include: "+strings.Join(mediaTypes(), ", "), nil)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if _, _, err := reviewCodecs.DecoderToVersion(info.Serializer, gv).Decode(body, nil, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// writeReview answers 201 with the review, in the first format the client accepts (JSON when
// it names none the codecs know).
func writeReview(c echo.Context, obj runtime.Object, gv schema.GroupVersion) error {
	info, _ := runtime.SerializerInfoForMediaType(reviewCodecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	for _, mt := range mediatype.ParseAccept(c.Request().Header.Get("Accept")) {
		if i, ok := runtime.SerializerInfoForMediaType(reviewCodecs.SupportedMediaTypes(), mt.Type+"/"+mt.Subtype); ok {
			info = i
			break
		}
	}
	var buf bytes.Buffer
	if err := reviewCodecs.EncoderForVersion(info.Serializer, gv).Encode(obj, &buf); err != nil {
		return fail(c, apierrors.NewInternalError(err))
	}
	return c.Blob(http.StatusCreated, info.MediaType, buf.Bytes())
}

// mediaTypes are the formats a review can be written in.
func mediaTypes() []string {
	var types []string
	for _, info := range reviewCodecs.SupportedMediaTypes() {
		types = append(types, info.MediaType)
	}
	return types
}
