package engine

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestKindsCoverSnapshot checks that every object slice of Snapshot has
// exactly one registry entry, which adds to it and lists it back.
func TestKindsCoverSnapshot(t *testing.T) {
	var s Snapshot
	v := reflect.ValueOf(&s).Elem()
	slices := 0
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).Kind() == reflect.Slice && v.Type().Field(i).Name != "SourceList" {
			slices++
		}
	}
	if slices != len(Kinds()) {
		t.Fatalf("Snapshot has %d object slices, the registry %d kinds", slices, len(Kinds()))
	}
	for i, k := range Kinds() {
		o := k.New()
		o.SetName("n" + itoa(i))
		o.SetNamespace("ns")
		if k.OwnKinds {
			o.(runtime.Object).GetObjectKind().SetGroupVersionKind(k.GroupVersionKind().GroupVersion().WithKind("SomePolicy"))
		}
		if !s.AddObject(o) {
			t.Fatalf("%s: AddObject refused %T", k.Kind, o)
		}
		for _, other := range Kinds() {
			if other != k && other.Add(&Snapshot{}, o) {
				t.Errorf("%T is accepted by both %q and %q", o, k.Kind, other.Kind)
			}
		}
		if (k.Route(o) != nil) != k.IsRoute() || (RouteOf(o) != nil) != k.IsRoute() {
			t.Errorf("%s: Route(%T) does not match IsRoute %v", k.Kind, o, k.IsRoute())
		}
	}
	var got []metav1.Object
	s.Each(func(_ ObjectKey, o metav1.Object) { got = append(got, o) })
	if len(got) != len(Kinds()) || s.Len() != len(Kinds()) {
		t.Fatalf("Each listed %d objects, want %d", len(got), len(Kinds()))
	}
	for i, o := range got {
		if o.GetName() != "n"+itoa(i) {
			t.Errorf("Each: object %d is %s, want registry order", i, o.GetName())
		}
	}
}

// TestEachOnlyReads checks that Each leaves objects without apiVersion and
// kind as they are, and that Translate sets them on its Result only. A
// Service (the engine's own type) is always v1 Service.
func TestEachOnlyReads(t *testing.T) {
	in := &Snapshot{}
	for _, k := range Kinds() {
		if !k.OwnKinds {
			o := k.New()
			o.SetName("x")
			in.AddObject(o)
		}
	}
	unset := func(o metav1.Object) bool {
		gvk := o.(runtime.Object).GetObjectKind().GroupVersionKind()
		if _, ok := o.(*Service); ok {
			return gvk == KindNamed("Service").GroupVersionKind()
		}
		return gvk.Empty()
	}
	in.Each(func(k ObjectKey, o metav1.Object) {
		if !unset(o) {
			t.Errorf("%s: Each set %v", k, o.(runtime.Object).GetObjectKind().GroupVersionKind())
		}
	})
	res := Translate(in, Options{})
	res.Objects.Each(func(k ObjectKey, o metav1.Object) {
		if got, want := o.(runtime.Object).GetObjectKind().GroupVersionKind(), KindNamed(k.Kind).GroupVersionKind(); got != want {
			t.Errorf("%s: result has %v, want %v", k, got, want)
		}
	})
	in.Each(func(k ObjectKey, o metav1.Object) {
		if !unset(o) {
			t.Errorf("%s: Translate set %v on its input", k, o.(runtime.Object).GetObjectKind().GroupVersionKind())
		}
	})
}

// TestPolicyKindsInRegistry: a kind is a policy kind of the registry
// (Kind.Policy set) exactly when its Go type has spec.targetRefs, and a
// targetRef of it may name a section exactly when the field's element type
// has SectionName; so a new policy kind cannot be added without saying what
// it may target.
func TestPolicyKindsInRegistry(t *testing.T) {
	policies := 0
	for _, k := range Kinds() {
		if k.OwnKinds {
			continue // profiles' policy kinds: TestPolicyOf
		}
		typ := reflect.TypeOf(k.New()).Elem()
		spec, ok := typ.FieldByName("Spec")
		var refs reflect.StructField
		hasRefs := false
		if ok && spec.Type.Kind() == reflect.Struct {
			refs, hasRefs = spec.Type.FieldByName("TargetRefs")
		}
		if hasRefs != (k.Policy != nil) {
			t.Errorf("%s: spec.targetRefs %v, Policy %+v", k.Kind, hasRefs, k.Policy)
			continue
		}
		if !hasRefs {
			continue
		}
		policies++
		_, section := refs.Type.Elem().FieldByName("SectionName")
		if section != k.Policy.SectionName || len(k.Policy.Targets) == 0 {
			t.Errorf("%s: targetRefs sectionName %v, Policy %+v", k.Kind, section, k.Policy)
		}
		if PolicyOf(k.Group, k.Kind) != k.Policy {
			t.Errorf("PolicyOf(%s, %s) is not the registry's entry", k.Group, k.Kind)
		}
	}
	if policies != 3 {
		t.Errorf("%d policy kinds in the registry, want 3 (BackendTLSPolicy, XBackendTrafficPolicy, XTelemetryPolicy)", policies)
	}
}

