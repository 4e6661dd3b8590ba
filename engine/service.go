package engine

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Service is a core/v1 Service as a Snapshot holds it: the fields gwdev
// reads, without the rest of corev1.Service, which is 592 bytes (640 with
// its size class) whatever it holds; a Service is 144. bench/genroutes'
// 20,000 Services held 12.8 MB as corev1.Services, from the load's end to
// check's (issue 42). Nothing is lost: a Service that sets any other field
// (a uid, sessionAffinity ClientIP, clusterIPs, a status…) keeps its whole
// object beside these fields, and every output renders Object, the
// corev1.Service it was loaded as. Manifests decode into corev1.Service
// (the registry's New), which the loader converts with NewService once it
// is validated. Like every loaded object, a Service and what it points to
// are never written.
type Service struct {
	// Name, Namespace, Labels and Annotations are the Service's metadata
	// (nil maps: none).
	Name, Namespace     string
	Labels, Annotations map[string]string
	// Spec is the Service's spec.
	Spec ServiceSpec
	// full is the Service as loaded when it sets a field this struct does
	// not hold (nil: it sets none, and its spec.sessionAffinity is None, the
	// apiserver's default, which the loader applies). It shares its maps
	// and slices with these fields.
	full *corev1.Service
}

// ServiceSpec is the part of a Service's spec gwdev reads (its types are
// corev1's; zero values mean what they mean there).
type ServiceSpec struct {
	// Type is spec.type (ClusterIP, NodePort, LoadBalancer, ExternalName).
	Type corev1.ServiceType
	// ClusterIP is spec.clusterIP ("None": a headless Service).
	ClusterIP string
	// ExternalName is spec.externalName (an ExternalName Service's DNS
	// name).
	ExternalName string
	// Selector is spec.selector (nil: none).
	Selector map[string]string
	// Ports are spec.ports, defaulted by the loader (protocol TCP,
	// targetPort the port). A large load's Services with the same single
	// port share one slice.
	Ports []corev1.ServicePort
	// full is the whole loaded spec when it sets a field this struct does
	// not hold (Service.full's Spec; nil: it sets none, and its
	// sessionAffinity is None), so that two ServiceSpecs compare equal
	// (reflect.DeepEqual, as the TUI compares specs) exactly when the loaded
	// specs do.
	full *corev1.ServiceSpec
}

// serviceTypeMeta is the apiVersion and kind every Service is output with.
var serviceTypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}

var (
	_ kubeObject       = (*Service)(nil)
	_ json.Marshaler   = (*Service)(nil)
	_ json.Unmarshaler = (*Service)(nil)
)

// NewService returns the Service holding c: its fields, and c itself when
// c sets any field Service does not hold (c's TypeMeta aside: a Service is
// always v1 Service). The Service shares c's maps and slices, and c when it
// keeps it: neither may be written afterwards.
func NewService(c *corev1.Service) *Service {
	s := &Service{Name: c.Name, Namespace: c.Namespace, Labels: c.Labels, Annotations: c.Annotations,
		Spec: ServiceSpec{Type: c.Spec.Type, ClusterIP: c.Spec.ClusterIP, ExternalName: c.Spec.ExternalName,
			Selector: c.Spec.Selector, Ports: c.Spec.Ports}}
	specHeld := specHeldWhole(&c.Spec)
	if !specHeld {
		s.Spec.full = &c.Spec
	}
	if !specHeld || !zeroBut(reflect.ValueOf(&c.ObjectMeta).Elem(), serviceHeldMeta) ||
		!reflect.ValueOf(&c.Status).Elem().IsZero() {
		s.full = c
	}
	return s
}

// specHeldWhole reports whether ServiceSpec's own fields hold all of spec:
// every other field is zero, but sessionAffinity, which is None.
func specHeldWhole(spec *corev1.ServiceSpec) bool {
	return spec.SessionAffinity == corev1.ServiceAffinityNone && zeroBut(reflect.ValueOf(spec).Elem(), serviceHeldSpec)
}

