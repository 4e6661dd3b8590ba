package engine

import (
	"cmp"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// Kind is one entry of the kind registry: what gwdev knows about a kind
// outside its translation code. The loader, the engine, the TUI and the CLI
// all loop over Kinds() instead of listing kinds themselves, so a new kind is
// one entry here plus its translation file.
type Kind struct {
	// Kind is the Kind in manifests and in ObjectKey ("HTTPRoute"). It is ""
	// for the entry holding ImplementationPolicies, whose objects carry their
	// own kinds (see OwnKinds).
	Kind string
	// Group and Version are the apiVersion objects are stored with; older
	// served versions are converted to it on load.
	Group, Version string
	// Resource is the plural resource name ("httproutes"; "" : none).
	Resource string
	// Namespaced is false for cluster-scoped kinds.
	Namespaced bool
	// ServedVersions are the versions of Group gwdev accepts for the kind,
	// Version first (nil: Version only).
	ServedVersions []string
	// Aliases are other group/version/kinds that are loaded as this kind
	// (the experimental XListenerSet is a ListenerSet).
	Aliases []schema.GroupVersionKind
	// Status is true for kinds Translate writes status into: each object of
	// a Result then is a shallow copy of its own.
	Status bool
	// OwnKinds is true when the entry holds objects of several kinds, each
	// keyed by the kind it carries (ImplementationPolicies).
	OwnKinds bool
	// RouteProtocols are the listener protocols routes of this kind attach
	// to (nil: not a route kind).
	RouteProtocols []gwv1.ProtocolType
	// Family is what routes of this kind route ("": not a route kind).
	Family RouteFamily
	// GRPC is true for a kind whose requests are gRPC calls, spoken to
	// backends over HTTP/2 (GRPCRoute).
	GRPC bool
	// Policy, for a policy kind (GEP-713: BackendTLSPolicy,
	// XBackendTrafficPolicy, XTelemetryPolicy), is what its spec.targetRefs
	// may name (nil: not a policy kind). Profiles' policy kinds are answered
	// by PolicyOf too.
	Policy *PolicyTargets

	ops kindOps
}

// kindOps are the typed operations of a Kind, implemented once by typedKind.
type kindOps interface {
	newObject() metav1.Object
	each(s *Snapshot, k *Kind, fn func(ObjectKey, metav1.Object))
	// samePrefix reports whether prev starts with the kind's objects of s
	// (pointer equality), and how many those are.
	samePrefix(s *Snapshot, prev []metav1.Object) (n int, same bool)
	add(s *Snapshot, o metav1.Object) bool
	hold(o metav1.Object) metav1.Object
	copyTo(out, in *Snapshot, k *Kind)
	route(k *Kind, o metav1.Object) Route
}

// APIVersion is the apiVersion objects of the kind are stored with.
func (k *Kind) APIVersion() string {
	return schema.GroupVersion{Group: k.Group, Version: k.Version}.String()
}

// GroupVersionKind is the kind's stored group, version and kind.
func (k *Kind) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
}

// Versions are the served versions of the kind (ServedVersions, or Version).
func (k *Kind) Versions() []string {
	if len(k.ServedVersions) == 0 {
		return []string{k.Version}
	}
	return k.ServedVersions
}

// ExperimentalGroup is the Gateway API's group of experimental kinds
// (XListenerSet, XBackendTrafficPolicy…).
const ExperimentalGroup = "gateway.networking.x-k8s.io"

// CRD is the file name of the Gateway API CustomResourceDefinition of the
// kind in the gateway-api module's config/crd/experimental
// ("gateway.networking.k8s.io_httproutes.yaml"), which the loader embeds and
// validates against; "" for kinds outside the Gateway API groups.
func (k *Kind) CRD() string {
	if (k.Group != Group && k.Group != ExperimentalGroup) || k.Resource == "" {
		return ""
	}
	return k.Group + "_" + k.Resource + ".yaml"
}

