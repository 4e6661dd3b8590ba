package watch

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	yaml "go.yaml.in/yaml/v4"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
)

// checkPrune prunes a copy of obj with quickSchema.prune and another with
// pruning.PruneWithOptions and fails unless both drop the same fields and
// name the same paths. When s is q's root it also compares
// quickSchema.pruneWithNulls with PruneWithOptions followed by
// defaulting.PruneNonNullableNullsWithoutDefaults. It returns how many
// fields were found unknown.
func checkPrune(t *testing.T, name string, q *quickSchema, s *structuralschema.Structural, obj any) int {
	t.Helper()
	want := runtime.DeepCopyJSONValue(obj)
	wantPaths := pruning.PruneWithOptions(want, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	got := runtime.DeepCopyJSONValue(obj)
	gotPaths := q.prune(got, s)
	if !slices.Equal(gotPaths, wantPaths) {
		t.Fatalf("%s: unknown fields\n got %q\nwant %q", name, gotPaths, wantPaths)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: pruned object\n got %v\nwant %v", name, got, want)
	}
	if s == q.root {
		defaulting.PruneNonNullableNullsWithoutDefaults(want, s)
		got = runtime.DeepCopyJSONValue(obj)
		gotPaths = q.pruneWithNulls(got, s)
		if !slices.Equal(gotPaths, wantPaths) {
			t.Fatalf("%s: pruneWithNulls: unknown fields\n got %q\nwant %q", name, gotPaths, wantPaths)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: pruneWithNulls: pruned object\n got %v\nwant %v", name, got, want)
		}
	}
	return len(wantPaths)
}

// TestQuickPruneMatchesAPIServer prunes every Gateway API object of the
// engine's golden inputs, the samples and watch's test data against every
// version of its CRD, as written and with unknown fields added to every
// object at every depth (in lists and maps too, and fields named like the
// ones pruning keeps at a resource's root), with quickSchema.prune and
// with the apiserver's pruning.
func TestQuickPruneMatchesAPIServer(t *testing.T) {
	l := newTestLoader(t)
	objects, unknown := 0, 0
	eachCorpusCRDObject(t, func(name string, u map[string]any, sv *servedVersion) {
		if _, err := l.crds.schema(sv.spec.crd, sv.schemaVersion); err != nil {
			t.Fatal(err)
		}
		for version := range l.crds.files[sv.spec.crd].versions {
			s, err := l.crds.schema(sv.spec.crd, version)
			if err != nil {
				t.Fatal(err)
			}
			for variant, obj := range map[string]any{"as written": u, "unknown fields": addUnknownFields(u, 0),
				"unknown fields, scalars null": nullScalars(addUnknownFields(u, 0))} {
				objects++
				unknown += checkPrune(t, name+" "+version+" "+variant, s.quick, s.structural, obj)
			}
		}
	})
	if objects < 1000 || unknown < 10000 {
		t.Fatalf("pruned %d objects, %d unknown fields: the corpus is too small", objects, unknown)
	}
	t.Logf("pruned %d objects, %d unknown fields", objects, unknown)
}

// addUnknownFields returns a copy of v with fields no schema has added to
// every object: "zz-unknown" everywhere, and apiVersion, kind and metadata
// where they are not set (pruning keeps those at a resource's root only).
func addUnknownFields(v any, depth int) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v)+4)
		for k, x := range v {
			out[k] = addUnknownFields(x, depth+1)
		}
		out["zz-unknown"] = map[string]any{"a": []any{int64(1), map[string]any{"b": "c"}}}
		if depth > 0 {
			for _, k := range []string{"apiVersion", "kind", "metadata"} {
				if _, set := out[k]; !set {
					out[k] = "x"
				}
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = addUnknownFields(x, depth+1)
		}
		return out
	}
	return v
}

