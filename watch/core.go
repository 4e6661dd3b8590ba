package watch

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gwdev/gwdev/engine"
)

// loadCoreObject strictly decodes a core kind into its k8s.io/api type
// (unknown and duplicate fields and type mismatches are errors, as with
// kubectl's strict field validation), applies the apiserver defaults gwdev
// relies on and checks the hand-written rules of core_rules.go.
func loadCoreObject(u map[string]any, spec *kindSpec) (metav1.Object, []issue) {
	_, issues := prepareMetadata(u, spec)
	obj := spec.newObject()
	if svc, ok := obj.(*corev1.Service); !ok || !decodeSimpleService(u, svc) {
		whole := u
		if len(issues) > 0 { // reported once: decode the rest without metadata
			whole = maps.Clone(u)
			delete(whole, "metadata")
		}
		issues = append(issues, strictDecode("", whole, obj)...)
	}
	if len(issues) > 0 {
		return nil, issues
	}
	var errs field.ErrorList
	switch o := obj.(type) {
	case *corev1.Service:
		defaultService(o)
		errs = validateService(o)
	case *corev1.Secret:
		defaultSecret(o)
		errs = validateSecret(o)
	case *corev1.ConfigMap:
		errs = validateConfigMap(o)
	case *certificatesv1.ClusterTrustBundle:
		errs = validateClusterTrustBundle(o)
	case *corev1.Namespace:
		defaultNamespace(o)
	case *discoveryv1.EndpointSlice:
		defaultEndpointSlice(o)
		errs = validateEndpointSlice(o)
	case *corev1.Pod:
		errs = validatePod(o) // pod.go
	case *networkingv1.Ingress:
		o.Status = networkingv1.IngressStatus{} // the engine writes status
		errs = validateIngress(o)
	case *networkingv1.IngressClass:
		errs = validateIngressClass(o)
	case *engine.ImplementationPolicy:
		o.Status, o.Generation = nil, 1 // a CRD object as created: the engine writes status
		if is := validateImplementationPolicy(o); len(is) > 0 {
			return nil, is
		}
	}
	if len(errs) > 0 {
		return nil, fieldIssues(errs)
	}
	setTypeMeta(obj, spec)
	if spec.entry != nil {
		// A Service becomes the engine's own here, per document: its
		// corev1.Service (640 bytes) is garbage before the load ends.
		obj = spec.entry.Hold(obj)
	}
	return obj, nil
}

// setTypeMeta writes the apiVersion and kind of spec into obj.
func setTypeMeta(obj metav1.Object, spec *kindSpec) {
	tm := metav1.TypeMeta{APIVersion: spec.apiVersion(), Kind: spec.kind}
	switch o := obj.(type) {
	case *corev1.Service:
		o.TypeMeta = tm
	case *corev1.Secret:
		o.TypeMeta = tm
	case *corev1.ConfigMap:
		o.TypeMeta = tm
	case *certificatesv1.ClusterTrustBundle:
		o.TypeMeta = tm
	case *corev1.Namespace:
		o.TypeMeta = tm
	case *discoveryv1.EndpointSlice:
		o.TypeMeta = tm
	case *corev1.Pod:
		o.TypeMeta = tm
	case *networkingv1.Ingress:
		o.TypeMeta = tm
	case *networkingv1.IngressClass:
		o.TypeMeta = tm
	case *engine.ImplementationPolicy:
		o.TypeMeta = tm
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
