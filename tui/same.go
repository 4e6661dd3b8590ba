package tui

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	forked "k8s.io/apimachinery/third_party/forked/golang/reflect"
)

// sameObject reports whether an object is unchanged between two reloads,
// ignoring lastTransitionTime: every translation writes a fresh one, which
// is not a change worth highlighting. It knows no kind: an object with a
// Spec is compared by generation, labels, annotations, spec and status
// (conditions without their lastTransitionTime); any other (Services,
// Secrets) with reflect.DeepEqual.
func sameObject(a, b metav1.Object) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() {
		return false
	}
	va, vb = reflect.Indirect(va), reflect.Indirect(vb)
	if va.Kind() != reflect.Struct {
		return reflect.DeepEqual(a, b)
	}
	sa, sb := va.FieldByName("Spec"), vb.FieldByName("Spec")
	if !sa.IsValid() {
		return reflect.DeepEqual(a, b)
	}
	if !sameMeta(a, b) || !reflect.DeepEqual(sa.Interface(), sb.Interface()) {
		return false
	}
	ta, tb := va.FieldByName("Status"), vb.FieldByName("Status")
	return !ta.IsValid() || statusEqual.DeepEqualWithNilDifferentFromEmpty(ta.Interface(), tb.Interface())
}

// statusEqual is reflect.DeepEqual but for conditions, which compare
// without their lastTransitionTime.
var statusEqual = forked.EqualitiesOrDie(func(x, y metav1.Condition) bool {
	x.LastTransitionTime, y.LastTransitionTime = metav1.Time{}, metav1.Time{}
	return x == y
})

func sameMeta(a, b metav1.Object) bool {
	return a.GetGeneration() == b.GetGeneration() && reflect.DeepEqual(a.GetLabels(), b.GetLabels()) &&
		reflect.DeepEqual(a.GetAnnotations(), b.GetAnnotations())
}
