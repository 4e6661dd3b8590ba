package watch

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gwdev/gwdev/engine"
	_ "github.com/gwdev/gwdev/engine/gwin"         // registers the gwin profile and its policy kinds
	_ "github.com/gwdev/gwdev/engine/ingressnginx" // registers the ingress-nginx front end
)

// This file loads the policy resources of implementation profiles
// (gwin.yandex.cloud/v1 GatewayPolicy, RoutePolicy, ServicePolicy,
// ListenerSetPolicy) into engine.ImplementationPolicy objects. gwdev has no
// CRD for them: the structure (spec.targetRefs, spec.selector, spec.policy)
// is checked here by hand, with the apiserver's wording; the settings under
// spec.policy are the profile's business (engine/gwin).

// policyKind is one implementation policy kind with the kinds it can target.
type policyKind struct {
	spec *kindSpec
	// targets are the group/kind pairs targetRefs may name (the registry's
	// answer, engine.PolicyKind).
	targets *engine.PolicyTargets
}

type groupKind struct{ group, kind string }

func (g groupKind) String() string {
	if g.group == "" {
		return g.kind
	}
	return g.group + "/" + g.kind
}

// implementationPolicyKinds are the policy kinds gwdev loads: the
// registered profiles' (engine.ProfilePolicyKinds; the gwin profile is
// registered by this package's import of engine/gwin).
var implementationPolicyKinds = func() []*policyKind {
	var out []*policyKind
	for _, pk := range engine.ProfilePolicyKinds() {
		out = append(out, &policyKind{
			spec: (&kindSpec{kind: pk.Kind, group: pk.Group, version: pk.Version, namespaced: true,
				newObject: func() metav1.Object { return &engine.ImplementationPolicy{} }}).withAPIVersion(),
			targets: &pk.PolicyTargets,
		})
	}
	return out
}()

// policyKindOf returns the policy kind named kind, or nil.
func policyKindOf(kind string) *policyKind {
	for _, pk := range implementationPolicyKinds {
		if pk.spec.kind == kind {
			return pk
		}
	}
	return nil
}

// validateImplementationPolicy checks the structure of a policy: spec is
// required and holds only targetRefs (same-namespace references to a kind
// the policy can target), selector (a label selector) and policy (an
// object).
func validateImplementationPolicy(p *engine.ImplementationPolicy) []issue {
	pk := policyKindOf(p.Kind)
	specPath := field.NewPath("spec")
	if p.Spec == nil {
		return fieldIssues(field.ErrorList{field.Required(specPath, "")})
	}
	var errs field.ErrorList
	for _, k := range sortedKeys(p.Spec) {
		switch k {
		case "targetRefs":
			errs = append(errs, validatePolicyTargetRefs(pk, p.Spec[k], specPath.Child(k))...)
		case "selector":
			errs = append(errs, validatePolicySelector(p.Spec[k], specPath.Child(k))...)
		case "policy":
			if _, ok := p.Spec[k].(map[string]any); !ok && p.Spec[k] != nil {
				errs = append(errs, field.TypeInvalid(specPath.Child(k), p.Spec[k], "must be an object"))
			}
		default:
			errs = append(errs, unknownField(specPath.Child(k)))
		}
	}
	return policyIssues(errs)
}

// policyIssues converts validation errors; unknown fields read as kubectl
// words them.
func policyIssues(errs field.ErrorList) []issue {
	out := make([]issue, 0, len(errs))
	for _, e := range errs {
		if e.Type == errorTypeUnknownField {
			out = append(out, issue{field: e.Field, msg: `unknown field "` + e.Field + `"`, kind: ProblemUnknownField})
			continue
		}
		out = append(out, fieldIssue(e))
	}
	return out
}

// unknownField reports a field the policy's schema does not have, worded
// like kubectl's strict field validation.
func unknownField(path *field.Path) *field.Error {
	return &field.Error{Type: errorTypeUnknownField, Field: path.String(), BadValue: field.OmitValueType{}}
}

// errorTypeUnknownField renders as `unknown field "<path>"` (see
// policyIssues).
const errorTypeUnknownField field.ErrorType = "unknown field"

// validatePolicyTargetRefs checks spec.targetRefs: a list of {group, kind,
// name} naming objects of a kind the policy targets, in its namespace.
func validatePolicyTargetRefs(pk *policyKind, v any, path *field.Path) field.ErrorList {
	list, ok := v.([]any)
	if !ok {
		if v == nil {
			return nil
		}
		return field.ErrorList{field.TypeInvalid(path, v, "must be a list")}
	}
	var errs field.ErrorList
	for i, item := range list {
		ip := path.Index(i)
		ref, ok := item.(map[string]any)
		if !ok {
			errs = append(errs, field.TypeInvalid(ip, item, "must be an object"))
			continue
		}
		for _, k := range sortedKeys(ref) {
			if _, isString := ref[k].(string); !isString {
				if k == "group" || k == "kind" || k == "name" {
					errs = append(errs, field.TypeInvalid(ip.Child(k), ref[k], "must be a string"))
					continue
				}
			}
			switch k {
			case "group", "kind", "name":
			case "namespace":
				errs = append(errs, field.Forbidden(ip.Child(k), "a policy applies only to objects in its own namespace"))
			default:
				errs = append(errs, unknownField(ip.Child(k)))
			}
		}
		kind, _ := ref["kind"].(string)
		name, _ := ref["name"].(string)
		group, hasGroup := ref["group"].(string)
		if kind == "" {
			errs = append(errs, field.Required(ip.Child("kind"), ""))
		}
		if name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(name) {
				errs = append(errs, field.Invalid(ip.Child("name"), name, msg))
			}
		}
		if kind == "" {
			continue
		}
		if !hasGroup {
			group, _ = pk.targets.GroupOf(kind)
		}
		if !pk.targets.Allows(group, kind) {
			var allowed []string
			for _, t := range pk.targets.Targets {
				allowed = append(allowed, groupKind{t.Group, t.Kind}.String())
			}
			errs = append(errs, field.NotSupported(ip, groupKind{group, kind}.String(), allowed))
		}
	}
	return errs
}

// validatePolicySelector checks spec.selector as a metav1.LabelSelector.
func validatePolicySelector(v any, path *field.Path) field.ErrorList {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return nil
		}
		return field.ErrorList{field.TypeInvalid(path, v, "must be an object")}
	}
	var errs field.ErrorList
	for _, k := range sortedKeys(m) {
		if k != "matchLabels" && k != "matchExpressions" {
			errs = append(errs, unknownField(path.Child(k)))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	var sel metav1.LabelSelector
	for _, is := range strictDecode(path.String(), v, &sel) {
		errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: is.field, BadValue: field.OmitValueType{}, Detail: trimFieldPrefix(is)})
	}
	if len(errs) > 0 {
		return errs
	}
	return metav1validation.ValidateLabelSelector(&sel, metav1validation.LabelSelectorValidationOptions{}, path)
}

// trimFieldPrefix returns an issue's message without its leading field path.
func trimFieldPrefix(is issue) string {
	if p := is.field + ": "; is.field != "" && strings.HasPrefix(is.msg, p) {
		return strings.TrimPrefix(is.msg, p)
	}
	return is.msg
}
