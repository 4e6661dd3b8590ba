package watch

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"

	yaml "go.yaml.in/yaml/v4"
	"k8s.io/apimachinery/pkg/runtime"
)

// checkDecodeTyped decodes u as spec's type with decodeTyped and with
// FromUnstructured and fails unless both give equal objects, or the same
// error. It reports whether decodeTyped's own path decoded u.
func checkDecodeTyped(t *testing.T, name string, spec *kindSpec, u map[string]any) bool {
	t.Helper()
	want := spec.newObject()
	wantErr := runtime.DefaultUnstructuredConverter.FromUnstructured(runtime.DeepCopyJSON(u), want)
	got, gotErr := decodeTyped(runtime.DeepCopyJSON(u), spec.newObject)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("%s as %s: error\n got %v\nwant %v", name, spec.kind, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s as %s:\n got %+v\nwant %+v", name, spec.kind, got, want)
	}
	dv := reflect.ValueOf(spec.newObject()).Elem()
	return planOf(dv.Type()).decode(runtime.DeepCopyJSON(u), dv)
}

// crdKinds are the kinds decodeTyped reads (those with a CRD).
func crdKinds() []*kindSpec {
	var out []*kindSpec
	for _, k := range allKinds {
		if k.crd != "" {
			out = append(out, k)
		}
	}
	return out
}

// TestDecodeTypedMatchesConverter decodes every Gateway API object of the
// engine's golden inputs, the samples and watch's test data with
// decodeTyped and with FromUnstructured: as the load hands it over
// (pruned, defaulted), as written (status included), with every scalar
// null, and with every scalar of another type (which decodeTyped leaves to
// the library); and each of them as every other kind with a CRD too.
func TestDecodeTypedMatchesConverter(t *testing.T) {
	l := newTestLoader(t)
	kinds := crdKinds()
	objects, fast := 0, 0
	eachCorpusCRDObject(t, func(name string, u map[string]any, sv *servedVersion) {
		s, err := l.crds.schema(sv.spec.crd, sv.schemaVersion)
		if err != nil {
			t.Fatal(err)
		}
		loaded := runtime.DeepCopyJSON(u)
		s.quick.pruneWithNulls(loaded, s.structural)
		s.admit(loaded)
		variants := map[string]map[string]any{
			"loaded": loaded, "as written": u,
			"scalars null":       nullScalars(u).(map[string]any),
			"scalars mistyped":   mistype(u).(map[string]any),
			"unknown fields too": addUnknownFields(u, 0).(map[string]any),
		}
		for variant, obj := range variants {
			objects++
			if checkDecodeTyped(t, name+" "+variant, sv.spec, obj) {
				fast++
			}
			if variant == "as written" {
				for _, k := range kinds {
					checkDecodeTyped(t, name+" "+variant, k, obj)
				}
			}
		}
	})
	if objects < 1000 || fast < objects/2 {
		t.Fatalf("decoded %d objects, %d by decodeTyped's own path: the corpus is too small", objects, fast)
	}
	t.Logf("decoded %d objects, %d by decodeTyped's own path", objects, fast)
}

// mistype returns a copy of v with each scalar below metadata replaced by
// one of another type (a string by a number, a number by a float or a
// string, a bool by a string).
func mistype(v any) any {
	return mapScalars(v, func(x any) any {
		switch x := x.(type) {
		case string:
			return int64(len(x))
		case int64:
			if x%2 == 0 {
				return float64(x) + 0.5
			}
			return strconv.FormatInt(x, 10)
		case bool:
			return "true"
		}
		return x
	})
}

// mapScalars returns a copy of v with each scalar below metadata (and
// apiVersion and kind) replaced by change's result for it.
func mapScalars(v any, change func(any) any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if k == "apiVersion" || k == "kind" || k == "metadata" {
				out[k] = x
			} else {
				out[k] = mapScalars(x, change)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = mapScalars(x, change)
		}
		return out
	}
	return change(v)
}

// TestDecodeTypedEdges covers what the corpus does not: times (a type
// with UnmarshalJSON), integers into floats, floats into integers, nulls
// in lists and maps, empty lists, and lists and maps of the wrong shape.
func TestDecodeTypedEdges(t *testing.T) {
	route := kindSpecOf(t, "HTTPRoute")
	gateway := kindSpecOf(t, "Gateway")
	meta := map[string]any{"name": "r", "namespace": "ns", "creationTimestamp": "2024-01-02T03:04:05Z",
		"labels": map[string]any{"a": "b", "c": nil}, "annotations": map[string]any{}, "finalizers": []any{}}
	cases := []struct {
		name string
		spec *kindSpec
		u    map[string]any
	}{
		{"times and maps", route, map[string]any{"metadata": meta}},
		{"bad time", route, map[string]any{"metadata": map[string]any{"creationTimestamp": "yesterday"}}},
		{"null items", route, map[string]any{"spec": map[string]any{"hostnames": []any{nil, "a"}, "rules": []any{nil}}}},
		{"empty lists", route, map[string]any{"spec": map[string]any{"hostnames": []any{}, "parentRefs": []any{}}}},
		{"float port", route, map[string]any{"spec": map[string]any{"parentRefs": []any{map[string]any{"port": float64(80)}}}}},
		{"fraction port", route, map[string]any{"spec": map[string]any{"parentRefs": []any{map[string]any{"port": 80.5}}}}},
		{"huge port", route, map[string]any{"spec": map[string]any{"parentRefs": []any{map[string]any{"port": int64(1) << 40}}}}},
		{"list for object", route, map[string]any{"spec": []any{"x"}}},
		{"object for list", route, map[string]any{"spec": map[string]any{"rules": map[string]any{"a": "b"}}}},
		{"string for list", gateway, map[string]any{"spec": map[string]any{"listeners": "x"}}},
		{"map of wrong values", route, map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": int64(1)}}}},
		{"empty", gateway, map[string]any{}},
	}
	for _, c := range cases {
		checkDecodeTyped(t, c.name, c.spec, c.u)
	}
}

// kindSpecOf is the kind spec of a Gateway API kind.
func kindSpecOf(t testing.TB, kind string) *kindSpec {
	for _, k := range crdKinds() {
		if k.kind == kind {
			return k
		}
	}
	t.Fatalf("no kind %s", kind)
	return nil
}

// FuzzDecodeTyped decodes documents as every kind with a CRD with
// decodeTyped and with FromUnstructured.
func FuzzDecodeTyped(f *testing.F) {
	addSampleSeeds(f)
	kinds := crdKinds()
	f.Fuzz(func(t *testing.T, data []byte) {
		var n yaml.Node
		if yaml.Unmarshal(data, &n) != nil || n.Kind != yaml.DocumentNode {
			return
		}
		v, nerr := toUnstructured(&n, nil)
		u, ok := v.(map[string]any)
		if nerr != nil || !ok {
			return
		}
		for _, k := range kinds {
			checkDecodeTyped(t, "fuzz", k, u)
		}
	})
}
