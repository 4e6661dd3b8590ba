package engine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ImplementationPolicy is a policy resource of an implementation profile,
// such as gwin.yandex.cloud/v1 GatewayPolicy: gwdev keeps it as written
// (apiVersion, kind, metadata and spec as a map) and only the profile that
// owns its API group interprets the spec. The loader checks its structure
// (targetRefs, selector, policy); the profile checks the settings.
type ImplementationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the policy's spec as decoded from YAML: maps, lists, strings,
	// booleans and numbers (nil: none).
	Spec map[string]any `json:"spec,omitempty"`
	// Status is written by the engine (nil: not interpreted by any profile).
	Status *ImplementationPolicyStatus `json:"status,omitempty"`
}

// ImplementationPolicyStatus is what gwdev reports about an
// ImplementationPolicy: an Accepted condition saying whether its settings
// are valid and which objects it applies to.
type ImplementationPolicyStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

var _ runtime.Object = (*ImplementationPolicy)(nil)

// DeepCopy returns a deep copy of the policy.
func (p *ImplementationPolicy) DeepCopy() *ImplementationPolicy {
	if p == nil {
		return nil
	}
	out := &ImplementationPolicy{TypeMeta: p.TypeMeta}
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if p.Spec != nil {
		out.Spec = deepCopyValue(p.Spec).(map[string]any)
	}
	if p.Status != nil {
		st := &ImplementationPolicyStatus{}
		for _, c := range p.Status.Conditions {
			st.Conditions = append(st.Conditions, *c.DeepCopy())
		}
		out.Status = st
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *ImplementationPolicy) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// deepCopyValue copies a decoded YAML/JSON value: maps and lists are copied,
// scalars are immutable.
func deepCopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyValue(e)
		}
		return out
	}
	return v
}
