package report

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gwdev/gwdev/internal/typegraph"
)

// build fills the tree straight from a Go value, as parse would from the
// text encoding/json writes for it, without writing that text: check -o
// yaml spent two thirds of its rendering time in encoding/json and in
// parsing its output again, and allocated a string per scalar doing so.
// build follows encoding/json for the values Kubernetes objects hold:
// structs whose fields have plain names, omitempty and omitzero (embedded structs
// inlined, with no name written twice), pointers, interfaces, slices,
// arrays, maps keyed by strings, strings, booleans and integers. A value
// whose type has a MarshalJSON or MarshalText method encoding/json would
// call (metav1.Time, resource.Quantity, intstr.IntOrString), and anything
// else (floats, byte slices, invalid UTF-8, the "string" option, name
// conflicts), is written by encoding/json and parsed into
// the tree in its place. errOutsideSubset from build means: render this
// value the old way, from its whole JSON; so does any error of
// encoding/json on a part, so that its error is the one the value's
// caller sees. TestYAMLBuildMatchesJSON compares the two.
func (t *jsonTree) build(v any) (int32, error) {
	t.nodes, t.kids, t.stack = t.nodes[:0], t.kids[:0], t.stack[:0]
	return t.buildValue(reflect.ValueOf(v), 0)
}

// maxBuildDepth bounds build's recursion; deeper values (or cycles, which
// encoding/json refuses) take the old way.
const maxBuildDepth = 1000

func (t *jsonTree) buildValue(v reflect.Value, depth int) (int32, error) {
	if !v.IsValid() { // a nil interface at the top
		return t.add(jsonNode{s: "null"}), nil
	}
	return t.buildTyped(v, typeInfoOf(v.Type()), depth)
}

// buildTyped is buildValue for a value of ti's type.
func (t *jsonTree) buildTyped(v reflect.Value, ti *typeInfo, depth int) (int32, error) {
	if depth > maxBuildDepth {
		return 0, errOutsideSubset
	}
	if ti.marshal == marshalsAlways || (ti.marshal == marshalsAddressable && v.CanAddr()) {
		switch ti.t {
		case metav1TimeType:
			return t.buildTime(v), nil
		case intOrStringType:
			if n, ok := t.buildIntOrString(v); ok {
				return n, nil
			}
		}
		return t.viaJSON(v)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return t.add(jsonNode{s: "null"}), nil
		}
		return t.buildTyped(v.Elem(), ti.elem, depth+1)
	case reflect.Interface:
		if v.IsNil() {
			return t.add(jsonNode{s: "null"}), nil
		}
		return t.buildValue(v.Elem(), depth+1)
	case reflect.Struct:
		return t.buildStruct(v, ti, depth)
	case reflect.Map:
		return t.buildMap(v, ti, depth)
	case reflect.Slice:
		if v.IsNil() {
			return t.add(jsonNode{s: "null"}), nil
		}
		if ti.elem.t.Kind() == reflect.Uint8 {
			return t.viaJSON(v) // base64, or numbers for a byte type with methods
		}
		return t.buildList(v, ti.elem, depth)
	case reflect.Array:
		if ti.elem.t.Kind() == reflect.Uint8 {
			return t.viaJSON(v)
		}
		return t.buildList(v, ti.elem, depth)
	case reflect.String:
		s := v.String()
		if !utf8.ValidString(s) {
			return t.viaJSON(v) // encoding/json replaces invalid bytes
		}
		return t.add(jsonNode{kind: jsonString, s: s}), nil
	case reflect.Bool:
		if v.Bool() {
			return t.add(jsonNode{s: "true"}), nil
		}
		return t.add(jsonNode{s: "false"}), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return t.add(jsonNode{s: strconv.FormatInt(v.Int(), 10)}), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return t.add(jsonNode{s: strconv.FormatUint(v.Uint(), 10)}), nil
	default: // floats: their text is yaml.v2's after a round trip; the rest is refused
		return t.viaJSON(v)
	}
}

// buildTime writes a metav1.Time as its MarshalJSON does (null when zero,
// else RFC 3339 in UTC) without encoding/json: every object and condition
// carries one.
func (t *jsonTree) buildTime(v reflect.Value) int32 {
	var tm metav1.Time
	if v.CanAddr() {
		tm = *v.Addr().Interface().(*metav1.Time)
	} else {
		tm = v.Interface().(metav1.Time)
	}
	if tm.IsZero() {
		return t.add(jsonNode{s: "null"})
	}
	return t.add(jsonNode{kind: jsonString, s: tm.UTC().Format(time.RFC3339)})
}

// buildIntOrString writes an IntOrString as its MarshalJSON does (a
// number or a string; Services' target ports), or reports that it cannot.
func (t *jsonTree) buildIntOrString(v reflect.Value) (int32, bool) {
	var x intstr.IntOrString
	if v.CanAddr() {
		x = *v.Addr().Interface().(*intstr.IntOrString)
	} else {
		x = v.Interface().(intstr.IntOrString)
	}
	switch {
	case x.Type == intstr.Int:
		return t.add(jsonNode{s: strconv.FormatInt(int64(x.IntVal), 10)}), true
	case x.Type == intstr.String && utf8.ValidString(x.StrVal):
		return t.add(jsonNode{kind: jsonString, s: x.StrVal}), true
	}
	return 0, false
}

