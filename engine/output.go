package engine

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// kubeObject is what every object in a Snapshot is.
type kubeObject interface {
	metav1.Object
	runtime.Object
}

// Each calls fn for every object of the snapshot in output order: classes
// and Gateways first, then routes, then policies and core objects; each kind
// by namespace/name as stored. Objects get apiVersion and kind set.
func (s *Snapshot) Each(fn func(k ObjectKey, obj metav1.Object)) {
	each(s.GatewayClasses, Group, "v1", "GatewayClass", fn)
	each(s.Gateways, Group, "v1", "Gateway", fn)
	each(s.ListenerSets, Group, "v1", "ListenerSet", fn)
	each(s.HTTPRoutes, Group, "v1", "HTTPRoute", fn)
	each(s.GRPCRoutes, Group, "v1", "GRPCRoute", fn)
	each(s.TLSRoutes, Group, "v1", "TLSRoute", fn)
	each(s.TCPRoutes, Group, "v1", "TCPRoute", fn)
	each(s.UDPRoutes, Group, "v1", "UDPRoute", fn)
	each(s.ReferenceGrants, Group, "v1", "ReferenceGrant", fn)
	each(s.BackendTLSPolicies, Group, "v1", "BackendTLSPolicy", fn)
	for _, p := range s.ImplementationPolicies {
		fn(ObjectKey{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name}, p)
	}
	each(s.Namespaces, "", "v1", "Namespace", fn)
	each(s.Services, "", "v1", "Service", fn)
	each(s.EndpointSlices, "discovery.k8s.io", "v1", "EndpointSlice", fn)
	each(s.Secrets, "", "v1", "Secret", fn)
	each(s.ConfigMaps, "", "v1", "ConfigMap", fn)
}

// each sets apiVersion and kind where they are not set yet: Translate sets
// them on its result before returning it, so that readers sharing a Result
// across goroutines (the admin API, the reloader) only read.
func each[T kubeObject](objs []T, group, version, kind string, fn func(ObjectKey, metav1.Object)) {
	gvk := schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
	for _, o := range objs {
		if o.GetObjectKind().GroupVersionKind() != gvk {
			o.GetObjectKind().SetGroupVersionKind(gvk)
		}
		fn(ObjectKey{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}, o)
	}
}

// Len counts the objects in the snapshot.
func (s *Snapshot) Len() int {
	n := 0
	s.Each(func(ObjectKey, metav1.Object) { n++ })
	return n
}

// MarshalYAML renders the result as one YAML document: every object with
// its status, the routing table, the findings and the policies' effects.
// It is the golden format.
func (r *Result) MarshalYAML() ([]byte, error) {
	var objs []any
	r.Objects.Each(func(_ ObjectKey, o metav1.Object) { objs = append(objs, redact(o)) })
	doc := struct {
		Objects  []any          `json:"objects"`
		Table    *Table         `json:"table"`
		Findings []Finding      `json:"findings"`
		Policies []PolicyEffect `json:"policies,omitempty"`
	}{objs, r.Table, r.Findings, r.Policies}
	return yaml.Marshal(doc)
}

// EachOutput calls fn for every object with its status, in the order of
// Each, Secret data redacted, and stops at the first error fn returns. It
// is what `gwdev check -o yaml|json` prints, one object at a time.
func (r *Result) EachOutput(fn func(obj any) error) error {
	var err error
	r.Objects.Each(func(_ ObjectKey, o metav1.Object) {
		if err == nil {
			err = fn(redact(o))
		}
	})
	return err
}

// ObjectsYAML renders every object with its status as a multi-document YAML
// stream, as `kubectl get -o yaml` users know it. Secret data is redacted.
func (r *Result) ObjectsYAML() ([]byte, error) {
	var buf bytes.Buffer
	var err error
	r.Objects.Each(func(_ ObjectKey, o metav1.Object) {
		if err != nil {
			return
		}
		var b []byte
		b, err = yaml.Marshal(redact(o))
		buf.WriteString("---\n")
		buf.Write(b)
	})
	return buf.Bytes(), err
}

// ObjectsJSONItems returns every object with its status, Secrets redacted,
// ready to be encoded as the items of a List.
func (r *Result) ObjectsJSONItems() ([]any, error) {
	var items []any
	r.Objects.Each(func(_ ObjectKey, o metav1.Object) { items = append(items, redact(o)) })
	return items, nil
}
