package engine

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// What an implementation profile sees of a translation: views of the
// objects a hook is about, and the Translation, which reads the output
// being built and takes what the profile adds (findings, policy effects,
// policy status). A view is valid during the translation that made it.

// Translation is one translation as a profile's run sees it.
type Translation struct {
	t *translator
	// profile is the name of the profile whose run holds it.
	profile string
}

// Options are the translation's options; read them, never change them.
func (tr *Translation) Options() *Options { return &tr.t.opts }

// ProfileOptions is the profile's own entry of Options.ProfileOptions, of
// the type the profile defines (nil: none given).
func (tr *Translation) ProfileOptions() any { return tr.t.opts.ProfileOptions[tr.profile] }

// Output holds the objects of the result being built: the input objects
// (copies where the engine writes status). A profile reads it; it writes only through the
// methods of Translation and the views.
func (tr *Translation) Output() *Snapshot { return tr.t.out }

// Note records a finding about an object; at is a scope ("listener
// \"http\"") or a field path (spec.addresses[0]) or "".
func (tr *Translation) Note(sev Severity, obj ObjectKey, at, msg string) {
	tr.t.note(sev, obj, at, msg)
}

// NoteKind is Note of a kind other packages tell apart (NoteKind).
func (tr *Translation) NoteKind(kind NoteKind, sev Severity, obj ObjectKey, at, msg string) {
	tr.t.noteKind(kind, sev, obj, at, msg)
}

// NoteAt is NoteKind about the field at path (metadata.annotations[key]),
// which the finding points at; kind may be "".
func (tr *Translation) NoteAt(kind NoteKind, sev Severity, obj ObjectKey, path, at, msg string) {
	tr.t.noteAt(kind, sev, obj, path, at, msg)
}

// Effect records what a policy does to one of its targets.
func (tr *Translation) Effect(e PolicyEffect) { tr.t.effect(e) }

// SetPolicyAccepted writes an implementation policy's status: one Accepted
// condition, True or False with reason and message. False is also an error
// finding at the policy's source.
func (tr *Translation) SetPolicyAccepted(p *ImplementationPolicy, accepted bool, reason, msg string) {
	t := tr.t
	key := ObjectKey{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name}
	cond := newConditionSet(p.Generation, &t.opts.Now)
	const acc = "Accepted"
	if accepted {
		cond.setDefault(acc, metav1.ConditionTrue, reason, msg)
	} else {
		cond.fail(acc, reason, msg)
	}
	p.Status = &ImplementationPolicyStatus{Conditions: cond.list()}
	if c := cond.get(acc); c != nil && c.Status == metav1.ConditionFalse {
		t.notes = append(t.notes, Finding{Severity: SeverityError, Object: key, Source: t.source(key),
			Type: acc, Status: metav1.ConditionFalse, Reason: c.Reason, Message: c.Message})
	}
}

// Gateways are the managed Gateways, in processing order.
func (tr *Translation) Gateways() []*GatewayView {
	out := make([]*GatewayView, len(tr.t.gateways))
	for i, g := range tr.t.gateways {
		out[i] = &GatewayView{t: tr.t, g: g}
	}
	return out
}

// Routes are the routes of every kind, in processing order.
func (tr *Translation) Routes() []*RouteView {
	out := make([]*RouteView, len(tr.t.routes))
	for i, r := range tr.t.routes {
		out[i] = &RouteView{t: tr.t, r: r}
	}
	return out
}

// ProfileOf names the profile of a managed Gateway, or of the Gateway a
// ListenerSet attaches to; "" when the object is neither.
func (tr *Translation) ProfileOf(key ObjectKey) string {
	t := tr.t
	switch key.Kind {
	case "Gateway":
		if g := t.gatewayByKey[nsName{key.Namespace, key.Name}]; g != nil {
			return t.profileOf(g).Name()
		}
	case "ListenerSet":
		if s := t.setByKey[nsName{key.Namespace, key.Name}]; s != nil {
			return t.profileOf(s.parent).Name()
		}
	}
	return ""
}

// CertificateFromPEM parses a certificate and key pair the way a
// kubernetes.io/tls Secret ns/name holding them is parsed.
func CertificateFromPEM(ns, name string, certPEM, keyPEM []byte) (*Certificate, error) {
	sec := &corev1.Secret{Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM}}
	sec.Namespace, sec.Name = ns, name
	return parseTLSSecret(sec)
}

// GatewayView is a managed Gateway as a profile sees it.
type GatewayView struct {
	t *translator
	g *gatewayState
}

// Key is the Gateway's key.
func (v *GatewayView) Key() ObjectKey { return v.g.key }

// Object is the Gateway; read it, never change it.
func (v *GatewayView) Object() *gwv1.Gateway { return v.g.obj }

// ClassName is the Gateway's GatewayClass.
func (v *GatewayView) ClassName() string { return v.g.class.name }

