package engine

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// MeshControllerName is the controllerName gwdev writes in the status of
// route parents that are Services (GEP-1426: gwdev's mesh), and the
// spec.controllerName of the XMesh objects it reports on. It differs from
// the Gateway controller's name so that a route bound to both a Gateway and
// a Service shows which part of gwdev accepted which parent.
const MeshControllerName = "gwdev.dev/mesh-controller"

// reasonMeshConflicted is GEP-1294's Accepted=False reason for a mesh route
// that loses to a route of a more specific type on the same Service port
// ("RouteReasonConflicted"; the API has no constant for it yet).
const reasonMeshConflicted = "Conflicted"

// meshAttachment is a route bound to a Service frontend: the Service ports
// it applies to and whose requests it applies to.
type meshAttachment struct {
	route *routeState
	p     *parentResult
	svc   *Service
	// ports are the Service ports the route applies to (empty once refused).
	ports []corev1.ServicePort
	// consumer is the route's namespace for a consumer route (the Service
	// is in another namespace), "" for a producer route.
	consumer string
	// conflicts explain ports removed because a GRPCRoute binds them too.
	conflicts []string
}

// parentGroupKind returns a parentRef's group and kind with the API's
// defaults (gateway.networking.k8s.io, Gateway).
func parentGroupKind(ref gwv1.ParentReference) (string, string) {
	group, kind := Group, "Gateway"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	return group, kind
}

// meshOnly reports whether every parentRef names a Service: such a route
// is a mesh route only, and its backendRefs need no ReferenceGrant (GEP-1294,
// "Namespace boundaries": routes of either type can send traffic to
// backendRefs in any namespace).
func meshOnly(refs []gwv1.ParentReference) bool {
	for _, ref := range refs {
		if !isCoreService(parentGroupKind(ref)) {
			return false
		}
	}
	return len(refs) > 0
}

// attachMesh evaluates a parentRef naming a Service in namespace ns: the
// Service must exist and have a frontend (not headless, not ExternalName),
// and the ref's sectionName (a port name) and port must select at least one
// of its TCP ports; without either, the route applies to every port
// (GEP-1294, "Ports").
func (t *translator) attachMesh(r *routeState, idx int, ref gwv1.ParentReference, ns string) *parentResult {
	sref := ref
	g, k := gwv1.Group(""), gwv1.Kind("Service")
	sref.Group, sref.Kind = &g, &k
	name := string(ref.Name)
	where := parentDisplay("Service", ns, name, ref)
	p := &parentResult{index: idx, ref: sref, cond: newConditionSet(r.gen, &t.opts.Now), where: where}
	a := &meshAttachment{route: r, p: p}
	p.mesh = a
	if ns != r.key.Namespace {
		a.consumer = r.key.Namespace
	}
	acc := string(gwv1.RouteConditionAccepted)
	if !RoutesRequests(r.kind) {
		p.cond.fail(acc, string(gwv1.RouteReasonUnsupportedValue),
			fmt.Sprintf("gwdev's mesh binds HTTPRoutes and GRPCRoutes to Services, not %ss", r.kind))
		return p
	}
	svc := t.service(ns, name)
	switch {
	case svc == nil:
		p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent), "Service "+ns+"/"+name+" not found")
		return p
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent),
			"Service "+ns+"/"+name+" is an ExternalName Service, which has no frontend a mesh route can bind to (GEP-1294: SHOULD NOT be allowed as parentRefs)")
		return p
	case svc.Spec.ClusterIP == corev1.ClusterIPNone:
		p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent),
			"Service "+ns+"/"+name+" is headless (clusterIP: None), which has no frontend a mesh route can bind to (GEP-1294: SHOULD NOT be supported as a parentRef)")
		return p
	}
	a.svc = svc
	for _, sp := range svc.Spec.Ports {
		if ref.SectionName != nil && string(*ref.SectionName) != sp.Name {
			continue
		}
		if ref.Port != nil && int32(*ref.Port) != sp.Port {
			continue
		}
		if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
			continue
		}
		a.ports = append(a.ports, sp)
	}
	if len(a.ports) == 0 {
		p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent),
			"no TCP port of Service "+ns+"/"+name+" matches"+portSelector(ref)+" (its ports: "+servicePortList(svc.Spec.Ports)+")")
		return p
	}
	t.mesh = append(t.mesh, a)
	return p
}

// portSelector renders a parentRef's sectionName and port for messages
// (` sectionName "http" port 80`).
func portSelector(ref gwv1.ParentReference) string {
	s := ""
	if ref.SectionName != nil {
		s += " sectionName " + quote(string(*ref.SectionName))
	}
	if ref.Port != nil {
		s += " port " + itoa(int(*ref.Port))
	}
	return s
}

// servicePortList renders a Service's ports for messages: "80 (http), 9090/UDP".
func servicePortList(ps []corev1.ServicePort) string {
	if len(ps) == 0 {
		return "none"
	}
	out := make([]string, len(ps))
	for i, sp := range ps {
		s := itoa(int(sp.Port))
		if sp.Protocol != "" && sp.Protocol != corev1.ProtocolTCP {
			s += "/" + string(sp.Protocol)
		}
		if sp.Name != "" {
			s += " (" + sp.Name + ")"
		}
		out[i] = s
	}
	return strings.Join(out, ", ")
}

// meshPortKey is one Service port as seen by one group of clients: producer
// routes ("" consumer) or one namespace's consumer routes.
type meshPortKey struct {
	svc      nsName
	port     int32
	consumer string
}

