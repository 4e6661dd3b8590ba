package watch

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestEmbeddedCRDsMatchYAML checks that each embedded compact CRD holds
// exactly the schemas of the served versions of the YAML file next to it,
// descriptions aside. (internal/crdgen's test checks that the files are
// what crdgen writes.)
func TestEmbeddedCRDsMatchYAML(t *testing.T) {
	for name := range processCRDs().files {
		data, err := os.ReadFile(filepath.Join("crds", name))
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := map[string]*apiextensionsv1.JSONSchemaProps{}
		for _, v := range crd.Spec.Versions {
			if v.Served && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				want[v.Name] = v.Schema.OpenAPIV3Schema
			}
		}
		clearDescriptions(reflect.ValueOf(want))
		compact, err := crdFS.ReadFile(embeddedCRDPath(name))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]*apiextensionsv1.JSONSchemaProps
		if err := json.Unmarshal(compact, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(want) == 0 {
			t.Errorf("%s: no served version with a schema", name)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: embedded schemas differ from the YAML (-yaml +embedded; run go generate ./watch):\n%s", name, diff)
		}
	}
}

var schemaPropsType = reflect.TypeFor[apiextensionsv1.JSONSchemaProps]()

// clearDescriptions zeroes the Description of every JSONSchemaProps
// reachable from v.
func clearDescriptions(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			clearDescriptions(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == schemaPropsType {
			v.FieldByName("Description").SetString("")
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				clearDescriptions(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			clearDescriptions(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			clearDescriptions(e)
			v.SetMapIndex(k, e)
		}
	}
}

// TestCRDSchemasConcurrently compiles every served version of every CRD at
// once, twice over, on a fresh set (run with -race: the CEL base
// environment is shared by all compilations).
func TestCRDSchemasConcurrently(t *testing.T) {
	crds := newCRDSet()
	type result struct {
		s   *crdSchema
		err error
	}
	var (
		mu  sync.Mutex
		got = map[string]result{}
		wg  sync.WaitGroup
	)
	for spec, versions := range crdServedVersions {
		for _, v := range versions {
			for range 2 {
				wg.Go(func() {
					s, err := crds.schema(spec.crd, v)
					mu.Lock()
					defer mu.Unlock()
					key := spec.crd + " " + v
					if prev, ok := got[key]; ok && prev.s != s {
						t.Errorf("%s: two compiled schemas", key)
					}
					got[key] = result{s, err}
				})
			}
		}
	}
	wg.Wait()
	for key, r := range got {
		if r.err != nil || r.s == nil {
			t.Errorf("%s: %v", key, r.err)
		}
	}
}

// TestCELRuleSetsShared checks that nodes with the same rules and schema
// share one compiled rule set (HTTPRoute repeats parentRefs, backendRefs
// and filters), and that nothing else is shared.
func TestCELRuleSetsShared(t *testing.T) {
	s, err := newCRDSet().schema(kindHTTPRoute.crd, "v1")
	if err != nil {
		t.Fatal(err)
	}
	nodes := 0
	sets := map[*celRule]*celNode{}
	eachCELNode(s.cel, func(n *celNode) {
		if len(n.rules) > 0 {
			nodes++
			if first, ok := sets[&n.rules[0]]; ok && (first.typ != n.typ || first.schema != n.schema) {
				t.Errorf("nodes of type %s and %s share rules %q", first.typ, n.typ, n.rules[0].rule.Rule)
			}
			sets[&n.rules[0]] = n
		}
	})
	if len(sets) >= nodes {
		t.Errorf("%d nodes with rules, %d compiled rule sets: none shared", nodes, len(sets))
	}
	t.Logf("%d nodes with rules, %d compiled rule sets", nodes, len(sets))
}
