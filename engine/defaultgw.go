package engine

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Default Gateways (GEP-3793): a Gateway with spec.defaultScope claims the
// routes whose spec.useDefaultGateways names the same scope, "subject to the
// usual rules about which routes the Gateway can attach to", and such a
// route behaves "the same as if all default Gateways were explicitly
// specified in parentRefs". gwdev's choices where the GEP leaves room are in
// docs/decisions.md ("Default Gateways").

// ConditionDefaultGateway is the Gateway condition GEP-3793 asks a default
// Gateway to set ("a condition of type DefaultGateway and status true").
const ConditionDefaultGateway = "DefaultGateway"

// Reasons of the DefaultGateway condition; the GEP names none.
const (
	// ReasonDefaultScope: the Gateway claims routes of its default scope.
	ReasonDefaultScope = "DefaultScope"
	// ReasonDefaultGatewayNotAccepted: the Gateway is not accepted, so it
	// claims no route.
	ReasonDefaultGatewayNotAccepted = "NotAccepted"
)

// defaultScope is the scope a Gateway or route names, "" for none (unset,
// empty or None: "None is a special scope which explicitly means that the
// Route MUST NOT attached to any default Gateway").
func defaultScope(s gwv1.GatewayDefaultScope) gwv1.GatewayDefaultScope {
	if s == gwv1.GatewayDefaultScopeNone {
		return ""
	}
	return s
}

// defaultGatewayCondition sets DefaultGateway on a Gateway with a default
// scope; a Gateway without one gets none ("MUST NOT set the DefaultGateway
// condition").
func (t *translator) defaultGatewayCondition(g *gatewayState) {
	scope := defaultScope(g.obj.Spec.DefaultScope)
	if scope == "" || g.pending() {
		return
	}
	if !g.claimsRoutes() {
		g.cond.set(ConditionDefaultGateway, metav1.ConditionFalse, ReasonDefaultGatewayNotAccepted,
			"Gateway has default scope "+string(scope)+" but is not accepted, so it claims no route")
		return
	}
	g.cond.set(ConditionDefaultGateway, metav1.ConditionTrue, ReasonDefaultScope, "Gateway has default scope "+string(scope))
}

// claimsRoutes reports whether routes may attach to the Gateway: it is
// accepted, or refused only because its listeners are invalid (listener
// status does not impact attachment).
func (g *gatewayState) claimsRoutes() bool {
	return g.accepted() || g.cond.isFalseWith(string(gwv1.GatewayConditionAccepted), string(gwv1.GatewayReasonListenersNotValid))
}

// attachDefaultGateways attaches a route that asks for default Gateways to
// every managed Gateway of the same scope that may claim it (one of its
// listeners admits the route's kind and namespace), after its explicit
// parentRefs. A Gateway the route names in parentRefs is left to that
// parentRef. It returns why no default Gateway claimed the route ("" when
// one did, or when the route asks for none).
func (t *translator) attachDefaultGateways(r *routeState) string {
	scope := defaultScope(r.useDefaultGateways)
	if scope == "" {
		return ""
	}
	var refused []string
	claimed := false
	for _, g := range t.gateways {
		if defaultScope(g.obj.Spec.DefaultScope) != scope {
			continue
		}
		if !g.claimsRoutes() {
			refused = append(refused, "Gateway "+g.key.Namespace+"/"+g.key.Name+" is not accepted")
			continue
		}
		if r.namesGateway(g) {
			claimed = true // its parentRef decides
			continue
		}
		if why := t.gatewayRefusesRoute(g, r); why != "" {
			refused = append(refused, "Gateway "+g.key.Namespace+"/"+g.key.Name+": "+why)
			continue
		}
		grp, kind, ns := gwv1.Group(Group), gwv1.Kind("Gateway"), gwv1.Namespace(g.key.Namespace)
		ref := gwv1.ParentReference{Group: &grp, Kind: &kind, Namespace: &ns, Name: gwv1.ObjectName(g.key.Name)}
		if p := t.attachRoute(r, -1, ref); p != nil {
			p.where = "default Gateway " + g.key.Namespace + "/" + g.key.Name
			r.parents = append(r.parents, p)
			claimed = true
		}
	}
	switch {
	case claimed:
		return ""
	case len(refused) > 0:
		return "useDefaultGateways: " + string(scope) + ", but no default Gateway may claim the route (" + strings.Join(refused, "; ") + "); it attaches only to its parentRefs"
	}
	return "useDefaultGateways: " + string(scope) + ", but no Gateway has defaultScope " + string(scope) + "; it attaches only to its parentRefs"
}

// namesGateway reports whether a parentRef of the route names the Gateway.
func (r *routeState) namesGateway(g *gatewayState) bool {
	for _, ref := range r.parentRefs {
		if ref.Group != nil && string(*ref.Group) != Group || ref.Kind != nil && string(*ref.Kind) != "Gateway" {
			continue
		}
		ns := r.key.Namespace
		if ref.Namespace != nil && *ref.Namespace != "" {
			ns = string(*ref.Namespace)
		}
		if ns == g.key.Namespace && string(ref.Name) == g.key.Name {
			return true
		}
	}
	return false
}

// gatewayRefusesRoute says why none of the Gateway's own listeners admits
// the route's kind and namespace ("" when one does).
func (t *translator) gatewayRefusesRoute(g *gatewayState, r *routeState) string {
	if len(g.own) == 0 {
		return "it has no listeners"
	}
	var whys []string
	for _, l := range g.own {
		why := t.listenerAllows(l, r)
		if why == "" {
			return ""
		}
		whys = append(whys, "listener "+quote(l.name)+": "+why)
	}
	return strings.Join(whys, ", ")
}
