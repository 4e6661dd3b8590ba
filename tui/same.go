package tui

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/gwdev/gwdev/engine"
)

// sameObject reports whether an object is unchanged between two reloads,
// ignoring lastTransitionTime: every translation writes a fresh one, which
// is not a change worth highlighting. Kinds with conditions are compared
// field by field (fast: a reload of 1,000 routes compares them all);
// others with reflect.DeepEqual.
func sameObject(a, b metav1.Object) bool {
	if x := engine.RouteOf(a); x != nil {
		y := engine.RouteOf(b)
		return y != nil && x.Key().Kind == y.Key().Kind && sameMeta(a, b) && reflect.DeepEqual(x.Spec(), y.Spec()) &&
			sameRouteStatus(*x.RouteStatus(), *y.RouteStatus())
	}
	switch x := a.(type) {
	case *gwv1.GatewayClass:
		y, ok := b.(*gwv1.GatewayClass)
		return ok && sameMeta(x, y) && reflect.DeepEqual(x.Spec, y.Spec) &&
			sameConds(x.Status.Conditions, y.Status.Conditions) &&
			reflect.DeepEqual(x.Status.SupportedFeatures, y.Status.SupportedFeatures)
	case *gwv1.Gateway:
		y, ok := b.(*gwv1.Gateway)
		return ok && sameMeta(x, y) && reflect.DeepEqual(x.Spec, y.Spec) && sameGatewayStatus(&x.Status, &y.Status)
	case *gwv1.ListenerSet:
		y, ok := b.(*gwv1.ListenerSet)
		return ok && sameMeta(x, y) && reflect.DeepEqual(x.Spec, y.Spec) && sameListenerSetStatus(&x.Status, &y.Status)
	case *engine.ImplementationPolicy:
		y, ok := b.(*engine.ImplementationPolicy)
		return ok && sameMeta(x, y) && reflect.DeepEqual(x.Spec, y.Spec) && (x.Status == nil) == (y.Status == nil) &&
			(x.Status == nil || sameConds(x.Status.Conditions, y.Status.Conditions))
	case *gwv1.BackendTLSPolicy:
		y, ok := b.(*gwv1.BackendTLSPolicy)
		return ok && sameMeta(x, y) && reflect.DeepEqual(x.Spec, y.Spec) && samePolicyStatus(&x.Status, &y.Status)
	case *gwxv1a1.XBackendTrafficPolicy:
		y, ok := b.(*gwxv1a1.XBackendTrafficPolicy)
		return ok && sameMeta(x, y) && reflect.DeepEqual(x.Spec, y.Spec) && samePolicyStatus(&x.Status, &y.Status)
	case *gwxv1a1.XBackend:
		y, ok := b.(*gwxv1a1.XBackend)
		if !ok || !sameMeta(x, y) || !reflect.DeepEqual(x.Spec, y.Spec) || len(x.Status.Ancestors) != len(y.Status.Ancestors) {
			return false
		}
		for i, p := range x.Status.Ancestors {
			q := y.Status.Ancestors[i]
			if p.ControllerName != q.ControllerName || !reflect.DeepEqual(p.AncestorRef, q.AncestorRef) || !sameConds(p.Conditions, q.Conditions) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// samePolicyStatus compares policy ancestors, lastTransitionTime aside.
func samePolicyStatus(x, y *gwv1.PolicyStatus) bool {
	if len(x.Ancestors) != len(y.Ancestors) {
		return false
	}
	for i, p := range x.Ancestors {
		q := y.Ancestors[i]
		if p.ControllerName != q.ControllerName || !reflect.DeepEqual(p.AncestorRef, q.AncestorRef) || !sameConds(p.Conditions, q.Conditions) {
			return false
		}
	}
	return true
}

func sameMeta(a, b metav1.Object) bool {
	return a.GetGeneration() == b.GetGeneration() && reflect.DeepEqual(a.GetLabels(), b.GetLabels()) &&
		reflect.DeepEqual(a.GetAnnotations(), b.GetAnnotations())
}

// sameConds compares conditions, lastTransitionTime aside.
func sameConds(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.LastTransitionTime, y.LastTransitionTime = metav1.Time{}, metav1.Time{}
		if x != y {
			return false
		}
	}
	return true
}

func sameGatewayStatus(a, b *gwv1.GatewayStatus) bool {
	if !reflect.DeepEqual(a.Addresses, b.Addresses) || !sameConds(a.Conditions, b.Conditions) || len(a.Listeners) != len(b.Listeners) {
		return false
	}
	for i, l := range a.Listeners {
		m := b.Listeners[i]
		if l.Name != m.Name || l.AttachedRoutes != m.AttachedRoutes || !reflect.DeepEqual(l.SupportedKinds, m.SupportedKinds) ||
			!sameConds(l.Conditions, m.Conditions) {
			return false
		}
	}
	return true
}

func sameListenerSetStatus(a, b *gwv1.ListenerSetStatus) bool {
	if !sameConds(a.Conditions, b.Conditions) || len(a.Listeners) != len(b.Listeners) {
		return false
	}
	for i, l := range a.Listeners {
		m := b.Listeners[i]
		if l.Name != m.Name || l.AttachedRoutes != m.AttachedRoutes || !reflect.DeepEqual(l.SupportedKinds, m.SupportedKinds) ||
			!sameConds(l.Conditions, m.Conditions) {
			return false
		}
	}
	return true
}

func sameRouteStatus(a, b gwv1.RouteStatus) bool {
	if len(a.Parents) != len(b.Parents) {
		return false
	}
	for i, p := range a.Parents {
		q := b.Parents[i]
		if p.ControllerName != q.ControllerName || !reflect.DeepEqual(p.ParentRef, q.ParentRef) || !sameConds(p.Conditions, q.Conditions) {
			return false
		}
	}
	return true
}