// serviceHeldMeta and serviceHeldSpec mark the fields of metav1.ObjectMeta
// and corev1.ServiceSpec that Service holds itself (by field index),
// computed once from the types: a field corev1 adds is held whole, never
// dropped.
var (
	serviceHeldMeta = heldFields(reflect.TypeFor[metav1.ObjectMeta](), "Name", "Namespace", "Labels", "Annotations")
	serviceHeldSpec = heldFields(reflect.TypeFor[corev1.ServiceSpec](), "Type", "ClusterIP", "ExternalName", "Selector",
		"Ports", "SessionAffinity")
)

// heldFields marks the fields of struct type t named names.
func heldFields(t reflect.Type, names ...string) []bool {
	held := make([]bool, t.NumField())
	for _, name := range names {
		f, ok := t.FieldByName(name)
		if !ok || len(f.Index) != 1 {
			panic("engine: " + t.String() + " has no field " + name)
		}
		held[f.Index[0]] = true
	}
	return held
}

// zeroBut reports whether every field of the struct v that held does not
// mark is zero.
func zeroBut(v reflect.Value, held []bool) bool {
	for i := range v.NumField() {
		if !held[i] && !v.Field(i).IsZero() {
			return false
		}
	}
	return true
}

// Object returns the Service as the corev1.Service it was loaded as, with
// apiVersion v1 and kind Service: what every output of objects renders. It
// shares the Service's maps and slices: callers must not write it.
func (s *Service) Object() *corev1.Service {
	if s.full != nil {
		c := *s.full
		c.TypeMeta = serviceTypeMeta
		return &c
	}
	return &corev1.Service{TypeMeta: serviceTypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: s.Labels, Annotations: s.Annotations},
		Spec: corev1.ServiceSpec{Type: s.Spec.Type, ClusterIP: s.Spec.ClusterIP, ExternalName: s.Spec.ExternalName,
			Selector: s.Spec.Selector, Ports: s.Spec.Ports, SessionAffinity: corev1.ServiceAffinityNone}}
}

// asDecoded returns o as an object of its kind's New type: a Service's
// Object, any other object itself.
func asDecoded(o metav1.Object) metav1.Object {
	if s, ok := o.(*Service); ok {
		return s.Object()
	}
	return o
}

// MarshalJSON renders the Service as its corev1.Service (Object).
func (s *Service) MarshalJSON() ([]byte, error) { return json.Marshal(s.Object()) }

// UnmarshalJSON reads a corev1.Service into s (NewService).
func (s *Service) UnmarshalJSON(b []byte) error {
	var c corev1.Service
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	*s = *NewService(&c)
	return nil
}

// DeepCopy returns a copy of s sharing nothing with it.
func (s *Service) DeepCopy() *Service {
	if s == nil {
		return nil
	}
	return s.CopyWithPorts(slices.Clone(s.Spec.Ports), true)
}

// CopyWithPorts returns a copy of s whose Ports are ports, which the copy
// shares with the caller; with deepPorts, each port's AppProtocol in ports
// is replaced by a copy first (ports must then be the caller's own).
// Everything else is copied.
func (s *Service) CopyWithPorts(ports []corev1.ServicePort, deepPorts bool) *Service {
	if deepPorts {
		for i := range ports {
			if p := ports[i].AppProtocol; p != nil {
				ports[i].AppProtocol = new(*p)
			}
		}
	}
	if s.full != nil {
		c := *s.full
		c.Spec.Ports = nil
		cp := c.DeepCopy()
		cp.Spec.Ports = ports
		return NewService(cp)
	}
	return &Service{Name: s.Name, Namespace: s.Namespace, Labels: maps.Clone(s.Labels), Annotations: maps.Clone(s.Annotations),
		Spec: ServiceSpec{Type: s.Spec.Type, ClusterIP: s.Spec.ClusterIP, ExternalName: s.Spec.ExternalName,
			Selector: maps.Clone(s.Spec.Selector), Ports: ports}}
}

// DeepCopyObject implements runtime.Object.
func (s *Service) DeepCopyObject() runtime.Object { return s.DeepCopy() }

// GetObjectKind implements runtime.Object: a Service is always v1 Service.
func (s *Service) GetObjectKind() schema.ObjectKind { return serviceKind{} }

// serviceKind is a Service's schema.ObjectKind: v1 Service, which setting
// does not change.
type serviceKind struct{}