// New returns an empty object of the Go type the kind's manifests decode
// into: the kind's Kubernetes type (corev1.Service for Service, which a
// Snapshot holds as the engine's own Service; see Hold).
func (k *Kind) New() metav1.Object { return k.ops.newObject() }

// Hold returns o, an object of the kind decoded into New's type, as the
// kind's Snapshot slice holds it: o itself, or for a kind held in a type of
// the engine's own (Service) o converted, which o is then part of and must
// not be written. Any other object is returned as it is.
func (k *Kind) Hold(o metav1.Object) metav1.Object { return k.ops.hold(o) }

// Each calls fn for every object of the kind in s, in stored order.
func (k *Kind) Each(s *Snapshot, fn func(ObjectKey, metav1.Object)) { k.ops.each(s, k, fn) }

// Add appends o to the Snapshot slice of the kind and reports whether o is
// of the kind's Go type, or of New's, which it converts (Hold) (false: s is
// unchanged).
func (k *Kind) Add(s *Snapshot, o metav1.Object) bool { return k.ops.add(s, o) }

// IsRoute reports whether the kind is a route kind.
func (k *Kind) IsRoute() bool { return len(k.RouteProtocols) > 0 }

// Route returns o seen through the Route interface (nil: not a route kind,
// or o is not of the kind's type).
func (k *Kind) Route(o metav1.Object) Route { return k.ops.route(k, o) }

// RouteFamily is what routes of a kind route, which decides how they are
// compiled, attached and served.
type RouteFamily string

const (
	// RouteFamilyRequest routes HTTP requests (gRPC calls are HTTP/2
	// requests) by hostname, path, method and headers: HTTPRoute, GRPCRoute.
	RouteFamilyRequest RouteFamily = "request"
	// RouteFamilySNI routes TLS connections by their SNI: TLSRoute.
	RouteFamilySNI RouteFamily = "sni"
	// RouteFamilyStream forwards every connection (TCP) or datagram (UDP)
	// of a listener: TCPRoute, UDPRoute.
	RouteFamilyStream RouteFamily = "stream"
)

// The route kinds, by name, for code that builds objects or names a kind in
// a message; questions about a kind go to its Kind entry (Family, GRPC,
// RouteProtocols) through the functions below.
const (
	KindHTTPRoute = "HTTPRoute"
	KindGRPCRoute = "GRPCRoute"
	KindTLSRoute  = "TLSRoute"
	KindTCPRoute  = "TCPRoute"
	KindUDPRoute  = "UDPRoute"
)

// RouteFamilyOf is the family of a route kind ("": not a route kind).
func RouteFamilyOf(kind string) RouteFamily {
	if k := KindNamed(kind); k != nil {
		return k.Family
	}
	return ""
}

// RoutesRequests reports whether routes of the kind route HTTP requests
// (HTTPRoute, GRPCRoute).
func RoutesRequests(kind string) bool { return RouteFamilyOf(kind) == RouteFamilyRequest }

// RoutesGRPC reports whether routes of the kind route gRPC calls
// (GRPCRoute).
func RoutesGRPC(kind string) bool {
	k := KindNamed(kind)
	return k != nil && k.GRPC
}

// RoutesPlainHTTP reports whether routes of the kind route HTTP requests
// that are not gRPC calls (HTTPRoute).
func RoutesPlainHTTP(kind string) bool { return RoutesRequests(kind) && !RoutesGRPC(kind) }

// RoutesDatagrams reports whether routes of the kind attach to UDP
// listeners and forward datagrams (UDPRoute).
func RoutesDatagrams(kind string) bool {
	k := KindNamed(kind)
	return k != nil && slices.Contains(k.RouteProtocols, gwv1.UDPProtocolType)
}

// RouteHasHostnames reports whether routes of the kind have
// spec.hostnames (HTTPRoute, GRPCRoute, TLSRoute).
func RouteHasHostnames(kind string) bool {
	f := RouteFamilyOf(kind)
	return f == RouteFamilyRequest || f == RouteFamilySNI
}

