package engine

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// isCoreService reports whether a reference's group and kind (a backendRef,
// a mesh route's parentRef, a telemetry provider) name a core Service.
func isCoreService(group, kind string) bool { return group == "" && kind == "Service" }

// resolveBackendRef resolves one backendRef of a route: kind, ReferenceGrant,
// Service and port, then the target in the documented order (user mapping,
// EndpointSlices, ExternalName, echo). An invalid ref yields a Backend with
// Invalid set, and a failure for the route's ResolvedRefs condition.
func (t *translator) resolveBackendRef(r *routeState, name string, ref gwv1.BackendObjectReference, weight *int32) (*Backend, *routeFailure) {
	group, kind := "", "Service"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	ns := r.key.Namespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	w := int32(1)
	if weight != nil {
		w = *weight
	}
	b := &Backend{Name: name, Service: ObjectKey{Kind: kind, Namespace: ns, Name: string(ref.Name)}, Weight: w}
	if ref.Port != nil {
		b.Port = int32(*ref.Port)
	}
	fail := func(reason gwv1.RouteConditionReason, msg string) (*Backend, *routeFailure) {
		b.Invalid = msg
		return b, &routeFailure{reason: reason, msg: msg}
	}
	display := func() string { return groupKind(group, kind) + " " + ns + "/" + string(ref.Name) } // for failures only
	if group == ExperimentalGroup && kind == "XBackend" {
		return t.resolveXBackendRef(r, b, ref) // xbackend.go
	}
	if !isCoreService(group, kind) {
		supported := "only core Service"
		if RoutesRequests(r.kind) {
			supported += " and XBackend"
		}
		return fail(gwv1.RouteReasonInvalidKind, fmt.Sprintf("backendRef %s: kind %s is not supported (%s)", display(), groupKind(group, kind), supported))
	}
	if !r.meshOnly && !t.refPermitted(reference{Group, r.kind, r.key.Namespace, "", "Service", ns, string(ref.Name)}) {
		return fail(gwv1.RouteReasonRefNotPermitted,
			fmt.Sprintf("backendRef %s is in another namespace and no ReferenceGrant in %s allows %s from %s", display(), ns, r.kind, r.key.Namespace))
	}
	si := t.serviceIndex(ns, string(ref.Name))
	if si < 0 {
		return fail(gwv1.RouteReasonBackendNotFound, "backendRef "+display()+" not found"+
			knownNames("the Services in "+ns, string(ref.Name), t.namesIn("Service", ns), nil))
	}
	if ref.Port == nil {
		return fail(gwv1.RouteReasonUnsupportedValue, "backendRef "+display()+": port is required for a Service")
	}
	svc := t.out.Services[si]
	sp, other := servicePort(svc, int32(*ref.Port), r.kind)
	if other != nil {
		return fail(gwv1.RouteReasonBackendNotFound, fmt.Sprintf("backendRef %s: the Service's port %d is for %s only; a %s sends %s to it",
			display(), *ref.Port, other.Protocol, r.kind, routeTransport(r.kind)))
	}
	if sp == nil && svc.Spec.Type != corev1.ServiceTypeExternalName {
		return fail(gwv1.RouteReasonBackendNotFound, fmt.Sprintf("backendRef %s: the Service has no port %d", display(), *ref.Port))
	}
	if sp != nil && sp.AppProtocol != nil {
		b.AppProtocol = *sp.AppProtocol
		if !appProtocolSupported(r.kind, b.AppProtocol) {
			return fail(gwv1.RouteReasonUnsupportedProtocol, fmt.Sprintf("backendRef %s: port %d has appProtocol %q, which a %s cannot speak",
				display(), *ref.Port, b.AppProtocol, r.kind))
		}
	}
	b.HTTP2 = RoutesGRPC(r.kind) || RoutesPlainHTTP(r.kind) && speaksH2C(b.AppProtocol)
	b.Target = t.sharedTarget(si, svc, sp, int32(*ref.Port))
	return b, nil
}

// targetKey is a Service port a route's backendRef resolved to
// (sharedTarget).
type targetKey struct {
	svc  *Service
	sp   *corev1.ServicePort
	port int32
}

// serviceTarget is the Target of the first port of a Service a route's
// backendRef resolved to (sharedTarget; svc nil: none yet).
type serviceTarget struct {
	targetKey
	tg *Target
}

