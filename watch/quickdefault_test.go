package watch

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	yaml "go.yaml.in/yaml/v4"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestQuickDefaultingMatchesAPIServer runs quickSchema's defaulting, null
// pruning and list-type check and the apiserver's on every Gateway API
// object of the engine's golden inputs, the samples and watch's test data,
// as written and in two variants made to exercise them: every list doubled
// (duplicates in sets and map lists) and every scalar field set to null
// (pruned or defaulted).
func TestQuickDefaultingMatchesAPIServer(t *testing.T) {
	l := newTestLoader(t)
	objects, listErrors := 0, 0
	eachCorpusCRDObject(t, func(where string, u map[string]any, sv *servedVersion) {
		s, err := l.crds.schema(sv.spec.crd, sv.schemaVersion)
		if err != nil {
			t.Fatal(err)
		}
		for variant, obj := range map[string]map[string]any{"as written": u, "lists doubled": doubleLists(u).(map[string]any), "scalars null": nullScalars(u).(map[string]any)} {
			objects++
			name := where + " " + variant
			want := runtime.DeepCopyJSON(obj)
			defaulting.PruneNonNullableNullsWithoutDefaults(want, s.structural)
			got := runtime.DeepCopyJSON(obj)
			s.quick.pruneNulls(got, s.structural)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: pruneNulls\n got %v\nwant %v", name, got, want)
			}
			defaulting.Default(want, s.structural)
			s.quick.applyDefaults(got, s.structural)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: applyDefaults\n got %v\nwant %v", name, got, want)
			}
			errs := listtype.ValidateListSetsAndMaps(nil, s.structural, want)
			if len(errs) > 0 {
				listErrors++
			}
			if s.quick.listTypesValid(got, s.structural) && len(errs) > 0 {
				t.Fatalf("%s: listTypesValid, but the apiserver finds %v", name, errs)
			}
		}
	})
	if objects < 1000 || listErrors == 0 {
		t.Fatalf("checked %d objects, %d with list-type errors: the corpus is too small", objects, listErrors)
	}
	t.Logf("checked %d objects, %d with list-type errors", objects, listErrors)
}

// doubleLists returns a copy of v with every list's items repeated.
func doubleLists(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = doubleLists(x)
		}
		return out
	case []any:
		out := make([]any, 0, 2*len(v))
		for _, x := range v {
			out = append(out, doubleLists(x))
		}
		for _, x := range v {
			out = append(out, doubleLists(x))
		}
		return out
	}
	return v
}

// nullScalars returns a copy of v with every scalar field of an object
// below metadata set to null.
func nullScalars(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			switch x.(type) {
			case map[string]any, []any:
				out[k] = nullScalars(x)
			default:
				if k == "apiVersion" || k == "kind" || k == "name" {
					out[k] = x
				} else {
					out[k] = nil
				}
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = nullScalars(x)
		}
		return out
	}
	return v
}

// eachCorpusCRDObject calls fn with every Gateway API object (served by a
// CRD) of the engine's golden inputs, the samples and watch's test data,
// as toUnstructured reads it, with its served version and a name
// (file:line) for failures.
func eachCorpusCRDObject(t *testing.T, fn func(name string, u map[string]any, sv *servedVersion)) {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../engine/testdata/*.in.yaml", "../samples/*/*.yaml", "testdata/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range splitDocuments(data) {
			var n yaml.Node
			if yaml.Unmarshal(c.data, &n) != nil || n.Kind != yaml.DocumentNode {
				continue
			}
			v, nerr := toUnstructured(&n, nil)
			u, ok := v.(map[string]any)
			if nerr != nil || !ok {
				continue
			}
			apiVersion, _ := u["apiVersion"].(string)
			kind, _ := u["kind"].(string)
			sv, found := lookup(parseGVK(apiVersion, kind))
			if found != lookupServed || sv.spec.crd == "" {
				continue
			}
			fn(file+":"+strconv.Itoa(c.line), u, sv)
		}
	}
}