// RouteKindsFor lists the route kinds gwdev supports on a listener protocol,
// in registry order (HTTPS: HTTPRoute, GRPCRoute; TLS: TLSRoute).
func RouteKindsFor(protocol gwv1.ProtocolType) []string {
	var out []string
	for _, k := range kinds {
		if slices.Contains(k.RouteProtocols, protocol) {
			out = append(out, k.Kind)
		}
	}
	return out
}

// PolicyTargets is what a policy kind may target.
type PolicyTargets struct {
	// Targets are the group/kinds a spec.targetRefs entry may name, in the
	// order messages list them.
	Targets []metav1.GroupKind
	// SectionName is true when a targetRef may name a section of its target
	// (BackendTLSPolicy: a Service port, by name).
	SectionName bool
}

// Allows reports whether a targetRef of the policy may name group/kind (a
// nil PolicyTargets allows nothing).
func (p *PolicyTargets) Allows(group, kind string) bool {
	return p != nil && slices.Contains(p.Targets, metav1.GroupKind{Group: group, Kind: kind})
}

// AllowsObject reports whether the policy may target the object k, whose
// kind is one of the registry's.
func (p *PolicyTargets) AllowsObject(k ObjectKey) bool {
	e := KindNamed(k.Kind)
	return e != nil && p.Allows(e.Group, e.Kind)
}

// GroupOf is the group of the target kind named kind (ok false: the
// policy cannot target a kind of that name), which a targetRef without a
// group means.
func (p *PolicyTargets) GroupOf(kind string) (group string, ok bool) {
	if p == nil {
		return "", false
	}
	for _, t := range p.Targets {
		if t.Kind == kind {
			return t.Group, true
		}
	}
	return "", false
}

// PolicyKind is a policy kind of an implementation profile (gwin's
// GatewayPolicy…): namespaced, loaded as an ImplementationPolicy (the
// registry's OwnKinds entry), its structure checked by the loader and its
// settings by the profile.
type PolicyKind struct {
	// Group, Version and Kind are the policy's apiVersion and kind.
	Group, Version, Kind string
	// PolicyTargets is what the kind may target.
	PolicyTargets
}

// PolicyOf answers whether group/kind is a policy kind and what it may
// target: the registry's policy kinds and the registered profiles' (nil: not
// a policy kind).
func PolicyOf(group, kind string) *PolicyTargets {
	if k := KindNamed(kind); k != nil && k.Group == group && k.Policy != nil {
		return k.Policy
	}
	for _, pk := range ProfilePolicyKinds() {
		if pk.Group == group && pk.Kind == kind {
			return &pk.PolicyTargets
		}
	}
	return nil
}

// Kinds returns the registry in output order: classes and Gateways, routes,
// policies, then core objects. Callers must not modify it.
func Kinds() []*Kind { return kinds }

// KindNamed returns the registry entry of a kind ("HTTPRoute"), or nil.
func KindNamed(kind string) *Kind { return kindsByName[kind] }

// kindsByName indexes the registry by Kind (the first entry of a name wins).
// It is filled in init, not in its declaration: the registry's compile
// functions ask kind questions, and a declaration would be a cycle.
var kindsByName = map[string]*Kind{}

func init() {
	for _, k := range kinds {
		if _, ok := kindsByName[k.Kind]; !ok {
			kindsByName[k.Kind] = k
		}
	}
}

// AddObject appends o to the Snapshot slice of its kind and reports whether
// any kind of the registry holds objects of its type.
func (s *Snapshot) AddObject(o metav1.Object) bool {
	for _, k := range kinds {
		if k.Add(s, o) {
			return true
		}
	}
	return false
}

