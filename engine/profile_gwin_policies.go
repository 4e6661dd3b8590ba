package engine

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// gwin policy resources: GatewayPolicy, ListenerSetPolicy, RoutePolicy and
// ServicePolicy (gwin.yandex.cloud/v1). A policy applies to objects of its
// target kinds in its own namespace that spec.targetRefs names and
// spec.selector selects (both, when both are set; every such object when
// neither is). Its spec.policy holds the same settings as the targets'
// annotations, as nested fields.

// gwinPolicy is one gwin policy during translation.
type gwinPolicy struct {
	obj    *ImplementationPolicy
	key    ObjectKey
	schema *gwinSchema
	// targetKinds are the kinds the policy targets.
	targetKinds []string
	// refs are spec.targetRefs as kind/name pairs (hasRefs: the field is
	// set).
	refs     [][2]string
	hasRefs  bool
	selector labels.Selector // nil: no selector
	settings []*gwinSetting
	// errs are invalid settings: the policy is not applied.
	errs []string
}

// gwinPolicyKinds maps each policy kind to its schema and target kinds.
var gwinPolicyKinds = map[string]struct {
	schema  *gwinSchema
	targets []string
}{
	"GatewayPolicy":     {gwinGatewaySchema, []string{"Gateway"}},
	"ListenerSetPolicy": {gwinListenerSetSchema, []string{"ListenerSet"}},
	"RoutePolicy":       {gwinRouteSchema, []string{"HTTPRoute", "GRPCRoute", "TLSRoute"}},
	"ServicePolicy":     {gwinServiceSchema, []string{"Service"}},
}

