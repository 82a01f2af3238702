package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/store"
	"github.com/leaselab/leaselab/web/api/status"
)

// InternalError is a plain 500 with an empty reason, as the real server answers errors that
// are not Status errors.
func InternalError(message string) *apierrors.StatusError {
	return status.New(http.StatusInternalServerError, "", message, nil)
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
		return Modified(gr, name)
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

// Modified is the 409 of a write against an object that changed since the client read it,
// worded as the real server's.
func Modified(gr schema.GroupResource, name string) *apierrors.StatusError {
	return apierrors.NewConflict(gr, name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

// errTooLargeResourceVersion is the 504 of a read at a revision the store has not reached, as
// the real server's watch cache answers it.
func errTooLargeResourceVersion(rv, current int64) *apierrors.StatusError {
	return status.New(http.StatusGatewayTimeout, metav1.StatusReasonTimeout,
		fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", rv, current),
		&metav1.StatusDetails{
			Causes:            []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}},
			RetryAfterSeconds: 1,
		})
}
