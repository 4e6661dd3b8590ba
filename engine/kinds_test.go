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
		if v.Field(i).Kind() == reflect.Slice {
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
// kind as they are, and that Translate sets them on its Result only.
func TestEachOnlyReads(t *testing.T) {
	in := &Snapshot{}
	for _, k := range Kinds() {
		if !k.OwnKinds {
			o := k.New()
			o.SetName("x")
			in.AddObject(o)
		}
	}
	in.Each(func(k ObjectKey, o metav1.Object) {
		if gvk := o.(runtime.Object).GetObjectKind().GroupVersionKind(); !gvk.Empty() {
			t.Errorf("%s: Each set %v", k, gvk)
		}
	})
	res := Translate(in, Options{})
	res.Objects.Each(func(k ObjectKey, o metav1.Object) {
		if got, want := o.(runtime.Object).GetObjectKind().GroupVersionKind(), KindNamed(k.Kind).GroupVersionKind(); got != want {
			t.Errorf("%s: result has %v, want %v", k, got, want)
		}
	})
	in.Each(func(k ObjectKey, o metav1.Object) {
		if gvk := o.(runtime.Object).GetObjectKind().GroupVersionKind(); !gvk.Empty() {
			t.Errorf("%s: Translate set %v on its input", k, gvk)
		}
	})
}
