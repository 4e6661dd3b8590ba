package engine

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
)

// KeepForeignStatus adds to the status Translate computed for an object
// (computed) what other controllers wrote in the status stored for it
// (stored), so that writing computed back leaves their entries as they
// are (Gateway API v1.7.0: "An implementation must not remove or modify"
// status entries "whose controllerName belongs to another implementation",
// nor conditions "whose type it is not responsible for"):
//   - route status.parents and policy and XBackend status.ancestors whose
//     controllerName is neither own nor one computed writes;
//   - conditions of a Gateway, its listeners, a ListenerSet and its
//     listeners whose type is domain-prefixed ("example.com/Ready": an
//     implementation's own type, never the spec's) and that computed does
//     not have.
//
// computed and stored are the same kind; other kinds are left alone. The
// stored entries are kept in their order, after the computed ones.
func KeepForeignStatus(computed, stored metav1.Object, own string) {
	switch c := computed.(type) {
	case *gwv1.Gateway:
		if s, ok := stored.(*gwv1.Gateway); ok {
			c.Status.Conditions = keepForeignConditions(c.Status.Conditions, s.Status.Conditions)
			for i := range c.Status.Listeners {
				if sl := findListenerStatus(s.Status.Listeners, c.Status.Listeners[i].Name); sl != nil {
					c.Status.Listeners[i].Conditions = keepForeignConditions(c.Status.Listeners[i].Conditions, sl.Conditions)
				}
			}
		}
	case *gwv1.ListenerSet:
		if s, ok := stored.(*gwv1.ListenerSet); ok {
			c.Status.Conditions = keepForeignConditions(c.Status.Conditions, s.Status.Conditions)
			for i := range c.Status.Listeners {
				for _, sl := range s.Status.Listeners {
					if sl.Name == c.Status.Listeners[i].Name {
						c.Status.Listeners[i].Conditions = keepForeignConditions(c.Status.Listeners[i].Conditions, sl.Conditions)
					}
				}
			}
		}
	case *gwv1.BackendTLSPolicy:
		if s, ok := stored.(*gwv1.BackendTLSPolicy); ok {
			c.Status.Ancestors = keepForeignAncestors(c.Status.Ancestors, s.Status.Ancestors, own)
		}
	case *gwxv1a1.XBackendTrafficPolicy:
		if s, ok := stored.(*gwxv1a1.XBackendTrafficPolicy); ok {
			c.Status.Ancestors = keepForeignAncestors(c.Status.Ancestors, s.Status.Ancestors, own)
		}
	case *gwxv1a1.XBackend:
		if s, ok := stored.(*gwxv1a1.XBackend); ok {
			c.Status.Ancestors = keepForeign(c.Status.Ancestors, s.Status.Ancestors, own,
				func(a gwxv1a1.BackendAncestorStatus) gwv1.GatewayController { return a.ControllerName })
		}
	default:
		if rc, ok := routeStatusOf(computed); ok {
			if rs, ok := routeStatusOf(stored); ok {
				rc.Parents = keepForeign(rc.Parents, rs.Parents, own,
					func(p gwv1.RouteParentStatus) gwv1.GatewayController { return p.ControllerName })
			}
		}
	}
}

// routeStatusOf returns the RouteStatus of a route object of any kind.
func routeStatusOf(o metav1.Object) (*gwv1.RouteStatus, bool) {
	switch r := o.(type) {
	case *gwv1.HTTPRoute:
		return &r.Status.RouteStatus, true
	case *gwv1.GRPCRoute:
		return &r.Status.RouteStatus, true
	case *gwv1.TLSRoute:
		return &r.Status.RouteStatus, true
	case *gwv1.TCPRoute:
		return &r.Status.RouteStatus, true
	case *gwv1.UDPRoute:
		return &r.Status.RouteStatus, true
	}
	return nil, false
}

func keepForeignAncestors(computed, stored []gwv1.PolicyAncestorStatus, own string) []gwv1.PolicyAncestorStatus {
	return keepForeign(computed, stored, own, func(a gwv1.PolicyAncestorStatus) gwv1.GatewayController { return a.ControllerName })
}

// keepForeign appends to computed the stored entries whose controller is
// neither own nor one of computed's.
func keepForeign[T any](computed, stored []T, own string, controller func(T) gwv1.GatewayController) []T {
	mine := map[gwv1.GatewayController]bool{gwv1.GatewayController(own): true}
	for _, e := range computed {
		mine[controller(e)] = true
	}
	for _, e := range stored {
		if !mine[controller(e)] {
			computed = append(computed, e)
		}
	}
	return computed
}

// keepForeignConditions appends to computed the stored conditions of a
// domain-prefixed type that computed does not have.
func keepForeignConditions(computed, stored []metav1.Condition) []metav1.Condition {
	for _, c := range stored {
		if strings.Contains(c.Type, "/") && !hasCondition(computed, c.Type) {
			computed = append(computed, c)
		}
	}
	return computed
}

func hasCondition(cs []metav1.Condition, typ string) bool {
	for _, c := range cs {
		if c.Type == typ {
			return true
		}
	}
	return false
}

func findListenerStatus(ls []gwv1.ListenerStatus, name gwv1.SectionName) *gwv1.ListenerStatus {
	for i := range ls {
		if ls[i].Name == name {
			return &ls[i]
		}
	}
	return nil
}
