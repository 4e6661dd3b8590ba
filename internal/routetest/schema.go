package routetest

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The test file schema is validated here, by the keywords
// gwdev-test.schema.json uses, instead of through a general JSON Schema
// library: santhosh-tekuri/jsonschema/v6 compiles every draft's
// meta-schema in its package init, 1.7 MB in every gwdev command, `gwdev
// version` too (issue 42). compileSchema refuses a keyword it does not
// implement, so the schema cannot grow one silently, and
// TestSchemaValidatorAgreesWithJSONSchema holds the answers and messages
// to the library's on the samples and on broken files.

// schemaNode is one compiled (sub)schema.
type schemaNode struct {
	ref                  string // "#/$defs/name", resolved into refNode
	refNode              *schemaNode
	types                []string
	enum                 []any
	pattern              *regexp.Regexp
	minimum, maximum     *float64
	exclusiveMinimum     *float64
	minProperties        *int
	minItems             *int
	minLength            *int
	required             []string
	properties           map[string]*schemaNode
	additionalFalse      bool        // additionalProperties: false
	additionalProperties *schemaNode // additionalProperties: {schema}
	items                *schemaNode
}

// FileSchema is a compiled test file schema.
type FileSchema struct{ root *schemaNode }

var (
	schemaOnce sync.Once
	schema     *FileSchema
	schemaErr  error
)

// Schema is the compiled SchemaJSON.
func Schema() (*FileSchema, error) {
	schemaOnce.Do(func() {
		schema, schemaErr = compileSchema(SchemaJSON)
	})
	return schema, schemaErr
}

// compileSchema compiles a schema document of the keywords schemaNode has
// (annotations aside); another keyword is an error.
func compileSchema(doc []byte) (*FileSchema, error) {
	var raw map[string]any
	d := json.NewDecoder(strings.NewReader(string(doc)))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, err
	}
	if s, _ := raw["$schema"].(string); s != "https://json-schema.org/draft/2020-12/schema" {
		return nil, fmt.Errorf("$schema %q: want draft 2020-12", s)
	}
	defs := map[string]*schemaNode{}
	var all []*schemaNode
	var compile func(v any, at string) (*schemaNode, error)
	compile = func(v any, at string) (*schemaNode, error) {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: a schema is an object here", at)
		}
		n := &schemaNode{}
		all = append(all, n)
		num := func(k string) (*float64, error) {
			x, ok := m[k].(json.Number)
			if !ok {
				return nil, fmt.Errorf("%s/%s: want a number", at, k)
			}
			f, err := x.Float64()
			return &f, err
		}
		count := func(k string) (*int, error) {
			x, ok := m[k].(json.Number)
			i, err := strconv.Atoi(string(x))
			if !ok || err != nil || i < 0 {
				return nil, fmt.Errorf("%s/%s: want a count", at, k)
			}
			return &i, nil
		}
		for k, kv := range m {
			var err error
			switch k {
			case "$schema", "$id", "$defs", "title", "description":
			case "$ref":
				n.ref, _ = kv.(string)
				if !strings.HasPrefix(n.ref, "#/$defs/") {
					err = fmt.Errorf("%s/$ref %v: only #/$defs/ references", at, kv)
				}
			case "type":
				var given []any
				switch t := kv.(type) {
				case string:
					given = []any{t}
				case []any:
					given = t
				}
				// The types in one order, JSON Schema's (the messages list them so).
				for _, name := range jsonTypes {
					for _, g := range given {
						if g == name {
							n.types = append(n.types, name)
						}
					}
				}
				if len(n.types) != len(given) {
					err = fmt.Errorf("%s/type %v: want JSON types", at, kv)
				}
			case "enum":
				n.enum, _ = kv.([]any)
				for _, e := range n.enum {
					switch e.(type) {
					case []any, map[string]any:
						err = fmt.Errorf("%s/enum: only strings, numbers, booleans and null", at)
					}
				}
			case "pattern":
				s, _ := kv.(string)
				n.pattern, err = regexp.Compile(s)
			case "minimum":
				n.minimum, err = num(k)
			case "maximum":
				n.maximum, err = num(k)
			case "exclusiveMinimum":
				n.exclusiveMinimum, err = num(k)
			case "minProperties":
				n.minProperties, err = count(k)
			case "minItems":
				n.minItems, err = count(k)
			case "minLength":
				n.minLength, err = count(k)
			case "required":
				r, _ := kv.([]any)
				for _, e := range r {
					s, _ := e.(string)
					n.required = append(n.required, s)
				}
			case "properties":
				ps, _ := kv.(map[string]any)
				n.properties = make(map[string]*schemaNode, len(ps))
				for p, pv := range ps {
					if n.properties[p], err = compile(pv, at+"/properties/"+p); err != nil {
						return nil, err
					}
				}
			case "additionalProperties":
				if b, ok := kv.(bool); ok {
					if !b {
						n.additionalFalse = true
					}
				} else {
					n.additionalProperties, err = compile(kv, at+"/additionalProperties")
				}
			case "items":
				n.items, err = compile(kv, at+"/items")
			default:
				err = fmt.Errorf("%s: keyword %q is not one routetest's validator implements (schema.go)", at, k)
			}
			if err != nil {
				return nil, err
			}
		}
		return n, nil
	}
	if ds, ok := raw["$defs"].(map[string]any); ok {
		for name, dv := range ds {
			n, err := compile(dv, "#/$defs/"+name)
			if err != nil {
				return nil, err
			}
			defs["#/$defs/"+name] = n
		}
	}
	root, err := compile(raw, "#")
	if err != nil {
		return nil, err
	}
	for _, n := range all {
		if n.ref != "" {
			if n.refNode = defs[n.ref]; n.refNode == nil {
				return nil, fmt.Errorf("$ref %s: no such definition", n.ref)
			}
		}
	}
	return &FileSchema{root: root}, nil
}

