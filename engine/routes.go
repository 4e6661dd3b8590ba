package engine

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// routeState is one route of any kind during translation.
type routeState struct {
	kind       string // HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute
	key        ObjectKey
	obj        object
	gen        int64
	parentRefs []gwv1.ParentReference
	// hostnames are the route's spec.hostnames (nil for TCP/UDP routes).
	hostnames []string

	// refFailures are ResolvedRefs problems, in rule order; the first one
	// becomes the condition.
	refFailures []routeFailure
	// acceptFailures make Accepted=False on every parent (UnsupportedValue).
	acceptFailures []routeFailure

	// compiled route content, one of these per kind.
	rules  []*RouteRule
	sni    []*SNIRoute
	stream []*StreamRoute

	parents []*parentResult
}

// routeFailure is a condition reason with its message.
type routeFailure struct {
	reason gwv1.RouteConditionReason
	msg    string
}

// parentResult is the outcome of one parentRef.
type parentResult struct {
	ref         gwv1.ParentReference
	cond        *conditionSet
	attachments []*attachment
}

// attachment is a route attached to one listener, with the hostnames it
// serves there (route hostnames intersected with the listener's).
type attachment struct {
	route *routeState
	l     *listenerState
	hosts []string
}

func (r *routeState) failRefs(reason gwv1.RouteConditionReason, format string, args ...any) {
	r.refFailures = append(r.refFailures, routeFailure{reason, fmt.Sprintf(format, args...)})
}

// processRoutes compiles every route's rules and attaches it to its parents.
func (t *translator) processRoutes() {
	t.collectRoutes()
	for _, r := range t.routes {
		t.compileRoute(r)
		for i, ref := range r.parentRefs {
			if p := t.attachRoute(r, i, ref); p != nil {
				r.parents = append(r.parents, p)
			}
		}
	}
}

// parentDisplay renders a parentRef for messages.
func parentDisplay(kind, ns, name string, ref gwv1.ParentReference) string {
	s := kind + " " + ns + "/" + name
	if ref.SectionName != nil {
		s += " sectionName " + quote(string(*ref.SectionName))
	}
	if ref.Port != nil {
		s += fmt.Sprintf(" port %d", *ref.Port)
	}
	return s
}

// attachRoute evaluates one parentRef. It returns nil when the parent is not
// something gwdev manages (no status is written for it then).
func (t *translator) attachRoute(r *routeState, idx int, ref gwv1.ParentReference) *parentResult {
	group, kind := Group, "Gateway"
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
	scope := fmt.Sprintf("parentRefs[%d]", idx)
	if group != Group || (kind != "Gateway" && kind != "ListenerSet") {
		t.note(SeverityWarning, r.key, scope, fmt.Sprintf("parent %s/%s %s is not a Gateway or ListenerSet; gwdev ignores it", group, kind, ref.Name))
		return nil
	}
	sref := ref
	g, k := gwv1.Group(group), gwv1.Kind(kind)
	sref.Group, sref.Kind = &g, &k
	p := &parentResult{ref: sref, cond: newConditionSet(r.gen, t.opts.Now)}
	acc := string(gwv1.RouteConditionAccepted)
	where := parentDisplay(kind, ns, string(ref.Name), ref)

	var candidates []*listenerState
	switch kind {
	case "Gateway":
		gw := t.gatewayByKey[nsName{ns, string(ref.Name)}]
		if gw == nil {
			if t.gatewayExists(ns, string(ref.Name)) {
				return nil // another controller's Gateway
			}
			p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent), "Gateway "+ns+"/"+string(ref.Name)+" not found")
			return p
		}
		candidates = gw.own
	case "ListenerSet":
		s := t.setByKey[nsName{ns, string(ref.Name)}]
		if s == nil {
			p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent), "ListenerSet "+ns+"/"+string(ref.Name)+" not found")
			return p
		}
		if !s.attached {
			p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent), "ListenerSet "+ns+"/"+string(ref.Name)+" is not attached to its Gateway")
			return p
		}
		candidates = s.listeners
	}
	var selected []*listenerState
	for _, l := range candidates {
		if ref.SectionName != nil && string(*ref.SectionName) != l.name {
			continue
		}
		if ref.Port != nil && int32(*ref.Port) != l.port {
			continue
		}
		selected = append(selected, l)
	}
	if len(selected) == 0 {
		p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent), "no listener matches "+where)
		return p
	}
	var notAllowed, noHost []string
	for _, l := range selected {
		if why := t.listenerAllows(l, r); why != "" {
			notAllowed = append(notAllowed, fmt.Sprintf("listener %q: %s", l.name, why))
			continue
		}
		hosts := []string{""}
		if r.hostnames != nil || r.kind == "HTTPRoute" || r.kind == "GRPCRoute" || r.kind == "TLSRoute" {
			var ok bool
			hosts, ok = effectiveHostnames(l.hostname, r.hostnames)
			if !ok {
				noHost = append(noHost, fmt.Sprintf("listener %q (hostname %s)", l.name, displayHost(l.hostname)))
				continue
			}
		}
		p.attachments = append(p.attachments, &attachment{route: r, l: l, hosts: hosts})
	}
	switch {
	case len(p.attachments) > 0:
	case len(noHost) > 0:
		p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingListenerHostname),
			"no route hostname ("+strings.Join(r.hostnames, ", ")+") intersects "+strings.Join(noHost, ", "))
	default:
		p.cond.fail(acc, string(gwv1.RouteReasonNotAllowedByListeners), strings.Join(notAllowed, "; "))
	}
	if len(p.attachments) > 0 {
		for _, f := range r.acceptFailures {
			p.cond.fail(acc, string(f.reason), f.msg)
		}
	}
	if len(p.attachments) > 0 && !p.cond.isFalse(acc) {
		counted := map[*listenerState]bool{}
		for _, a := range p.attachments {
			if !counted[a.l] {
				counted[a.l] = true
				a.l.attachedRoutes++
				a.l.addAttachment(a)
			}
		}
		t.recordBackendUses(r, p)
		p.cond.setDefault(acc, metav1.ConditionTrue, string(gwv1.RouteReasonAccepted), "accepted by "+where)
	} else {
		p.attachments = nil
	}
	return p
}

