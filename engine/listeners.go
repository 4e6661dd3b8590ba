package engine

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// listenerState is one listener of a Gateway or ListenerSet during
// translation. Condition types and reasons are shared by Listener and
// ListenerEntry status.
type listenerState struct {
	gateway  *gatewayState     // the Gateway it is merged into (nil: set not attached)
	set      *listenerSetState // nil for the Gateway's own listeners
	index    int
	name     string
	hostname string
	port     int32
	protocol gwv1.ProtocolType
	tls      *gwv1.ListenerTLSConfig
	allowed  *gwv1.AllowedRoutes

	cond           *conditionSet
	supportedKinds []gwv1.RouteGroupKind
	conflicted     bool
	// conflictsWith names the listener it conflicts with ("": none).
	conflictsWith  string
	attachedRoutes int32
	attachments    []*attachment
	// byHost are the rules served on each hostname of an HTTP or HTTPS
	// listener, for the next translation's patched table (rulesByHost;
	// sorted by precedence only when virtualHosts built from them; nil
	// until the table is built or indexHosts runs).
	byHost   map[string][]rulePosition
	tlsTable *ListenerTLS
	// filters are the listener's pre-routing filters (nil: none);
	// preAuth their compiled ExternalAuth entries in order, preRefused why
	// every request on the listener is refused ("": none), see
	// listenerfilters.go.
	filters    *gwv1.ListenerFilters
	preAuth    []*ExternalAuth
	preRefused string
}

// ownerKey is the Gateway or ListenerSet that declares the listener.
func (l *listenerState) ownerKey() ObjectKey {
	if l.set != nil {
		return l.set.key
	}
	return l.gateway.key
}

// tableName is the listener's stable name in the routing table.
func (l *listenerState) tableName() string {
	k := l.ownerKey()
	return strings.ToLower(k.Kind) + "/" + k.Namespace + "/" + k.Name + "/listener/" + l.name
}

// valid reports whether the listener can be configured: it is not
// conflicted, not refused (Accepted=False) and not kept from being programmed
// by its own configuration (for example no usable certificate). A failed
// ResolvedRefs alone does not make it invalid: a listener with one of two
// route kinds unsupported, or one of two certificates broken, still serves.
// Programmed=False with reason Pending is about the Gateway, not the listener.
func (l *listenerState) valid() bool {
	if l.conflicted || l.cond.isFalse("Accepted") {
		return false
	}
	p := l.cond.get("Programmed")
	return p == nil || p.Status != metav1.ConditionFalse || p.Reason == string(gwv1.ListenerReasonPending)
}

// programmed reports whether the listener will be served.
func (l *listenerState) programmed() bool {
	return !l.conflicted && !l.cond.isFalse("Accepted") && !l.cond.isFalse("Programmed")
}

// protocolFamily groups protocols that can share a port when hostnames differ.
func protocolFamily(p gwv1.ProtocolType) string {
	switch p {
	case gwv1.HTTPSProtocolType, gwv1.TLSProtocolType:
		return "TLS"
	}
	return string(p)
}

// processListeners validates every managed Gateway's merged listener list:
// protocol, route kinds, TLS references, conflicts and overlapping TLS.
func (t *translator) processListeners() {
	for _, g := range t.gateways {
		t.noteAllowedListenersSelector(g) // selectors.go
		for _, l := range g.merged {
			t.validateListener(l)
		}
		t.detectConflicts(g.merged)
		t.detectOverlappingTLS(g.merged)
		t.applyFrontendValidation(g)
		t.acceptGateway(g)
		for _, l := range g.merged {
			t.finishListener(l)
		}
	}
}

