package watch

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/gwdev/gwdev/internal/typegraph"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// runtime.DefaultUnstructuredConverter.FromUnstructured, which reads a
// validated object into its Go type, finds each struct field's JSON name
// in a process-wide cache, asks another cache whether each type has a JSON
// unmarshaler and goes through reflect.Value for the source too: 20% of
// the load's CPU for 1,000 HTTPRoutes. decodeTyped does the same with a
// plan made once per Go type (field names and indexes, which types read
// themselves from JSON) and reads the source by type switch. It handles
// what validated objects hold; for anything else (a value of the wrong
// type, a float for an integer, a string for []byte) it gives up and the
// object is decoded again by FromUnstructured, so errors and unusual
// conversions are the library's own. TestDecodeTypedMatchesConverter and
// FuzzDecodeTyped keep the two equal.

// decodeTyped returns a new object of newObject's type read from u, as
// runtime.DefaultUnstructuredConverter.FromUnstructured reads it.
func decodeTyped(u map[string]any, newObject func() metav1.Object) (metav1.Object, error) {
	obj := newObject()
	dv := reflect.ValueOf(obj).Elem()
	if planOf(dv.Type()).decode(u, dv) {
		return obj, nil
	}
	obj = newObject()
	return obj, runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj)
}

// planKind says how a typePlan decodes.
type planKind uint8

const (
	planGiveUp      planKind = iota // a type decodeTyped leaves to the library
	planUnmarshaler                 // a type with UnmarshalJSON: the library's entry
	planString
	planBool
	planInt
	planUint
	planFloat
	planInterface
	planPointer
	planSlice
	planMap
	planStruct
)

// typePlan is how decodeTyped reads values of one Go type.
type typePlan struct {
	kind planKind
	typ  reflect.Type
	// elem is the plan of the pointed-to type, a slice's items or a map's
	// values.
	elem *typePlan
	// fields are a struct's fields in declaration order.
	fields []fieldPlan
	// entry decodes a type with a JSON unmarshaler.
	entry *value.TypeReflectCacheEntry
}

// fieldPlan is one field of a struct: its index, its JSON name ("" when
// inlined: it reads the struct's own object) and its type's plan.
type fieldPlan struct {
	index int
	name  string
	plan  *typePlan
}

// typePlans holds the plans, by reflect.Type.
var typePlans typegraph.Cache[typePlan]

// planOf returns the plan of t, making it (and the plans of the types t
// holds) on first use.
func planOf(t reflect.Type) *typePlan { return typePlans.Of(t, fillPlan) }

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// fillPlan fills in the plan of t, linking the plans of the types it
// holds.
func fillPlan(t reflect.Type, p *typePlan, of func(reflect.Type) *typePlan) {
	p.typ = t
	switch t.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Struct, reflect.Interface:
		// As fromUnstructured: these read themselves from JSON when they can.
		if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
			p.kind, p.entry = planUnmarshaler, value.TypeReflectEntryOf(t)
			return
		}
	}
	switch t.Kind() {
	case reflect.String:
		p.kind = planString
	case reflect.Bool:
		p.kind = planBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.kind = planInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		p.kind = planUint
	case reflect.Float32, reflect.Float64:
		p.kind = planFloat
	case reflect.Interface:
		p.kind = planInterface
	case reflect.Pointer:
		p.kind, p.elem = planPointer, of(t.Elem())
	case reflect.Slice:
		p.kind, p.elem = planSlice, of(t.Elem())
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			p.kind, p.elem = planMap, of(t.Elem())
		}
	case reflect.Struct:
		p.fields = make([]fieldPlan, 0, t.NumField())
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				p.fields = nil
				return // the library would not set it either; leave it the error
			}
			p.fields = append(p.fields, fieldPlan{index: i, name: jsonFieldName(f), plan: of(f.Type)})
		}
		p.kind = planStruct
	}
}

// jsonFieldName is the name runtime's fieldInfoFromField gives a struct
// field ("" for one inlined into its struct's object).
func jsonFieldName(f reflect.StructField) string {
	tag, ok := f.Tag.Lookup("json")
	if !ok || tag == "" {
		if f.Anonymous {
			return ""
		}
		return f.Name
	}
	items := strings.Split(tag, ",")
	name := items[0]
	if isInlined(f, name, items[1:]) {
		return ""
	}
	if name == "" && !f.Anonymous {
		return f.Name
	}
	return name
}

// isInlined is runtime's isInlinedFromTag (Go 1.27 and later, which
// go.mod requires): a struct field tagged `json:",embed"`.
func isInlined(f reflect.StructField, name string, directives []string) bool {
	t := f.Type
	if t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && name == "" && len(directives) == 1 && directives[0] == "embed"
}

