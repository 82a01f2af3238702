// Package request holds what the server's front door learns about a request before any
// handler runs, and carries it in the request's context: what the request addresses (Info,
// the terms the real API server's RequestInfo uses) and whether the server's own code made it
// in this process (InProcess).
//
// One middleware parses Info once per request (web.Server's chain); authentication,
// authorization, the API handlers and the discovery handlers read it from the context.
package request

import (
	"context"
	"net/http"
	"strconv"
	"strings"
)

// Info is what a request's path, method and watch parameter say: which resource, which
// object, which verb.
type Info struct {
	// IsResourceRequest is true for a path under /api or /apis that names a resource; false for
	// everything else (discovery documents, /version, health checks, the browser screens).
	IsResourceRequest bool
	// Path is the request's URL path.
	Path string
	// Verb is, for a resource request, one of get, list, watch, create, update, patch, delete and
	// deletecollection, or "" for a method the API has no verb for; for any other request, the
	// method in lower case.
	Verb string

	Group, Version string
	Namespace      string
	Resource       string
	Name           string
	Subresource    string
	// LegacyWatch is set for the deprecated /watch/ paths.
	LegacyWatch bool
}

// Parse reads the Info of a request from its method, path and watch parameter.
func Parse(r *http.Request) Info {
	ri, ok := parseResource(r.Method, r.URL.Path, r.URL.Query()["watch"])
	if !ok {
		return Info{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	}
	ri.IsResourceRequest = true
	ri.Path = r.URL.Path
	return ri
}

// parseResource splits a resource path (/api/v1/... or /apis/group/version/...) and names its
// verb. It reports false when the path names no resource.
func parseResource(method, path string, watchParam []string) (Info, bool) {
	var ri Info
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
	ri.Verb = verb(method, ri, queryBool(watchParam))
	return ri, true
}

// verb is the API verb of a method on a resource path; "" for a method without one.
func verb(method string, ri Info, watchParam bool) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		// The watch parameter makes a watch of a collection only: on a named object's path
		// the real server serves a get and ignores it (the /watch/ paths watch either).
		switch {
		case ri.LegacyWatch, ri.Name == "" && watchParam:
			return "watch"
		case ri.Name == "":
			return "list"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if ri.Name == "" {
			return "deletecollection"
		}
		return "delete"
	}
	return ""
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

type infoKey struct{}

// WithInfo returns ctx carrying ri.
func WithInfo(ctx context.Context, ri Info) context.Context {
	return context.WithValue(ctx, infoKey{}, ri)
}

// InfoFrom returns the Info the front door put in ctx.
func InfoFrom(ctx context.Context) (Info, bool) {
	ri, ok := ctx.Value(infoKey{}).(Info)
	return ri, ok
}

// InfoOf returns the Info of r: the one its context carries, or, for a handler served without
// the server's middleware chain (a test of one package), r parsed now.
func InfoOf(r *http.Request) Info {
	if ri, ok := InfoFrom(r.Context()); ok {
		return ri
	}
	return Parse(r)
}

type inProcessKey struct{}

// WithInProcess returns ctx marked as the context of a request the server's own code makes in
// this process (web/api/inprocess). A context value cannot come over the network: an outside
// client cannot claim the mark.
func WithInProcess(ctx context.Context) context.Context {
	return context.WithValue(ctx, inProcessKey{}, true)
}

// InProcess reports whether ctx is that of a request made in this process (WithInProcess).
func InProcess(ctx context.Context) bool {
	v, _ := ctx.Value(inProcessKey{}).(bool)
	return v
}

// Pretty reports whether r asks for indented output, as the real server decides it:
// ?pretty=true, or no (or an empty) pretty parameter and the User-Agent of a command-line tool
// or a browser.
func Pretty(r *http.Request) bool {
	if v := r.URL.Query().Get("pretty"); v != "" {
		b, _ := strconv.ParseBool(v)
		return b
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}