// policyGroup is the API group of a policy's apiVersion.
func policyGroup(p *ImplementationPolicy) string {
	g, _, ok := strings.Cut(p.APIVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// newGwinPolicy parses a gwin policy (nil for other policies).
func newGwinPolicy(t *translator, p *ImplementationPolicy) *gwinPolicy {
	pk, ok := gwinPolicyKinds[p.Kind]
	if !ok || policyGroup(p) != gwinGroup {
		return nil
	}
	gp := &gwinPolicy{obj: p, key: ObjectKey{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name},
		schema: pk.schema, targetKinds: pk.targets}
	if refs, ok := p.Spec["targetRefs"].([]any); ok {
		gp.hasRefs = true
		for _, r := range refs {
			m, _ := r.(map[string]any)
			kind, _ := m["kind"].(string)
			name, _ := m["name"].(string)
			gp.refs = append(gp.refs, [2]string{kind, name})
		}
	}
	if sel, ok := p.Spec["selector"].(map[string]any); ok {
		s, err := metav1.LabelSelectorAsSelector(decodeSelector(sel))
		if err != nil {
			gp.errs = append(gp.errs, "spec.selector: "+err.Error())
		} else {
			gp.selector = s
		}
	}
	policy, _ := p.Spec["policy"].(map[string]any)
	var errs []string
	gp.settings, errs = parsePolicy(pk.schema, gp.key, policy)
	gp.errs = append(gp.errs, errs...)
	if len(gp.errs) == 0 {
		gs := newGwinSettings(pk.schema, gp.settings)
		for _, sc := range []string{"listener", "rule", "host"} {
			gs.checkScope(sc, false)
		}
		gp.errs = append(gp.errs, gs.errs...)
	}
	return gp
}

// decodeSelector reads a label selector the loader has checked.
func decodeSelector(m map[string]any) *metav1.LabelSelector {
	sel := &metav1.LabelSelector{}
	if ml, ok := m["matchLabels"].(map[string]any); ok {
		sel.MatchLabels = map[string]string{}
		for k, v := range ml {
			sel.MatchLabels[k] = fmt.Sprint(v)
		}
	}
	if exprs, ok := m["matchExpressions"].([]any); ok {
		for _, e := range exprs {
			em, _ := e.(map[string]any)
			r := metav1.LabelSelectorRequirement{}
			r.Key, _ = em["key"].(string)
			op, _ := em["operator"].(string)
			r.Operator = metav1.LabelSelectorOperator(op)
			if vs, ok := em["values"].([]any); ok {
				for _, v := range vs {
					r.Values = append(r.Values, fmt.Sprint(v))
				}
			}
			sel.MatchExpressions = append(sel.MatchExpressions, r)
		}
	}
	return sel
}

// applies reports whether the policy targets the object.
func (p *gwinPolicy) applies(key ObjectKey, lbls map[string]string) bool {
	if key.Namespace != p.obj.Namespace || !containsString(p.targetKinds, key.Kind) {
		return false
	}
	if p.hasRefs {
		named := false
		for _, r := range p.refs {
			if r[0] == key.Kind && r[1] == key.Name {
				named = true
			}
		}
		if !named {
			return false
		}
	}
	return p.selector == nil || p.selector.Matches(labels.Set(lbls))
}

// writeGwinPolicyStatus decides a policy's Accepted condition: Invalid
// when its settings are, TargetNotFound when it applies to nothing, else
// Accepted naming its targets. It warns about targets of another profile.
func (t *translator) writeGwinPolicyStatus(p *gwinPolicy) {
	cond := newConditionSet(p.obj.Generation, t.opts.Now)
	acc := "Accepted"
	targets, foreign := t.gwinPolicyTargets(p)
	t.recordGwinEffects(p, targets, foreign)
	switch {
	case len(p.errs) > 0:
		cond.fail(acc, "Invalid", "invalid gwin settings, the policy is not applied: "+strings.Join(p.errs, "; "))
	case len(targets) == 0:
		cond.fail(acc, "TargetNotFound", fmt.Sprintf("no %s in namespace %s matches spec.targetRefs and spec.selector", strings.Join(p.targetKinds, " or "), p.obj.Namespace))
	default:
		cond.setDefault(acc, metav1.ConditionTrue, "Accepted", "applies to "+strings.Join(targets, ", "))
	}
	for _, f := range foreign {
		t.note(SeverityWarning, p.key, "", f+" does not use the gwin profile; the policy has no effect on it")
	}
	if len(p.errs) == 0 && len(p.settings) == 0 {
		t.note(SeverityWarning, p.key, "", "spec.policy sets nothing")
	}
	p.obj.Status = &ImplementationPolicyStatus{Conditions: cond.list()}
	if c := cond.get(acc); c != nil && c.Status == metav1.ConditionFalse {
		t.notes = append(t.notes, Finding{Severity: SeverityError, Object: p.key, Source: t.source(p.key),
			Type: acc, Status: metav1.ConditionFalse, Reason: c.Reason, Message: c.Message})
	}
}

// gwinPolicyTargets lists the objects a policy applies to ("Gateway
// ns/name"), and those among them that are not served by the gwin profile.
func (t *translator) gwinPolicyTargets(p *gwinPolicy) (targets, foreign []string) {
	consider := func(key ObjectKey, lbls map[string]string, gwin bool) {
		if !p.applies(key, lbls) {
			return
		}
		name := key.Kind + " " + key.Namespace + "/" + key.Name
		targets = append(targets, name)
		if !gwin {
			foreign = append(foreign, name)
		}
	}
	for _, g := range t.out.Gateways {
		gs := t.gatewayByKey[nsName{g.Namespace, g.Name}]
		consider(ObjectKey{Kind: "Gateway", Namespace: g.Namespace, Name: g.Name}, g.Labels, gs != nil && t.profileOf(gs).name() == ProfileGwin)
	}
	for _, s := range t.out.ListenerSets {
		st := t.setByKey[nsName{s.Namespace, s.Name}]
		consider(ObjectKey{Kind: "ListenerSet", Namespace: s.Namespace, Name: s.Name}, s.Labels, st != nil && t.profileOf(st.parent).name() == ProfileGwin)
	}
	for _, r := range t.routes {
		consider(r.key, r.obj.(metav1.Object).GetLabels(), t.routeHasGwinParent(r))
	}
	for _, s := range t.out.Services {
		consider(ObjectKey{Kind: "Service", Namespace: s.Namespace, Name: s.Name}, s.Labels, true)
	}
	return targets, foreign
}

// routeHasGwinParent reports whether a parentRef of the route names a
// Gateway, or a ListenerSet of a Gateway, that uses the gwin profile.
func (t *translator) routeHasGwinParent(r *routeState) bool {
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
		if g != nil && t.profileOf(g).name() == ProfileGwin {
			return true
		}
	}
	return false
}