// validateListener checks the protocol, allowed route kinds and TLS config.
func (t *translator) validateListener(l *listenerState) {
	kinds := RouteKindsFor(l.protocol)
	if kinds == nil {
		l.cond.fail("Accepted", string(gwv1.ListenerReasonUnsupportedProtocol),
			fmt.Sprintf("protocol %q is not supported; gwdev supports HTTP, HTTPS, TLS, TCP and UDP", l.protocol))
		l.cond.fail("Programmed", string(gwv1.ListenerReasonInvalid), "unsupported protocol")
	}
	t.profileListener(l)
	t.resolveRouteKinds(l, kinds)
	t.validateAllowedRoutesSelector(l) // selectors.go
	t.resolveListenerFilters(l)        // listenerfilters.go
	switch {
	case l.protocol == gwv1.HTTPSProtocolType:
		t.resolveListenerTLS(l, gwv1.TLSModeTerminate)
	case l.protocol == gwv1.TLSProtocolType && l.tls != nil:
		mode := gwv1.TLSModeTerminate
		if l.tls.Mode != nil {
			mode = *l.tls.Mode
		}
		t.resolveListenerTLS(l, mode)
	}
}

// resolveRouteKinds computes supportedKinds from allowedRoutes.kinds.
func (t *translator) resolveRouteKinds(l *listenerState, kinds []string) {
	var want []gwv1.RouteGroupKind
	if l.allowed != nil {
		want = l.allowed.Kinds
	}
	if len(want) == 0 {
		for _, k := range kinds {
			g := gwv1.Group(Group)
			l.supportedKinds = append(l.supportedKinds, gwv1.RouteGroupKind{Group: &g, Kind: gwv1.Kind(k)})
		}
		return
	}
	var invalid []string
	for _, rk := range want {
		group := Group
		if rk.Group != nil {
			group = string(*rk.Group)
		}
		ok := false
		for _, k := range kinds {
			if group == Group && string(rk.Kind) == k {
				ok = true
			}
		}
		if !ok {
			invalid = append(invalid, group+"/"+string(rk.Kind))
			continue
		}
		g := gwv1.Group(group)
		l.supportedKinds = append(l.supportedKinds, gwv1.RouteGroupKind{Group: &g, Kind: rk.Kind})
	}
	if len(invalid) > 0 {
		l.cond.fail("ResolvedRefs", string(gwv1.ListenerReasonInvalidRouteKinds),
			fmt.Sprintf("route kinds %s are not supported on %s listener (supported: %s)",
				strings.Join(invalid, ", "), withArticle(l.protocol), strings.Join(kinds, ", ")))
	}
}

// withArticle renders "an HTTP", "a TLS".
func withArticle(p gwv1.ProtocolType) string {
	if strings.HasPrefix(string(p), "H") {
		return "an " + string(p)
	}
	return "a " + string(p)
}

// listenerConflict is a reason with its explanation and what the listener
// conflicts with.
type listenerConflict struct {
	reason gwv1.ListenerConditionReason
	msg    string
	// with names the other listener (Finding.ConflictsWith).
	with string
}

// newListenerConflict is why self conflicts with other.
func newListenerConflict(self, other *listenerState, reason gwv1.ListenerConditionReason) listenerConflict {
	msg, with := conflictMessage(self, other, reason)
	return listenerConflict{reason: reason, msg: msg, with: with}
}

// detectConflicts applies the distinctness rules to listeners sharing a
// port. ls is in merge precedence order. Listeners of one owner that conflict
// are all marked (no winner is picked); a listener from a ListenerSet that
// conflicts with one of higher precedence (the Gateway's own, or an older
// set's) is marked alone, as GEP-1713 requires: "the first Listener in the
// precedence list MUST be accepted".
func (t *translator) detectConflicts(ls []*listenerState) {
	conflicts := map[*listenerState]*listenerConflict{}
	mark := func(l *listenerState, c listenerConflict) {
		prev := conflicts[l]
		// ProtocolConflict outranks HostnameConflict.
		if prev == nil || (prev.reason == gwv1.ListenerReasonHostnameConflict && c.reason == gwv1.ListenerReasonProtocolConflict) {
			conflicts[l] = &c
		}
	}
	// The Gateway's own listeners: every listener of a conflicting pair is
	// marked (spec: no picking one of the conflicting listeners as the winner).
	for i, a := range ls {
		if a.set != nil || RouteKindsFor(a.protocol) == nil {
			continue
		}
		for _, b := range ls[i+1:] {
			if b.set != nil {
				continue
			}
			if c, ok := listenersConflict(a, b); ok {
				mark(a, newListenerConflict(a, b, c))
				mark(b, newListenerConflict(b, a, c))
			}
		}
	}
	// ListenerSet entries, one set at a time in merge precedence order: an
	// entry that conflicts with a listener already accepted (the Gateway's,
	// or an older set's) is the one rejected — what the conformance tests
	// for ListenerSets expect; then the set's remaining entries that
	// conflict with each other are all marked, as inside a Gateway (GEP-1713:
	// a set's listeners "MUST behave the same as if the list were part of a
	// single Gateway").
	var accepted []*listenerState
	for _, l := range ls {
		if l.set == nil && conflicts[l] == nil && RouteKindsFor(l.protocol) != nil {
			accepted = append(accepted, l)
		}
	}
	for start := 0; start < len(ls); {
		set := ls[start].set
		end := start + 1
		for end < len(ls) && ls[end].set == set {
			end++
		}
		if set != nil {
			accepted = t.setConflicts(ls[start:end], accepted, mark, conflicts)
		}
		start = end
	}
	for _, l := range ls {
		c := conflicts[l]
		if c == nil {
			l.cond.setDefault("Conflicted", metav1.ConditionFalse, string(gwv1.ListenerReasonNoConflicts), "no conflicts")
			continue
		}
		l.conflicted, l.conflictsWith = true, c.with
		l.cond.set("Conflicted", metav1.ConditionTrue, string(c.reason), c.msg)
		l.cond.fail("Accepted", string(c.reason), "listener is conflicted and not accepted: "+c.msg)
		l.cond.fail("Programmed", string(c.reason), "conflicted listeners are not programmed")
	}
}

