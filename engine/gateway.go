package engine

import (
	"fmt"
	"net/netip"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gatewayState is a managed Gateway during translation.
type gatewayState struct {
	obj   *gwv1.Gateway
	key   ObjectKey
	class *classState
	cond  *conditionSet
	addr  string
	// routability is the routability of the spec.addresses entry gwdev
	// binds ("": the default, reported unset), see checkRoutability.
	routability gwv1.GatewayAddressRoutabilityType
	// own are the Gateway's listeners; merged adds attached ListenerSets'
	// entries after them, in merge precedence order.
	own    []*listenerState
	merged []*listenerState
	sets   []*listenerSetState
	// backendCert is the resolved spec.tls.backend.clientCertificateRef
	// (nil: none is set, or it is invalid).
	backendCert *Certificate
}

// accepted reports whether the Gateway is, or can still become, accepted:
// its Accepted condition is neither False nor Unknown (Unknown is a Gateway
// whose GatewayClass is not accepted, which gwdev leaves Pending).
func (g *gatewayState) accepted() bool {
	c := g.cond.get(string(gwv1.GatewayConditionAccepted))
	return c == nil || c.Status == metav1.ConditionTrue
}

// pending reports whether the Gateway waits for its GatewayClass to be
// accepted: Accepted and Programmed stay Unknown with reason Pending and its
// listeners are not reconciled.
func (g *gatewayState) pending() bool {
	c := g.cond.get(string(gwv1.GatewayConditionAccepted))
	return c != nil && c.Status == metav1.ConditionUnknown
}

// served reports whether the Gateway is accepted, has an address and is not
// refused programming: it is what the routing table binds.
func (g *gatewayState) served() bool {
	return g.addr != "" && g.accepted() && !g.cond.isFalse(string(gwv1.GatewayConditionProgrammed))
}

// processGateways picks the managed Gateways, checks their class and
// addresses, and creates their own listeners.
func (t *translator) processGateways() {
	used := map[string]bool{}
	for _, gw := range t.out.Gateways {
		cs := t.classes[string(gw.Spec.GatewayClassName)]
		if cs == nil || !cs.managed {
			t.noteKind(NoteClassNotManaged, SeverityInfo, t.gatewayKey(gw), "", "GatewayClass "+string(gw.Spec.GatewayClassName)+" is not managed by gwdev: no status, not served")
			continue
		}
		g := &gatewayState{obj: gw, key: t.gatewayKey(gw), class: cs, cond: newConditionSet(gw.Generation, &t.opts.Now)}
		t.gateways = append(t.gateways, g)
		t.gatewayByKey[nsName{gw.Namespace, gw.Name}] = g
		if !cs.accepted {
			g.cond.set(string(gwv1.GatewayConditionAccepted), metav1.ConditionUnknown, string(gwv1.GatewayReasonPending),
				"GatewayClass "+cs.name+" is not accepted")
			g.cond.set(string(gwv1.GatewayConditionProgrammed), metav1.ConditionUnknown, string(gwv1.GatewayReasonPending),
				"GatewayClass "+cs.name+" is not accepted")
		}
		t.checkGatewayParameters(g)
		t.checkGatewayAddresses(g, used)
		t.resolveBackendClientCertificate(g)
		for i := range gw.Spec.Listeners {
			l := &gw.Spec.Listeners[i]
			g.own = append(g.own, &listenerState{
				gateway: g, index: i, name: string(l.Name), hostname: hostnameValue(l.Hostname),
				port: int32(l.Port), protocol: l.Protocol, tls: l.TLS, allowed: l.AllowedRoutes, filters: l.Filters,
				cond: newConditionSet(gw.Generation, &t.opts.Now),
			})
		}
		t.profileGateway(g)
	}
	t.assignAddresses(used)
}

func (t *translator) gatewayKey(gw *gwv1.Gateway) ObjectKey {
	return ObjectKey{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name}
}

func hostnameValue(h *gwv1.Hostname) string {
	if h == nil {
		return ""
	}
	return strings.ToLower(string(*h))
}

// checkGatewayParameters resolves spec.infrastructure.parametersRef. gwdev
// interprets no parameters, but the referent must exist and be a kind it
// knows (a ConfigMap or Secret in the Gateway's namespace); otherwise the
// Gateway is not accepted, as the spec asks: "If the referent cannot be
// found, refers to an unsupported kind, or when the data within that
// resource is malformed, the Gateway SHOULD be rejected with the "Accepted"
// status condition set to "False" and an "InvalidParameters" reason."
func (t *translator) checkGatewayParameters(g *gatewayState) {
	infra := g.obj.Spec.Infrastructure
	if infra == nil || infra.ParametersRef == nil {
		return
	}
	ref := infra.ParametersRef
	name := groupKind(string(ref.Group), string(ref.Kind)) + " " + g.key.Namespace + "/" + ref.Name
	found := false
	switch {
	case ref.Group == "" && ref.Kind == "ConfigMap":
		_, found = t.configMaps[nsName{g.key.Namespace, ref.Name}]
	case ref.Group == "" && ref.Kind == "Secret":
		_, found = t.secrets[nsName{g.key.Namespace, ref.Name}]
	default:
		g.cond.fail(string(gwv1.GatewayConditionAccepted), string(gwv1.GatewayReasonInvalidParameters),
			"spec.infrastructure.parametersRef "+name+" is a kind gwdev does not support (ConfigMap or Secret)")
		return
	}
	if !found {
		g.cond.fail(string(gwv1.GatewayConditionAccepted), string(gwv1.GatewayReasonInvalidParameters),
			"spec.infrastructure.parametersRef "+name+" not found")
	}
}

// checkGatewayAddresses validates spec.addresses: gwdev binds one loopback
// address per Gateway, so an IPAddress must be in 127.0.0.0/8 or ::1, other
// address types are not supported, and a second address cannot be bound.
func (t *translator) checkGatewayAddresses(g *gatewayState, used map[string]bool) {
	if t.profileAddresses(g, used) {
		return
	}
	requested := 0
	for i, a := range g.obj.Spec.Addresses {
		typ := gwv1.IPAddressType
		if a.Type != nil {
			typ = *a.Type
		}
		if typ != gwv1.IPAddressType {
			g.cond.fail(string(gwv1.GatewayConditionAccepted), string(gwv1.GatewayReasonUnsupportedAddress),
				fmt.Sprintf("spec.addresses[%d]: address type %s is not supported; gwdev binds loopback IP addresses only", i, typ))
			continue
		}
		if !checkRoutability(g, i, a.Routability) {
			continue
		}
		if requested++; requested > 1 {
			g.cond.fail(string(gwv1.GatewayConditionProgrammed), string(gwv1.GatewayReasonAddressNotUsable),
				fmt.Sprintf("spec.addresses[%d]: gwdev binds one address per Gateway and cannot bind this one as well; remove it", i))
			continue
		}
		if a.Value == "" {
			continue // any address of this type: gwdev assigns one
		}
		ip, err := netip.ParseAddr(a.Value)
		if err != nil {
			g.cond.fail(string(gwv1.GatewayConditionProgrammed), string(gwv1.GatewayReasonAddressNotUsable),
				fmt.Sprintf("spec.addresses[%d]: %q is not an IP address", i, a.Value))
			continue
		}
		if !ip.IsLoopback() {
			g.cond.fail(string(gwv1.GatewayConditionProgrammed), string(gwv1.GatewayReasonAddressNotUsable),
				fmt.Sprintf("spec.addresses[%d]: %s is not a loopback address; gwdev binds only 127.0.0.0/8 or ::1", i, a.Value))
			continue
		}
		if used[ip.String()] {
			g.cond.fail(string(gwv1.GatewayConditionProgrammed), string(gwv1.GatewayReasonAddressNotUsable),
				fmt.Sprintf("spec.addresses[%d]: %s is already used by another Gateway", i, a.Value))
			continue
		}
		g.addr = ip.String()
		used[g.addr] = true
	}
}

// checkRoutability reads spec.addresses[i].routability (GEP-5093, v1.7.0):
// "" is gwdev's default and "Cluster" is accepted, since a loopback address
// is reachable from this machine only, the whole "cluster" gwdev emulates
// (docs/decisions.md); the status reports the routability asked for.
// gwdev defines no implementation-specific (domain-prefixed) value, so one
// makes the Gateway Accepted=False with reason UnsupportedAddress, as an
// address type it cannot bind does. The format itself is the CRD's rule.
func checkRoutability(g *gatewayState, i int, r gwv1.GatewayAddressRoutabilityType) bool {
	switch r {
	case gwv1.GatewayAddressRoutabilityDefault:
		return true
	case gwv1.GatewayAddressRoutabilityCluster:
		g.routability = r
		return true
	}
	g.cond.fail(string(gwv1.GatewayConditionAccepted), string(gwv1.GatewayReasonUnsupportedAddress),
		fmt.Sprintf("spec.addresses[%d]: routability %q is not supported; gwdev binds loopback addresses, whose routability is the default or Cluster", i, r))
	return false
}

// assignAddresses gives every Gateway without a requested address one:
// first the address it had before (Options.previous, see TranslateNext)
// when no spec.addresses claimed it since, else the next free loopback
// address: 127.0.0.1 for the first Gateway by namespace/name, then
// 127.0.0.2, and so on. A Gateway that cannot be programmed now keeps its
// previous address reserved, so that it finds it again once fixed. It
// records the assignment in t.addresses.
func (t *translator) assignAddresses(used map[string]bool) {
	t.addresses = map[string]string{}
	for _, g := range t.gateways {
		key := g.key.Namespace + "/" + g.key.Name
		prev := t.opts.previous[key]
		switch {
		case g.addr != "":
			t.addresses[key] = g.addr
		case prev == "" || used[prev]:
		case g.cond.isFalse(string(gwv1.GatewayConditionProgrammed)):
			used[prev] = true
			t.addresses[key] = prev
		default:
			g.addr = prev
			used[prev] = true
			t.addresses[key] = prev
		}
	}
	next := 1
	for _, g := range t.gateways {
		if g.addr != "" || g.cond.isFalse(string(gwv1.GatewayConditionProgrammed)) {
			continue
		}
		g.addr = freeLoopback(used, &next)
		t.addresses[g.key.Namespace+"/"+g.key.Name] = g.addr
	}
}

// freeLoopback returns the first address from loopback counter *next on
// that used does not hold, marks it used and moves *next past it. Counter
// n is 127.0.<n/254>.<n%254>, skipping .0 (n=1 is 127.0.0.1).
func freeLoopback(used map[string]bool, next *int) string {
	for {
		a := fmt.Sprintf("127.0.%d.%d", *next/254, *next%254)
		*next++
		if *next%254 == 0 {
			*next++
		}
		if !used[a] {
			used[a] = true
			return a
		}
	}
}

// acceptGateway decides the Gateway's Accepted condition from its own
// listeners once they are validated; ListenerSet entries never change it
// (GEP-1713: the Gateway's conditions "reflect the status of the local
// configuration"). The spec: "The implementation MUST set a
// "ListenersNotValid" condition on the Gateway Status when the Gateway
// contains Conflicted Listeners whether or not they accept the Gateway", and
// at least one valid listener must remain for the Gateway to be accepted.
// ListenerSets of a Gateway that is not accepted are detached.
func (t *translator) acceptGateway(g *gatewayState) {
	var bad []string
	for _, l := range g.own {
		if !l.valid() {
			bad = append(bad, l.name)
		}
	}
	acc := string(gwv1.GatewayConditionAccepted)
	switch {
	case len(bad) > 0 && len(bad) == len(g.own):
		g.cond.fail(acc, string(gwv1.GatewayReasonListenersNotValid), "no listener is valid: "+joinQuoted(bad))
	case len(bad) > 0:
		g.cond.set(acc, metav1.ConditionTrue, string(gwv1.GatewayReasonListenersNotValid),
			notValidListeners(bad)+"; the others are accepted")
	}
	if g.accepted() || len(g.sets) == 0 {
		return
	}
	msg := fmt.Sprintf("parent Gateway %s/%s is not accepted", g.key.Namespace, g.key.Name)
	for _, s := range g.sets {
		s.attached = false
		s.cond.fail(string(gwv1.ListenerSetConditionAccepted), string(gwv1.ListenerSetReasonParentNotAccepted), msg)
		s.cond.fail(string(gwv1.ListenerSetConditionProgrammed), string(gwv1.ListenerSetReasonParentNotAccepted), msg)
	}
	g.sets = nil
	g.merged = g.own
}
