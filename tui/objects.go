package tui

import (
	"strings"

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

// withTypeMeta puts apiVersion and kind at the top of an object's YAML,
// replacing what the object carried (possibly an older apiVersion it was
// converted from, or nothing).
func withTypeMeta(y, apiVersion, kind string) string {
	lines := strings.Split(y, "\n")
	out := make([]string, 0, len(lines)+2)
	out = append(out, "apiVersion: "+apiVersion, "kind: "+kind)
	for _, l := range lines {
		if strings.HasPrefix(l, "apiVersion: ") || strings.HasPrefix(l, "kind: ") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
