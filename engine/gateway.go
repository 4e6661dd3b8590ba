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
	// own are the Gateway's listeners; merged adds attached ListenerSets'
	// entries after them, in merge precedence order.
	own    []*listenerState
	merged []*listenerState
	sets   []*listenerSetState
}

// accepted reports whether the Gateway's Accepted condition is not False.
func (g *gatewayState) accepted() bool {
	return !g.cond.isFalse(string(gwv1.GatewayConditionAccepted))
}

// processGateways picks the managed Gateways, checks their class and
// addresses, and creates their own listeners.
func (t *translator) processGateways() {
	used := map[string]bool{}
	for _, gw := range t.out.Gateways {
		cs := t.classes[string(gw.Spec.GatewayClassName)]
		if cs == nil || !cs.managed {
			t.note(SeverityInfo, t.gatewayKey(gw), "", "GatewayClass "+string(gw.Spec.GatewayClassName)+" is not managed by gwdev: no status, not served")
			continue
		}
		g := &gatewayState{obj: gw, key: t.gatewayKey(gw), class: cs, cond: newConditionSet(gw.Generation, t.opts.Now)}
		t.gateways = append(t.gateways, g)
		t.gatewayByKey[nsName{gw.Namespace, gw.Name}] = g
		if !cs.accepted {
			g.cond.set(string(gwv1.GatewayConditionAccepted), metav1.ConditionUnknown, string(gwv1.GatewayReasonPending),
				"GatewayClass "+cs.name+" is not accepted")
			g.cond.set(string(gwv1.GatewayConditionProgrammed), metav1.ConditionUnknown, string(gwv1.GatewayReasonPending),
				"GatewayClass "+cs.name+" is not accepted")
		}
		t.checkGatewayAddresses(g, used)
		for i := range gw.Spec.Listeners {
			l := &gw.Spec.Listeners[i]
			g.own = append(g.own, &listenerState{
				gateway: g, index: i, name: string(l.Name), hostname: hostnameValue(l.Hostname),
				port: int32(l.Port), protocol: l.Protocol, tls: l.TLS, allowed: l.AllowedRoutes,
				cond: newConditionSet(gw.Generation, t.opts.Now),
			})
		}
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

// checkGatewayAddresses validates spec.addresses: gwdev binds loopback only,
// so an IPAddress must be in 127.0.0.0/8 or ::1; other address types are not
// supported.
func (t *translator) checkGatewayAddresses(g *gatewayState, used map[string]bool) {
	if a, ok := t.opts.Addresses[g.key.Namespace+"/"+g.key.Name]; ok {
		g.addr = a
		used[a] = true
		return
	}
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
		if g.addr == "" {
			g.addr = ip.String()
			used[g.addr] = true
		}
	}
}

// assignAddresses gives every Gateway without a requested address the next
// free loopback address: 127.0.0.1 for the first Gateway by namespace/name,
// then 127.0.0.2, and so on.
func (t *translator) assignAddresses(used map[string]bool) {
	next := 1
	for _, g := range t.gateways {
		if g.addr != "" || g.cond.isFalse(string(gwv1.GatewayConditionProgrammed)) {
			continue
		}
		for {
			a := fmt.Sprintf("127.0.%d.%d", next/254, next%254)
			next++
			if next%254 == 0 {
				next++
			}
			if !used[a] {
				g.addr = a
				used[a] = true
				break
			}
		}
	}
}