// setConflicts marks the conflicts of one ListenerSet's entries (see
// detectConflicts) and returns accepted with the entries that remain.
func (t *translator) setConflicts(entries, accepted []*listenerState, mark func(*listenerState, listenerConflict),
	conflicts map[*listenerState]*listenerConflict) []*listenerState {
	var rest []*listenerState
	for _, l := range entries {
		if RouteKindsFor(l.protocol) == nil {
			continue
		}
		for _, a := range accepted {
			if c, ok := listenersConflict(l, a); ok {
				mark(l, newListenerConflict(l, a, c))
			}
		}
		if conflicts[l] == nil {
			rest = append(rest, l)
		}
	}
	for i, a := range rest {
		for _, b := range rest[i+1:] {
			if c, ok := listenersConflict(a, b); ok {
				mark(a, newListenerConflict(a, b, c))
				mark(b, newListenerConflict(b, a, c))
			}
		}
	}
	for _, l := range rest {
		if conflicts[l] == nil {
			accepted = append(accepted, l)
		}
	}
	return accepted
}

// listenersConflict applies the distinctness rules to two listeners: on one
// port and transport, protocols of different families conflict, TCP and UDP
// listeners cannot be told apart, and others conflict on equal hostnames.
func listenersConflict(a, b *listenerState) (gwv1.ListenerConditionReason, bool) {
	if b.port != a.port || transportOf(a.protocol) != transportOf(b.protocol) || RouteKindsFor(b.protocol) == nil {
		return "", false
	}
	switch {
	case protocolFamily(a.protocol) != protocolFamily(b.protocol):
		return gwv1.ListenerReasonProtocolConflict, true
	case a.protocol == gwv1.TCPProtocolType || a.protocol == gwv1.UDPProtocolType:
		return gwv1.ListenerReasonProtocolConflict, true
	case a.hostname == b.hostname:
		return gwv1.ListenerReasonHostnameConflict, true
	}
	return "", false
}

// conflictMessage explains why self conflicts with other, and names other
// as the message does ("listener \"b\" (HTTP)").
func conflictMessage(self, other *listenerState, reason gwv1.ListenerConditionReason) (msg, with string) {
	what := conflictPeer(self, other)
	if reason == gwv1.ListenerReasonProtocolConflict {
		with = fmt.Sprintf("%s (%s)", what, other.protocol)
		if self.set != other.set {
			with = fmt.Sprintf("%s %s", other.protocol, what)
		}
		return fmt.Sprintf("port %d: protocol %s cannot share the port with %s", self.port, self.protocol, with), with
	}
	return fmt.Sprintf("port %d: hostname %s is also used by %s", self.port, displayHost(self.hostname), what), what
}

