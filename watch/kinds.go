package watch

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// API groups gwdev knows.
const (
	groupGateway             = "gateway.networking.k8s.io"
	groupGatewayExperimental = "gateway.networking.x-k8s.io"
	groupCore                = ""
	groupDiscovery           = "discovery.k8s.io"
)

// kindSpec describes one kind as gwdev stores it in the Snapshot.
type kindSpec struct {
	// kind is the Kind in the Snapshot and in engine.ObjectKey.
	kind string
	// group and version are the apiVersion objects are converted to.
	group, version string
	// namespaced is false for cluster-scoped kinds.
	namespaced bool
	// crd is the embedded CRD file validating this kind ("" for core kinds).
	crd string
	// newObject returns an empty typed object of this kind.
	newObject func() metav1.Object
}

// apiVersion is the apiVersion objects of this kind are stored with.
func (k *kindSpec) apiVersion() string {
	if k.group == "" {
		return k.version
	}
	return k.group + "/" + k.version
}

var (
	kindGatewayClass = &kindSpec{kind: "GatewayClass", group: groupGateway, version: "v1",
		crd: "gateway.networking.k8s.io_gatewayclasses.yaml", newObject: func() metav1.Object { return &gwv1.GatewayClass{} }}
	kindGateway = &kindSpec{kind: "Gateway", group: groupGateway, version: "v1", namespaced: true,
		crd: "gateway.networking.k8s.io_gateways.yaml", newObject: func() metav1.Object { return &gwv1.Gateway{} }}
	kindListenerSet = &kindSpec{kind: "ListenerSet", group: groupGateway, version: "v1", namespaced: true,
		crd: "gateway.networking.k8s.io_listenersets.yaml", newObject: func() metav1.Object { return &gwv1.ListenerSet{} }}
	kindHTTPRoute = &kindSpec{kind: "HTTPRoute", group: groupGateway, version: "v1", namespaced: true,
		crd: "gateway.networking.k8s.io_httproutes.yaml", newObject: func() metav1.Object { return &gwv1.HTTPRoute{} }}
	kindGRPCRoute = &kindSpec{kind: "GRPCRoute", group: groupGateway, version: "v1", namespaced: true,
		crd: "gateway.networking.k8s.io_grpcroutes.yaml", newObject: func() metav1.Object { return &gwv1.GRPCRoute{} }}
	kindTLSRoute = &kindSpec{kind: "TLSRoute", group: groupGateway, version: "v1", namespaced: true,
		crd: "gateway.networking.k8s.io_tlsroutes.yaml", newObject: func() metav1.Object { return &gwv1.TLSRoute{} }}
	kindTCPRoute = &kindSpec{kind: "TCPRoute", group: groupGateway, version: "v1", namespaced: true,
		crd: "gateway.networking.k8s.io_tcproutes.yaml", newObject: func() metav1.Object { return &gwv1.TCPRoute{} }}
	kindUDPRoute = &kindSpec{kind: "UDPRoute", group: groupGateway, version: "v1", namespaced: true,
		crd: "gateway.networking.k8s.io_udproutes.yaml", newObject: func() metav1.Object { return &gwv1.UDPRoute{} }}
	kindReferenceGrant = &kindSpec{kind: "ReferenceGrant", group: groupGateway, version: "v1", namespaced: true,
		crd: "gateway.networking.k8s.io_referencegrants.yaml", newObject: func() metav1.Object { return &gwv1.ReferenceGrant{} }}
	kindBackendTLSPolicy = &kindSpec{kind: "BackendTLSPolicy", group: groupGateway, version: "v1", namespaced: true,
		crd: "gateway.networking.k8s.io_backendtlspolicies.yaml", newObject: func() metav1.Object { return &gwv1.BackendTLSPolicy{} }}

	kindService = &kindSpec{kind: "Service", version: "v1", namespaced: true,
		newObject: func() metav1.Object { return &corev1.Service{} }}
	kindSecret = &kindSpec{kind: "Secret", version: "v1", namespaced: true,
		newObject: func() metav1.Object { return &corev1.Secret{} }}
	kindConfigMap = &kindSpec{kind: "ConfigMap", version: "v1", namespaced: true,
		newObject: func() metav1.Object { return &corev1.ConfigMap{} }}
	kindNamespace = &kindSpec{kind: "Namespace", version: "v1",
		newObject: func() metav1.Object { return &corev1.Namespace{} }}
	kindEndpointSlice = &kindSpec{kind: "EndpointSlice", group: groupDiscovery, version: "v1", namespaced: true,
		newObject: func() metav1.Object { return &discoveryv1.EndpointSlice{} }}
)

// allKinds lists every kind the Snapshot holds.
var allKinds = []*kindSpec{
	kindGatewayClass, kindGateway, kindListenerSet, kindHTTPRoute, kindGRPCRoute,
	kindTLSRoute, kindTCPRoute, kindUDPRoute, kindReferenceGrant, kindBackendTLSPolicy,
	kindService, kindSecret, kindConfigMap, kindNamespace, kindEndpointSlice,
}