// kinds is the registry; see Kinds.
var kinds = []*Kind{
	{Kind: "GatewayClass", Group: Group, Version: "v1", Resource: "gatewayclasses", ServedVersions: []string{"v1", "v1beta1"},
		Status: true, ops: kindOf(func(s *Snapshot) *[]*gwv1.GatewayClass { return &s.GatewayClasses }, nil)},
	{Kind: "Gateway", Group: Group, Version: "v1", Resource: "gateways", Namespaced: true, ServedVersions: []string{"v1", "v1beta1"},
		Status: true, ops: kindOf(func(s *Snapshot) *[]*gwv1.Gateway { return &s.Gateways }, nil)},
	{Kind: "ListenerSet", Group: Group, Version: "v1", Resource: "listenersets", Namespaced: true, ServedVersions: []string{"v1"},
		Aliases: []schema.GroupVersionKind{{Group: ExperimentalGroup, Version: "v1alpha1", Kind: "XListenerSet"}},
		Status:  true, ops: kindOf(func(s *Snapshot) *[]*gwv1.ListenerSet { return &s.ListenerSets }, nil)},
	{Kind: KindHTTPRoute, Family: RouteFamilyRequest, Group: Group, Version: "v1", Resource: "httproutes", Namespaced: true, ServedVersions: []string{"v1", "v1beta1"},
		Status: true, RouteProtocols: []gwv1.ProtocolType{gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType},
		ops: kindOf(func(s *Snapshot) *[]*gwv1.HTTPRoute { return &s.HTTPRoutes },
			&routeAccess[*gwv1.HTTPRoute]{
				specOf:    func(o *gwv1.HTTPRoute) any { return &o.Spec },
				spec:      func(o *gwv1.HTTPRoute) *gwv1.CommonRouteSpec { return &o.Spec.CommonRouteSpec },
				hostnames: func(o *gwv1.HTTPRoute) []gwv1.Hostname { return o.Spec.Hostnames },
				status:    func(o *gwv1.HTTPRoute) *gwv1.RouteStatus { return &o.Status.RouteStatus },
				compile:   (*translator).compileHTTPRoute,
			})},
	{Kind: KindGRPCRoute, Family: RouteFamilyRequest, GRPC: true, Group: Group, Version: "v1", Resource: "grpcroutes", Namespaced: true, ServedVersions: []string{"v1"},
		Status: true, RouteProtocols: []gwv1.ProtocolType{gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType},
		ops: kindOf(func(s *Snapshot) *[]*gwv1.GRPCRoute { return &s.GRPCRoutes },
			&routeAccess[*gwv1.GRPCRoute]{
				specOf:    func(o *gwv1.GRPCRoute) any { return &o.Spec },
				spec:      func(o *gwv1.GRPCRoute) *gwv1.CommonRouteSpec { return &o.Spec.CommonRouteSpec },
				hostnames: func(o *gwv1.GRPCRoute) []gwv1.Hostname { return o.Spec.Hostnames },
				status:    func(o *gwv1.GRPCRoute) *gwv1.RouteStatus { return &o.Status.RouteStatus },
				compile:   (*translator).compileGRPCRoute,
			})},
	{Kind: KindTLSRoute, Family: RouteFamilySNI, Group: Group, Version: "v1", Resource: "tlsroutes", Namespaced: true, ServedVersions: []string{"v1", "v1alpha2", "v1alpha3"},
		Status: true, RouteProtocols: []gwv1.ProtocolType{gwv1.TLSProtocolType},
		ops: kindOf(func(s *Snapshot) *[]*gwv1.TLSRoute { return &s.TLSRoutes },
			&routeAccess[*gwv1.TLSRoute]{
				specOf:    func(o *gwv1.TLSRoute) any { return &o.Spec },
				spec:      func(o *gwv1.TLSRoute) *gwv1.CommonRouteSpec { return &o.Spec.CommonRouteSpec },
				hostnames: func(o *gwv1.TLSRoute) []gwv1.Hostname { return o.Spec.Hostnames },
				status:    func(o *gwv1.TLSRoute) *gwv1.RouteStatus { return &o.Status.RouteStatus },
				compile:   (*translator).compileTLSRoute,
			})},
	{Kind: KindTCPRoute, Family: RouteFamilyStream, Group: Group, Version: "v1", Resource: "tcproutes", Namespaced: true, ServedVersions: []string{"v1", "v1alpha2"},
		Status: true, RouteProtocols: []gwv1.ProtocolType{gwv1.TCPProtocolType},
		ops: kindOf(func(s *Snapshot) *[]*gwv1.TCPRoute { return &s.TCPRoutes },
			&routeAccess[*gwv1.TCPRoute]{
				specOf:  func(o *gwv1.TCPRoute) any { return &o.Spec },
				spec:    func(o *gwv1.TCPRoute) *gwv1.CommonRouteSpec { return &o.Spec.CommonRouteSpec },
				status:  func(o *gwv1.TCPRoute) *gwv1.RouteStatus { return &o.Status.RouteStatus },
				compile: (*translator).compileTCPRoute,
			})},
	{Kind: KindUDPRoute, Family: RouteFamilyStream, Group: Group, Version: "v1", Resource: "udproutes", Namespaced: true, ServedVersions: []string{"v1", "v1alpha2"},
		Status: true, RouteProtocols: []gwv1.ProtocolType{gwv1.UDPProtocolType},
		ops: kindOf(func(s *Snapshot) *[]*gwv1.UDPRoute { return &s.UDPRoutes },
			&routeAccess[*gwv1.UDPRoute]{
				specOf:  func(o *gwv1.UDPRoute) any { return &o.Spec },
				spec:    func(o *gwv1.UDPRoute) *gwv1.CommonRouteSpec { return &o.Spec.CommonRouteSpec },
				status:  func(o *gwv1.UDPRoute) *gwv1.RouteStatus { return &o.Status.RouteStatus },
				compile: (*translator).compileUDPRoute,
			})},
	{Kind: "ReferenceGrant", Group: Group, Version: "v1", Resource: "referencegrants", Namespaced: true, ServedVersions: []string{"v1", "v1beta1"},
		ops: kindOf(func(s *Snapshot) *[]*gwv1.ReferenceGrant { return &s.ReferenceGrants }, nil)},
	{Kind: "BackendTLSPolicy", Group: Group, Version: "v1", Resource: "backendtlspolicies", Namespaced: true, ServedVersions: []string{"v1", "v1alpha3"},
		Policy: &PolicyTargets{Targets: []metav1.GroupKind{{Group: "", Kind: "Service"}}, SectionName: true},
		Status: true, ops: kindOf(func(s *Snapshot) *[]*gwv1.BackendTLSPolicy { return &s.BackendTLSPolicies }, nil)},
	{Kind: "XBackendTrafficPolicy", Group: ExperimentalGroup, Version: "v1alpha1", Resource: "xbackendtrafficpolicies", Namespaced: true,
		Policy: &PolicyTargets{Targets: []metav1.GroupKind{{Group: "", Kind: "Service"}, {Group: ExperimentalGroup, Kind: "XBackend"}}},
		Status: true, ops: kindOf(func(s *Snapshot) *[]*gwxv1a1.XBackendTrafficPolicy { return &s.XBackendTrafficPolicies }, nil)},
	{Kind: "XBackend", Group: ExperimentalGroup, Version: "v1alpha1", Resource: "xbackends", Namespaced: true,
		Status: true, ops: kindOf(func(s *Snapshot) *[]*gwxv1a1.XBackend { return &s.XBackends }, nil)},
	{Kind: "XMesh", Group: ExperimentalGroup, Version: "v1alpha1", Resource: "xmeshes",
		Status: true, ops: kindOf(func(s *Snapshot) *[]*gwxv1a1.XMesh { return &s.XMeshes }, nil)},
	{Kind: "IngressClass", Group: networkingv1.GroupName, Version: "v1", Resource: "ingressclasses",
		ops: kindOf(func(s *Snapshot) *[]*networkingv1.IngressClass { return &s.IngressClasses }, nil)},
	{Kind: "Ingress", Group: networkingv1.GroupName, Version: "v1", Resource: "ingresses", Namespaced: true,
		Status: true, ops: kindOf(func(s *Snapshot) *[]*networkingv1.Ingress { return &s.Ingresses }, nil)},
	{Kind: "XTelemetryPolicy", Group: ExperimentalGroup, Version: "v1alpha1", Resource: "xtelemetrypolicies", Namespaced: true,
		Policy: &PolicyTargets{Targets: []metav1.GroupKind{{Group: Group, Kind: "Gateway"}}},
		Status: true, ops: kindOf(func(s *Snapshot) *[]*gwxv1a1.XTelemetryPolicy { return &s.XTelemetryPolicies }, nil)},
	{Namespaced: true, Status: true, OwnKinds: true,
		ops: kindOf(func(s *Snapshot) *[]*ImplementationPolicy { return &s.ImplementationPolicies }, nil)},
	{Kind: "Namespace", Version: "v1", Resource: "namespaces",
		ops: kindOf(func(s *Snapshot) *[]*corev1.Namespace { return &s.Namespaces }, nil)},
	{Kind: "Service", Version: "v1", Resource: "services", Namespaced: true,
		ops: heldAs(kindOf(func(s *Snapshot) *[]*Service { return &s.Services }, nil), NewService)},
	{Kind: "EndpointSlice", Group: discoveryv1.GroupName, Version: "v1", Resource: "endpointslices", Namespaced: true,
		ops: kindOf(func(s *Snapshot) *[]*discoveryv1.EndpointSlice { return &s.EndpointSlices }, nil)},
	{Kind: "Pod", Version: "v1", Resource: "pods", Namespaced: true,
		ops: kindOf(func(s *Snapshot) *[]*corev1.Pod { return &s.Pods }, nil)},
	{Kind: "Secret", Version: "v1", Resource: "secrets", Namespaced: true,
		ops: kindOf(func(s *Snapshot) *[]*corev1.Secret { return &s.Secrets }, nil)},
	{Kind: "ConfigMap", Version: "v1", Resource: "configmaps", Namespaced: true,
		ops: kindOf(func(s *Snapshot) *[]*corev1.ConfigMap { return &s.ConfigMaps }, nil)},
	{Kind: "ClusterTrustBundle", Group: certificatesv1.GroupName, Version: "v1", Resource: "clustertrustbundles",
		ops: kindOf(func(s *Snapshot) *[]*certificatesv1.ClusterTrustBundle { return &s.ClusterTrustBundles }, nil)},
}

