package auth

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/web/request"
)

// readVerbs are the verbs every authenticated identity has everywhere.
var readVerbs = map[string]bool{"get": true, "list": true, "watch": true}

// Authorize decides an API request: instructors may do everything; participants may read
// everything and write namespaced objects in their own namespace and in ArenaNamespace only.
// A refusal is a *apierrors.StatusError worded as RBAC's (403 Forbidden).
func Authorize(u User, ri request.Info) error {
	if u.Role == RoleInstructor || readVerbs[ri.Verb] {
		return nil
	}
	if ri.Namespace != "" && (ri.Namespace == u.Namespace || ri.Namespace == ArenaNamespace) {
		return nil
	}
	reason := ""
	if u.Role == RoleParticipant && u.Namespace != "" {
		reason = fmt.Sprintf("participants write only in their namespace %q and in %q", u.Namespace, ArenaNamespace)
	}
	return Forbidden(u, ri, reason)
}

// Forbidden builds the real server's 403 for a resource request: `leases.coordination.k8s.io
// "demo" is forbidden: User "alice" cannot create resource "leases" in API group
// "coordination.k8s.io" in the namespace "default"`, with reason appended after ": ".
func Forbidden(u User, ri request.Info, reason string) *apierrors.StatusError {
	resource := ri.Resource
	if ri.Subresource != "" {
		resource += "/" + ri.Subresource
	}
	var b strings.Builder
	fmt.Fprintf(&b, "User %q cannot %s resource %q in API group %q", u.Name, ri.Verb, resource, ri.Group)
	if ri.Namespace != "" {
		fmt.Fprintf(&b, " in the namespace %q", ri.Namespace)
	} else {
		b.WriteString(" at the cluster scope")
	}
	if reason != "" {
		b.WriteString(": " + reason)
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: ri.Group, Resource: ri.Resource}, ri.Name, plainError(b.String()))
}

// ForbiddenPath is the real server's 403 for a non-resource URL.
func ForbiddenPath(u User, verb, path string) *apierrors.StatusError {
	return apierrors.NewForbidden(schema.GroupResource{}, "", plainError(fmt.Sprintf("User %q cannot %s path %q", u.Name, verb, path)))
}

type plainError string

func (e plainError) Error() string { return string(e) }