// sharedTarget is backendTarget, with one Target for every route backend
// of the same Service port: nothing writes a route backend's Target once
// it is resolved, and backendsForMatch shares them between matches already.
// A Service naming an echo TLS Secret is resolved every time, since each
// resolution notes its Secret. For 10,000 HTTPRoutes with three backendRefs
// to two Services each, that is 10,000 Targets (and their Why) fewer. The
// first port resolved of a Service is kept in a slice beside out.Services
// (si is the Service's index there), the others in a map: a map of every
// Service port was 2.5 MB for 20,000 Services, the slice 0.6 MB.
func (t *translator) sharedTarget(si int, svc *Service, sp *corev1.ServicePort, port int32) *Target {
	if svc.Annotations[EchoTLSSecretAnnotation] != "" {
		return t.backendTarget(svc, sp, port)
	}
	k := targetKey{svc, sp, port}
	if si < len(t.targets) && t.targets[si].targetKey == k {
		return t.targets[si].tg
	}
	if tg, ok := t.moreTargets[k]; ok {
		return tg
	}
	tg := t.backendTarget(svc, sp, port)
	if t.targets == nil {
		t.targets = make([]serviceTarget, len(t.out.Services))
	}
	if si < len(t.targets) && t.targets[si].svc == nil {
		t.targets[si] = serviceTarget{k, tg}
		return tg
	}
	if t.moreTargets == nil {
		t.moreTargets = map[targetKey]*Target{}
	}
	t.moreTargets[k] = tg
	return tg
}

// speaksH2C reports whether a Service port's appProtocol asks for HTTP/2
// without TLS (prior knowledge): kubernetes.io/h2c (GEP-1911), h2c or grpc,
// in any case.
func speaksH2C(appProtocol string) bool {
	switch strings.ToLower(appProtocol) {
	case "kubernetes.io/h2c", "h2c", "grpc":
		return true
	}
	return false
}

// appProtocolSupported reports whether a route of the kind can send traffic
// to a Service port with the appProtocol (HTTPBackendRef: "If a Route is not
// able to send traffic to the backend using the specified protocol then the
// backend is considered invalid"). HTTP routes speak HTTP/1.1, h2c and h2
// (with TLS from a BackendTLSPolicy), and upgrade to WebSocket; gRPC needs
// HTTP/2, which a WebSocket port cannot carry. L4 routes forward bytes and
// accept any appProtocol. Comparison ignores case (conformance uses HTTPS).
func appProtocolSupported(routeKind, appProtocol string) bool {
	if !RoutesRequests(routeKind) {
		return true
	}
	switch strings.ToLower(appProtocol) {
	case "", "http", "https", "http2", "h2c", "grpc", "grpc-web", "kubernetes.io/h2c":
		return true
	case "kubernetes.io/ws", "kubernetes.io/wss":
		return RoutesPlainHTTP(routeKind)
	}
	return false
}

// backendTarget picks where traffic for a Service port goes.
func (t *translator) backendTarget(svc *Service, sp *corev1.ServicePort, port int32) *Target {
	if len(t.opts.BackendMappings) > 0 {
		key := svc.Namespace + "/" + svc.Name + ":" + itoa(int(port))
		if addr, ok := t.opts.BackendMappings[key]; ok {
			return &Target{Kind: TargetMapped, Addresses: []string{addr}, Why: "mapped by the user (" + key + "=" + addr + ")"}
		}
	}
	if slices := t.endpointSlices[nsName{svc.Namespace, svc.Name}]; len(slices) > 0 && sp != nil {
		addrs, pods := endpointAddresses(slices, sp)
		if len(addrs) > 0 {
			return &Target{Kind: TargetEndpointSlice, Addresses: addrs, Pods: pods,
				Why: fmt.Sprintf("%d ready endpoint(s) from EndpointSlices of Service %s/%s", len(addrs), svc.Namespace, svc.Name)}
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName && svc.Spec.ExternalName != "" {
		addr := net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))
		return &Target{Kind: TargetExternalName, Addresses: []string{addr}, Why: "ExternalName Service " + svc.Namespace + "/" + svc.Name}
	}
	return t.echoTarget(svc, port)
}

// endpointAddresses lists ready endpoint addresses (ip:port) for a Service
// port, sorted, with the pods they belong to.
func endpointAddresses(slices []*discoveryv1.EndpointSlice, sp *corev1.ServicePort) ([]string, []string) {
	var addrs, pods []string
	for _, es := range slices {
		port := int32(0)
		for _, p := range es.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			if name == sp.Name && p.Port != nil {
				port = *p.Port
			}
		}
		if port == 0 {
			if sp.TargetPort.IntVal != 0 {
				port = sp.TargetPort.IntVal
			} else {
				continue
			}
		}
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				addrs = append(addrs, net.JoinHostPort(a, strconv.Itoa(int(port))))
				if ep.TargetRef != nil && ep.TargetRef.Kind == "Pod" {
					pods = append(pods, ep.TargetRef.Name)
				}
			}
		}
	}
	sort.Strings(addrs)
	sort.Strings(pods)
	return addrs, pods
}
