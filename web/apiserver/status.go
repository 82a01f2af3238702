package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/store"
)

// statusError builds a Status error for the cases apimachinery has no constructor for.
func statusError(code int32, reason metav1.StatusReason, message string, details *metav1.StatusDetails) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reason,
		Message: message,
		Details: details,
	}}
}

// errNotFoundPath is the answer for a path under an API prefix that names no served resource.
func errNotFoundPath() *apierrors.StatusError {
	return statusError(http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource", &metav1.StatusDetails{})
}

func errMethodNotAllowed() *apierrors.StatusError {
	return statusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "the server does not allow this method on the requested resource", &metav1.StatusDetails{})
}

// internalError is a plain 500 with an empty reason, as the real server answers errors that
// are not Status errors.
func internalError(message string) *apierrors.StatusError {
	return statusError(http.StatusInternalServerError, "", message, nil)
}

// preconditionConflict words a failed storage precondition (the uid of an update) as the real
// server does: a Conflict whose message embeds the storage error.
func preconditionConflict(gr schema.GroupResource, ns, name, what, want, got string) *apierrors.StatusError {
	key := "/registry/" + gr.Resource + "/"
	if ns != "" {
		key += ns + "/"
	}
	key += name
	return apierrors.NewConflict(gr, name, fmt.Errorf(
		"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: %s in precondition: %s, %s in object meta: %s",
		key, what, want, what, got))
}

// storeError maps a store error to the Status the real API server sends for the same situation.
func storeError(err error, gr schema.GroupResource, name string) error {
	var ce *store.CompactedError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(err, store.ErrExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(err, store.ErrConflict):
		return apierrors.NewConflict(gr, name, errors.New(conflictMessage))
	case errors.As(err, &ce):
		return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", ce.Requested, ce.Compacted))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError("request did not complete within the allowed duration", 0)
	case errors.Is(err, store.ErrClosed):
		return apierrors.NewServiceUnavailable("the server is shutting down")
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		return se
	}
	return apierrors.NewInternalError(err)
}

const conflictMessage = "the object has been modified; please apply your changes to the latest version and try again"

// toStatus turns any error into the Status the client receives, kind and apiVersion set.
func toStatus(err error) *metav1.Status {
	var st metav1.Status
	var as apierrors.APIStatus
	if errors.As(err, &as) {
		st = as.Status()
		if st.Status == "" {
			st.Status = metav1.StatusFailure
		}
	} else {
		st = apierrors.NewInternalError(err).ErrStatus
	}
	st.Kind, st.APIVersion = "Status", "v1"
	return &st
}
