package watch

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
)

// TestLoadKeepsSourcesPacked checks that a load's Snapshot holds its
// sources as a sorted list, not a map (a third of the memory at 30,000
// objects: 3.1 MB against 9.5 MB; issue 42), and that every object's source
// is found through it.
func TestLoadKeepsSourcesPacked(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: s-%02d, namespace: ns-%d}\nspec: {ports: [{port: 80}]}\n", 49-i, i%3)
	}
	r := newTestLoader(t).LoadBytes("svcs.yaml", []byte(b.String()))
	s := r.Snapshot
	if s.Sources != nil {
		t.Fatalf("the load's Snapshot holds a map of %d sources; want them in SourceList", len(s.Sources))
	}
	if len(s.SourceList) != 50 || cap(s.SourceList) != 50 {
		t.Fatalf("SourceList has %d entries (capacity %d), want 50 (50)", len(s.SourceList), cap(s.SourceList))
	}
	lines := map[int]bool{}
	for _, svc := range s.Services {
		k := engine.ObjectKey{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}
		src, ok := s.LookupSource(k)
		if !ok || src.File != "svcs.yaml" || src.Line == 0 || lines[src.Line] {
			t.Errorf("%s: source %+v, %v; want its own line of svcs.yaml", k, src, ok)
		}
		lines[src.Line] = true
	}
	if _, ok := s.LookupSource(engine.ObjectKey{Kind: "Service", Namespace: "ns-0", Name: "missing"}); ok {
		t.Error("LookupSource found a Service that was not loaded")
	}
}

// TestCompactSharesServicePorts checks that a large load's Services with
// the same single port share one Ports slice (1.9 MB for 20,000 Services;
// issue 42): a copied Service is one allocation, and the copies keep their
// own fields and ports.
func TestCompactSharesServicePorts(t *testing.T) {
	mk := func(name string, port int32) *engine.Service {
		return engine.NewService(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": name}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, SessionAffinity: corev1.ServiceAffinityNone,
				Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}}}})
	}
	var ports sharedPorts
	objs := []loaded{{obj: mk("a", 8080)}, {obj: mk("b", 8080)}, {obj: mk("c", 9090)}}
	orig := []metav1.Object{objs[0].obj, objs[1].obj, objs[2].obj}
	compact(objs, &ports, nil)
	a, b, c := objs[0].obj.(*engine.Service), objs[1].obj.(*engine.Service), objs[2].obj.(*engine.Service)
	for i, o := range []*engine.Service{a, b, c} {
		if o == orig[i] {
			t.Fatalf("%s was not copied", o.Name)
		}
		if !equality.Semantic.DeepEqual(o, orig[i]) {
			t.Errorf("the copy of %s differs: %+v", o.Name, o)
		}
	}
	if &a.Spec.Ports[0] != &b.Spec.Ports[0] {
		t.Error("two Services with the same port keep a Ports slice each")
	}
	if &a.Spec.Ports[0] == &c.Spec.Ports[0] || c.Spec.Ports[0].Port != 9090 {
		t.Error("Services with different ports share a Ports slice")
	}
	if cap(a.Spec.Ports) != 1 {
		t.Errorf("the shared Ports has capacity %d: an append would write to every Service's", cap(a.Spec.Ports))
	}
	if raceEnabled {
		t.Skip("allocation counts move under the race detector")
	}
	svc := mk("d", 8080)
	one := make([]loaded, 1)
	n := testing.AllocsPerRun(100, func() {
		one[0].obj = svc
		compact(one, &ports, nil)
	})
	if full := testing.AllocsPerRun(100, func() { serviceSink = svc.DeepCopy() }); n != full-1 {
		t.Errorf("copying a Service with a shared port: %v allocations, want %v (a deep copy's but its Ports)", n, full-1)
	}
}

// serviceSink keeps TestCompactSharesServicePorts' deep copies on the heap,
// as compact's are.
var serviceSink *engine.Service

// TestCompactSharesScalars checks that a large load's objects share their
// optional scalars (~2.5 MB for 10,000 HTTPRoutes; issue 42): two routes'
// backendRefs end up with the same *Kind and *PortNumber, the copies equal
// the originals, and different values stay apart.
func TestCompactSharesScalars(t *testing.T) {
	route := func(name string, port gwv1.PortNumber) *gwv1.HTTPRoute {
		kind, p, w := gwv1.Kind("Service"), port, int32(1)
		ref := gwv1.HTTPBackendRef{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Kind: &kind, Name: "svc", Port: &p}, Weight: &w}}
		return &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: gwv1.HTTPRouteSpec{Rules: []gwv1.HTTPRouteRule{{BackendRefs: []gwv1.HTTPBackendRef{ref}}}}}
	}
	objs := []loaded{{obj: route("a", 8080)}, {obj: route("b", 8080)}, {obj: route("c", 9090)}}
	orig := []metav1.Object{objs[0].obj, objs[1].obj, objs[2].obj}
	var scalars sharedScalars
	compact(objs, nil, &scalars)
	ref := func(i int) *gwv1.BackendObjectReference {
		return &objs[i].obj.(*gwv1.HTTPRoute).Spec.Rules[0].BackendRefs[0].BackendObjectReference
	}
	for i := range objs {
		if objs[i].obj == orig[i] || !equality.Semantic.DeepEqual(objs[i].obj, orig[i]) {
			t.Errorf("%s: not an equal copy", orig[i].GetName())
		}
	}
	if ref(0).Kind != ref(1).Kind || ref(0).Kind != ref(2).Kind || ref(0).Port != ref(1).Port {
		t.Error("equal optional scalars of two routes are not shared")
	}
	if ref(0).Port == ref(2).Port || *ref(2).Port != 9090 {
		t.Error("different ports share a pointer")
	}
	if orig[0].(*gwv1.HTTPRoute).Spec.Rules[0].BackendRefs[0].Kind == ref(0).Kind {
		t.Error("the copy shares a pointer with the original")
	}
}
