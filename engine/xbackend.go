package engine

import (
	"fmt"
	"net"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/gwdev/gwdev/engine/table"
)

// XBackend (gateway.networking.x-k8s.io/v1alpha1) as a backendRef kind of
// HTTPRoutes and GRPCRoutes: an external hostname and port, dialled as they
// are, or the Pods an EndpointSelector selects (xbackend_pods.go), with its
// own TLS settings (mode ServerOnly or ClientAndServer, the
// BackendTLSPolicy validation block) and protocol. Its status has one
// parent entry per Gateway whose accepted routes use it, with Accepted.

// xbackendState is an XBackend some route refers to.
type xbackendState struct {
	obj  *gwxv1a1.XBackend
	key  ObjectKey
	cond *conditionSet
	// resolved is the XBackend's target, TLS and protocol, computed once.
	resolved *Backend
	// invalid is why the XBackend cannot be used ("" : usable).
	invalid string
	// usedBy are the routes whose backendRefs reach it (permitted, port
	// matching): the Gateways of their accepted parents are its parents.
	usedBy []*routeState
}

// findXBackend returns the XBackend ns/name of the snapshot, or nil.
func (t *translator) findXBackend(ns, name string) *gwxv1a1.XBackend {
	xs := t.out.XBackends
	i := sort.Search(len(xs), func(i int) bool {
		return xs[i].Namespace > ns || (xs[i].Namespace == ns && xs[i].Name >= name)
	})
	if i < len(xs) && xs[i].Namespace == ns && xs[i].Name == name {
		return xs[i]
	}
	return nil
}

// resolveXBackendRef resolves a backendRef of kind XBackend into b (whose
// Name, Service and Weight are set): the ReferenceGrant, the XBackend, the
// port, then the target and TLS the XBackend describes.
func (t *translator) resolveXBackendRef(r *routeState, b *Backend, ref gwv1.BackendObjectReference) (*Backend, *routeFailure) {
	fail := func(reason gwv1.RouteConditionReason, msg string) (*Backend, *routeFailure) {
		b.Invalid = msg
		return b, &routeFailure{reason: reason, msg: msg}
	}
	ns, name := b.Service.Namespace, b.Service.Name
	display := "XBackend " + ns + "/" + name
	if !RoutesRequests(r.kind) {
		return fail(gwv1.RouteReasonInvalidKind, fmt.Sprintf("backendRef %s: a %s cannot send to an XBackend (HTTPRoute and GRPCRoute only)", display, r.kind))
	}
	if !t.refPermitted(reference{Group, r.kind, r.key.Namespace, ExperimentalGroup, "XBackend", ns, name}) {
		return fail(gwv1.RouteReasonRefNotPermitted,
			fmt.Sprintf("backendRef %s is in another namespace and no ReferenceGrant in %s allows %s from %s", display, ns, r.kind, r.key.Namespace))
	}
	xs := t.xbackendState(ns, name)
	if xs == nil {
		return fail(gwv1.RouteReasonBackendNotFound, "backendRef "+display+" not found")
	}
	port := int32(xs.obj.Spec.Port.Number)
	if ref.Port != nil && int32(*ref.Port) != port {
		return fail(gwv1.RouteReasonBackendNotFound, fmt.Sprintf("backendRef %s: port %d is not the XBackend's port %d", display, *ref.Port, port))
	}
	if len(xs.usedBy) == 0 || xs.usedBy[len(xs.usedBy)-1] != r {
		xs.usedBy = append(xs.usedBy, r)
	}
	if xs.invalid != "" {
		return fail(gwv1.RouteReasonBackendNotFound, "backendRef "+display+" is not accepted: "+xs.invalid)
	}
	b.Port, b.Target, b.TLS, b.AppProtocol = port, xs.resolved.Target, xs.resolved.TLS, xs.resolved.AppProtocol
	b.SessionPersistence = xs.resolved.SessionPersistence
	b.HTTP2 = RoutesGRPC(r.kind) || speaksH2C(b.AppProtocol)
	return b, nil
}

// xbackendState returns the state of XBackend ns/name, resolving it the
// first time a route refers to it (nil: not in the manifests).
func (t *translator) xbackendState(ns, name string) *xbackendState {
	if xs, ok := t.xbackends[nsName{ns, name}]; ok {
		return xs
	}
	obj := t.findXBackend(ns, name)
	if obj == nil {
		return nil
	}
	if t.xbackends == nil {
		t.xbackends = map[nsName]*xbackendState{}
	}
	xs := &xbackendState{obj: obj, key: ObjectKey{Kind: "XBackend", Namespace: ns, Name: name}, cond: newConditionSet(obj.Generation, &t.opts.Now)}
	t.xbackends[nsName{ns, name}] = xs
	t.resolveXBackend(xs)
	return xs
}