// typedKind implements kindOps for objects of type *O held in one Snapshot
// slice. routes is set for route kinds.
type typedKind[O any, T interface {
	*O
	kubeObject
}] struct {
	list   func(*Snapshot) *[]T
	routes *routeAccess[T]
	// decoded is set for a kind a Snapshot holds in a type of the engine's
	// own, T, rather than the Kubernetes type its manifests decode into
	// (nil: T is that type).
	decoded *decodedAs[T]
}

// decodedAs is the Kubernetes type of a kind held as T, and its
// conversion.
type decodedAs[T any] struct {
	newObject func() metav1.Object
	// convert converts an object of newObject's type (ok false: o is not).
	convert func(o metav1.Object) (T, bool)
}

// heldAs makes tk's kind one whose manifests decode into *D, which convert
// turns into the T a Snapshot holds (Service: corev1.Service, held as
// Service).
func heldAs[O any, T interface {
	*O
	kubeObject
}, D any, DP interface {
	*D
	kubeObject
}](tk typedKind[O, T], convert func(DP) T) typedKind[O, T] {
	tk.decoded = &decodedAs[T]{
		newObject: func() metav1.Object { return DP(new(D)) },
		convert: func(o metav1.Object) (T, bool) {
			d, ok := o.(DP)
			if !ok {
				return nil, false
			}
			return convert(d), true
		},
	}
	return tk
}

