package engine

import (
	"reflect"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReportedField is a field of the Gateway API gwdev does not implement:
// an object that sets it gets a warning (Text), never silence. The field
// guard test (cmd/gwdev) walks every field path of every CRD gwdev loads and
// requires each to be in ReportedFields or EnforcedFields.
type ReportedField struct {
	// Kind is the kind the field belongs to ("Gateway").
	Kind string
	// Path is the field's path in the CRD schema, "[]" standing for list
	// items and "{}" for map values ("spec.infrastructure.labels"). "" is
	// the whole kind: gwdev does not load objects of the kind at all, and
	// the loader reports each one (see watch's Gateway API kinds it skips).
	Path string
	// Text is the warning users see; it names the field.
	Text string
}

// reportedFields is the table ReportedFields returns; unimplementedFields
// consults it for every object of a kind it lists.
var reportedFields = []ReportedField{
	{Kind: "Gateway", Path: "spec.infrastructure.labels",
		Text: "spec.infrastructure.labels is not implemented: gwdev creates no resources for a Gateway to label, so the labels are ignored"},
	{Kind: "Gateway", Path: "spec.infrastructure.annotations",
		Text: "spec.infrastructure.annotations is not implemented: gwdev creates no resources for a Gateway to annotate, so the annotations are ignored"},
	{Kind: "Gateway", Path: "spec.listeners[].filters.requests[].extensionRef",
		Text: "spec.listeners[].filters.requests[].extensionRef is not implemented: gwdev cannot run a custom pre-routing filter, so every request on the listener gets 500"},
	{Kind: "ListenerSet", Path: "spec.listeners[].filters.requests[].extensionRef",
		Text: "spec.listeners[].filters.requests[].extensionRef is not implemented: gwdev cannot run a custom pre-routing filter, so every request on the listener gets 500"},
}

// skippedKindText is the warning for an object of a Gateway API kind gwdev
// does not load.
func skippedKindText(kind string) string {
	return kind + " is a Gateway API kind gwdev does not implement: the object is ignored"
}

// SkippedKindWarning is the warning the loader gives for an object of a
// Gateway API group whose kind gwdev does not load: the ReportedField text
// for the kinds listed whole, the same wording for others.
func SkippedKindWarning(kind string) string {
	for _, f := range reportedFields {
		if f.Kind == kind && f.Path == "" {
			return f.Text
		}
	}
	return skippedKindText(kind)
}

// ReportedFields lists the fields gwdev reports instead of implementing.
// Callers must not modify it.
func ReportedFields() []ReportedField { return reportedFields }

// fieldStep is one step of a compiled field path: a struct field (index),
// or every item of a list or every value of a map (each).
type fieldStep struct {
	index []int
	each  bool
}

// compiledField is a ReportedField compiled against its kind's Go type.
type compiledField struct {
	field *ReportedField
	steps []fieldStep
	// names are the path's segments, to render concrete paths.
	names []string
}

// reportedByKind holds the ReportedFields of loaded kinds compiled against
// their Go types; built once, read only afterwards.
var reportedByKind = sync.OnceValue(compileReportedFields) // after init: it asks KindNamed

func compileReportedFields() map[string][]compiledField {
	out := map[string][]compiledField{}
	for i := range reportedFields {
		f := &reportedFields[i]
		k := KindNamed(f.Kind)
		if k == nil || f.Path == "" {
			continue // a kind gwdev does not load: the loader reports it
		}
		c, ok := compileFieldPath(reflect.TypeOf(k.New()), f.Path)
		if !ok {
			panic("engine: reported field " + f.Kind + " " + f.Path + " names no field of the Go type")
		}
		c.field = f
		out[f.Kind] = append(out[f.Kind], c)
	}
	return out
}

// compileFieldPath resolves a CRD field path against a Go type through its
// json tags (inlined structs included).
func compileFieldPath(t reflect.Type, path string) (compiledField, bool) {
	var c compiledField
	for _, seg := range splitFieldPath(path) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if seg == "[]" || seg == "{}" {
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Map {
				return c, false
			}
			c.steps = append(c.steps, fieldStep{each: true})
			c.names = append(c.names, seg)
			t = t.Elem()
			continue
		}
		if t.Kind() != reflect.Struct {
			return c, false
		}
		sf, ok := jsonField(t, seg)
		if !ok {
			return c, false
		}
		c.steps = append(c.steps, fieldStep{index: sf.Index})
		c.names = append(c.names, seg)
		t = sf.Type
	}
	return c, true
}

// splitFieldPath splits "spec.rules[].name" into spec, rules, [], name.
func splitFieldPath(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		for {
			i := strings.IndexAny(part, "[{")
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			out = append(out, part[i:i+2])
			part = part[i+2:]
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

// jsonField finds the struct field serialised under name, looking into
// inlined (embedded) structs.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if tag == name {
			return sf, true
		}
		if tag == "" && sf.Anonymous {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if inner, ok := jsonField(ft, name); ok {
					inner.Index = append(append([]int{}, sf.Index...), inner.Index...)
					return inner, true
				}
			}
		}
	}
	return reflect.StructField{}, false
}

// firstSet returns the concrete path of the first place v sets the field
// ("spec.rules[2].name"), or "".
func (c *compiledField) firstSet(v reflect.Value) string {
	return c.walk(v, 0, "")
}

func (c *compiledField) walk(v reflect.Value, i int, at string) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	if i == len(c.steps) {
		if v.IsZero() {
			return ""
		}
		return at
	}
	s := c.steps[i]
	if !s.each {
		name := c.names[i]
		if at != "" {
			name = at + "." + name
		}
		return c.walk(v.FieldByIndex(s.index), i+1, name)
	}
	switch v.Kind() {
	case reflect.Slice:
		for j := 0; j < v.Len(); j++ {
			if p := c.walk(v.Index(j), i+1, at+"["+itoa(j)+"]"); p != "" {
				return p
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			if p := c.walk(iter.Value(), i+1, at+"["+quote(iter.Key().String())+"]"); p != "" {
				return p
			}
		}
	}
	return ""
}

// noteReportedFields warns once per object and ReportedField about every
// field gwdev does not implement that the object sets.
func (t *translator) noteReportedFields() {
	if len(reportedByKind()) == 0 {
		return
	}
	for _, k := range kinds {
		fields := reportedByKind()[k.Kind]
		if len(fields) == 0 {
			continue
		}
		k.Each(t.out, func(key ObjectKey, o metav1.Object) {
			v := reflect.ValueOf(asDecoded(o)) // the type fields were compiled against (New's)
			for i := range fields {
				if at := fields[i].firstSet(v); at != "" {
					t.notes = append(t.notes, Finding{Severity: SeverityWarning, Object: key,
						Source: t.sourceAt(key, at), Scope: at, Field: at, Reason: ReasonNotImplemented, Message: fields[i].field.Text})
				}
			}
		})
	}
}

// ReasonNotImplemented is the reason of the warning about a field gwdev
// does not implement (a ReportedField).
const ReasonNotImplemented = "NotImplemented"
