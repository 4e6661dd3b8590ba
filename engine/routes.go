package engine

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// routeState is one route of any kind during translation.
type routeState struct {
	kind string // HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute
	key  ObjectKey
	// src is where the route was read from (its rules' sources narrow it):
	// the input snapshot's entry, shared (never nil).
	src *Source
	// name is "<kind>/<ns>/<name>" with the kind in lower case: the start of
	// its rule names (see ruleName).
	name       string
	obj        object
	route      Route
	gen        int64
	parentRefs []gwv1.ParentReference
	// useDefaultGateways is the route's spec.useDefaultGateways (GEP-3793).
	useDefaultGateways gwv1.GatewayDefaultScope
	// hostnames are the route's spec.hostnames (nil for TCP/UDP routes).
	hostnames []string
	// index is the route's position in translator.routes (collectRoutes).
	index int32
	// meshOnly is true when every parentRef names a Service (see meshOnly).
	meshOnly bool
	// shared is set when rules, sni and stream are shared with the
	// incremental cache: ownRules copies them before an edit.
	shared bool

	// compiled is what compileRoute makes of the route's rules.
	compiled

	parents []*parentResult
	// verdict is the first profile verdict on the route (profileRoute's
	// memo; nil: none yet), shared by every route with the same one.
	verdict *routeVerdict
}

// compiled is a route's compile output (compileRoute), which an
// incremental translation reuses (incremental.go).
type compiled struct {
	// refFailures are ResolvedRefs problems, in rule order; the first one
	// becomes the condition.
	refFailures []routeFailure
	// ruleCount is the number of rules in the route's spec.
	ruleCount int
	// dropped lists the rules gwdev cannot implement, in rule order; they are
	// left out of the table (PartiallyInvalid, or Accepted=False when every
	// rule is dropped).
	dropped []droppedRule

	// compiled route content, one of these per kind.
	rules []*RouteRule
	// pathLens parallels rules: each HTTP match's path length as written,
	// which precedence compares (see writtenPathLen).
	pathLens []int
	sni      []*SNIRoute
	stream   []*StreamRoute
}

// routeFailure is a condition reason with its message.
type routeFailure struct {
	reason gwv1.RouteConditionReason
	msg    string
	// path is the field the failure is about, such as
	// spec.rules[0].backendRefs[1], for its line in findings ("": the
	// parentRef's line).
	path string
}

// at returns f about the field at path.
func (f *routeFailure) at(path string) routeFailure {
	c := *f
	c.path = path
	return c
}

// backendRefPath is the path of backendRef k of rule i.
func backendRefPath(i, k int) string {
	return "spec.rules[" + itoa(i) + "].backendRefs[" + itoa(k) + "]"
}

// droppedRule is a rule left out of the table, with why.
type droppedRule struct {
	index int
	name  string // the rule's spec name, if any
	why   string
}

// listenersKnown is what a parentRef that matches no listener adds to its
// message: the parent's listeners with their protocol and port, and the
// nearest name to the parentRef's sectionName (knownNames).
func listenersKnown(kind string, ref gwv1.ParentReference, ls []*listenerState) string {
	names, labels := make([]string, len(ls)), make([]string, len(ls))
	for i, l := range ls {
		names[i], labels[i] = l.name, string(l.protocol)+" "+itoa(int(l.port))
	}
	want := ""
	if ref.SectionName != nil {
		want = string(*ref.SectionName)
	}
	return knownNames("the "+kind+"'s listeners", want, names, labels)
}

// parentResult is the outcome of one parentRef.
type parentResult struct {
	// index is the parentRef's position in spec.parentRefs; -1 for a
	// default Gateway (defaultgw.go).
	index       int
	ref         gwv1.ParentReference
	cond        *conditionSet
	attachments []*attachment
	// where renders the parentRef for messages.
	where string
	// conflicts explain attachments removed because an HTTPRoute and a
	// GRPCRoute claimed intersecting hostnames on one listener.
	conflicts []string
	// mesh is set when the parent is a Service (mesh.go).
	mesh *meshAttachment
}

// attachment is a route attached to one listener, with the hostnames it
// serves there (route hostnames intersected with the listener's).
type attachment struct {
	route *routeState
	l     *listenerState
	hosts []string
}

