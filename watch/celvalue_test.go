package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiserver/pkg/cel/common"
)

// TestCELValueMatchesApiserver walks real objects (the engine's golden
// inputs) through both the apiserver's CEL values and celValue and
// compares every lookup a rule can make: fields present, absent, null,
// undeclared and escaped; list items in and out of range; iteration.
func TestCELValueMatchesApiserver(t *testing.T) {
	l, err := NewLoader()
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]common.Schema{}
	schemaFor := func(kind string) common.Schema {
		if s, ok := schemas[kind]; ok {
			return s
		}
		var spec *kindSpec
		for _, k := range allKinds {
			if k.kind == kind && k.crd != "" {
				spec = k
			}
		}
		if spec == nil {
			schemas[kind] = nil
			return nil
		}
		cs, err := l.crds.schema(spec.crd, spec.version)
		if err != nil {
			t.Fatal(err)
		}
		s := newCachedSchema(&model.Structural{Structural: model.WithTypeAndObjectMeta(cs.structural)})
		schemas[kind] = s
		return s
	}
	files, _ := filepath.Glob("../engine/testdata/*.in.yaml")
	objects := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range splitDocuments(data) {
			docs, err := referenceParse(c.data)
			if err != nil || len(docs) == 0 {
				continue
			}
			v, nerr := toUnstructured(docs[0], nil)
			u, ok := v.(map[string]any)
			if nerr != nil || !ok {
				continue
			}
			kind, _ := u["kind"].(string)
			s := schemaFor(kind)
			if s == nil {
				continue
			}
			objects++
			where := fmt.Sprintf("%s:%d %s", file, c.line, kind)
			compareCELValues(t, where, common.UnstructuredToVal(u, s), celValue(u, s), u, s, 0)
		}
	}
	// Null fields count as absent in objects with properties.
	withNulls := map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": "r", "namespace": nil},
		"spec": map[string]any{
			"hostnames":  nil,
			"parentRefs": []any{map[string]any{"name": "gw", "namespace": nil, "sectionName": "http"}},
			"rules":      []any{map[string]any{"matches": []any{map[string]any{"path": map[string]any{"type": "Exact", "value": nil}}}}},
		},
	}
	s := schemaFor("HTTPRoute")
	compareCELValues(t, "withNulls", common.UnstructuredToVal(withNulls, s), celValue(withNulls, s), withNulls, s, 0)
	if objects < 100 {
		t.Fatalf("only %d objects compared", objects)
	}
}

func compareCELValues(t *testing.T, where string, ref0, fast ref.Val, v any, s common.Schema, depth int) {
	t.Helper()
	if depth > 20 {
		return
	}
	if got := fast.Equal(ref0); got != types.True {
		t.Fatalf("%s: values differ: %v", where, got)
	}
	if s == nil {
		return
	}
	if got, want := fast.Equal(celValue(v, s)), ref0.Equal(common.UnstructuredToVal(v, s)); got != want {
		t.Fatalf("%s: a value equals itself: %v, apiserver %v", where, got, want)
	}
	if fast.Type() != ref0.Type() {
		t.Fatalf("%s: type %v, apiserver %v", where, fast.Type(), ref0.Type())
	}
	switch r := ref0.(type) {
	case traits.Mapper:
		f, ok := fast.(traits.Mapper)
		if !ok {
			t.Fatalf("%s: not a map", where)
		}
		m, _ := v.(map[string]any)
		names := []string{"__nope__", "missing", "x__dash__y", "__namespace__", "namespace"}
		for k := range m {
			names = append(names, k)
		}
		for _, name := range names {
			key := types.String(name)
			rv, rok := r.Find(key)
			fv, fok := f.Find(key)
			if rok != fok || (rv == nil) != (fv == nil) {
				t.Fatalf("%s.%s: found=%v (%v), apiserver found=%v (%v)", where, name, fok, fv, rok, rv)
			}
			if got, want := f.Contains(key), r.Contains(key); got != want {
				t.Fatalf("%s.%s: contains %v, apiserver %v", where, name, got, want)
			}
			if rg, fg := r.Get(key), f.Get(key); types.IsError(rg) != types.IsError(fg) {
				t.Fatalf("%s.%s: get %v, apiserver %v", where, name, fg, rg)
			}
			if rok && rv != nil && !types.IsUnknownOrError(rv) {
				var sub common.Schema
				if s.Properties() != nil {
					sub = s.Properties()[name]
				} else if ap := s.AdditionalProperties(); ap != nil {
					sub = ap.Schema()
				}
				compareCELValues(t, where+"."+name, rv, fv, m[name], sub, depth+1)
			}
		}
	case traits.Lister:
		f, ok := fast.(traits.Lister)
		if !ok {
			t.Fatalf("%s: not a list", where)
		}
		items, _ := v.([]any)
		for _, idx := range []ref.Val{types.Int(-1), types.Int(len(items)), types.String("0")} {
			if rg, fg := r.Get(idx), f.Get(idx); types.IsError(rg) != types.IsError(fg) {
				t.Fatalf("%s[%v]: get %v, apiserver %v", where, idx, fg, rg)
			}
		}
		ri, fi := r.Iterator(), f.Iterator()
		for i := range items {
			if ri.HasNext() != types.True || fi.HasNext() != types.True {
				t.Fatalf("%s: iteration ended early", where)
			}
			rn, fn := ri.Next(), fi.Next()
			sub := s.Items()
			item := fmt.Sprintf("%s[%d]", where, i)
			compareCELValues(t, item, rn, fn, items[i], sub, depth+1)
			compareCELValues(t, item, r.Get(types.Int(i)), f.Get(types.Int(i)), items[i], sub, depth+1)
		}
		if fi.HasNext() != types.False {
			t.Fatalf("%s: iteration goes on", where)
		}
	}
}