// decode reads src into dv, which must be the zero value of p's type (a
// new object's, or a part of one). It reports false when the library is to
// decode the object instead.
func (p *typePlan) decode(src any, dv reflect.Value) bool {
	if src == nil {
		return true // the zero value, as fromUnstructured sets it
	}
	switch p.kind {
	case planString:
		s, ok := src.(string)
		if ok {
			dv.SetString(s)
		}
		return ok
	case planBool:
		b, ok := src.(bool)
		if ok {
			dv.SetBool(b)
		}
		return ok
	case planInt:
		i, ok := src.(int64)
		if ok {
			dv.SetInt(i) // truncated, as reflect's Convert does
		}
		return ok
	case planUint:
		i, ok := src.(int64)
		if ok {
			dv.SetUint(uint64(i))
		}
		return ok
	case planFloat:
		switch x := src.(type) {
		case float64:
			dv.SetFloat(x)
		case int64:
			dv.SetFloat(float64(x))
		default:
			return false
		}
		return true
	case planInterface:
		v := reflect.ValueOf(src)
		if !v.Type().AssignableTo(p.typ) {
			return false
		}
		dv.Set(v)
		return true
	case planUnmarshaler:
		return p.entry.FromUnstructured(reflect.ValueOf(src), dv) == nil
	case planPointer:
		v := reflect.New(p.elem.typ)
		if !p.elem.decode(src, v.Elem()) {
			return false
		}
		dv.Set(v)
		return true
	case planSlice:
		return p.decodeSlice(src, dv)
	case planMap:
		return p.decodeMap(src, dv)
	case planStruct:
		m, ok := src.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range p.fields {
			fv := dv.Field(f.index)
			if f.name == "" {
				if !f.plan.decode(m, fv) {
					return false
				}
			} else if x, ok := m[f.name]; ok && !f.plan.decode(x, fv) {
				return false
			}
		}
		return true
	}
	return false
}

// decodeSlice reads a list into a slice of the same length and capacity,
// as sliceFromUnstructured makes it.
func (p *typePlan) decodeSlice(src any, dv reflect.Value) bool {
	list, ok := src.([]any)
	if !ok {
		return false // a string for []byte too: the library's base64
	}
	if list == nil {
		return true
	}
	s := reflect.MakeSlice(p.typ, len(list), cap(list))
	for i, x := range list {
		if !p.elem.decode(x, s.Index(i)) {
			return false
		}
	}
	dv.Set(s)
	return true
}

// decodeMap reads an object into a map, as mapFromUnstructured does.
func (p *typePlan) decodeMap(src any, dv reflect.Value) bool {
	m, ok := src.(map[string]any)
	if !ok {
		return false
	}
	if m == nil {
		return true
	}
	out := reflect.MakeMapWithSize(p.typ, len(m))
	keyType := p.typ.Key()
	for k, x := range m {
		v := reflect.New(p.elem.typ).Elem()
		if !p.elem.decode(x, v) {
			return false
		}
		out.SetMapIndex(reflect.ValueOf(k).Convert(keyType), v)
	}
	dv.Set(out)
	return true
}

// keepsMaps caches decodeKeepsMaps, by *kindSpec.
var keepsMaps sync.Map

// decodeKeepsMaps reports whether an object of spec's kind, once decoded,
// may refer to maps or lists of the unstructured object it was read from:
// only an interface field does (given the value as it is, by decodeTyped
// and the library alike); types with UnmarshalJSON get a JSON copy, and
// maps, lists and structs are made anew.
func decodeKeepsMaps(spec *kindSpec) bool {
	if v, ok := keepsMaps.Load(spec); ok {
		return v.(bool)
	}
	keeps := planHoldsInterface(planOf(reflect.TypeOf(spec.newObject()).Elem()), map[*typePlan]bool{})
	keepsMaps.Store(spec, keeps)
	return keeps
}

// planHoldsInterface reports whether a value of p's type may hold an
// interface; seen ends recursive types. A type left to the library
// (planGiveUp) may.
func planHoldsInterface(p *typePlan, seen map[*typePlan]bool) bool {
	if seen[p] {
		return false
	}
	seen[p] = true
	switch p.kind {
	case planInterface, planGiveUp:
		return true
	case planPointer, planSlice, planMap:
		return planHoldsInterface(p.elem, seen)
	case planStruct:
		for _, f := range p.fields {
			if planHoldsInterface(f.plan, seen) {
				return true
			}
		}
	}
	return false
}