// processRoutes compiles every route's rules, selects the listeners each
// parentRef reaches, settles HTTPRoute/GRPCRoute hostname conflicts, and then
// attaches what remains.
func (t *translator) processRoutes() {
	t.collectRoutes()
	for _, r := range t.routes {
		r.meshOnly = meshOnly(r.parentRefs)
		t.compileOrReuse(r) // incremental.go
		for i, ref := range r.parentRefs {
			if p := t.attachRoute(r, i, ref); p != nil {
				r.parents = append(r.parents, p)
			}
		}
		if why := t.attachDefaultGateways(r); why != "" {
			t.note(SeverityWarning, r.key, "spec.useDefaultGateways", why)
		}
	}
	t.resolveCrossServing()
	t.finishMesh() // mesh.go
	for _, r := range t.routes {
		for _, p := range r.parents {
			if p.mesh == nil {
				t.finishParent(r, p)
			}
		}
	}
}

// allRulesDropped reports whether the route has rules and gwdev can
// implement none of them.
func (r *routeState) allRulesDropped() bool {
	return r.ruleCount > 0 && len(r.dropped) == r.ruleCount
}

// droppedMessage renders the dropped rules, each part starting with
// "Dropped Rule" as RouteConditionPartiallyInvalid requires.
func (r *routeState) droppedMessage() string {
	parts := make([]string, 0, len(r.dropped))
	for _, d := range r.dropped {
		id := itoa(d.index)
		if d.name != "" {
			id += " (" + quote(d.name) + ")"
		}
		parts = append(parts, "Dropped Rule "+id+": "+d.why)
	}
	return strings.Join(parts, "; ")
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

// parentKey is what parentDisplay renders of a parentRef.
type parentKey struct {
	kind, ns, name, section string
	port                    int32
	hasSection, hasPort     bool
}

// parentWhere renders a Gateway or ListenerSet parentRef for messages
// (parentDisplay) once per translation: the routes attached to one parent
// share the string.
func (t *translator) parentWhere(kind, ns string, ref gwv1.ParentReference) string {
	k := parentKey{kind: kind, ns: ns, name: string(ref.Name)}
	if ref.SectionName != nil {
		k.section, k.hasSection = string(*ref.SectionName), true
	}
	if ref.Port != nil {
		k.port, k.hasPort = int32(*ref.Port), true
	}
	if w, ok := t.words.where[k]; ok {
		return w
	}
	w := parentDisplay(kind, ns, string(ref.Name), ref)
	if t.words.where == nil {
		t.words.where = map[parentKey]string{}
	}
	t.words.where[k] = w
	return w
}

// acceptedBy is the message of Accepted=True for the parent displayed as
// where, made once per translation: the routes attached to one parent
// share it (with parentWhere, 0.7 MB fewer for 10,000 HTTPRoutes).
func (t *translator) acceptedBy(where string) string {
	if m, ok := t.words.accepted[where]; ok {
		return m
	}
	m := "accepted by " + where
	if t.words.accepted == nil {
		t.words.accepted = map[string]string{}
	}
	t.words.accepted[where] = m
	return m
}

// parentWords are the messages about route parents a translation made
// once (parentWhere, acceptedBy).
type parentWords struct {
	where    map[parentKey]string
	accepted map[string]string
}

// attachRoute evaluates one parentRef. It returns nil when the parent is not
// something gwdev manages (no status is written for it then).
func (t *translator) attachRoute(r *routeState, idx int, ref gwv1.ParentReference) *parentResult {
	group, kind := parentGroupKind(ref)
	ns := r.key.Namespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	if isCoreService(group, kind) {
		return t.attachMesh(r, idx, ref, ns)
	}
	if group != Group || (kind != "Gateway" && kind != "ListenerSet") {
		t.note(SeverityWarning, r.key, "parentRefs["+itoa(idx)+"]", fmt.Sprintf("parent %s/%s %s is not a Gateway, ListenerSet or core Service; gwdev ignores it", group, kind, ref.Name))
		return nil
	}
	sref := ref
	// The loaded ref's own group and kind where it names them (defaulted
	// on load, shared; nothing writes through them): a pair of each
	// route's was 0.3 MB for 10,000 HTTPRoutes.
	if ref.Group == nil || string(*ref.Group) != group {
		g := gwv1.Group(group)
		sref.Group = &g
	}
	if ref.Kind == nil || string(*ref.Kind) != kind {
		k := gwv1.Kind(kind)
		sref.Kind = &k
	}
	where := t.parentWhere(kind, ns, ref)
	p := &parentResult{index: idx, ref: sref, cond: newConditionSet(r.gen, &t.opts.Now), where: where}
	acc := string(gwv1.RouteConditionAccepted)

	var candidates []*listenerState
	var parent *gatewayState // the Gateway whose profile applies
	switch kind {
	case "Gateway":
		gw := t.gatewayByKey[nsName{ns, string(ref.Name)}]
		if gw == nil {
			if t.gatewayExists(ns, string(ref.Name)) {
				return nil // another controller's Gateway
			}
			p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent), "Gateway "+ns+"/"+string(ref.Name)+" not found"+
				knownNames("the Gateways in "+ns, string(ref.Name), t.namesIn("Gateway", ns), nil))
			return p
		}
		// Listener status does not impact attachment (spec, attachedRoutes):
		// a Gateway refused only because its listeners are invalid still
		// takes routes; one refused for anything else does not.
		if !gw.claimsRoutes() {
			why := "is not accepted"
			if c := gw.cond.get(string(gwv1.GatewayConditionAccepted)); c != nil {
				why += " (" + c.Reason + ": " + c.Message + ")"
			}
			p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent), "Gateway "+ns+"/"+string(ref.Name)+" "+why)
			return p
		}
		candidates, parent = gw.own, gw
	case "ListenerSet":
		s := t.setByKey[nsName{ns, string(ref.Name)}]
		if s == nil {
			p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent), "ListenerSet "+ns+"/"+string(ref.Name)+" not found"+
				knownNames("the ListenerSets in "+ns, string(ref.Name), t.namesIn("ListenerSet", ns), nil))
			return p
		}
		if !s.attached {
			p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent), "ListenerSet "+ns+"/"+string(ref.Name)+" is not attached to its Gateway")
			return p
		}
		candidates, parent = s.listeners, s.parent
	}
	if why := t.profileRoute(r, parent); why != "" {
		p.cond.failAt(t.verdictField(why), acc, string(gwv1.RouteReasonUnsupportedValue), why)
		return p
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
		p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent), "no listener matches "+where+listenersKnown(kind, ref, candidates))
		return p
	}
	var notAllowed, noHost []string
	for _, l := range selected {
		if why := t.listenerAllows(l, r); why != "" {
			notAllowed = append(notAllowed, fmt.Sprintf("listener %q: %s", l.name, why))
			continue
		}
		var hosts []string
		if r.hostnames != nil || RouteHasHostnames(r.kind) {
			var ok bool
			hosts, ok = effectiveHostnames(l.hostname, r.hostnames)
			if !ok {
				noHost = append(noHost, fmt.Sprintf("listener %q (hostname %s)", l.name, displayHost(l.hostname)))
				continue
			}
		} else {
			hosts = []string{""} // made only here: most routes have hostnames
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
	return p
}

// finishParent decides Accepted for one parentRef whose listeners are known:
// the route attaches to what is left after cross-serving conflicts, unless
// none of its rules can be implemented. Only accepted routes count in a
// listener's attachedRoutes.
func (t *translator) finishParent(r *routeState, p *parentResult) {
	acc := string(gwv1.RouteConditionAccepted)
	if !decideAccepted(r, p) {
		return
	}
	for _, a := range p.attachments {
		a.l.attachedRoutes++
		a.l.addAttachment(a)
	}
	if len(t.out.BackendTLSPolicies) > 0 {
		t.recordBackendUses(r, p)
	}
	if len(p.conflicts) > 0 {
		t.noteKind(NoteCrossKindHostname, SeverityWarning, r.key, "parent "+p.where, strings.Join(p.conflicts, "; "))
	}
	if !p.cond.has(acc) {
		p.cond.setDefault(acc, metav1.ConditionTrue, string(gwv1.RouteReasonAccepted), t.acceptedBy(p.where))
	}
	if len(r.dropped) > 0 {
		p.cond.set(string(gwv1.RouteConditionPartiallyInvalid), metav1.ConditionTrue,
			string(gwv1.RouteReasonUnsupportedValue), r.droppedMessage())
	}
}

// decideAccepted refuses the parentRef (Accepted=False, no attachments)
// when nothing is left after cross-serving conflicts or none of the
// route's rules can be implemented, and reports whether it stays accepted.
// It writes to p alone.
func decideAccepted(r *routeState, p *parentResult) bool {
	acc := string(gwv1.RouteConditionAccepted)
	switch {
	case p.cond.isFalse(acc):
	case len(p.attachments) == 0 && len(p.conflicts) > 0:
		p.cond.fail(acc, reasonHostnameConflict, strings.Join(p.conflicts, "; "))
	case len(p.attachments) == 0:
		p.cond.fail(acc, string(gwv1.RouteReasonNoMatchingParent), "no listener of "+p.where+" accepts the route")
	case r.allRulesDropped():
		p.cond.fail(acc, string(gwv1.RouteReasonUnsupportedValue), "no rule can be implemented: "+r.droppedMessage())
	}
	if p.cond.isFalse(acc) {
		p.attachments = nil
		return false
	}
	return true
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

// recordBackendUses notes which Gateways use each Service of the route
// (only references that resolved: an unknown kind or a refused reference
// does not make a Gateway use a Service).
func (t *translator) recordBackendUses(r *routeState, p *parentResult) {
	g := p.attachments[0].l.gateway
	for _, b := range r.backends() {
		if b.Service.Kind != "Service" || b.Invalid != "" {
			continue
		}
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

// backends lists every resolved backend of the route (including mirrors
// and ExternalAuth backends).
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
		add(authBackends(rr.ExternalAuth))
		for _, b := range rr.Backends {
			add(b.Mirrors)
			add(authBackends(b.ExternalAuth))
		}
	}
	for _, s := range r.sni {
		add(s.Backends)
	}
	for _, s := range r.stream {
		add(s.Backends)
	}
	return out
}

// reasonHostnameConflict is gwdev's Accepted=False reason for the route that
// loses a cross-serving conflict; the API names no reason for it.
const reasonHostnameConflict = "HostnameConflict"

// crossServingCandidate is one HTTPRoute or GRPCRoute attachment to a
// listener, with the parentRef it came through.
type crossServingCandidate struct {
	a *attachment
	p *parentResult
}

// resolveCrossServing enforces the GRPCRoute rule: "If a Route (A) of type
// HTTPRoute or GRPCRoute is attached to a Listener and that listener already
// has another Route (B) of the other type attached and the intersection of
// the hostnames of A and B is non-empty, then the implementation MUST accept
// exactly one of these two routes": the oldest, then by namespace/name. The
// loser's attachment to that listener is removed.
func (t *translator) resolveCrossServing() {
	// A route only competes with the other kind: with routes of one kind
	// there is nothing to resolve (for 10,000 HTTPRoutes the candidate
	// lists were 1 MB, and their sort the rest).
	var grpc, plain bool
	for _, r := range t.routes {
		if RoutesRequests(r.kind) {
			grpc, plain = grpc || RoutesGRPC(r.kind), plain || !RoutesGRPC(r.kind)
		}
	}
	if !grpc || !plain {
		return
	}
	var order []*listenerState
	byListener := map[*listenerState][]crossServingCandidate{}
	for _, r := range t.routes {
		if !RoutesRequests(r.kind) || r.allRulesDropped() {
			continue
		}
		for _, p := range r.parents {
			if p.cond.isFalse(string(gwv1.RouteConditionAccepted)) {
				continue
			}
			for _, a := range p.attachments {
				if byListener[a.l] == nil {
					order = append(order, a.l)
				}
				byListener[a.l] = append(byListener[a.l], crossServingCandidate{a, p})
			}
		}
	}
	for _, l := range order {
		cs := byListener[l]
		sort.SliceStable(cs, func(i, j int) bool {
			return cs[i].a.route != cs[j].a.route && olderFirst(cs[i].a.route.obj, cs[j].a.route.obj)
		})
		// Kept attachments by route kind: a route only competes with the
		// other kind, so the common case (no GRPCRoutes) stays linear.
		kept := map[string][]*attachment{}
		for _, c := range cs {
			other := KindGRPCRoute
			if RoutesGRPC(c.a.route.kind) {
				other = KindHTTPRoute
			}
			if winner := crossServingWinner(kept[other], c.a); winner != nil {
				c.p.conflicts = append(c.p.conflicts, fmt.Sprintf(
					"listener %q: %s %s/%s (older, or first by namespace/name) already serves hostnames intersecting %s; an HTTPRoute and a GRPCRoute cannot share a hostname on one listener",
					l.name, winner.route.kind, winner.route.key.Namespace, winner.route.key.Name, displayHosts(c.a.hosts)))
				c.p.attachments = removeAttachment(c.p.attachments, c.a)
				continue
			}
			kept[c.a.route.kind] = append(kept[c.a.route.kind], c.a)
		}
	}
}

// crossServingWinner returns the kept attachment (of the other route kind)
// whose hostnames intersect a's, or nil.
func crossServingWinner(kept []*attachment, a *attachment) *attachment {
	for _, k := range kept {
		if hostListsIntersect(k.hosts, a.hosts) {
			return k
		}
	}
	return nil
}

// hostListsIntersect reports whether some host matches a hostname of each
// list ("" matches any host).
func hostListsIntersect(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if _, ok := intersectHostname(x, y); ok {
				return true
			}
		}
	}
	return false
}

// displayHosts renders served hostnames for messages ("" is any host).
func displayHosts(hs []string) string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = displayHost(h)
	}
	return strings.Join(out, ", ")
}

func removeAttachment(as []*attachment, a *attachment) []*attachment {
	out := as[:0:0]
	for _, x := range as {
		if x != a {
			out = append(out, x)
		}
	}
	return out
}