// schemaError is one complaint: the instance location, the message, and
// for an unknown field its name.
type schemaError struct {
	location []string
	message  string
	unknown  string
}

// validate lists v's complaints against the schema (none: valid). v is
// JSON as nodeValue makes it: maps, slices, strings, bools, nil and
// json.Number.
func (s *FileSchema) validate(v any) []schemaError {
	var out []schemaError
	s.root.validate(v, nil, &out)
	return out
}

// Validate is nil when v is valid, else an error naming every complaint.
func (s *FileSchema) Validate(v any) error {
	errs := s.validate(v)
	if len(errs) == 0 {
		return nil
	}
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = "/" + strings.Join(e.location, "/") + ": " + e.message
	}
	return fmt.Errorf("%s", strings.Join(parts, "\n"))
}

// jsonTypes are JSON Schema's type names.
var jsonTypes = []string{"null", "boolean", "number", "integer", "string", "array", "object"}

// typeName is v's JSON type as the messages name it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func (n *schemaNode) validate(v any, loc []string, out *[]schemaError) {
	add := func(format string, args ...any) {
		*out = append(*out, schemaError{location: append([]string(nil), loc...), message: englishPrinter.Sprintf(format, args...)})
	}
	if n.refNode != nil {
		n.refNode.validate(v, loc, out)
	}
	if len(n.types) > 0 {
		t := typeName(v)
		ok := false
		for _, want := range n.types {
			if want == t || want == "integer" && t == "number" && isInteger(v.(json.Number)) {
				ok = true
			}
		}
		if !ok {
			add("got %s, want %s", t, strings.Join(n.types, " or "))
			return
		}
	}
	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			if e == v {
				found = true
			}
		}
		if !found {
			want := make([]string, len(n.enum))
			for i, e := range n.enum {
				want[i] = display(e)
			}
			if len(want) == 1 {
				add("value must be %s", want[0])
			} else {
				add("value must be one of %s", strings.Join(want, ", "))
			}
			return
		}
	}
	switch v := v.(type) {
	case map[string]any:
		if n.minProperties != nil && len(v) < *n.minProperties {
			add("minProperties: got %d, want %d", len(v), *n.minProperties)
		}
		var missing []string
		for _, r := range n.required {
			if _, ok := v[r]; !ok {
				missing = append(missing, quote(r))
			}
		}
		if len(missing) == 1 {
			add("missing property %s", missing[0])
		} else if len(missing) > 1 {
			add("missing properties %s", strings.Join(missing, ", "))
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var unknown []string
		for _, k := range keys {
			ploc := append(loc[:len(loc):len(loc)], k)
			if p, ok := n.properties[k]; ok {
				p.validate(v[k], ploc, out)
			} else if n.additionalProperties != nil {
				n.additionalProperties.validate(v[k], ploc, out)
			} else if n.additionalFalse {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			q := make([]string, len(unknown))
			for i, u := range unknown {
				q[i] = quote(u)
			}
			add("additional properties %s not allowed", strings.Join(q, ", "))
			(*out)[len(*out)-1].unknown = unknown[0]
		}
	case []any:
		if n.minItems != nil && len(v) < *n.minItems {
			add("minItems: got %d, want %d", len(v), *n.minItems)
		}
		if n.items != nil {
			for i, e := range v {
				n.items.validate(e, append(loc[:len(loc):len(loc)], strconv.Itoa(i)), out)
			}
		}
	case string:
		if n.minLength != nil {
			if got := utf8.RuneCountInString(v); got < *n.minLength {
				add("minLength: got %d, want %d", got, *n.minLength)
			}
		}
		if n.pattern != nil && !n.pattern.MatchString(v) {
			add("%s does not match pattern %s", quote(v), quote(n.pattern.String()))
		}
	case json.Number:
		f, _ := v.Float64()
		if n.minimum != nil && f < *n.minimum {
			add("minimum: got %v, want %v", f, *n.minimum)
		}
		if n.maximum != nil && f > *n.maximum {
			add("maximum: got %v, want %v", f, *n.maximum)
		}
		if n.exclusiveMinimum != nil && f <= *n.exclusiveMinimum {
			add("exclusiveMinimum: got %v, want %v", f, *n.exclusiveMinimum)
		}
	}
}

func isInteger(x json.Number) bool {
	f, err := x.Float64()
	return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
}

// quote is s in single quotes, as the messages quote.
func quote(s string) string {
	s = strconv.Quote(s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

// display is a primitive value as the messages show it.
func display(v any) string {
	if s, ok := v.(string); ok {
		return quote(s)
	}
	return fmt.Sprint(v)
}