// resolveMeshConflicts applies GEP-1294's route types rule: when a
// GRPCRoute and an HTTPRoute bind the same Service port (within the same
// group of producer routes, or of one namespace's consumer routes), the
// GRPCRoute wins and the HTTPRoute is not applied to that port.
func (t *translator) resolveMeshConflicts() {
	grpc := map[meshPortKey]*routeState{}
	for _, a := range t.mesh {
		if !RoutesGRPC(a.route.kind) || a.route.allRulesDropped() {
			continue
		}
		for _, sp := range a.ports {
			k := meshPortKey{nsName{a.svc.Namespace, a.svc.Name}, sp.Port, a.consumer}
			if w := grpc[k]; w == nil || olderFirst(a.route.obj, w.obj) {
				grpc[k] = a.route
			}
		}
	}
	if len(grpc) == 0 {
		return
	}
	for _, a := range t.mesh {
		if !RoutesPlainHTTP(a.route.kind) {
			continue
		}
		kept := a.ports[:0:0]
		for _, sp := range a.ports {
			w := grpc[meshPortKey{nsName{a.svc.Namespace, a.svc.Name}, sp.Port, a.consumer}]
			if w == nil {
				kept = append(kept, sp)
				continue
			}
			a.conflicts = append(a.conflicts, fmt.Sprintf("port %d: GRPCRoute %s/%s binds it too, and a GRPCRoute wins over an HTTPRoute on one Service port (GEP-1294)",
				sp.Port, w.key.Namespace, w.key.Name))
		}
		a.ports = kept
	}
}

// finishMesh decides Accepted for every Service parent: first the refusals,
// then the frontends of the Services that keep routes and their addresses,
// which the accepted parents' messages name.
func (t *translator) finishMesh() {
	t.resolveMeshConflicts()
	for _, a := range t.mesh {
		t.refuseMeshParent(a.route, a.p)
	}
	t.planMeshFrontends() // mesh_table.go
	for _, a := range t.mesh {
		if len(a.ports) > 0 {
			t.acceptMeshParent(a.route, a.p)
		}
	}
}

// refuseMeshParent sets Accepted=False on a Service parent that cannot
// take the route: refused when attached, every port lost to a GRPCRoute, or
// no rule gwdev can implement.
func (t *translator) refuseMeshParent(r *routeState, p *parentResult) {
	acc := string(gwv1.RouteConditionAccepted)
	a := p.mesh
	switch {
	case p.cond.isFalse(acc):
	case len(a.ports) == 0 && len(a.conflicts) > 0:
		p.cond.fail(acc, reasonMeshConflicted, strings.Join(a.conflicts, "; "))
	case r.allRulesDropped():
		p.cond.fail(acc, string(gwv1.RouteReasonUnsupportedValue), "no rule can be implemented: "+r.droppedMessage())
	}
	if p.cond.isFalse(acc) {
		a.ports = nil
	}
}

// acceptMeshParent accepts a Service parent: the message says whose
// requests the route applies to and on which address gwdev serves them.
func (t *translator) acceptMeshParent(r *routeState, p *parentResult) {
	acc := string(gwv1.RouteConditionAccepted)
	a := p.mesh
	if len(a.conflicts) > 0 {
		t.note(SeverityWarning, r.key, "parent "+p.where, strings.Join(a.conflicts, "; "))
	}
	if len(r.hostnames) > 0 {
		t.note(SeverityInfo, r.key, "spec.hostnames", "ignored for the Service parent "+p.where+
			": a mesh route matches requests by the Service's address, not by Host (GEP-1294: mesh implementations SHOULD NOT infer functionality from hostnames)")
	}
	addr := t.meshAddresses[meshAddressKey(a.svc, a.consumer)]
	role := "as a producer route (the Service's own namespace): it applies to requests from every namespace that has no consumer routes for the Service; gwdev serves them on " + addr
	if a.consumer != "" {
		role = "as a consumer route: it applies only to requests from namespace " + a.consumer + ", which gwdev serves on " + addr
	}
	p.cond.setDefault(acc, metav1.ConditionTrue, string(gwv1.RouteReasonAccepted),
		"accepted by gwdev's mesh for Service "+a.svc.Namespace+"/"+a.svc.Name+" port(s) "+servicePortList(a.ports)+" "+role)
	if len(r.dropped) > 0 {
		p.cond.set(string(gwv1.RouteConditionPartiallyInvalid), metav1.ConditionTrue,
			string(gwv1.RouteReasonUnsupportedValue), r.droppedMessage())
	}
}

// meshServices groups the accepted mesh attachments by Service, sorted by
// namespace/name.
func (t *translator) meshServices() []*meshService {
	by := map[nsName]*meshService{}
	var out []*meshService
	for _, a := range t.mesh {
		if len(a.ports) == 0 {
			continue
		}
		k := nsName{a.svc.Namespace, a.svc.Name}
		ms := by[k]
		if ms == nil {
			ms = &meshService{svc: a.svc, consumers: map[string][]*meshAttachment{}}
			by[k] = ms
			out = append(out, ms)
		}
		if a.consumer == "" {
			ms.producer = append(ms.producer, a)
			continue
		}
		ms.consumers[a.consumer] = append(ms.consumers[a.consumer], a)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].svc, out[j].svc
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// meshService is a Service with the mesh routes bound to it.
type meshService struct {
	svc       *Service
	producer  []*meshAttachment
	consumers map[string][]*meshAttachment
}

// clientNamespaces lists the namespaces with consumer routes, sorted.
func (ms *meshService) clientNamespaces() []string {
	out := make([]string, 0, len(ms.consumers))
	for ns := range ms.consumers {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}