// pruneTestSchema has what the Gateway API CRDs lack: a field preserving
// unknown fields (with known ones below it, and in a list), an embedded
// resource, a map of objects and a map of anything.
func pruneTestSchema() *structuralschema.Structural {
	leaf := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
	obj := func(props map[string]structuralschema.Structural) structuralschema.Structural {
		return structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"}, Properties: props}
	}
	known := obj(map[string]structuralschema.Structural{"name": leaf})
	preserve := obj(map[string]structuralschema.Structural{"known": known, "s": leaf})
	preserve.XPreserveUnknownFields = true
	preservedList := structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &preserve}
	embedded := obj(map[string]structuralschema.Structural{"spec": known})
	embedded.XEmbeddedResource = true
	embeddedList := structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &embedded}
	mapOfObjects := structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"},
		AdditionalProperties: &structuralschema.StructuralOrBool{Structural: &known}}
	mapOfAnything := structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"},
		AdditionalProperties: &structuralschema.StructuralOrBool{Bool: true}}
	untyped := structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}}
	root := obj(map[string]structuralschema.Structural{"spec": obj(map[string]structuralschema.Structural{
		"preserve": preserve, "preservedList": preservedList, "embedded": embedded, "embeddedList": embeddedList,
		"mapOfObjects": mapOfObjects, "mapOfAnything": mapOfAnything, "untyped": untyped, "name": leaf,
	})})
	return &root
}

// pruneTestObject fills every field of pruneTestSchema, with unknown
// fields everywhere.
func pruneTestObject() map[string]any {
	known := func() map[string]any { return map[string]any{"name": "n", "typo": "t"} }
	return map[string]any{
		"apiVersion": "example.com/v1", "kind": "Thing", "metadata": map[string]any{"name": "a", "typo": int64(1)},
		"typo": true, "status": map[string]any{"x": int64(1)},
		"spec": map[string]any{
			"preserve":      map[string]any{"known": known(), "s": "v", "kept": map[string]any{"a": "b"}, "metadata": "m"},
			"preservedList": []any{map[string]any{"known": known(), "kept": int64(1)}, []any{map[string]any{"x": "y"}}, "scalar"},
			"embedded":      map[string]any{"apiVersion": "v1", "kind": "K", "metadata": map[string]any{"x": "y"}, "spec": known(), "typo": int64(2)},
			"embeddedList":  []any{map[string]any{"kind": "K", "spec": known(), "typo": int64(3)}, "scalar", nil},
			"mapOfObjects":  map[string]any{"a": known(), "b": known(), "c": "scalar"},
			"mapOfAnything": map[string]any{"a": known(), "b": []any{known()}},
			"untyped":       []any{known(), []any{known()}, "s"},
			"name":          map[string]any{"not": "a string"},
			"metadata":      "not at the root",
		},
	}
}

// TestQuickPruneEveryKeyword compares quickSchema.prune with the
// apiserver's on pruneTestSchema, and on a schema quickSchema did not
// prepare (a nil schema, for one).
func TestQuickPruneEveryKeyword(t *testing.T) {
	s := pruneTestSchema()
	q := newQuickSchema(s)
	if n := checkPrune(t, "every keyword", q, s, pruneTestObject()); n < 12 {
		t.Fatalf("found %d unknown fields; the test object has more", n)
	}
	checkPrune(t, "every keyword, unknown fields added", q, s, addUnknownFields(pruneTestObject(), 0))
	checkPrune(t, "unprepared schema", newQuickSchema(&structuralschema.Structural{}), s, pruneTestObject())
	checkPrune(t, "nil schema", q, nil, pruneTestObject())
	checkPrune(t, "not an object", q, s, []any{pruneTestObject()})
}

// FuzzQuickPrune compares quickSchema.prune with the apiserver's pruning on
// documents read as HTTPRoutes (whatever their kind) and as the schema of
// pruneTestSchema.
func FuzzQuickPrune(f *testing.F) {
	addSampleSeeds(f)
	route, err := newTestLoader(f).crds.schema("gateway.networking.k8s.io_httproutes.yaml", "v1")
	if err != nil {
		f.Fatal(err)
	}
	testSchema := pruneTestSchema()
	testQuick := newQuickSchema(testSchema)
	f.Fuzz(func(t *testing.T, data []byte) {
		var n yaml.Node
		if yaml.Unmarshal(data, &n) != nil || n.Kind != yaml.DocumentNode {
			return
		}
		v, nerr := toUnstructured(&n, nil)
		if nerr != nil {
			return
		}
		checkPrune(t, "HTTPRoute", route.quick, route.structural, v)
		checkPrune(t, "test schema", testQuick, testSchema, v)
	})
}

// addSampleSeeds adds every document of the samples and watch's test data
// to a fuzz target's corpus.
func addSampleSeeds(f *testing.F) {
	f.Helper()
	for _, glob := range []string{"../samples/*/*.yaml", "testdata/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			for _, c := range splitDocuments(data) {
				f.Add(c.data)
			}
		}
	}
}
