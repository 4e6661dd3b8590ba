package engine

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// An XBackend of type EndpointSelector (GEP-4894) "behaves equivalently to
// a Service backendRef": its endpoints are the Pods of its namespace whose
// labels match every entry of endpointSelector.matchLabels, on
// spec.port.number. gwdev runs no Pods, so each selected Pod is answered by
// the built-in echo backend as that Pod (table.TargetPods); requests are
// balanced over them round robin, and spec.sessionPersistence pins a client
// to one of them (GEP-1619, after the backend is chosen by weight).

// endpointSelectorTarget selects the Pods of an EndpointSelector XBackend.
// A selector matching no ready Pod leaves the XBackend accepted (its spec
// is valid; GEP-4894 leaves an endpoints condition open) and the backendRef
// resolved, as a Service without ready endpoints: requests get 503 (the
// HTTPRoute spec's SHOULD) and a warning says why.
func (t *translator) endpointSelectorTarget(xs *xbackendState) *Target {
	spec := &xs.obj.Spec
	ns := xs.key.Namespace
	sel := selectorString(spec.EndpointSelector.MatchLabels)
	display := "XBackend " + ns + "/" + xs.key.Name
	var ready, skipped []string
	for _, p := range t.out.Pods { // sorted by namespace/name
		if p.Namespace != ns || !podSelected(spec.EndpointSelector.MatchLabels, p.Labels) {
			continue
		}
		if why := podNotEndpoint(p); why != "" {
			skipped = append(skipped, p.Name+" ("+why+")")
			continue
		}
		ready = append(ready, p.Name)
	}
	out := &Target{Kind: table.TargetPods, Pods: ready}
	notes := ""
	if len(skipped) > 0 {
		notes = "; not endpoints: " + strings.Join(skipped, ", ")
	}
	if len(ready) == 0 {
		out.Why = fmt.Sprintf("%s: no ready Pod in namespace %s matches %s%s: requests get 503", display, ns, sel, notes)
		t.note(SeverityWarning, xs.key, "spec.endpointSelector",
			fmt.Sprintf("spec.endpointSelector matches no ready Pod in namespace %s (%s)%s: requests sent to this XBackend get 503", ns, sel, notes))
		return out
	}
	out.Why = fmt.Sprintf("%s: %d ready Pod(s) matching %s (%s), each answered by gwdev's echo backend as that Pod on port %d%s",
		display, len(ready), sel, strings.Join(ready, ", "), spec.Port.Number, notes)
	return out
}

// podSelected reports whether labels hold every matchLabels entry.
func podSelected(match map[gwv1.LabelKey]gwv1.LabelValue, labels map[string]string) bool {
	for k, v := range match {
		if got, ok := labels[string(k)]; !ok || got != string(v) {
			return false
		}
	}
	return true
}

// selectorString writes matchLabels as kubectl does ("app=web,tier=front").
func selectorString(match map[gwv1.LabelKey]gwv1.LabelValue) string {
	parts := make([]string, 0, len(match))
	for k, v := range match {
		parts = append(parts, string(k)+"="+string(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// podNotEndpoint says why a selected Pod is not a ready endpoint, as the
// EndpointSlice controller decides for a Service ("": it is one): a Pod
// being deleted, not running (phase Pending, Succeeded, Failed, Unknown) or
// with a Ready condition that is not True. A Pod without status (written by
// hand: no kubelet runs it) counts as running and ready.
func podNotEndpoint(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "terminating"
	}
	if ph := p.Status.Phase; ph != "" && ph != corev1.PodRunning {
		return "phase " + string(ph)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
			return "Ready=" + string(c.Status)
		}
	}
	return ""
}

// xbackendSession compiles an XBackend's sessionPersistence with the
// route's defaults (one compileSession), except the cookie name: GEP-1619
// says a missing cookie.name SHOULD be generated unique, so it names the
// XBackend ("gwdev-session-<namespace>-<name>").
func xbackendSession(xs *xbackendState) *table.Session {
	sp := xs.obj.Spec.SessionPersistence
	s := compileSession(sp)
	if s != nil && s.Type == table.SessionCookie && (sp.Cookie == nil || sp.Cookie.Name == nil || *sp.Cookie.Name == "") {
		s.Name = defaultSessionCookie + "-" + xs.key.Namespace + "-" + xs.key.Name
	}
	return s
}

// noteBackendSessions says, once per route rule, which session persistence
// applies where when an XBackend's own meets the rule's (its own or an
// XBackendTrafficPolicy's): the XBackend's wins for requests sent to it, the
// rule's for its other backends. Two backends of one rule whose sessions use
// one cookie or header name would end each other's sessions: a warning.
func (t *translator) noteBackendSessions() {
	for _, r := range t.routes {
		seen := map[string]bool{}
		for _, rr := range r.rules {
			name := rr.Name
			if i := strings.Index(name, "/match/"); i >= 0 {
				name = name[:i]
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			var own []string
			names := map[string]string{} // session name -> backend
			for _, b := range rr.Backends {
				sp := b.SessionPersistence
				if b.Invalid != "" || sp == nil {
					continue
				}
				own = append(own, b.Service.Namespace+"/"+b.Service.Name)
				key := string(sp.Type) + " " + strings.ToLower(sp.Name)
				if other, dup := names[key]; dup && other != b.Service.Name {
					t.note(SeverityWarning, r.key, name, fmt.Sprintf("XBackends %s and %s of one rule both use session %s %q: a new session with one ends the client's session with the other (GEP-1619 session naming collision)",
						other, b.Service.Name, sp.Type, sp.Name))
				}
				names[key] = b.Service.Name
			}
			if len(own) > 0 && rr.SessionPersistence != nil {
				t.note(SeverityWarning, r.key, name, fmt.Sprintf("XBackend %s has session persistence of its own, which pins the requests sent to it; the rule's sessionPersistence applies to the rule's other backends",
					strings.Join(own, ", ")))
			}
		}
	}
}