// kindOf builds the typed operations of a kind held in the Snapshot slice
// list returns (routes: nil unless it is a route kind).
func kindOf[O any, T interface {
	*O
	kubeObject
}](list func(*Snapshot) *[]T, routes *routeAccess[T]) typedKind[O, T] {
	return typedKind[O, T]{list: list, routes: routes}
}

func (tk typedKind[O, T]) newObject() metav1.Object {
	if tk.decoded != nil {
		return tk.decoded.newObject()
	}
	return T(new(O))
}

func (tk typedKind[O, T]) hold(o metav1.Object) metav1.Object {
	if tk.decoded != nil {
		if x, ok := tk.decoded.convert(o); ok {
			return x
		}
	}
	return o
}

func (tk typedKind[O, T]) each(s *Snapshot, k *Kind, fn func(ObjectKey, metav1.Object)) {
	for _, o := range *tk.list(s) {
		fn(keyOf(k, o), o)
	}
}

func (tk typedKind[O, T]) samePrefix(s *Snapshot, prev []metav1.Object) (int, bool) {
	l := *tk.list(s)
	if len(l) > len(prev) {
		return len(l), false
	}
	for i, o := range l {
		if prev[i] != metav1.Object(o) {
			return len(l), false
		}
	}
	return len(l), true
}