func (serviceKind) GroupVersionKind() schema.GroupVersionKind {
	return serviceTypeMeta.GroupVersionKind()
}

func (serviceKind) SetGroupVersionKind(schema.GroupVersionKind) {}

// meta is the Service's metadata, by value (read only).
func (s *Service) meta() metav1.ObjectMeta {
	if s.full != nil {
		return s.full.ObjectMeta
	}
	return metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, Labels: s.Labels, Annotations: s.Annotations}
}

// wholeMeta is the metadata of the Service's whole object, which it keeps
// from now on, for a setter of a field Service does not hold.
func (s *Service) wholeMeta() *metav1.ObjectMeta {
	if s.full == nil {
		s.full = s.Object()
	}
	return &s.full.ObjectMeta
}

// The metav1.Object methods. Loaded Services are never written; the
// setters keep the fields and the whole object in step for code that
// builds one.

func (s *Service) GetNamespace() string { return s.Namespace }
func (s *Service) SetNamespace(namespace string) {
	s.Namespace = namespace
	if s.full != nil {
		s.full.Namespace = namespace
	}
}
func (s *Service) GetName() string { return s.Name }
func (s *Service) SetName(name string) {
	s.Name = name
	if s.full != nil {
		s.full.Name = name
	}
}
func (s *Service) GetLabels() map[string]string { return s.Labels }
func (s *Service) SetLabels(labels map[string]string) {
	s.Labels = labels
	if s.full != nil {
		s.full.Labels = labels
	}
}
func (s *Service) GetAnnotations() map[string]string { return s.Annotations }
func (s *Service) SetAnnotations(annotations map[string]string) {
	s.Annotations = annotations
	if s.full != nil {
		s.full.Annotations = annotations
	}
}
func (s *Service) GetGenerateName() string              { m := s.meta(); return m.GenerateName }
func (s *Service) SetGenerateName(name string)          { s.wholeMeta().GenerateName = name }
func (s *Service) GetUID() types.UID                    { m := s.meta(); return m.UID }
func (s *Service) SetUID(uid types.UID)                 { s.wholeMeta().UID = uid }
func (s *Service) GetResourceVersion() string           { m := s.meta(); return m.ResourceVersion }
func (s *Service) SetResourceVersion(version string)    { s.wholeMeta().ResourceVersion = version }
func (s *Service) GetGeneration() int64                 { m := s.meta(); return m.Generation }
func (s *Service) SetGeneration(generation int64)       { s.wholeMeta().Generation = generation }
func (s *Service) GetSelfLink() string                  { m := s.meta(); return m.SelfLink }
func (s *Service) SetSelfLink(selfLink string)          { s.wholeMeta().SelfLink = selfLink }
func (s *Service) GetCreationTimestamp() metav1.Time    { m := s.meta(); return m.CreationTimestamp }
func (s *Service) SetCreationTimestamp(ts metav1.Time)  { s.wholeMeta().CreationTimestamp = ts }
func (s *Service) GetDeletionTimestamp() *metav1.Time   { m := s.meta(); return m.DeletionTimestamp }
func (s *Service) SetDeletionTimestamp(ts *metav1.Time) { s.wholeMeta().DeletionTimestamp = ts }
func (s *Service) GetDeletionGracePeriodSeconds() *int64 {
	m := s.meta()
	return m.DeletionGracePeriodSeconds
}
func (s *Service) SetDeletionGracePeriodSeconds(n *int64) {
	s.wholeMeta().DeletionGracePeriodSeconds = n
}
func (s *Service) GetFinalizers() []string           { m := s.meta(); return m.Finalizers }
func (s *Service) SetFinalizers(finalizers []string) { s.wholeMeta().Finalizers = finalizers }
func (s *Service) GetOwnerReferences() []metav1.OwnerReference {
	m := s.meta()
	return m.OwnerReferences
}
func (s *Service) SetOwnerReferences(refs []metav1.OwnerReference) {
	s.wholeMeta().OwnerReferences = refs
}
func (s *Service) GetManagedFields() []metav1.ManagedFieldsEntry {
	m := s.meta()
	return m.ManagedFields
}
func (s *Service) SetManagedFields(fields []metav1.ManagedFieldsEntry) {
	s.wholeMeta().ManagedFields = fields
}
