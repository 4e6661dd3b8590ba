package engine

import (
	"fmt"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// This file holds a listener's pre-routing filters (GEP-5224,
// spec.listeners[].filters.requests on Gateways and ListenerSets): they run
// in order on every request the listener accepts, before route matching.
// gwdev runs ExternalAuth there, failing closed like a route's ExternalAuth;
// it cannot run an ExtensionRef, and since such a filter may be the
// listener's authentication, every request on that listener is refused with
// 500 rather than routed unchecked.

// resolveListenerFilters compiles l's filters.requests into preAuth (in
// order) and preRefused. A reference that does not resolve sets the
// listener's ResolvedRefs=False; its requests are refused, never routed.
func (t *translator) resolveListenerFilters(l *listenerState) {
	if l.filters == nil || len(l.filters.Requests) == 0 {
		return
	}
	if l.protocol != gwv1.HTTPProtocolType && l.protocol != gwv1.HTTPSProtocolType {
		return // refused on load (watch: the CRDs' rule, for ListenerSets too)
	}
	owner := l.ownerKey()
	// The filters' backendRefs are resolved from the Gateway or ListenerSet
	// as a route's are from the route: same namespace default, a
	// ReferenceGrant from that kind for another namespace.
	from := &routeState{kind: owner.Kind, key: owner}
	where := l.tableName() + "/prerouting"
	for i, f := range l.filters.Requests {
		switch f.Type {
		case gwv1.ListenerFilterExternalAuth:
			if f.ExternalAuth == nil {
				continue
			}
			a, unresolved := t.resolveExternalAuth(from, where, i, f.ExternalAuth)
			l.preAuth = append(l.preAuth, a)
			if unresolved != "" && l.preRefused == "" {
				l.preRefused = unresolved
			}
		case gwv1.ListenerFilterExtensionRef:
			name := ""
			if f.ExtensionRef != nil {
				name = string(f.ExtensionRef.Group) + "/" + string(f.ExtensionRef.Kind) + " " + string(f.ExtensionRef.Name)
			}
			msg := fmt.Sprintf("filters.requests[%d]: extensionRef %s is not supported by gwdev; every request on the listener gets 500 (a pre-routing filter may be its authentication)", i, name)
			from.refFailures = append(from.refFailures, routeFailure{reason: gwv1.RouteReasonInvalidKind, msg: msg})
			if l.preRefused == "" {
				l.preRefused = msg
			}
		}
	}
	if len(from.refFailures) > 0 {
		f := from.refFailures[0]
		reason := string(f.reason)
		if f.reason == gwv1.RouteReasonRefNotPermitted {
			reason = string(gwv1.ListenerReasonRefNotPermitted)
		}
		l.cond.fail("ResolvedRefs", reason, f.msg)
	}
}
