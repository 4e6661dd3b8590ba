package engine

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// collectFindings derives findings from the written status and adds gwdev's
// own notes, most severe first, then by source file and line.
func (t *translator) collectFindings() []Finding {
	var fs []Finding
	var addParent func(k, parent ObjectKey, path, scope string, problems []metav1.Condition)
	add := func(k ObjectKey, path, scope string, problems []metav1.Condition) {
		addParent(k, ObjectKey{}, path, scope, problems)
	}
	addParent = func(k, parent ObjectKey, path, scope string, problems []metav1.Condition) {
		for _, c := range problems {
			sev := SeverityError
			if c.Type == string(gwv1.ListenerConditionOverlappingTLSConfig) || c.Status == metav1.ConditionUnknown ||
				c.Type == string(gwv1.GatewayConditionInsecureFrontendValidationMode) ||
				(c.Type == "Accepted" && c.Status == metav1.ConditionTrue) {
				sev = SeverityWarning
			}
			fs = append(fs, Finding{Severity: sev, Object: k, Source: t.sourceAtFirst(k, annotationPath(c.Message), path), Scope: scope,
				Condition: c.Type + "=" + string(c.Status), Reason: c.Reason, Message: c.Message,
				Field: firstNonEmpty(annotationPath(c.Message), path), Parent: parent})
		}
	}
	for _, gc := range t.out.GatewayClasses {
		add(ObjectKey{Kind: "GatewayClass", Name: gc.Name}, "", "", problemConditions(gc.Status.Conditions))
	}
	for _, g := range t.gateways {
		add(g.key, "", "", problemConditions(g.obj.Status.Conditions))
		for i, l := range g.obj.Status.Listeners {
			add(g.key, "spec.listeners["+itoa(i)+"]", "listener "+quote(string(l.Name)), problemConditions(l.Conditions))
		}
	}
	for _, s := range t.listenerSets {
		add(s.key, "", "", problemConditions(s.obj.Status.Conditions))
		for i, l := range s.obj.Status.Listeners {
			add(s.key, "spec.listeners["+itoa(i)+"]", "listener "+quote(string(l.Name)), problemConditions(l.Conditions))
		}
	}
	for _, r := range t.routes {
		for _, p := range r.parents {
			problems := problemConditions(p.cond.list())
			if len(problems) == 0 {
				continue // the common case: skip building the scope
			}
			if p.index < 0 {
				add(r.key, "spec.useDefaultGateways", "useDefaultGateways: "+p.where, problems)
				continue
			}
			ns := r.key.Namespace
			if p.ref.Namespace != nil {
				ns = string(*p.ref.Namespace)
			}
			scope := fmt.Sprintf("parentRefs[%d]: %s", p.index, parentDisplay(string(*p.ref.Kind), ns, string(p.ref.Name), p.ref))
			parent := ObjectKey{Kind: string(*p.ref.Kind), Namespace: ns, Name: string(p.ref.Name)}
			refs, rest := refProblems(r, problems)
			addParent(r.key, parent, "spec.parentRefs["+itoa(p.index)+"]", scope, rest)
			if len(refs) > 0 { // at the reference that does not resolve
				addParent(r.key, parent, r.refFailures[0].path, scope, refs)
			}
		}
		if len(r.parentRefs) == 0 && defaultScope(r.useDefaultGateways) == "" {
			t.note(SeverityWarning, r.key, "", "the route has no parentRefs and attaches to nothing")
		}
	}
	for _, p := range t.policies {
		add(p.key, "", "", problemConditions(p.cond.list()))
	}
	for _, o := range t.conditionOwners {
		add(o.key, "", "", problemConditions(o.cond.list()))
	}
	fs = append(fs, t.notes...)
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Severity.Rank() != b.Severity.Rank() {
			return a.Severity.Rank() < b.Severity.Rank()
		}
		if a.Source.File != b.Source.File {
			return a.Source.File < b.Source.File
		}
		if a.Source.Line != b.Source.Line {
			return a.Source.Line < b.Source.Line
		}
		return a.Object.String() < b.Object.String()
	})
	return fs
}

// Rank orders severities, most severe first: errors 0, warnings 1, notes 2.
func (s Severity) Rank() int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// problemConditions picks the conditions worth reporting: False positive
// conditions, True negative ones (Conflicted, OverlappingTLSConfig,
// PartiallyInvalid, InsecureFrontendValidationMode), Accepted=True with a
// ListenersNotValid reason, and Unknown summaries. A False Programmed next to
// a False Accepted, a listener's Programmed=False Pending (it repeats its
// Gateway's own finding), or a conflict-reason Accepted=False next to
// Conflicted=True, says nothing new and is left out.
func problemConditions(conds []metav1.Condition) []metav1.Condition {
	acceptedFalse, conflicted := false, false
	for _, c := range conds {
		if c.Type == "Accepted" && c.Status == metav1.ConditionFalse {
			acceptedFalse = true
		}
		if c.Type == "Conflicted" && c.Status == metav1.ConditionTrue {
			conflicted = true
		}
	}
	var out []metav1.Condition
	for _, c := range conds {
		switch c.Type {
		case "Conflicted", "OverlappingTLSConfig", "PartiallyInvalid", "InsecureFrontendValidationMode":
			if c.Status == metav1.ConditionTrue {
				out = append(out, c)
			}
			continue
		}
		switch {
		case c.Type == "Programmed" && c.Status == metav1.ConditionFalse && (acceptedFalse || c.Reason == "Pending"):
		case c.Type == "Accepted" && conflicted && (c.Reason == "HostnameConflict" || c.Reason == "ProtocolConflict"):
		case c.Status == metav1.ConditionFalse, c.Status == metav1.ConditionUnknown:
			out = append(out, c)
		case c.Type == "Accepted" && c.Reason == "ListenersNotValid":
			out = append(out, c)
		}
	}
	return out
}

// refProblems splits a route parent's problem conditions: the ResolvedRefs
// one, when the route's first reference failure knows its field (a
// backendRef), is reported at that field's line; the others at the
// parentRef's.
func refProblems(r *routeState, problems []metav1.Condition) (refs, rest []metav1.Condition) {
	if len(r.refFailures) == 0 || r.refFailures[0].path == "" {
		return nil, problems
	}
	for _, c := range problems {
		if c.Type == string(gwv1.RouteConditionResolvedRefs) {
			refs = append(refs, c)
		} else {
			rest = append(rest, c)
		}
	}
	return refs, rest
}

// annotationPath is the field path of the annotation a message is about
// ("annotation gwin.yandex.cloud/rules.timeout: …"), "" when none.
func annotationPath(msg string) string {
	_, rest, ok := strings.Cut(msg, "annotation ")
	if !ok {
		return ""
	}
	key, _, ok := strings.Cut(rest, ":")
	if !ok || strings.ContainsAny(key, " \t") || !strings.Contains(key, "/") {
		return ""
	}
	return "metadata.annotations[" + key + "]"
}

// firstNonEmpty returns the first of its arguments that is not "".
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
