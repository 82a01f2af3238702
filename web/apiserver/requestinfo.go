package apiserver

import (
	"net/http"
	"strings"
)

// RequestInfo is what a request path and method say about an API request, in the terms the
// real API server uses (k8s.io/apiserver's RequestInfo): which resource, which object, which verb.
type RequestInfo struct {
	Group, Version string
	Namespace      string
	Resource       string
	Name           string
	Subresource    string
	// Verb is one of get, list, watch, create, update, patch, delete, deletecollection.
	Verb string
	// LegacyWatch is set for the deprecated /watch/ paths.
	LegacyWatch bool
}

// parseRequestInfo splits an API path (/api/v1/... or /apis/group/version/...). It reports false
// when the path is not a resource path at all; the caller answers 404 then.
func parseRequestInfo(method, path string, watchParam bool) (RequestInfo, bool) {
	var ri RequestInfo
	parts := splitPath(path)
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		ri.Version, parts = parts[1], parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		ri.Group, ri.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return ri, false
	}
	if len(parts) > 0 && parts[0] == "watch" {
		ri.LegacyWatch = true
		parts = parts[1:]
	}
	if len(parts) == 0 {
		return ri, false
	}
	// namespaces/{ns}/{resource}... is a namespaced resource; namespaces and namespaces/{name}
	// address the Namespace objects themselves.
	if parts[0] == "namespaces" && len(parts) >= 3 {
		ri.Namespace, parts = parts[1], parts[2:]
	}
	ri.Resource = parts[0]
	if len(parts) > 1 {
		ri.Name = parts[1]
	}
	if len(parts) > 2 {
		ri.Subresource = strings.Join(parts[2:], "/")
	}

	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case ri.LegacyWatch || watchParam:
			ri.Verb = "watch"
		case ri.Name == "":
			ri.Verb = "list"
		default:
			ri.Verb = "get"
		}
	case http.MethodPost:
		ri.Verb = "create"
	case http.MethodPut:
		ri.Verb = "update"
	case http.MethodPatch:
		ri.Verb = "patch"
	case http.MethodDelete:
		if ri.Name == "" {
			ri.Verb = "deletecollection"
		} else {
			ri.Verb = "delete"
		}
	default:
		ri.Verb = ""
	}
	return ri, true
}

// NewRequestInfo parses an API request, for middleware that decides on it before the API
// server answers it (authorization, limits). It reports false for paths outside the API.
func NewRequestInfo(r *http.Request) (RequestInfo, bool) {
	return parseRequestInfo(r.Method, r.URL.Path, queryBool(r.URL.Query()["watch"]))
}

// queryBool reads a boolean query parameter as the real server's parameter conversion does:
// present with any first value but "0" or "false" (in any case), the empty one included, is true.
func queryBool(values []string) bool {
	return len(values) > 0 && values[0] != "0" && !strings.EqualFold(values[0], "false")
}

func splitPath(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}
