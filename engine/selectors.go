package engine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// selectorProblem says why a from/selector pair (allowedRoutes or
// allowedListeners namespaces) with from: Selector can select nothing: the
// selector is missing ("Selector must be specified when From is set to
// Selector") or is not a valid label selector. "" means it is usable, or
// from is not Selector.
func selectorProblem(from *gwv1.FromNamespaces, sel *metav1.LabelSelector) string {
	if from == nil || *from != gwv1.NamespacesFromSelector {
		return ""
	}
	if sel == nil {
		return "from is Selector but no selector is set"
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		return "invalid selector: " + err.Error()
	}
	return ""
}

// validateAllowedRoutesSelector refuses a listener whose allowedRoutes
// selector can select nothing: it cannot generate data plane configuration
// (Accepted=False UnsupportedValue) and is invalid (Programmed=False
// Invalid).
func (t *translator) validateAllowedRoutesSelector(l *listenerState) {
	if l.allowed == nil || l.allowed.Namespaces == nil {
		return
	}
	why := selectorProblem(l.allowed.Namespaces.From, l.allowed.Namespaces.Selector)
	if why == "" {
		return
	}
	msg := "allowedRoutes.namespaces: " + why + "; no route can attach"
	l.cond.fail("Accepted", string(gwv1.ListenerReasonUnsupportedValue), msg)
	l.cond.fail("Programmed", string(gwv1.ListenerReasonInvalid), msg)
}

// noteAllowedListenersSelector warns about a Gateway whose allowedListeners
// selector can select nothing: no ListenerSet can attach (each one that tries
// is NotAllowed with the same error), while the Gateway's own listeners are
// unaffected.
func (t *translator) noteAllowedListenersSelector(g *gatewayState) {
	al := g.obj.Spec.AllowedListeners
	if al == nil || al.Namespaces == nil {
		return
	}
	if why := selectorProblem(al.Namespaces.From, al.Namespaces.Selector); why != "" {
		t.noteKind(NoteNoListenerSetCanAttach, SeverityWarning, g.key, "spec.allowedListeners.namespaces", why+"; no ListenerSet can attach to this Gateway")
	}
}
