package engine

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// collectFindings turns the conditions gwdev set (the condition sets the
// status is written from, not the written status; an unmanaged
// GatewayClass's own status as it was read) into findings, adds
// gwdev's own notes, and sorts them most severe first, then by source file
// and line. A condition set about a field (conditionSet.setAt) points at
// that field; the others at path.
func (t *translator) collectFindings() []Finding {
	var fs []Finding
	addParent := func(k, parent ObjectKey, path, scope string, cs *conditionSet, problems []metav1.Condition) {
		for _, c := range problems {
			field := firstNonEmpty(cs.pathOf(c.Type), path)
			fs = append(fs, Finding{Severity: ConditionSeverity(c.Type, c.Status), Object: k, Source: t.sourceAtFirst(k, cs.pathOf(c.Type), path), Scope: scope,
				Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, Field: field, Parent: parent})
		}
	}
	add := func(k ObjectKey, path, scope string, cs *conditionSet) {
		addParent(k, ObjectKey{}, path, scope, cs, problemConditions(cs.sort()))
	}
	addListener := func(k ObjectKey, i int, l *listenerState) {
		from := len(fs)
		add(k, "spec.listeners["+itoa(i)+"]", "listener "+quote(l.name), l.cond)
		for j := from; j < len(fs); j++ {
			fs[j].Listener = l.name
			if fs[j].Type == string(gwv1.ListenerConditionConflicted) && fs[j].Status == metav1.ConditionTrue {
				fs[j].ConflictsWith = l.conflictsWith
			}
		}
	}
	for _, gc := range t.out.GatewayClasses {
		cs := &conditionSet{conds: gc.Status.Conditions} // an unmanaged class: the status it came with
		if c := t.classes[gc.Name]; c != nil && c.managed {
			cs = c.cond
		}
		add(ObjectKey{Kind: "GatewayClass", Name: gc.Name}, "", "", cs)
	}
	for _, g := range t.gateways {
		add(g.key, "", "", g.cond)
		if g.pending() {
			continue // no listener status while the class is not accepted
		}
		for i, l := range g.own {
			addListener(g.key, i, l)
		}
	}
	for _, s := range t.listenerSets {
		add(s.key, "", "", s.cond)
		if !s.attached {
			continue // no listener status while not attached
		}
		for i, l := range s.listeners {
			addListener(s.key, i, l)
		}
	}
	for _, r := range t.routes {
		for _, p := range r.parents {
			problems := problemConditions(p.cond.sort())
			if len(problems) == 0 {
				continue // the common case: skip building the scope
			}
			if p.index < 0 {
				addParent(r.key, ObjectKey{}, "spec.useDefaultGateways", "useDefaultGateways: "+p.where, p.cond, problems)
				continue
			}
			ns := r.key.Namespace
			if p.ref.Namespace != nil {
				ns = string(*p.ref.Namespace)
			}
			scope := fmt.Sprintf("parentRefs[%d]: %s", p.index, parentDisplay(string(*p.ref.Kind), ns, string(p.ref.Name), p.ref))
			parent := ObjectKey{Kind: string(*p.ref.Kind), Namespace: ns, Name: string(p.ref.Name)}
			refs, rest := refProblems(r, problems)
			addParent(r.key, parent, "spec.parentRefs["+itoa(p.index)+"]", scope, p.cond, rest)
			if len(refs) > 0 { // at the reference that does not resolve
				addParent(r.key, parent, r.refFailures[0].path, scope, p.cond, refs)
			}
		}
		if len(r.parentRefs) == 0 && defaultScope(r.useDefaultGateways) == "" {
			t.noteKind(NoteNoParentRefs, SeverityWarning, r.key, "", "the route has no parentRefs and attaches to nothing")
		}
	}
	for _, p := range t.policies {
		add(p.key, "", "", p.cond)
	}
	for _, o := range t.conditionOwners {
		add(o.key, "", "", o.cond)
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
// conditions, True negative ones (see NegativePolarity), Accepted=True with a
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
		if NegativePolarity(c.Type) {
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

// AnnotationField is the field path of an annotation:
// metadata.annotations[key].
func AnnotationField(key string) string { return "metadata.annotations[" + key + "]" }

// firstNonEmpty returns the first of its arguments that is not "".
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