// gvk is a parsed apiVersion plus kind, as written in a manifest.
type gvk struct {
	group, version, kind string
}

// parseGVK splits apiVersion into group and version ("v1" is the core group).
func parseGVK(apiVersion, kind string) gvk {
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		return gvk{group: apiVersion[:i], version: apiVersion[i+1:], kind: kind}
	}
	return gvk{version: apiVersion, kind: kind}
}

// servedVersion is one apiVersion/kind gwdev accepts.
type servedVersion struct {
	// spec is the kind the object is converted to.
	spec *kindSpec
	// schemaVersion is the CRD version whose schema validates the object
	// (CRD kinds only).
	schemaVersion string
	// asKind and asAPIVersion, when set, rewrite the object's kind and
	// apiVersion before validation (XListenerSet is validated as a v1
	// ListenerSet).
	asKind, asAPIVersion string
}

// converted reports whether objects of this version are stored under
// another apiVersion or kind.
func (v *servedVersion) converted(g gvk) bool {
	return g.group != v.spec.group || g.version != v.spec.version || g.kind != v.spec.kind
}

// groupVersions lists the versions of each group gwdev knows, known or not
// for a given kind: an unknown version of a known group is a Problem, not a
// Skipped object.
var groupVersions = map[string][]string{
	groupGateway:             {"v1", "v1beta1", "v1alpha2", "v1alpha3"},
	groupGatewayExperimental: {"v1alpha1"},
	groupCore:                {"v1"},
	groupDiscovery:           {"v1"},
	groupGwin:                {"v1"},
}

// crdServedVersions are the versions each Gateway API CRD serves (the
// experimental channel of the embedded CRDs; TestServedVersionsMatchCRDs
// keeps this table honest).
var crdServedVersions = map[*kindSpec][]string{
	kindGatewayClass:     {"v1", "v1beta1"},
	kindGateway:          {"v1", "v1beta1"},
	kindListenerSet:      {"v1"},
	kindHTTPRoute:        {"v1", "v1beta1"},
	kindGRPCRoute:        {"v1"},
	kindTLSRoute:         {"v1", "v1alpha2", "v1alpha3"},
	kindTCPRoute:         {"v1", "v1alpha2"},
	kindUDPRoute:         {"v1", "v1alpha2"},
	kindReferenceGrant:   {"v1", "v1beta1"},
	kindBackendTLSPolicy: {"v1", "v1alpha3"},
}

// registry maps every accepted group/version/kind to how it is loaded.
var registry = buildRegistry()

// kindsByGroup lists the kinds of each group gwdev knows.
var kindsByGroup = map[string]map[string]bool{}

func buildRegistry() map[gvk]*servedVersion {
	r := map[gvk]*servedVersion{}
	add := func(g gvk, v *servedVersion) {
		r[g] = v
		if kindsByGroup[g.group] == nil {
			kindsByGroup[g.group] = map[string]bool{}
		}
		kindsByGroup[g.group][g.kind] = true
	}
	for spec, versions := range crdServedVersions {
		for _, v := range versions {
			add(gvk{spec.group, v, spec.kind}, &servedVersion{spec: spec, schemaVersion: v})
		}
	}
	add(gvk{groupGatewayExperimental, "v1alpha1", "XListenerSet"}, &servedVersion{
		spec: kindListenerSet, schemaVersion: "v1",
		asKind: "ListenerSet", asAPIVersion: kindListenerSet.apiVersion(),
	})
	for _, spec := range []*kindSpec{kindService, kindSecret, kindConfigMap, kindNamespace, kindEndpointSlice} {
		add(gvk{spec.group, spec.version, spec.kind}, &servedVersion{spec: spec})
	}
	for _, pk := range implementationPolicyKinds {
		add(gvk{pk.spec.group, pk.spec.version, pk.spec.kind}, &servedVersion{spec: pk.spec})
	}
	return r
}

// lookupResult says what to do with an object of a given group/version/kind.
type lookupResult int

const (
	lookupServed         lookupResult = iota // load it
	lookupUnknownKind                        // list it in Skipped
	lookupUnknownVersion                     // a Problem: known kind or group, unknown version
)

// lookup finds how to load g.
func lookup(g gvk) (*servedVersion, lookupResult) {
	if v, ok := registry[g]; ok {
		return v, lookupServed
	}
	versions, knownGroup := groupVersions[g.group]
	if !knownGroup {
		return nil, lookupUnknownKind
	}
	if kindsByGroup[g.group][g.kind] {
		return nil, lookupUnknownVersion
	}
	for _, v := range versions {
		if v == g.version {
			return nil, lookupUnknownKind
		}
	}
	return nil, lookupUnknownVersion
}