// TestPolicyOf: what the registry answers for the standard and experimental
// policies, for kinds that are not policies, and for a kind of another
// group.
func TestPolicyOf(t *testing.T) {
	for _, c := range []struct {
		group, kind         string
		targetGroup, target string
		allowed             bool
	}{
		{Group, "BackendTLSPolicy", "", "Service", true},
		{Group, "BackendTLSPolicy", ExperimentalGroup, "XBackend", false},
		{ExperimentalGroup, "XBackendTrafficPolicy", ExperimentalGroup, "XBackend", true},
		{ExperimentalGroup, "XBackendTrafficPolicy", "", "Service", true},
		{ExperimentalGroup, "XBackendTrafficPolicy", Group, "Service", false},
		{ExperimentalGroup, "XTelemetryPolicy", Group, "Gateway", true},
		{ExperimentalGroup, "XTelemetryPolicy", "", "Service", false},
	} {
		if got := PolicyOf(c.group, c.kind).Allows(c.targetGroup, c.target); got != c.allowed {
			t.Errorf("PolicyOf(%s, %s).Allows(%q, %s) = %v", c.group, c.kind, c.targetGroup, c.target, got)
		}
	}
	for _, gk := range [][2]string{{Group, "HTTPRoute"}, {"", "Service"}, {Group, "XTelemetryPolicy"}, {"example.com", "BackendTLSPolicy"}} {
		if p := PolicyOf(gk[0], gk[1]); p != nil {
			t.Errorf("PolicyOf(%s, %s) = %+v, want nil: not a policy kind", gk[0], gk[1], p)
		}
	}
	btls := PolicyOf(Group, "BackendTLSPolicy")
	if !btls.AllowsObject(ObjectKey{Kind: "Service", Namespace: "ns", Name: "s"}) || btls.AllowsObject(ObjectKey{Kind: "XBackend"}) {
		t.Error("BackendTLSPolicy: AllowsObject wrong")
	}
	if g, ok := PolicyOf(ExperimentalGroup, "XBackendTrafficPolicy").GroupOf("XBackend"); !ok || g != ExperimentalGroup {
		t.Errorf("GroupOf(XBackend) = %q, %v", g, ok)
	}
	if _, ok := (*PolicyTargets)(nil).GroupOf("Service"); ok {
		t.Error("a nil PolicyTargets has a target")
	}
}

// TestSourceListLookup checks SourceOf, LookupSource and EachSource on a
// Snapshot whose sources are a list (a load's) and one whose are a map.
func TestSourceListLookup(t *testing.T) {
	keys := []ObjectKey{{Kind: "HTTPRoute", Namespace: "a", Name: "r"}, {Kind: "Service", Namespace: "a", Name: "s"}, {Kind: "Service", Namespace: "b", Name: "s"}}
	list := &Snapshot{}
	m := &Snapshot{Sources: map[ObjectKey]Source{}}
	for i, k := range keys {
		src := Source{File: "f.yaml", Line: i + 1}
		list.SourceList = append(list.SourceList, SourceEntry{Key: k, Source: src})
		m.Sources[k] = src
	}
	for _, s := range []*Snapshot{list, m} {
		for i, k := range keys {
			if src, ok := s.LookupSource(k); !ok || src.Line != i+1 || s.SourceOf(k).Line != i+1 {
				t.Errorf("%s: %+v, %v; want line %d", k, src, ok, i+1)
			}
		}
		if _, ok := s.LookupSource(ObjectKey{Kind: "Service", Namespace: "a", Name: "t"}); ok {
			t.Error("found a key that is not there")
		}
		n := 0
		s.EachSource(func(ObjectKey, Source) { n++ })
		if n != len(keys) {
			t.Errorf("EachSource: %d, want %d", n, len(keys))
		}
	}
	var none *Snapshot
	if _, ok := none.LookupSource(keys[0]); ok {
		t.Error("a nil Snapshot found a source")
	}
}
