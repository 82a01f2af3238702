// Package upstream puts leaselab in front of a Kubernetes API server: the forwarder sends the
// coordination API's requests (Leases, LeaseCandidates, their watches, Namespaces, Events and
// the discovery clients need) to the cluster with the kubeconfig's credentials, after
// leaselab's own authentication and authorization, and answers every other API path 404; the
// mirror lists and watches the cluster as an informer does and writes each object into the
// local store as the cluster has it, so that the screens, the timeline, the split-brain judge
// and recordings read the mirror as they read leaselab's own objects.
//
// The browser screens read the mirror through MirrorPrefix (a read-only view of the local API
// handlers), since the resourceVersions the pages are rendered at are the local store's.
package upstream

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
)

// Cluster is the API server leaselab stands in front of, as a kubeconfig names it.
type Cluster struct {
	// REST carries the server's address and the credentials of the kubeconfig's user: tokens,
	// client certificates, exec plugins, whatever client-go supports.
	REST *rest.Config
	// User names the kubeconfig's identity in messages (its user entry, or the context).
	User string
	// Namespaces restricts forwarding and the mirror to these namespaces; empty: every one.
	Namespaces []string
}

// Server is the cluster's address, for messages and the screens.
func (c Cluster) Server() string {
	u, _, err := rest.DefaultServerUrlFor(c.REST)
	if err != nil {
		return c.REST.Host
	}
	return u.String()
}

// allows says whether ns is within Namespaces.
func (c Cluster) allows(ns string) bool {
	return len(c.Namespaces) == 0 || slices.Contains(c.Namespaces, ns)
}

// namespaceList is Namespaces for messages.
func (c Cluster) namespaceList() string { return strings.Join(c.Namespaces, ", ") }

// baseURL is the cluster's URL that request paths are appended to (a server behind a path
// prefix keeps it).
func (c Cluster) baseURL() (*url.URL, error) {
	u, _, err := rest.DefaultServerUrlFor(c.REST)
	if err != nil {
		return nil, fmt.Errorf("upstream server %q: %w", c.REST.Host, err)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}
