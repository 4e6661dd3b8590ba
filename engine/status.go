package engine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// writeStatus sets positive summary conditions and writes every computed
// status into the output objects.
func (t *translator) writeStatus() {
	for _, cs := range t.classes {
		if cs.obj != nil && cs.managed {
			cs.obj.Status.Conditions = cs.cond.list()
			if cs.accepted {
				cs.obj.Status.SupportedFeatures = supportedFeatureStatus() // features.go
			}
		}
	}
	for _, s := range t.listenerSets {
		t.finishListenerSet(s)
		t.writeListenerSetStatus(s)
	}
	for _, g := range t.gateways {
		t.finishGateway(g)
		t.writeGatewayStatus(g)
	}
	for _, r := range t.routes {
		t.writeRouteStatus(r)
	}
	for _, p := range t.policies {
		t.writePolicyStatus(p)
	}
	t.finishProfiles()
}

// finishGateway sets the Gateway's summary conditions from its listeners.
func (t *translator) finishGateway(g *gatewayState) {
	acc, prog := string(gwv1.GatewayConditionAccepted), string(gwv1.GatewayConditionProgrammed)
	programmed := 0
	for _, l := range g.own {
		if l.programmed() {
			programmed++
		}
	}
	// Accepted=ListenersNotValid was decided by acceptGateway.
	g.cond.setDefault(acc, metav1.ConditionTrue, string(gwv1.GatewayReasonAccepted), "accepted by gwdev")
	t.defaultGatewayCondition(g) // defaultgw.go
	switch {
	case !g.accepted():
		g.cond.fail(prog, string(gwv1.GatewayReasonInvalid), "the Gateway is not accepted")
	case g.addr == "":
		g.cond.fail(prog, string(gwv1.GatewayReasonAddressNotAssigned), "no loopback address could be assigned")
	case programmed == 0 && len(g.own) > 0:
		g.cond.fail(prog, string(gwv1.GatewayReasonInvalid), "no listener can be programmed")
	}
	g.cond.setDefault(prog, metav1.ConditionTrue, string(gwv1.GatewayReasonProgrammed), "served on "+g.addr)
	t.finishGatewayResolvedRefs(g)
}

func (t *translator) writeGatewayStatus(g *gatewayState) {
	st := &g.obj.Status
	st.Conditions = g.cond.list()
	st.Addresses = nil
	if g.served() {
		typ := gwv1.IPAddressType
		st.Addresses = []gwv1.GatewayStatusAddress{{Type: &typ, Value: g.addr}}
		if g.routability != "" {
			r := g.routability
			st.Addresses[0].Routability = &r
		}
	}
	st.Listeners = nil
	if g.pending() {
		return // not reconciled while the GatewayClass is not accepted: no listeners
	}
	for _, l := range g.own {
		st.Listeners = append(st.Listeners, gwv1.ListenerStatus{
			Name: gwv1.SectionName(l.name), SupportedKinds: nonNilKinds(l.supportedKinds),
			AttachedRoutes: l.attachedRoutes, Conditions: l.cond.list(),
		})
	}
	if al := g.obj.Spec.AllowedListeners; al != nil && al.Namespaces != nil && al.Namespaces.From != nil && *al.Namespaces.From != gwv1.NamespacesFromNone {
		n := int32(0)
		for _, s := range g.sets {
			if !s.cond.isFalse(string(gwv1.ListenerSetConditionAccepted)) {
				n++
			}
		}
		st.AttachedListenerSets = &n
	}
}

func nonNilKinds(k []gwv1.RouteGroupKind) []gwv1.RouteGroupKind {
	if k == nil {
		return []gwv1.RouteGroupKind{}
	}
	return k
}

func (t *translator) writeListenerSetStatus(s *listenerSetState) {
	st := &s.obj.Status
	st.Conditions = s.cond.list()
	st.Listeners = nil
	if !s.attached {
		return
	}
	for _, l := range s.listeners {
		st.Listeners = append(st.Listeners, gwv1.ListenerEntryStatus{
			Name: gwv1.SectionName(l.name), SupportedKinds: nonNilKinds(l.supportedKinds),
			AttachedRoutes: l.attachedRoutes, Conditions: l.cond.list(),
		})
	}
}

// writeRouteStatus fills status.parents, adding the route-wide ResolvedRefs
// condition to every parent.
func (t *translator) writeRouteStatus(r *routeState) {
	parents := []gwv1.RouteParentStatus{} // parents is required: [] when gwdev manages none
	for _, p := range r.parents {
		if len(r.refFailures) > 0 {
			f := r.refFailures[0]
			msg := f.msg
			if n := len(r.refFailures) - 1; n > 0 {
				msg += " (and " + itoa(n) + " more)"
			}
			p.cond.fail(string(gwv1.RouteConditionResolvedRefs), string(f.reason), msg)
		}
		p.cond.setDefault(string(gwv1.RouteConditionResolvedRefs), metav1.ConditionTrue, string(gwv1.RouteReasonResolvedRefs), "all references are resolved")
		controller := t.opts.controllerName()
		if p.mesh != nil {
			controller = MeshControllerName
		}
		parents = append(parents, gwv1.RouteParentStatus{
			ParentRef: p.ref, ControllerName: gwv1.GatewayController(controller), Conditions: p.cond.handOut(),
		})
	}
	r.route.RouteStatus().Parents = parents
}

// writePolicyStatus writes one ancestor entry per Gateway that uses a
// targeted Service (at most 16, as the API allows).
func (t *translator) writePolicyStatus(ps *policyState) {
	ps.cond.setDefault(string(gwv1.PolicyConditionAccepted), metav1.ConditionTrue, string(gwv1.PolicyReasonAccepted), "policy is accepted")
	ps.ancestors = t.policyAncestors(ps)
	if len(ps.ancestors) == 0 {
		t.noteKind(NoteUnused, SeverityInfo, ps.key, "", "no route of a managed Gateway uses a Service this policy targets")
	}
	ps.obj.Status.Ancestors = t.policyAncestorStatus(ps.ancestors, ps.cond)
}

// policyAncestorStatus is a policy's status.ancestors: one entry per
// Gateway (at most 16, as the API allows), each with the policy's
// conditions.
func (t *translator) policyAncestorStatus(ancestors []*gatewayState, cond *conditionSet) []gwv1.PolicyAncestorStatus {
	out := []gwv1.PolicyAncestorStatus{} // "An empty list means the Policy is not relevant for any ancestors."
	for i, g := range ancestors {
		if i == 16 {
			break
		}
		out = append(out, gwv1.PolicyAncestorStatus{
			AncestorRef:    gatewayParentRef(g),
			ControllerName: gwv1.GatewayController(t.opts.controllerName()),
			Conditions:     cond.list(),
		})
	}
	return out
}

// gatewayParentRef names a Gateway as a status ancestor or parent.
func gatewayParentRef(g *gatewayState) gwv1.ParentReference {
	grp, kind, ns := gwv1.Group(Group), gwv1.Kind("Gateway"), gwv1.Namespace(g.key.Namespace)
	return gwv1.ParentReference{Group: &grp, Kind: &kind, Namespace: &ns, Name: gwv1.ObjectName(g.key.Name)}
}
