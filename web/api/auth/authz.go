package auth

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/selfreview"
)

// readVerbs are the verbs every authenticated identity has everywhere.
var readVerbs = map[string]bool{"get": true, "list": true, "watch": true}

// Authorize decides an API request: instructors may do everything; participants may read
// everything, ask what they may do (the self reviews) and write namespaced objects in their own
// namespace and in ArenaNamespace only.
// A refusal is a *apierrors.StatusError worded as RBAC's (403 Forbidden).
func Authorize(u User, ri request.Info) error {
	if u.Role == RoleInstructor || readVerbs[ri.Verb] || selfreview.Reviewable(ri) {
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

// AuthorizePath decides a request for a non-resource URL (discovery, OpenAPI, /version): anyone
// signed in may read them; nothing else is allowed but to the instructor. verb is the HTTP
// method in lower case, as a SelfSubjectAccessReview names it.
func AuthorizePath(u User, verb, path string) error {
	if u.Role == RoleInstructor || safeMethod(strings.ToUpper(verb)) {
		return nil
	}
	return ForbiddenPath(u, verb, path)
}

// ForbiddenPath is the real server's 403 for a non-resource URL.
func ForbiddenPath(u User, verb, path string) *apierrors.StatusError {
	return apierrors.NewForbidden(schema.GroupResource{}, "", plainError(fmt.Sprintf("User %q cannot %s path %q", u.Name, verb, path)))
}

type plainError string

func (e plainError) Error() string { return string(e) }

// The workshop's rules as the self reviews report them (kubectl auth can-i, kubectl auth whoami).
var _ selfreview.Judge = (*Auth)(nil)

// Who is the caller of a request.
func (a *Auth) Who(ctx context.Context) selfreview.Subject {
	u, _ := UserFrom(ctx)
	return selfreview.Subject{Name: u.Name, UID: u.UID, Groups: u.Groups}
}

// Allowed decides ri for the caller of ctx as Authorize does (a non-resource request as the
// middleware does), with the reason kubectl auth can-i shows.
func (a *Auth) Allowed(ctx context.Context, ri request.Info) (bool, string) {
	u, _ := UserFrom(ctx)
	var err error
	if ri.IsResourceRequest {
		err = Authorize(u, ri)
	} else {
		err = AuthorizePath(u, ri.Verb, ri.Path)
	}
	if err != nil {
		msg := err.Error()
		if _, reason, ok := strings.Cut(msg, ": "); ok {
			return false, reason
		}
		return false, msg
	}
	switch {
	case u.Role == RoleInstructor:
		return true, "leaselab: the instructor may do everything"
	case readVerbs[ri.Verb] || !ri.IsResourceRequest:
		return true, "leaselab: every identity may read everything"
	case selfreview.Reviewable(ri):
		return true, "leaselab: every identity may ask what it may do"
	}
	return true, fmt.Sprintf("leaselab: participants write in their namespace %q and in %q", u.Namespace, ArenaNamespace)
}
