package engine

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// listenerSetReasonParentNotProgrammed is the ListenerSet Programmed=False
// reason the API lists for a parent Gateway that is not programmed; the API
// package defines no constant for it.
const listenerSetReasonParentNotProgrammed gwv1.ListenerSetConditionReason = "ParentNotProgrammed"

// listenerSetState is a ListenerSet during translation.
type listenerSetState struct {
	obj       *gwv1.ListenerSet
	key       ObjectKey
	cond      *conditionSet
	parent    *gatewayState // nil when the parent is unknown or not managed
	attached  bool
	listeners []*listenerState
}

// processListenerSets resolves each ListenerSet's parent, performs the
// allowedListeners handshake and appends the entries of attached sets to
// their Gateway's merged listener list in precedence order: the Gateway's
// own, then sets oldest first, then by namespace/name.
func (t *translator) processListenerSets() {
	sets := make([]*gwv1.ListenerSet, len(t.out.ListenerSets))
	copy(sets, t.out.ListenerSets)
	sort.SliceStable(sets, func(i, j int) bool { return olderFirst(sets[i], sets[j]) })
	for _, ls := range sets {
		s := &listenerSetState{obj: ls, key: ObjectKey{Kind: "ListenerSet", Namespace: ls.Namespace, Name: ls.Name},
			cond: newConditionSet(ls.Generation, &t.opts.Now)}
		for i := range ls.Spec.Listeners {
			e := &ls.Spec.Listeners[i]
			s.listeners = append(s.listeners, &listenerState{
				set: s, index: i, name: string(e.Name), hostname: hostnameValue(e.Hostname),
				port: int32(e.Port), protocol: e.Protocol, tls: e.TLS, allowed: e.AllowedRoutes, filters: e.Filters,
				cond: newConditionSet(ls.Generation, &t.opts.Now),
			})
		}
		t.attachListenerSet(s)
		// A set whose parent is another controller's Gateway gets no status.
		if s.parent == nil && !s.cond.has(string(gwv1.ListenerSetConditionAccepted)) {
			continue
		}
		t.listenerSets = append(t.listenerSets, s)
		t.setByKey[nsName{ls.Namespace, ls.Name}] = s
	}
	for _, g := range t.gateways {
		g.merged = append(g.merged, g.own...)
		for _, s := range g.sets {
			for _, l := range s.listeners {
				l.gateway = g
				g.merged = append(g.merged, l)
			}
		}
	}
}

// attachListenerSet checks the set's parentRef and the parent's
// allowedListeners. It returns true when the set is attached.
func (t *translator) attachListenerSet(s *listenerSetState) bool {
	ref := s.obj.Spec.ParentRef
	accepted := string(gwv1.ListenerSetConditionAccepted)
	programmed := string(gwv1.ListenerSetConditionProgrammed)
	group, kind := Group, "Gateway"
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = string(*ref.Kind)
	}
	ns := s.obj.Namespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	// Programmed repeats Accepted's reason, as the conformance tests expect
	// (ListenerSetAllowedNamespaceNone: Programmed=False NotAllowed).
	fail := func(reason gwv1.ListenerSetConditionReason, msg string) bool {
		s.cond.fail(accepted, string(reason), msg)
		s.cond.fail(programmed, string(reason), msg)
		return false
	}
	if group != Group || kind != "Gateway" {
		return fail(gwv1.ListenerSetReasonNotAllowed, fmt.Sprintf("parentRef must be a Gateway, not %s/%s", group, kind))
	}
	g := t.gatewayByKey[nsName{ns, string(ref.Name)}]
	if g == nil {
		for _, gw := range t.out.Gateways {
			if gw.Namespace == ns && gw.Name == string(ref.Name) {
				return false // a Gateway gwdev does not manage: no status
			}
		}
		return fail(gwv1.ListenerSetReasonParentNotAccepted, fmt.Sprintf("parent Gateway %s/%s does not exist", ns, ref.Name))
	}
	s.parent = g
	al := g.obj.Spec.AllowedListeners
	from := gwv1.NamespacesFromNone
	var sel *metav1.LabelSelector
	if al != nil && al.Namespaces != nil {
		if al.Namespaces.From != nil {
			from = *al.Namespaces.From
		}
		sel = al.Namespaces.Selector
	}
	if al == nil {
		return fail(gwv1.ListenerSetReasonNotAllowed,
			fmt.Sprintf("Gateway %s/%s does not allow ListenerSets: spec.allowedListeners is not set (the default allows none)", g.key.Namespace, g.key.Name))
	}
	if ok, why := t.namespaceSelected(from, sel, g.obj.Namespace, s.obj.Namespace); !ok {
		return fail(gwv1.ListenerSetReasonNotAllowed,
			fmt.Sprintf("Gateway %s/%s does not allow this ListenerSet: spec.allowedListeners: %s", g.key.Namespace, g.key.Name, why))
	}
	if !g.accepted() {
		return fail(gwv1.ListenerSetReasonParentNotAccepted, fmt.Sprintf("parent Gateway %s/%s is not accepted", g.key.Namespace, g.key.Name))
	}
	if why := t.profileListenerSet(s); why != "" {
		s.cond.failAt(t.verdictField(why), accepted, string(gwv1.ListenerSetReasonInvalid), why)
		s.cond.failAt(t.verdictField(why), programmed, string(gwv1.ListenerSetReasonInvalid), why)
		return false
	}
	s.attached = true
	g.sets = append(g.sets, s)
	return true
}

// finishListenerSet sets the set's summary conditions from its entries. A
// set none of whose entries is valid is not accepted (ListenersNotValid on
// both Accepted and Programmed, as the conformance tests expect); one with
// some valid entries is accepted with reason ListenersNotValid. Programmed
// is False with ParentNotProgrammed when the parent Gateway is not served.
func (t *translator) finishListenerSet(s *listenerSetState) {
	if !s.attached {
		return
	}
	programmed := 0
	var bad, good []string
	for _, l := range s.listeners {
		if l.valid() {
			good = append(good, l.name)
		} else {
			bad = append(bad, l.name)
		}
		if l.programmed() {
			programmed++
		}
	}
	acc, prog := string(gwv1.ListenerSetConditionAccepted), string(gwv1.ListenerSetConditionProgrammed)
	notValid := string(gwv1.ListenerSetReasonListenersNotValid)
	switch {
	case len(good) == 0:
		s.cond.fail(acc, notValid, "no listener is valid: "+joinQuoted(bad))
		s.cond.fail(prog, notValid, "no listener is valid: "+joinQuoted(bad))
	case len(bad) > 0:
		s.cond.set(acc, metav1.ConditionTrue, notValid, notValidListeners(bad)+"; accepted: "+joinQuoted(good))
	default:
		s.cond.setDefault(acc, metav1.ConditionTrue, string(gwv1.ListenerSetReasonAccepted), "all listeners are accepted")
	}
	switch {
	case !s.parent.served():
		s.cond.fail(prog, string(listenerSetReasonParentNotProgrammed), fmt.Sprintf("parent Gateway %s/%s is not programmed", s.parent.key.Namespace, s.parent.key.Name))
	case programmed == 0:
		s.cond.fail(prog, string(gwv1.ListenerSetReasonInvalid), "no listener is programmed")
	}
	s.cond.setDefault(prog, metav1.ConditionTrue, string(gwv1.ListenerSetReasonProgrammed), "programmed on "+s.parent.addrOrNone())
}