// conflictPeer names the listener self conflicts with. A ListenerSet entry
// learns the name of its parent Gateway's listener and of sets in its own
// namespace, but not which set of another namespace it lost to: GEP-1713
// asks controllers not to leak other users' objects into a set's status.
func conflictPeer(self, other *listenerState) string {
	switch {
	case self.set == other.set:
		return fmt.Sprintf("listener %q", other.name)
	case other.set == nil:
		return fmt.Sprintf("listener %q of Gateway %s/%s, which takes precedence", other.name, other.gateway.key.Namespace, other.gateway.key.Name)
	case self.set == nil || other.set.key.Namespace == self.set.key.Namespace:
		return fmt.Sprintf("listener %q of ListenerSet %s/%s, which takes precedence", other.name, other.set.key.Namespace, other.set.key.Name)
	}
	return "a listener of another ListenerSet attached to the same Gateway, which takes precedence (older, or first by namespace/name)"
}

// detectOverlappingTLS marks terminating listeners on one port whose
// hostnames overlap (one matches the other), as the spec requires.
func (t *translator) detectOverlappingTLS(ls []*listenerState) {
	overlap := map[*listenerState][]string{}
	for i, a := range ls {
		if !terminatesTLS(a) || a.conflicted {
			continue
		}
		for _, b := range ls[i+1:] {
			if !terminatesTLS(b) || b.conflicted || a.port != b.port {
				continue
			}
			if hostnamesOverlap(a.hostname, b.hostname) {
				overlap[a] = append(overlap[a], b.name)
				overlap[b] = append(overlap[b], a.name)
			}
		}
	}
	for l, others := range overlap {
		l.cond.set(string(gwv1.ListenerConditionOverlappingTLSConfig), metav1.ConditionTrue,
			string(gwv1.ListenerReasonOverlappingHostnames),
			fmt.Sprintf("hostname %s overlaps with listeners %s on port %d", displayHost(l.hostname), joinQuoted(others), l.port))
	}
}

func terminatesTLS(l *listenerState) bool {
	if l.protocol == gwv1.HTTPSProtocolType {
		return true
	}
	return l.protocol == gwv1.TLSProtocolType && l.tls != nil && (l.tls.Mode == nil || *l.tls.Mode == gwv1.TLSModeTerminate)
}

// hostnamesOverlap reports whether some host could match both hostnames.
func hostnamesOverlap(a, b string) bool {
	_, ok := intersectHostname(a, b)
	return ok
}

func displayHost(h string) string {
	if h == "" {
		return "(any)"
	}
	return h
}

func joinQuoted(names []string) string {
	s := make([]string, len(names))
	copy(s, names)
	sort.Strings(s)
	for i := range s {
		s[i] = fmt.Sprintf("%q", s[i])
	}
	return strings.Join(s, ", ")
}

// notValidListeners says which listeners are not valid, in the singular
// for one (`listener "https" is not valid`).
func notValidListeners(bad []string) string {
	if len(bad) == 1 {
		return "listener " + joinQuoted(bad) + " is not valid"
	}
	return "listeners " + joinQuoted(bad) + " are not valid"
}

// finishListener sets the positive conditions where no negative one exists.
func (t *translator) finishListener(l *listenerState) {
	l.cond.setDefault("Accepted", metav1.ConditionTrue, string(gwv1.ListenerReasonAccepted), "listener is accepted")
	l.cond.setDefault("ResolvedRefs", metav1.ConditionTrue, string(gwv1.ListenerReasonResolvedRefs), "all references are resolved")
	switch g := l.gateway; {
	case !g.accepted():
		l.cond.fail("Programmed", string(gwv1.ListenerReasonPending), fmt.Sprintf("Gateway %s/%s is not accepted", g.key.Namespace, g.key.Name))
	case !g.served():
		l.cond.fail("Programmed", string(gwv1.ListenerReasonPending), "the Gateway has no usable address")
	}
	l.cond.setDefault("Programmed", metav1.ConditionTrue, string(gwv1.ListenerReasonProgrammed),
		fmt.Sprintf("served on %s:%d", l.gateway.addr, l.port))
}

// addrOrNone renders the Gateway's address for messages.
func (g *gatewayState) addrOrNone() string {
	if g.addr == "" {
		return "no address"
	}
	return g.addr
}
