// Package engine is gwdev's Gateway API translation: a pure function from a
// Snapshot of typed objects to a Result holding the same objects with their
// computed status and the routing table the emulator serves. It performs no
// I/O, starts no goroutines, reads no clock and keeps no globals.
//
// The kind registry (Kinds, kinds.go) is the one list of the kinds gwdev
// knows: per kind its stored and served versions, scope, constructor and
// Snapshot slice, and for route kinds the Route interface and the kind's
// translation code. The loader, Snapshot.Each, Translate, the TUI and the
// CLI loop over it; a new kind is one entry plus its translation file.
package engine

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine/table"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// Source is where an object was read from (see table.Source).
type Source = table.Source

// FieldPos is where a field is written (table.FieldPos).
type FieldPos = table.FieldPos

// ObjectKey names one object (see table.ObjectKey).
type ObjectKey = table.ObjectKey

// Snapshot is every object gwdev knows at one moment, typed, converted to the
// newest API version. Older apiVersions are converted by the loader. Objects
// without a namespace are in "default" (the loader fills it in). The engine
// never mutates a Snapshot.
type Snapshot struct {
	GatewayClasses     []*gwv1.GatewayClass
	Gateways           []*gwv1.Gateway
	ListenerSets       []*gwv1.ListenerSet
	HTTPRoutes         []*gwv1.HTTPRoute
	GRPCRoutes         []*gwv1.GRPCRoute
	TLSRoutes          []*gwv1.TLSRoute
	TCPRoutes          []*gwv1.TCPRoute
	UDPRoutes          []*gwv1.UDPRoute
	ReferenceGrants    []*gwv1.ReferenceGrant
	BackendTLSPolicies []*gwv1.BackendTLSPolicy
	// XBackendTrafficPolicies are the experimental BackendTrafficPolicy
	// (xbackendtrafficpolicy.go).
	XBackendTrafficPolicies []*gwxv1a1.XBackendTrafficPolicy
	// XBackends are the experimental backendRef kind (xbackend.go).
	XBackends []*gwxv1a1.XBackend
	// XMeshes are the experimental Mesh objects (GEP-3949).
	XMeshes []*gwxv1a1.XMesh
	// IngressClasses and Ingresses are networking.k8s.io/v1 input, served
	// with ingress-nginx's behaviour (ingress.go).
	IngressClasses []*networkingv1.IngressClass
	Ingresses      []*networkingv1.Ingress
	// XTelemetryPolicies are the experimental TelemetryPolicy
	// (xtelemetrypolicy.go).
	XTelemetryPolicies []*gwxv1a1.XTelemetryPolicy
	// Services are core/v1 Services, held as the engine's Service (the
	// fields gwdev reads; service.go).
	Services   []*Service
	Secrets    []*corev1.Secret
	ConfigMaps []*corev1.ConfigMap
	// ClusterTrustBundles are certificates.k8s.io/v1 CA bundles
	// (cluster-scoped), usable as caCertificateRefs.
	ClusterTrustBundles []*certificatesv1.ClusterTrustBundle
	Namespaces          []*corev1.Namespace
	EndpointSlices      []*discoveryv1.EndpointSlice
	// Pods are core/v1 Pods: the endpoints an XBackend of type
	// EndpointSelector selects by label (xbackend_pods.go).
	Pods []*corev1.Pod
	// ImplementationPolicies are policy resources of implementation
	// profiles (gwin.yandex.cloud/v1 GatewayPolicy, RoutePolicy,
	// ServicePolicy, ListenerSetPolicy), sorted by kind, namespace, name.
	ImplementationPolicies []*ImplementationPolicy

	// Sources maps each object to where it was read from (may be nil).
	Sources map[ObjectKey]Source
	// SourceList, read when Sources is nil, holds where each object was
	// read from, sorted by kind, namespace and name, each key once (nil:
	// none): a one-shot load's sources, packed. For 10,000 HTTPRoutes and
	// 20,000 Services it is 3.1 MB where the map held 9.5 (issue 42).
	// Read both through SourceOf, LookupSource and EachSource.
	SourceList []SourceEntry
}

// SourceEntry is one object's entry of Snapshot.SourceList.
type SourceEntry struct {
	Key    ObjectKey
	Source Source
}

// compareSourceKeys is SourceList's order: kind, namespace, name.
func compareSourceKeys(a, b ObjectKey) int {
	// Not cmp.Or of three cmp.Compare: its arguments are all evaluated,
	// up to six string comparisons where the first usually decides
	// (a translation looks up every route's source this way).
	if c := strings.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// SourceOf returns where the object named by k was read from.
func (s *Snapshot) SourceOf(k ObjectKey) Source {
	src, _ := s.LookupSource(k)
	return src
}

// LookupSource returns where the object named by k was read from, and
// whether s knows.
func (s *Snapshot) LookupSource(k ObjectKey) (Source, bool) {
	switch {
	case s == nil:
		return Source{}, false
	case s.Sources != nil:
		src, ok := s.Sources[k]
		return src, ok
	}
	i, ok := slices.BinarySearchFunc(s.SourceList, k, func(e SourceEntry, k ObjectKey) int { return compareSourceKeys(e.Key, k) })
	if !ok {
		return Source{}, false
	}
	return s.SourceList[i].Source, true
}

// sourceRef is SourceOf as a pointer: to the entry of SourceList, or to a
// copy of the Sources map's (or of an empty Source when s does not know).
// A route's state holds it: 48 bytes fewer each than a copy.
func (s *Snapshot) sourceRef(k ObjectKey) *Source {
	finger := -1
	return s.sourceRefFrom(k, &finger)
}

// sourceRefFrom is sourceRef for a caller that looks up many keys in
// order: finger is where the last one was found in SourceList, and is
// moved (fingerSearch).
func (s *Snapshot) sourceRefFrom(k ObjectKey, finger *int) *Source {
	if s != nil && s.Sources == nil {
		l := s.SourceList
		i := fingerSearch(len(l), *finger, func(i int) bool { return compareSourceKeys(l[i].Key, k) >= 0 })
		if i < len(l) && l[i].Key == k {
			*finger = i
			return &l[i].Source
		}
	}
	src := s.SourceOf(k)
	return &src
}

// EachSource calls f with every object's key and source: Sources' in no
// order, or SourceList's in its order.
func (s *Snapshot) EachSource(f func(ObjectKey, Source)) {
	if s == nil {
		return
	}
	if s.Sources != nil {
		for k, src := range s.Sources {
			f(k, src)
		}
		return
	}
	for _, e := range s.SourceList {
		f(e.Key, e.Source)
	}
}

// itoa is strconv.Itoa, short for the many names built from indexes.
func itoa(n int) string { return strconv.Itoa(n) }
