package discovery

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"sort"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/leaselab/leaselab/web/api/kinds"
)

// shortNames are the short names the real API server advertises for the kinds leaselab may
// serve (kubectl resolves "ns" and "ev" only through discovery). Leases and LeaseCandidates
// have none.
var shortNames = map[schema.GroupResource][]string{
	{Group: "", Resource: "namespaces"}: {"ns"},
	{Group: "", Resource: "events"}:     {"ev"},
}

// apiGroup is one served API group: its versions in priority order and, per version, the
// kinds served there sorted by resource name.
type apiGroup struct {
	name      string
	versions  []string
	resources map[string][]*kinds.Kind
}

// groupVersion returns the group version string of version v ("v1" for the core group).
func (g *apiGroup) groupVersion(v string) string {
	return schema.GroupVersion{Group: g.name, Version: v}.String()
}

// groupKinds sorts the served kinds into API groups. The core group ("") is returned apart
// (nil when no core kind is served); the named groups keep the order in which their first
// kind appears. Versions are ordered by Kubernetes version priority (v1 before v1beta1
// before v1alpha2), which is also how the real server orders them.
func groupKinds(ks []*kinds.Kind) (core *apiGroup, named []*apiGroup, err error) {
	byName := map[string]*apiGroup{}
	seen := map[string]bool{}
	for _, k := range ks {
		if k == nil {
			return nil, nil, fmt.Errorf("nil kind")
		}
		if k.Resource == "" || k.Kind == "" || len(k.Versions) == 0 {
			return nil, nil, fmt.Errorf("kind %q of group %q: resource, kind and versions are required", k.Kind, k.Group)
		}
		g := byName[k.Group]
		if g == nil {
			g = &apiGroup{name: k.Group, resources: map[string][]*kinds.Kind{}}
			byName[k.Group] = g
			if k.Group == "" {
				core = g
			} else {
				named = append(named, g)
			}
		}
		for _, v := range k.Versions {
			key := k.Group + "/" + v + "/" + k.Resource
			if seen[key] {
				return nil, nil, fmt.Errorf("resource %s served twice in %s", k.Resource, g.groupVersion(v))
			}
			seen[key] = true
			if !slices.Contains(g.versions, v) {
				g.versions = append(g.versions, v)
			}
			g.resources[v] = append(g.resources[v], k)
		}
	}
	for _, g := range byName {
		sort.SliceStable(g.versions, func(i, j int) bool {
			return version.CompareKubeAwareVersionStrings(g.versions[i], g.versions[j]) > 0
		})
		for _, rs := range g.resources {
			sort.Slice(rs, func(i, j int) bool { return rs[i].Resource < rs[j].Resource })
		}
	}
	return core, named, nil
}

// storageVersionHash is the value the real API server advertises in discovery: the first
// eight bytes of sha256("<group>/<storage version>/<Kind>"), base64 encoded. Clients use it
// only to notice storage migrations.
func storageVersionHash(k *kinds.Kind) string {
	sv := k.StorageVersion
	if sv == "" {
		sv = k.Versions[0]
	}
	sum := sha256.Sum256([]byte(k.Group + "/" + sv + "/" + k.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

func verbsOf(k *kinds.Kind) []string {
	if k.Verbs == nil {
		return []string{}
	}
	return slices.Clone(k.Verbs)
}

// apiGroupDoc is the legacy APIGroup document of g. withTypeMeta distinguishes the
// stand-alone /apis/<group> document from an entry of the APIGroupList.
func apiGroupDoc(g *apiGroup, withTypeMeta bool) metav1.APIGroup {
	doc := metav1.APIGroup{Name: g.name}
	if withTypeMeta {
		doc.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
	}
	for _, v := range g.versions {
		doc.Versions = append(doc.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g.groupVersion(v), Version: v})
	}
	doc.PreferredVersion = doc.Versions[0]
	return doc
}

// apiGroupListDoc is the legacy /apis document.
func apiGroupListDoc(groups []*apiGroup) *metav1.APIGroupList {
	doc := &metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   []metav1.APIGroup{},
	}
	for _, g := range groups {
		doc.Groups = append(doc.Groups, apiGroupDoc(g, false))
	}
	return doc
}

// apiResourceListDoc is the legacy /apis/<group>/<version> (or /api/<version>) document. The
// real server leaves apiVersion out of the core group's documents.
func apiResourceListDoc(g *apiGroup, v string) *metav1.APIResourceList {
	doc := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: g.groupVersion(v),
		APIResources: []metav1.APIResource{},
	}
	if g.name == "" {
		doc.APIVersion = ""
	}
	for _, k := range g.resources[v] {
		doc.APIResources = append(doc.APIResources, metav1.APIResource{
			Name:               k.Resource,
			SingularName:       k.Singular,
			Namespaced:         k.Namespaced,
			Kind:               k.Kind,
			Verbs:              verbsOf(k),
			ShortNames:         slices.Clone(shortNames[k.GroupResource()]),
			StorageVersionHash: storageVersionHash(k),
		})
	}
	return doc
}

// apiVersionsDoc is the legacy /api document. serverAddress is where the client reached us.
func apiVersionsDoc(core *apiGroup, serverAddress string) *metav1.APIVersions {
	doc := &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: serverAddress},
		},
	}
	if core != nil {
		doc.Versions = slices.Clone(core.versions)
	}
	return doc
}

// aggregatedDoc is the apidiscovery.k8s.io/v2 document for /api (the core group alone, with
// an empty name) or /apis (every named group).
func aggregatedDoc(groups []*apiGroup) *apidiscoveryv2.APIGroupDiscoveryList {
	doc := &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"},
		Items:    []apidiscoveryv2.APIGroupDiscovery{},
	}
	for _, g := range groups {
		item := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.name}}
		for _, v := range g.versions {
			av := apidiscoveryv2.APIVersionDiscovery{Version: v, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
			for _, k := range g.resources[v] {
				scope := apidiscoveryv2.ScopeCluster
				if k.Namespaced {
					scope = apidiscoveryv2.ScopeNamespace
				}
				av.Resources = append(av.Resources, apidiscoveryv2.APIResourceDiscovery{
					Resource: k.Resource,
					// Like the real server: group and version stay empty when they are those
					// of the enclosing group version.
					ResponseKind:     &metav1.GroupVersionKind{Kind: k.Kind},
					Scope:            scope,
					SingularResource: k.Singular,
					Verbs:            verbsOf(k),
					ShortNames:       slices.Clone(shortNames[k.GroupResource()]),
				})
			}
			item.Versions = append(item.Versions, av)
		}
		doc.Items = append(doc.Items, item)
	}
	return doc
}
