package tui

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gwdev/gwdev/engine"
)

// eachObject calls fn for every object of s in the order of
// engine.Snapshot.Each (`gwdev check -o yaml`), with its apiVersion, which
// Translate has set on every object of its Result.
func eachObject(s *engine.Snapshot, fn func(k engine.ObjectKey, apiVersion string, o metav1.Object)) {
	s.Each(func(k engine.ObjectKey, o metav1.Object) {
		apiVersion, _ := o.(runtime.Object).GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
		fn(k, apiVersion, o)
	})
}