// resolveXBackend computes the target, TLS, protocol and session
// persistence of an XBackend: an external hostname, or the Pods an
// EndpointSelector selects (xbackend_pods.go); a reference that does not
// resolve makes it not Accepted.
func (t *translator) resolveXBackend(xs *xbackendState) {
	spec := &xs.obj.Spec
	res := &Backend{}
	xs.resolved = res
	host := ""
	switch {
	case spec.Type == gwxv1a1.BackendTypeExternalHostname && spec.ExternalHostname != nil:
		host = string(spec.ExternalHostname.Hostname)
		addr := net.JoinHostPort(host, strconv.Itoa(int(spec.Port.Number)))
		res.Target = &Target{Kind: table.TargetXBackend, Addresses: []string{addr}, Why: "XBackend " + xs.key.Namespace + "/" + xs.key.Name + ": external hostname " + addr}
	case spec.Type == gwxv1a1.BackendTypeEndpointSelector && spec.EndpointSelector != nil:
		res.Target = t.endpointSelectorTarget(xs)
		res.SessionPersistence = xbackendSession(xs)
	default: // the CRD's CEL rules refuse these; a Snapshot built in Go may not
		xs.invalid = fmt.Sprintf("type %q without its %s block is not supported", spec.Type, typeBlock(spec.Type))
		xs.cond.fail(string(gwv1.PolicyConditionAccepted), string(gwv1.PolicyReasonInvalid), xs.invalid)
		return
	}
	res.AppProtocol = t.xbackendProtocol(xs)
	if tc := spec.TLS; tc != nil && tc.Mode != gwxv1a1.BackendTLSModeNone {
		if res.Target.Kind == table.TargetPods {
			xs.invalid = fmt.Sprintf("tls mode %s with type EndpointSelector is not served by gwdev: the echo backend answering as each Pod speaks cleartext only", tc.Mode)
			xs.cond.fail(string(gwv1.PolicyConditionAccepted), string(gwv1.PolicyReasonInvalid), xs.invalid)
			return
		}
		res.TLS = t.xbackendTLS(xs, host)
	}
}

// typeBlock names the block an XBackend type needs.
func typeBlock(typ gwxv1a1.BackendType) string {
	if typ == gwxv1a1.BackendTypeEndpointSelector {
		return "endpointSelector"
	}
	return "externalHostname"
}

// xbackendProtocol maps spec.protocol to the appProtocol the data plane
// reads: H2C (and HTTP2 without TLS) is HTTP/2 over cleartext; HTTP and
// HTTP11 are the default; WSS (with TLS) is WebSocket over the XBackend's
// TLS. The others are reported.
func (t *translator) xbackendProtocol(xs *xbackendState) string {
	p := xs.obj.Spec.Protocol
	if p == nil {
		return ""
	}
	tlsOn := xs.obj.Spec.TLS != nil && xs.obj.Spec.TLS.Mode != gwxv1a1.BackendTLSModeNone
	switch *p {
	case gwxv1a1.BackendProtocolHTTP, gwxv1a1.BackendProtocolHTTP11:
		return ""
	case gwxv1a1.BackendProtocolH2C:
		return "kubernetes.io/h2c"
	case gwxv1a1.BackendProtocolHTTP2:
		if !tlsOn {
			return "kubernetes.io/h2c"
		}
	case gwxv1a1.BackendProtocolWSS:
		if tlsOn { // the CRD requires TLS for WSS
			// WebSocket over TLS (v1.7.0): the connection is the XBackend's
			// TLS, the upgrade is HTTP/1.1, as gwdev proxies any WebSocket.
			return "kubernetes.io/wss"
		}
	}
	t.notes = append(t.notes, Finding{Severity: SeverityWarning, Object: xs.key, Source: t.sourceAt(xs.key, "spec.protocol"), Scope: "spec.protocol", Field: "spec.protocol",
		Message: fmt.Sprintf("spec.protocol %s is not enforced by gwdev: the route's protocol is used (HTTP/1.1, or HTTP/2 for gRPC)", *p)})
	return ""
}