// keyOf names o, an object of kind k.
func keyOf(k *Kind, o kubeObject) ObjectKey {
	kind := k.Kind
	if k.OwnKinds {
		kind = o.GetObjectKind().GroupVersionKind().Kind
	}
	return ObjectKey{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}
}

func (tk typedKind[O, T]) add(s *Snapshot, o metav1.Object) bool {
	x, ok := o.(T)
	if !ok && tk.decoded != nil {
		x, ok = tk.decoded.convert(o)
	}
	if ok {
		l := tk.list(s)
		*l = append(*l, x)
	}
	return ok
}

// copyTo puts the objects of in into out, sorted by namespace/name, with
// their apiVersion and kind set. An object of a kind with status gets a
// shallow copy of its own: the engine replaces status fields whole and never
// writes metadata or spec, so those stay shared with the input. An object
// without status is shared as it is, unless its apiVersion and kind are not
// set yet: then it is copied the same way and they are set on the copy.
func (tk typedKind[O, T]) copyTo(out, in *Snapshot, k *Kind) {
	gvk := k.GroupVersionKind()
	src := *tk.list(in)
	objs := make([]T, len(src))
	for i, o := range src {
		stale := !k.OwnKinds && o.GetObjectKind().GroupVersionKind() != gvk
		if k.Status || stale {
			c := *o
			o = &c
		}
		if stale {
			o.GetObjectKind().SetGroupVersionKind(gvk)
		}
		objs[i] = o
	}
	objs = sortByName(objs)
	if k.OwnKinds {
		slices.SortStableFunc(objs, func(a, b T) int {
			return cmp.Compare(a.GetObjectKind().GroupVersionKind().Kind, b.GetObjectKind().GroupVersionKind().Kind)
		})
	}
	*tk.list(out) = objs
}

// Each calls fn for every object of the snapshot in output order (the order
// of Kinds); each kind by namespace/name as stored. It only reads: objects
// carry their apiVersion and kind from the loader, and Translate sets them
// on the objects of its Result.
func (s *Snapshot) Each(fn func(k ObjectKey, obj metav1.Object)) {
	for _, k := range kinds {
		k.Each(s, fn)
	}
}

// Len counts the objects in the snapshot.
func (s *Snapshot) Len() int {
	n := 0
	s.Each(func(ObjectKey, metav1.Object) { n++ })
	return n
}