// viaJSON parses encoding/json's text for v into the tree: v as it sits in
// the value, so that a method on its pointer is called when encoding/json
// would call it (the value is addressable) and not otherwise.
func (t *jsonTree) viaJSON(v reflect.Value) (int32, error) {
	var x any
	if v.CanAddr() {
		x = v.Addr().Interface()
	} else {
		x = v.Interface()
	}
	j, err := json.Marshal(x)
	if err != nil {
		return 0, errOutsideSubset // the whole value's encoding says what failed
	}
	return t.parseMore(j)
}

func (t *jsonTree) buildList(v reflect.Value, elem *typeInfo, depth int) (int32, error) {
	n := v.Len()
	if n == 0 {
		return t.add(jsonNode{kind: jsonArray}), nil
	}
	base := len(t.stack)
	for i := range n {
		item, err := t.buildTyped(v.Index(i), elem, depth+1)
		if err != nil {
			return 0, err
		}
		t.stack = append(t.stack, item)
	}
	return t.collect(jsonArray, base), nil
}

func (t *jsonTree) buildMap(v reflect.Value, ti *typeInfo, depth int) (int32, error) {
	if v.IsNil() {
		return t.add(jsonNode{s: "null"}), nil
	}
	if !ti.stringKeys {
		return t.viaJSON(v)
	}
	if v.Len() == 0 {
		return t.add(jsonNode{kind: jsonObject}), nil
	}
	base := len(t.stack)
	it := v.MapRange()
	for it.Next() {
		name := it.Key().String()
		if !utf8.ValidString(name) {
			return 0, errOutsideSubset
		}
		k := t.add(jsonNode{kind: jsonString, s: name})
		val, err := t.buildTyped(it.Value(), ti.elem, depth+1)
		if err != nil {
			return 0, err
		}
		t.nodes[k].value = val
		t.stack = append(t.stack, k)
	}
	return t.collect(jsonObject, base), nil // the emitter sorts the keys
}

func (t *jsonTree) buildStruct(v reflect.Value, ti *typeInfo, depth int) (int32, error) {
	p := ti.plan
	if p.viaJSON {
		return t.viaJSON(v)
	}
	base := len(t.stack)
	for i := range p.fields {
		f := &p.fields[i]
		fv := v.FieldByIndex(f.index)
		if (f.omitEmpty && legacyEmpty(fv)) || (f.omitZero && isZero(fv, f.zeroer)) {
			continue
		}
		k := t.add(jsonNode{kind: jsonString, s: f.name, plain: f.plainKey})
		val, err := t.buildTyped(fv, f.typ, depth+1)
		if err != nil {
			return 0, err
		}
		t.nodes[k].value = val
		t.stack = append(t.stack, k)
	}
	n := t.collect(jsonObject, base)
	t.nodes[n].sorted = p.sorted
	return n, nil
}

// collect moves the children on the stack above base into kids and adds
// their collection.
func (t *jsonTree) collect(kind jsonKind, base int) int32 {
	start := int32(len(t.kids))
	t.kids = append(t.kids, t.stack[base:]...)
	n := int32(len(t.stack) - base)
	t.stack = t.stack[:base]
	return t.add(jsonNode{kind: kind, start: start, len: n})
}

// legacyEmpty is encoding/json's omitempty: false, 0, a nil pointer or
// interface, an empty string, array, slice or map (a struct never is).
func legacyEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// marshaler says whether encoding/json calls a method of a type's own.
type marshaler uint8

const (
	marshalsNever       marshaler = iota
	marshalsAlways                // T has MarshalJSON or MarshalText
	marshalsAddressable           // only *T has one: called on addressable values
)

// typeInfo is what build needs to know of a type, worked out once: the
// types it holds are linked, so a value's whole tree is walked with one
// lookup (of its own type, or an interface's dynamic type).
type typeInfo struct {
	t          reflect.Type
	marshal    marshaler
	elem       *typeInfo   // of a pointer, slice, array or map
	stringKeys bool        // a map whose keys encoding/json writes as they are
	plan       *structPlan // of a struct
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	metav1TimeType    = reflect.TypeFor[metav1.Time]()
	intOrStringType   = reflect.TypeFor[intstr.IntOrString]()
	typeInfos         typegraph.Cache[typeInfo]
)

func typeInfoOf(t reflect.Type) *typeInfo { return typeInfos.Of(t, fillTypeInfo) }

// fillTypeInfo fills in t's typeInfo and links those of the types it
// holds.
func fillTypeInfo(t reflect.Type, ti *typeInfo, of func(reflect.Type) *typeInfo) {
	ti.t = t
	switch {
	case t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType):
		ti.marshal = marshalsAlways
	case t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
		(reflect.PointerTo(t).Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)):
		ti.marshal = marshalsAddressable
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		ti.elem = of(t.Elem())
	case reflect.Map:
		k := of(t.Key())
		ti.stringKeys = t.Key().Kind() == reflect.String && k.marshal == marshalsNever
		ti.elem = of(t.Elem())
	case reflect.Struct:
		ti.plan = makeStructPlan(t, of)
	}
}

