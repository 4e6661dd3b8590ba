package watch

import (
	"maps"
	"slices"
	"strings"
	"testing"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestSimpleMetaValidMatchesAPIServer checks simpleMetaValid against
// ValidateObjectMeta for a Service, a Namespace, a namespaced and a
// cluster-scoped Gateway API kind, with the corpus's names and namespaces,
// small changes of them (every byte dropped, doubled or replaced), names
// at and over the length limits, and labels (keys and values from the same
// strings), annotations and generateName set: whenever simpleMetaValid takes a metadata, ValidateObjectMeta must
// find nothing; and it must take the corpus's names as written.
func TestSimpleMetaValidMatchesAPIServer(t *testing.T) {
	names := map[string]bool{"default": true, "a": true, "web-1": true, "a.b.c": true}
	eachCorpusCRDObject(t, func(_ string, u map[string]any, _ *servedVersion) {
		m, _ := u["metadata"].(map[string]any)
		for _, k := range []string{"name", "namespace"} {
			if s, ok := m[k].(string); ok {
				names[s] = true
			}
		}
	})
	sorted := slices.Sorted(maps.Keys(names))
	var values []string
	for i, n := range sorted {
		if i%8 == 0 { // the changes of every eighth name: enough, and fast
			values = append(values, variants(n)...)
		} else {
			values = append(values, n)
		}
	}
	for _, n := range []int{62, 63, 64, 252, 253, 254} {
		values = append(values, strings.Repeat("a", n), strings.Repeat("a", n-2)+".b", "1"+strings.Repeat("a", n-1))
	}
	namespaces := []string{"", "default", "team-a", "a.b", "A", "-a", "a-", strings.Repeat("n", 63), strings.Repeat("n", 64), "é"}
	specs := []*kindSpec{kindService, kindNamespace, kindHTTPRoute, kindNamed("GatewayClass")}
	metas := []metav1.ObjectMeta{{}, {Labels: map[string]string{"a": "b"}}, {Annotations: map[string]string{"a": "b"}}, {GenerateName: "x-"}}
	// Labels: keys and values from the values (with the changes), one
	// label or two, and prefixed keys (which go to the apiserver's check),
	// on one valid name.
	var labeled []metav1.ObjectMeta
	for i, k := range values {
		v := values[(i*7)%len(values)]
		labeled = append(labeled, metav1.ObjectMeta{Labels: map[string]string{k: v}},
			metav1.ObjectMeta{Labels: map[string]string{"app": "web", k: v}},
			metav1.ObjectMeta{Labels: map[string]string{v: k}},
			metav1.ObjectMeta{Labels: map[string]string{"example.com/" + k: v}})
	}
	checked, taken := 0, 0
	for _, spec := range specs {
		for _, name := range values {
			for _, ns := range namespaces {
				for _, base := range metas {
					meta := base
					meta.Name, meta.Namespace = name, ns
					ok := simpleMetaValid(&meta, spec)
					checked++
					if !ok {
						continue
					}
					taken++
					if errs := apimachineryvalidation.ValidateObjectMeta(&meta, spec.namespaced, nameRule(spec), field.NewPath("metadata")); len(errs) > 0 {
						t.Fatalf("%s %q in %q (%+v): simpleMetaValid, but ValidateObjectMeta finds %v", spec.kind, name, ns, base, errs)
					}
				}
			}
		}
		for _, base := range labeled {
			meta := base
			meta.Name, meta.Namespace = "web-1", "default"
			if !spec.namespaced {
				meta.Namespace = ""
			}
			checked++
			if !simpleMetaValid(&meta, spec) {
				continue
			}
			taken++
			if errs := apimachineryvalidation.ValidateObjectMeta(&meta, spec.namespaced, nameRule(spec), field.NewPath("metadata")); len(errs) > 0 {
				t.Fatalf("%s %v: simpleMetaValid, but ValidateObjectMeta finds %v", spec.kind, meta.Labels, errs)
			}
		}
		for name := range names {
			ns := "default"
			if !spec.namespaced {
				ns = ""
			}
			meta := metav1.ObjectMeta{Name: name, Namespace: ns}
			if apimachineryvalidation.ValidateObjectMeta(&meta, spec.namespaced, nameRule(spec), field.NewPath("metadata")) == nil && !simpleMetaValid(&meta, spec) {
				t.Errorf("%s %q in %q: valid, and simpleMetaValid does not take it", spec.kind, name, ns)
			}
		}
	}
	t.Logf("%d names, %d metadata checked, %d taken", len(names), checked, taken)
}
