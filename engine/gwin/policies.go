package gwin

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
)

// gwin policy resources: GatewayPolicy, ListenerSetPolicy, RoutePolicy and
// ServicePolicy (gwin.yandex.cloud/v1). A policy applies to objects of its
// target kinds in its own namespace that spec.targetRefs names and
// spec.selector selects (both, when both are set; every such object when
// neither is). Its spec.policy holds the same settings as the targets'
// annotations, as nested fields.

// gwinPolicy is one gwin policy during translation.
type gwinPolicy struct {
	obj    *engine.ImplementationPolicy
	key    engine.ObjectKey
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

// policyKind is one gwin policy kind (group Group, version v1, namespaced),
// the kinds its spec.targetRefs may name, and its settings.
type policyKind struct {
	engine.PolicyKind
	// schema holds the settings of the kind's spec.policy.
	schema func() *gwinSchema
}

// gwinPolicyKind is a gwin policy kind that may target targets.
func gwinPolicyKind(kind string, schema func() *gwinSchema, targets ...metav1.GroupKind) policyKind {
	return policyKind{engine.PolicyKind{Group: Group, Version: "v1", Kind: kind,
		PolicyTargets: engine.PolicyTargets{Targets: targets}}, schema}
}

// policyKinds are the gwin policy kinds, in the order the loader lists
// them: the one list of them, which the engine's registry answers from
// (Profile.PolicyKinds).
var policyKinds = []policyKind{
	gwinPolicyKind("GatewayPolicy", gwinGatewaySchema, metav1.GroupKind{Group: gwv1.GroupName, Kind: "Gateway"}),
	gwinPolicyKind("ListenerSetPolicy", gwinListenerSetSchema, metav1.GroupKind{Group: gwv1.GroupName, Kind: "ListenerSet"}),
	gwinPolicyKind("RoutePolicy", gwinRouteSchema, metav1.GroupKind{Group: gwv1.GroupName, Kind: "HTTPRoute"},
		metav1.GroupKind{Group: gwv1.GroupName, Kind: "GRPCRoute"}, metav1.GroupKind{Group: gwv1.GroupName, Kind: "TLSRoute"}),
	gwinPolicyKind("ServicePolicy", gwinServiceSchema, metav1.GroupKind{Group: "", Kind: "Service"}),
}

// PolicyKinds lists the gwin policy kinds (engine.PolicyKindsProfile).
func (Profile) PolicyKinds() []engine.PolicyKind {
	out := make([]engine.PolicyKind, len(policyKinds))
	for i, pk := range policyKinds {
		out[i] = pk.PolicyKind
	}
	return out
}

// policyKindNamed returns the gwin policy kind named kind.
func policyKindNamed(kind string) (policyKind, bool) {
	for _, pk := range policyKinds {
		if pk.Kind == kind {
			return pk, true
		}
	}
	return policyKind{}, false
}

// policyGroup is the API group of a policy's apiVersion.
func policyGroup(p *engine.ImplementationPolicy) string {
	g, _, ok := strings.Cut(p.APIVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// newGwinPolicy parses a gwin policy (nil for other policies).
func newGwinPolicy(p *engine.ImplementationPolicy) *gwinPolicy {
	pk, ok := policyKindNamed(p.Kind)
	if !ok || policyGroup(p) != Group {
		return nil
	}
	gp := &gwinPolicy{obj: p, key: engine.ObjectKey{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name}, schema: pk.schema()}
	for _, t := range pk.Targets {
		gp.targetKinds = append(gp.targetKinds, t.Kind)
	}
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
	gp.settings, errs = parsePolicy(gp.schema, gp.key, policy)
	gp.errs = append(gp.errs, errs...)
	if len(gp.errs) == 0 {
		gs := newGwinSettings(gp.schema, gp.settings)
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
func (p *gwinPolicy) applies(key engine.ObjectKey, lbls map[string]string) bool {
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
func (rn *run) writePolicyStatus(p *gwinPolicy) {
	targets, foreign := rn.policyTargets(p)
	rn.recordEffects(p, targets, foreign)
	accepted, reason, msg := false, "", ""
	switch {
	case len(p.errs) > 0:
		reason, msg = "Invalid", "invalid gwin settings, the policy is not applied: "+strings.Join(p.errs, "; ")
	case len(targets) == 0:
		reason, msg = "TargetNotFound", fmt.Sprintf("no %s in namespace %s matches spec.targetRefs and spec.selector", strings.Join(p.targetKinds, " or "), p.obj.Namespace)
	default:
		accepted, reason, msg = true, "Accepted", "applies to "+strings.Join(targets, ", ")
	}
	for _, f := range foreign {
		rn.tr.Note(engine.SeverityWarning, p.key, "", f+" does not use the gwin profile; the policy has no effect on it")
	}
	if len(p.errs) == 0 && len(p.settings) == 0 {
		rn.tr.Note(engine.SeverityWarning, p.key, "", "spec.policy sets nothing")
	}
	rn.tr.SetPolicyAccepted(p.obj, accepted, reason, msg)
}

// gwinPolicyTargets lists the objects a policy applies to ("Gateway
// ns/name"), and those among them that are not served by the gwin profile.
func (rn *run) policyTargets(p *gwinPolicy) (targets, foreign []string) {
	consider := func(key engine.ObjectKey, lbls map[string]string, gwin bool) {
		if !p.applies(key, lbls) {
			return
		}
		name := key.Kind + " " + key.Namespace + "/" + key.Name
		targets = append(targets, name)
		if !gwin {
			foreign = append(foreign, name)
		}
	}
	out := rn.tr.Output()
	for _, g := range out.Gateways {
		key := engine.ObjectKey{Kind: "Gateway", Namespace: g.Namespace, Name: g.Name}
		consider(key, g.Labels, rn.tr.ProfileOf(key) == Name)
	}
	for _, s := range out.ListenerSets {
		key := engine.ObjectKey{Kind: "ListenerSet", Namespace: s.Namespace, Name: s.Name}
		consider(key, s.Labels, rn.tr.ProfileOf(key) == Name)
	}
	for _, r := range rn.tr.Routes() {
		consider(r.Key(), r.Object().GetLabels(), slices.Contains(r.ParentProfiles(), Name))
	}
	for _, s := range out.Services {
		consider(engine.ObjectKey{Kind: "Service", Namespace: s.Namespace, Name: s.Name}, s.Labels, true)
	}
	return targets, foreign
}

// recordEffects records what a gwin policy does to each object it targets
// ("Kind ns/name" as policyTargets lists them).
func (rn *run) recordEffects(p *gwinPolicy, targets, foreign []string) {
	var keys []string
	for _, s := range p.settings {
		keys = append(keys, s.key)
	}
	for _, name := range targets {
		kind, nsn, _ := strings.Cut(name, " ")
		ns, n, _ := strings.Cut(nsn, "/")
		e := engine.PolicyEffect{Policy: p.key, Target: engine.ObjectKey{Kind: kind, Namespace: ns, Name: n}}
		switch {
		case len(p.errs) > 0:
			e.Reason, e.Message = "Invalid", "not applied: invalid gwin settings: "+strings.Join(p.errs, "; ")
		case containsString(foreign, name):
			e.Reason, e.Message = "NotThisProfile", "no effect: the object is not served by a Gateway of the gwin profile"
		case len(keys) == 0:
			e.Applied, e.Reason, e.Message = true, "Accepted", "applies, but spec.policy sets nothing"
		default:
			e.Applied, e.Reason, e.Message = true, "Accepted", "sets "+strings.Join(keys, ", ")
		}
		rn.tr.Effect(e)
	}
}
