package watch

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
)

// restring returns a copy of v with every string below metadata changed
// by change (patterns, lengths and enums then refuse many of them).
func restring(v any, change func(string) string) any {
	return mapScalars(v, func(x any) any {
		if s, ok := x.(string); ok {
			return change(s)
		}
		return x
	})
}

// TestQuickSchemaMatchesAPIServer checks quickSchema.valid (and
// defaultAndCheck, which admit uses, against defaulting then valid) against the
// apiserver's OpenAPI and list-type validation on every Gateway API object
// of the corpus, defaulted as admit defaults it, as written and changed to
// break it (lists doubled, scalars null or of another type, strings
// changed): whenever valid says an object is certainly valid, both of the
// apiserver's validators must find nothing. valid must also take most of
// the objects as written (it is the fast path).
func TestQuickSchemaMatchesAPIServer(t *testing.T) {
	l := newTestLoader(t)
	changes := map[string]func(string) string{
		"strings with a space":     func(s string) string { return s + " x" },
		"strings upper-cased":      strings.ToUpper,
		"strings with a non-ASCII": func(s string) string { return "é" + s },
		"strings emptied":          func(string) string { return "" },
		"strings long":             func(s string) string { return strings.Repeat(s+"a", 300/(len(s)+1)+1) },
	}
	objects, quick, invalid, writtenQuick, written := 0, 0, 0, 0, 0
	eachCorpusCRDObject(t, func(where string, u map[string]any, sv *servedVersion) {
		s, err := l.crds.schema(sv.spec.crd, sv.schemaVersion)
		if err != nil {
			t.Fatal(err)
		}
		variants := map[string]any{"as written": u, "lists doubled": doubleLists(u),
			"scalars null": nullScalars(u), "scalars mistyped": mistype(u)}
		for name, change := range changes {
			variants[name] = restring(u, change)
		}
		for variant, v := range variants {
			// admit's steps, and the walks they replaced beside them.
			obj := runtime.DeepCopyJSON(v.(map[string]any))
			s.quick.pruneWithNulls(obj, s.structural)
			before := runtime.DeepCopyJSON(obj)
			s.quick.applyOwnDefaults(obj, s.structural)
			delete(obj, "status")
			combined := s.quick.defaultAndCheck(obj, s.structural, false)
			library := runtime.DeepCopyJSON(before)
			s.quick.applyDefaults(before, s.structural)
			delete(before, "status")
			defaulting.Default(library, s.structural)
			delete(library, "status")
			if !reflect.DeepEqual(obj, before) || !reflect.DeepEqual(obj, library) {
				t.Fatalf("%s %s: defaultAndCheck\n got %v\nwant %v", where, variant, obj, library)
			}
			if walks := s.quick.valid(before); combined != walks {
				t.Fatalf("%s %s: defaultAndCheck says %v, applyDefaults then valid %v", where, variant, combined, walks)
			}
			objects++
			errs := apivalidation.ValidateCustomResource(nil, obj, s.validator)
			errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, obj)...)
			if len(errs) > 0 {
				invalid++
			}
			ok := combined
			if variant == "as written" {
				written++
				if ok {
					writtenQuick++
				}
			}
			if !ok {
				continue
			}
			quick++
			if len(errs) > 0 {
				t.Fatalf("%s %s: quickSchema.valid, but the apiserver finds %v", where, variant, errs)
			}
		}
	})
	if objects < 5000 || invalid < 1000 || writtenQuick*10 < written*9 {
		t.Fatalf("%d objects, %d invalid, %d taken by valid; as written %d, %d taken: the corpus does not exercise valid", objects, invalid, quick, written, writtenQuick)
	}
	t.Logf("%d objects, %d invalid, %d taken by valid; as written %d, %d taken", objects, invalid, quick, written, writtenQuick)
}