// gatewayExists reports whether a Gateway manifest exists, managed or not.
func (t *translator) gatewayExists(ns, name string) bool {
	for _, gw := range t.out.Gateways {
		if gw.Namespace == ns && gw.Name == name {
			return true
		}
	}
	return false
}

// listenerAllows checks allowedRoutes kinds and namespaces; it returns why
// the listener refuses the route, or "".
func (t *translator) listenerAllows(l *listenerState, r *routeState) string {
	kindOK := false
	for _, k := range l.supportedKinds {
		if string(k.Kind) == r.kind && (k.Group == nil || string(*k.Group) == Group) {
			kindOK = true
		}
	}
	if !kindOK {
		var kinds []string
		for _, k := range l.supportedKinds {
			kinds = append(kinds, string(k.Kind))
		}
		if len(kinds) == 0 {
			return fmt.Sprintf("allows no route kinds (protocol %s)", l.protocol)
		}
		return fmt.Sprintf("allows only %s, not %s", strings.Join(kinds, ", "), r.kind)
	}
	from := gwv1.NamespacesFromSame
	var sel *metav1.LabelSelector
	if l.allowed != nil && l.allowed.Namespaces != nil {
		if l.allowed.Namespaces.From != nil {
			from = *l.allowed.Namespaces.From
		}
		sel = l.allowed.Namespaces.Selector
	}
	if ok, why := t.namespaceSelected(from, sel, l.ownerKey().Namespace, r.key.Namespace); !ok {
		return "allowedRoutes.namespaces: " + why
	}
	return ""
}

// addAttachment records a route on the listener for the routing table.
func (l *listenerState) addAttachment(a *attachment) {
	l.attachments = append(l.attachments, a)
}

// recordBackendUses notes which Gateways use each Service of the route.
func (t *translator) recordBackendUses(r *routeState, p *parentResult) {
	g := p.attachments[0].l.gateway
	for _, b := range r.backends() {
		k := nsName{b.Service.Namespace, b.Service.Name}
		seen := false
		for _, x := range t.backendUses[k] {
			if x == g {
				seen = true
			}
		}
		if !seen {
			t.backendUses[k] = append(t.backendUses[k], g)
		}
	}
}

// backends lists every resolved backend of the route (including mirrors).
func (r *routeState) backends() []*Backend {
	var out []*Backend
	seen := map[*Backend]bool{}
	add := func(bs []*Backend) {
		for _, b := range bs {
			if b != nil && !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	for _, rr := range r.rules {
		add(rr.Backends)
		add(rr.Mirrors)
	}
	for _, s := range r.sni {
		add(s.Backends)
	}
	for _, s := range r.stream {
		add(s.Backends)
	}
	return out
}