// xbackendTLS builds the TLS settings of an XBackend: validation as in a
// BackendTLSPolicy (hostname, CA references or system CAs,
// subjectAltNames; the SNI defaults to the external hostname) and, for
// ClientAndServer, the client certificate.
func (t *translator) xbackendTLS(xs *xbackendState, host string) *BackendTLS {
	tc := xs.obj.Spec.TLS
	v := tc.Validation
	acc := string(gwv1.PolicyConditionAccepted)
	sni := string(v.Hostname)
	if sni == "" {
		sni = host
	}
	out := &BackendTLS{Policy: "XBackend " + xs.key.Namespace + "/" + xs.key.Name, SNI: sni, SubjectAltNames: compileSubjectAltNames(v.SubjectAltNames)}
	if v.WellKnownCACertificates != nil {
		if *v.WellKnownCACertificates != gwv1.WellKnownCACertificatesSystem {
			xs.invalid = "tls.validation.wellKnownCACertificates " + string(*v.WellKnownCACertificates) + " is not supported"
			xs.cond.fail(acc, string(gwv1.PolicyReasonInvalid), xs.invalid)
		}
		out.System = true
	}
	for i, ref := range v.CACertificateRefs {
		data, what, _, msg := t.policyCA(xs.key.Namespace, ref)
		if data == nil {
			xs.invalid = fmt.Sprintf("tls.validation.caCertificateRefs[%d]: %s", i, msg)
			xs.cond.fail(acc, string(gwv1.BackendTLSPolicyReasonInvalidCACertificateRef), xs.invalid)
			continue
		}
		out.CACertificates = append(out.CACertificates, data...)
		out.CARefs = append(out.CARefs, what)
	}
	if len(v.CACertificateRefs) == 0 && v.WellKnownCACertificates == nil {
		out.System = true // no validation block: the system trust store
	}
	if tc.Mode == gwxv1a1.BackendTLSModeClientAndServer && tc.ClientCertificateRef != nil {
		cert, msg := t.xbackendClientCertificate(xs, *tc.ClientCertificateRef)
		if cert == nil {
			xs.invalid = "tls.clientCertificateRef: " + msg
			xs.cond.fail(acc, string(gwv1.PolicyReasonInvalid), xs.invalid)
		}
		out.ClientCertificate = cert
	}
	return out
}

// xbackendClientCertificate resolves tls.clientCertificateRef. A Secret in
// another namespace needs a ReferenceGrant from XBackends of the
// experimental group, checked here; the Secret is then resolved as the
// Gateway's own certificates are.
func (t *translator) xbackendClientCertificate(xs *xbackendState, ref gwv1.SecretObjectReference) (*Certificate, string) {
	owner := xs.key
	if ref.Namespace != nil && *ref.Namespace != "" && string(*ref.Namespace) != owner.Namespace {
		group, kind := "", "Secret"
		if ref.Group != nil {
			group = string(*ref.Group)
		}
		if ref.Kind != nil {
			kind = string(*ref.Kind)
		}
		ns := string(*ref.Namespace)
		if !t.refPermitted(reference{ExperimentalGroup, "XBackend", owner.Namespace, group, kind, ns, string(ref.Name)}) {
			return nil, fmt.Sprintf("%s %s/%s is in another namespace and no ReferenceGrant in %s allows XBackend %s/%s to use it",
				groupKind(group, kind), ns, ref.Name, ns, owner.Namespace, owner.Name)
		}
		owner.Namespace = ns // permitted: resolve it there
	}
	cert, _, msg := t.resolveCertificateRef(owner, ref, false)
	return cert, msg
}

// writeXBackendStatus writes the status of every XBackend: one parent
// entry per Gateway whose accepted routes use it, with Accepted.
func (t *translator) writeXBackendStatus() {
	t.noteBackendSessions() // xbackend_pods.go
	for _, x := range t.out.XBackends {
		xs := t.xbackendState(x.Namespace, x.Name)
		xs.cond.setDefault(string(gwv1.PolicyConditionAccepted), metav1.ConditionTrue, string(gwv1.PolicyReasonAccepted), "the XBackend is accepted")
		t.conditionOwners = append(t.conditionOwners, conditionOwner{xs.key, xs.cond})
		var parents []gwxv1a1.BackendAncestorStatus
		for _, g := range gatewaysOf(xs.usedBy) {
			if len(parents) == 32 {
				break
			}
			parents = append(parents, gwxv1a1.BackendAncestorStatus{
				ControllerName: gwv1.GatewayController(t.opts.controllerName()),
				AncestorRef:    gatewayParentRef(g),
				Conditions:     xs.cond.list(),
			})
		}
		if len(parents) == 0 {
			t.noteKind(NoteUnused, SeverityInfo, xs.key, "", "no route of a managed Gateway uses this XBackend")
		}
		x.Status.Ancestors = parents
	}
}