// structPlan is how build writes a struct type: its fields in yaml.v2's
// order of keys (sorted: the emitter need not sort them again), or
// viaJSON when the type uses anything build does not follow.
type structPlan struct {
	fields  []structField
	viaJSON bool
	sorted  bool
}

type structField struct {
	name      string
	index     []int
	omitEmpty bool
	omitZero  bool
	plainKey  bool // the emitter writes the name plain, as str would
	zeroer    zeroer
	typ       *typeInfo
}

// zeroer is how omitzero decides a field is zero: by the value, or by its
// type's IsZero method as encoding/json calls it.
type zeroer uint8

const (
	zeroByValue     zeroer = iota
	zeroByInterface        // an interface type with IsZero: nil, a nil pointer, or IsZero
	zeroByPointer          // a pointer type with IsZero: nil, or IsZero
	zeroByMethod           // T has IsZero
	zeroByAddress          // only *T has IsZero: called on the value's address (or a copy's)
)

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

func zeroerOf(t reflect.Type) zeroer {
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return zeroByInterface
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return zeroByPointer
	case t.Implements(isZeroerType):
		return zeroByMethod
	case reflect.PointerTo(t).Implements(isZeroerType):
		return zeroByAddress
	}
	return zeroByValue
}

// isZero is encoding/json's omitzero.
func isZero(v reflect.Value, z zeroer) bool {
	switch z {
	case zeroByInterface:
		return v.IsNil() || (v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) || v.Interface().(isZeroer).IsZero()
	case zeroByPointer:
		return v.IsNil() || v.Interface().(isZeroer).IsZero()
	case zeroByMethod:
		return v.Interface().(isZeroer).IsZero()
	case zeroByAddress:
		if !v.CanAddr() {
			c := reflect.New(v.Type()).Elem()
			c.Set(v)
			v = c
		}
		return v.Addr().Interface().(isZeroer).IsZero()
	}
	return v.IsZero()
}

func makeStructPlan(t reflect.Type, of func(reflect.Type) *typeInfo) *structPlan {
	p := &structPlan{}
	if !p.add(t, nil, 0, of) || hasRepeatedName(p.fields) {
		return &structPlan{viaJSON: true}
	}
	slices.SortStableFunc(p.fields, func(a, b structField) int {
		switch {
		case yamlKeyLess(a.name, b.name):
			return -1
		case yamlKeyLess(b.name, a.name):
			return 1
		}
		return 0
	})
	// Sorted only when every pair is in a strict order; else the emitter
	// sorts them as it would the keys of encoding/json's text.
	p.sorted = true
	for i := range p.fields {
		for j := i + 1; j < len(p.fields); j++ {
			if a, b := p.fields[i].name, p.fields[j].name; !yamlKeyLess(a, b) || yamlKeyLess(b, a) {
				p.sorted = false
			}
		}
	}
	return p
}

// add appends the fields of struct type t, reached through index, and
// reports whether build can follow every one of them.
func (p *structPlan) add(t reflect.Type, index []int, depth int, of func(reflect.Type) *typeInfo) bool {
	if depth > 8 {
		return false
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		omitEmpty, omitZero := false, false
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				omitEmpty = true
			case "omitzero":
				omitZero = true
			case "inline":
				if !sf.Anonymous {
					return false
				}
			default: // "string" and encoding/json/v2's options
				return false
			}
		}
		idx := append(append([]int(nil), index...), i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() != reflect.Struct || of(ft).marshal != marshalsNever {
				return false // embedded pointers, non-structs and types with methods
			}
			if !p.add(ft, idx, depth+1, of) {
				return false
			}
			continue
		}
		if !sf.IsExported() {
			if sf.Anonymous {
				return false // encoding/json writes an unexported embedded struct with a name
			}
			continue
		}
		if !hasTag || name == "" {
			name = sf.Name
		} else if !plainJSONName(name) {
			return false
		}
		f := structField{name: name, index: idx, omitEmpty: omitEmpty, omitZero: omitZero, typ: of(sf.Type)}
		if omitZero {
			f.zeroer = zeroerOf(sf.Type)
		}
		if a, ok := analyzeScalar(name); ok && !a.multiline && a.plainAllowed && plainResolvesToString(name) && !isBase60Float(name) && len(name) <= maxSimpleKey {
			f.plainKey = true
		}
		p.fields = append(p.fields, f)
	}
	return true
}

// plainJSONName reports whether a tag's name is one encoding/json takes as
// it is: letters, digits and a few punctuation marks.
func plainJSONName(s string) bool {
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.ContainsRune("-_.$", c):
		default:
			return false
		}
	}
	return true
}

func hasRepeatedName(fields []structField) bool {
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		if seen[f.name] {
			return true
		}
		seen[f.name] = true
	}
	return false
}
