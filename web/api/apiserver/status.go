package apiserver

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/leaselab/leaselab/web/api/status"
)

// errNotFoundPath is the answer for a path under an API prefix that names no served resource.
func errNotFoundPath() *apierrors.StatusError { return status.PathNotFound() }

// errMethodNotAllowed is the router's answer for a method it has no route for on a path it knows.
func errMethodNotAllowed() *apierrors.StatusError { return status.NoRouteForMethod() }

// errRouterNotAcceptable is the router's 406 for an Accept header that allows none of the
// media types the route produces.
func errRouterNotAcceptable(produces []string) *apierrors.StatusError {
	return status.New(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"406: Not Acceptable\n\nAvailable representations: "+strings.Join(produces, ", "), &metav1.StatusDetails{})
}

// errRouterUnsupportedMediaType is the router's 415 for a PATCH whose Content-Type is no patch
// type, worded differently from a handler's (errUnsupportedBody).
func errRouterUnsupportedMediaType() *apierrors.StatusError {
	return status.New(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, "415: Unsupported Media Type", &metav1.StatusDetails{})
}

// errUnsupportedBody is a handler's 415 for a body in a format it does not decode.
func errUnsupportedBody(media []string) *apierrors.StatusError {
	return status.New(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+strings.Join(media, ", "), nil)
}

// errJSONPatchFailed is the 422 of a JSON patch that does not apply to the object.
func errJSONPatchFailed() *apierrors.StatusError {
	return status.New(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "the server rejected our request due to an error in our request", &metav1.StatusDetails{})
}