// ListenerNames are the names of the Gateway's own listeners (not those of
// attached ListenerSets), in spec order.
func (v *GatewayView) ListenerNames() []string { return listenerNames(v.g.own) }

// Fail sets a condition of the Gateway to False (Accepted, Programmed) with
// a reason and message, unless it is False already.
func (v *GatewayView) Fail(condType, reason, msg string) { v.g.cond.fail(condType, reason, msg) }

// FailAt is Fail about the field at path, which the finding points at.
func (v *GatewayView) FailAt(path, condType, reason, msg string) {
	v.g.cond.failAt(path, condType, reason, msg)
}

// Address is the loopback address the Gateway is bound to ("": not yet
// decided).
func (v *GatewayView) Address() string { return v.g.addr }

// SetAddress binds the Gateway to a loopback address.
func (v *GatewayView) SetAddress(addr string) { v.g.addr = addr }

// ListenerSetView is a ListenerSet attaching to a managed Gateway.
type ListenerSetView struct {
	t *translator
	s *listenerSetState
}

// Key is the ListenerSet's key.
func (v *ListenerSetView) Key() ObjectKey { return v.s.key }

// Object is the ListenerSet; read it, never change it.
func (v *ListenerSetView) Object() *gwv1.ListenerSet { return v.s.obj }

// ListenerNames are the names of the set's listeners, in spec order.
func (v *ListenerSetView) ListenerNames() []string { return listenerNames(v.s.listeners) }

// ListenerView is one listener of a managed Gateway (its own, or one of an
// attached ListenerSet).
type ListenerView struct {
	t *translator
	l *listenerState
}

// Name is the listener's name.
func (v *ListenerView) Name() string { return v.l.name }

// Protocol is the listener's protocol.
func (v *ListenerView) Protocol() gwv1.ProtocolType { return v.l.protocol }

// Hostname is the listener's hostname ("": any).
func (v *ListenerView) Hostname() string { return v.l.hostname }

// Owner is the object that declares the listener: its Gateway or
// ListenerSet.
func (v *ListenerView) Owner() ObjectKey { return v.l.ownerKey() }

// Gateway is the Gateway the listener is merged into.
func (v *ListenerView) Gateway() *GatewayView { return &GatewayView{t: v.t, g: v.l.gateway} }

// ListenerSet is the key of the listener's ListenerSet; ok is false for a
// Gateway's own listener.
func (v *ListenerView) ListenerSet() (key ObjectKey, ok bool) {
	if v.l.set == nil {
		return ObjectKey{}, false
	}
	return v.l.set.key, true
}

// RouteView is a route as a profile sees it.
type RouteView struct {
	t *translator
	r *routeState
}

// Key is the route's key.
func (v *RouteView) Key() ObjectKey { return v.r.key }

// Kind is the route's kind (HTTPRoute, GRPCRoute, ...).
func (v *RouteView) Kind() string { return v.r.kind }

// Object is the route (*gwv1.HTTPRoute, ...); read it, never change it.
func (v *RouteView) Object() metav1.Object { return v.r.obj.(metav1.Object) }

// Hostnames are the route's spec.hostnames (nil for TCP/UDP routes).
func (v *RouteView) Hostnames() []string { return v.r.hostnames }

// ParentProfiles names the profiles of the Gateways the route's
// parentRefs name, directly or through a ListenerSet, in parentRef order
// (refs to unknown or unmanaged Gateways are left out).
func (v *RouteView) ParentProfiles() []string {
	t, r := v.t, v.r
	var out []string
	for _, ref := range r.parentRefs {
		ns := r.key.Namespace
		if ref.Namespace != nil && *ref.Namespace != "" {
			ns = string(*ref.Namespace)
		}
		var g *gatewayState
		if ref.Kind != nil && *ref.Kind == "ListenerSet" {
			if s := t.setByKey[nsName{ns, string(ref.Name)}]; s != nil {
				g = s.parent
			}
		} else {
			g = t.gatewayByKey[nsName{ns, string(ref.Name)}]
		}
		if g != nil {
			out = append(out, t.profileOf(g).Name())
		}
	}
	return out
}

// SpecRuleIndex is the index in spec.rules of a table rule of the route
// (-1 when rr is not one of its rules).
func (v *RouteView) SpecRuleIndex(rr *RouteRule) int {
	i, _ := ruleIndexes(rr.Name)
	return i
}

// listenerNames lists listeners' names.
func listenerNames(ls []*listenerState) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, l.name)
	}
	return out
}

// HostnameIntersection returns the intersection of a listener hostname and
// a route hostname, and whether they intersect (the more specific of the
// two; "" is any).
func HostnameIntersection(listener, route string) (string, bool) {
	return intersectHostname(listener, route)
}

// VirtualHostLabel is a virtual host's hostname as table names show it
// ("*" for any).
func VirtualHostLabel(h string) string { return displayVHost(h) }
