package engine

import (
	"encoding/json"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// serviceCases are Services as the loader hands them over (defaulted), and
// whether Service's own fields hold each whole.
func serviceCases() []struct {
	what  string
	svc   *corev1.Service
	whole bool
} {
	h2c := "kubernetes.io/h2c"
	port := func(name string, n int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Protocol: corev1.ProtocolTCP, Port: n, TargetPort: intstr.FromInt32(n), AppProtocol: &h2c}
	}
	plain := func() *corev1.Service {
		return &corev1.Service{TypeMeta: serviceTypeMeta,
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Labels: map[string]string{"app": "web"},
				Annotations: map[string]string{EchoTLSSecretAnnotation: "cert"}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", Selector: map[string]string{"app": "web"},
				Ports: []corev1.ServicePort{port("http", 80), port("grpc", 81)}, SessionAffinity: corev1.ServiceAffinityNone}}
	}
	withUID, withIPs, affinity, noAffinity, status := plain(), plain(), plain(), plain(), plain()
	withUID.UID = "1234"
	withIPs.Spec.ClusterIPs = []string{"None"}
	affinity.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	noAffinity.Spec.SessionAffinity = ""
	status.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "10.0.0.1"}}
	external := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "ns"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com", SessionAffinity: corev1.ServiceAffinityNone}}
	return []struct {
		what  string
		svc   *corev1.Service
		whole bool
	}{
		{"plain", plain(), true},
		{"ExternalName, no apiVersion", external, true},
		{"a uid", withUID, false},
		{"clusterIPs", withIPs, false},
		{"sessionAffinity ClientIP", affinity, false},
		{"no sessionAffinity", noAffinity, false},
		{"a status", status, false},
	}
}

// TestServiceIsTheLoadedObject checks that a Service renders exactly the
// corev1.Service it was made from (apiVersion v1, kind Service), keeps the
// whole object only when one of its fields is not Service's own, and
// answers metav1.Object's questions as the corev1.Service does.
func TestServiceIsTheLoadedObject(t *testing.T) {
	for _, c := range serviceCases() {
		s := NewService(c.svc)
		if (s.full == nil) != c.whole {
			t.Errorf("%s: keeps the whole object: %v, want %v", c.what, s.full != nil, !c.whole)
		}
		if specWhole := c.whole || c.what == "a uid" || c.what == "a status"; (s.Spec.full == nil) != specWhole {
			t.Errorf("%s: keeps the whole spec: %v, want %v", c.what, s.Spec.full != nil, !specWhole)
		}
		want := *c.svc
		want.TypeMeta = serviceTypeMeta
		wj, err := json.Marshal(&want)
		if err != nil {
			t.Fatal(err)
		}
		for what, o := range map[string]any{"Service": s, "Object": s.Object(), "DeepCopy": s.DeepCopy(), "output": redact(s)} {
			if got, err := json.Marshal(o); err != nil || string(got) != string(wj) {
				t.Errorf("%s: %s renders\n%s, %v\nwant\n%s", c.what, what, got, err, wj)
			}
		}
		var back Service
		if err := json.Unmarshal(wj, &back); err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(&back); string(got) != string(wj) {
			t.Errorf("%s: JSON round trip\n%s\nwant\n%s", c.what, got, wj)
		}
		var o metav1.Object = s
		if o.GetName() != c.svc.Name || o.GetNamespace() != c.svc.Namespace || o.GetUID() != c.svc.UID ||
			o.GetLabels()["app"] != c.svc.Labels["app"] || o.GetGeneration() != c.svc.Generation {
			t.Errorf("%s: metadata %v/%v uid %q labels %v", c.what, o.GetNamespace(), o.GetName(), o.GetUID(), o.GetLabels())
		}
		if gvk := s.GetObjectKind().GroupVersionKind(); gvk != KindNamed("Service").GroupVersionKind() {
			t.Errorf("%s: kind %v", c.what, gvk)
		}
	}
}

// TestServiceCopiesShareNothing checks that DeepCopy copies maps, ports and
// the whole object, and that setting a field Service does not hold keeps
// the rest.
func TestServiceCopiesShareNothing(t *testing.T) {
	for _, c := range serviceCases() {
		s := NewService(c.svc)
		cp := s.DeepCopy()
		if len(s.Spec.Ports) < 2 {
			continue
		}
		cp.Labels["app"] = "changed"
		*cp.Spec.Ports[0].AppProtocol = "changed"
		cp.Spec.Ports[1].Port = 1
		if cp.Spec.Selector != nil {
			cp.Spec.Selector["app"] = "changed"
		}
		if s.Labels["app"] == "changed" || *s.Spec.Ports[0].AppProtocol == "changed" || s.Spec.Ports[1].Port == 1 ||
			s.Spec.Selector["app"] == "changed" {
			t.Errorf("%s: the copy shares with the original", c.what)
		}
		if cp.full != nil && (cp.full == s.full || (cp.Spec.full != nil) != (s.Spec.full != nil) ||
			cp.Spec.full != nil && cp.Spec.full != &cp.full.Spec) {
			t.Errorf("%s: the copy's whole object is not its own", c.what)
		}
	}
	s := NewService(serviceCases()[0].svc)
	s.SetUID("u1")
	s.SetName("renamed")
	if o := s.Object(); o.UID != "u1" || o.Name != "renamed" || s.Name != "renamed" || len(o.Spec.Ports) != 2 ||
		o.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		t.Errorf("after SetUID and SetName: %+v", o)
	}
}

// A Service is a fraction of a corev1.Service, whatever either holds
// (issue 42: 20,000 of them at check's peak).
func TestServiceSize(t *testing.T) {
	if n := unsafe.Sizeof(Service{}); n > 144 {
		t.Errorf("a Service is %d bytes, want at most 144 (a corev1.Service is %d)", n, unsafe.Sizeof(corev1.Service{}))
	}
}
