package watch

import (
	"math"
	"unicode/utf8"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// quickSchema answers "is this object certainly valid against the OpenAPI
// schema?" an order of magnitude faster than kube-openapi's validator, which
// builds validators on the fly for every field of every object. When it
// answers no (or meets a keyword it does not check: allOf, anyOf, oneOf,
// not, string formats, embedded resources), the object is validated again
// with kube-openapi, which words the errors exactly as the apiserver does.
// It must therefore never accept what kube-openapi rejects; it may reject
// what kube-openapi accepts (that only costs time).
type quickSchema struct {
	root *structuralschema.Structural
	// patterns holds the compiled pattern of each value validation that
	// has one (nil: a pattern Go cannot compile), by pointer: hashing the
	// pattern's text (a hostname's is 100 bytes) on every string checked
	// took a third as long as matching.
	patterns map[*structuralschema.ValueValidation]*patternMatcher
	// compiled holds the patterns by text while the schema is prepared,
	// so that each is compiled once.
	compiled map[string]*patternMatcher
	// properties holds, for every schema node of the tree, pointers to
	// its properties: Structural.Properties holds values, and taking the
	// address of a copy on every visit allocated 100 MB for 10,000 routes.
	properties map[*structuralschema.Structural]map[string]*structuralschema.Structural
	// defaulted holds, for every schema node with properties that have
	// a default, those properties (applyDefaults went through every
	// property of every object it visited to find them).
	defaulted map[*structuralschema.Structural][]namedSchema
}

// namedSchema is a property's name and schema.
type namedSchema struct {
	name   string
	schema *structuralschema.Structural
}

func newQuickSchema(s *structuralschema.Structural) *quickSchema {
	q := &quickSchema{root: s, patterns: map[*structuralschema.ValueValidation]*patternMatcher{},
		compiled:   map[string]*patternMatcher{},
		properties: map[*structuralschema.Structural]map[string]*structuralschema.Structural{},
		defaulted:  map[*structuralschema.Structural][]namedSchema{}}
	q.prepare(s)
	q.compiled = nil
	return q
}

// prepare compiles the patterns of s and its descendants and fills
// q.properties for them.
func (q *quickSchema) prepare(s *structuralschema.Structural) {
	if s == nil {
		return
	}
	if v := s.ValueValidation; v != nil && v.Pattern != "" {
		re, done := q.compiled[v.Pattern]
		if !done {
			re = newPatternMatcher(v.Pattern)
			q.compiled[v.Pattern] = re
		}
		q.patterns[v] = re
	}
	q.prepare(s.Items)
	if len(s.Properties) > 0 {
		props := make(map[string]*structuralschema.Structural, len(s.Properties))
		for k := range s.Properties {
			p := s.Properties[k]
			props[k] = &p
			if p.Default.Object != nil {
				q.defaulted[s] = append(q.defaulted[s], namedSchema{k, &p})
			}
			q.prepare(&p)
		}
		q.properties[s] = props
	}
	if s.AdditionalProperties != nil {
		q.prepare(s.AdditionalProperties.Structural)
	}
}

// valid reports whether obj certainly passes OpenAPI validation and
// list-type validation (listTypesValid's check, made in the same walk: the
// two walks were 10% of the load's CPU). When it returns false the caller
// runs both of the apiserver's validators, which find and word what is
// wrong (or find nothing: false only means "not certain").
func (q *quickSchema) valid(obj any) bool { return q.check(obj, q.root) }

func (q *quickSchema) check(x any, s *structuralschema.Structural) bool {
	if s == nil {
		return true
	}
	if !q.checkNode(x, s) {
		return false
	}
	switch x := x.(type) {
	case map[string]any:
		props := q.properties[s]
		for k, val := range x {
			if p, ok := props[k]; ok {
				if !q.check(val, p) {
					return false
				}
				// listTypesValid checks a field against additional
				// properties too (a structural schema has not both).
				if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil && !q.listTypesValidValue(val, ap.Structural) {
					return false
				}
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
				if !q.check(val, s.AdditionalProperties.Structural) {
					return false
				}
			}
		}
	case []any:
		for _, item := range x {
			if !q.check(item, s.Items) {
				return false
			}
		}
	}
	return true
}

// checkNode is check of x alone, not of its fields or items (s is not
// nil): its type, value validations and list type.
func (q *quickSchema) checkNode(x any, s *structuralschema.Structural) bool {
	if x == nil {
		return s.Nullable
	}
	if s.XEmbeddedResource {
		return false
	}
	if s.XIntOrString {
		switch x.(type) {
		case int64, string:
		default:
			return false
		}
	} else if !checkType(x, s.Type) {
		return false
	}
	if v := s.ValueValidation; v != nil && !q.checkValue(x, v) {
		return false
	}
	if list, ok := x.([]any); ok && s.XListType != nil && !listItemsDistinct(list, *s.XListType, s.XListMapKeys) {
		return false
	}
	return true
}

func checkType(x any, typ string) bool {
	switch typ {
	case "":
		return true
	case "object":
		_, ok := x.(map[string]any)
		return ok
	case "array":
		_, ok := x.([]any)
		return ok
	case "string":
		_, ok := x.(string)
		return ok
	case "integer":
		_, ok := x.(int64)
		return ok
	case "number":
		switch x.(type) {
		case int64, float64:
			return true
		}
		return false
	case "boolean":
		_, ok := x.(bool)
		return ok
	}
	return false
}

func (q *quickSchema) checkValue(x any, v *structuralschema.ValueValidation) bool {
	if len(v.AllOf) > 0 || len(v.AnyOf) > 0 || len(v.OneOf) > 0 || v.Not != nil || v.UniqueItems {
		return false
	}
	if len(v.Enum) > 0 && !inEnum(x, v.Enum) {
		return false
	}
	switch x := x.(type) {
	case string:
		if v.Format != "" {
			return false
		}
		if v.MaxLength != nil || v.MinLength != nil {
			n := int64(utf8.RuneCountInString(x))
			if (v.MaxLength != nil && n > *v.MaxLength) || (v.MinLength != nil && n < *v.MinLength) {
				return false
			}
		}
		if v.Pattern != "" {
			re := q.patterns[v]
			if re == nil || !re.MatchString(x) {
				return false
			}
		}
	case int64:
		if v.Format == "int32" && (x < math.MinInt32 || x > math.MaxInt32) {
			return false
		}
		if !checkNumber(float64(x), v) {
			return false
		}
	case float64:
		if v.Format == "int32" || v.Format == "int64" || !checkNumber(x, v) {
			return false
		}
	case []any:
		n := int64(len(x))
		if (v.MaxItems != nil && n > *v.MaxItems) || (v.MinItems != nil && n < *v.MinItems) {
			return false
		}
	case map[string]any:
		n := int64(len(x))
		if (v.MaxProperties != nil && n > *v.MaxProperties) || (v.MinProperties != nil && n < *v.MinProperties) {
			return false
		}
		for _, r := range v.Required {
			if _, ok := x[r]; !ok {
				return false
			}
		}
	}
	return true
}

func checkNumber(f float64, v *structuralschema.ValueValidation) bool {
	if v.Maximum != nil && (f > *v.Maximum || (v.ExclusiveMaximum && f == *v.Maximum)) {
		return false
	}
	if v.Minimum != nil && (f < *v.Minimum || (v.ExclusiveMinimum && f == *v.Minimum)) {
		return false
	}
	if v.MultipleOf != nil {
		return false
	}
	return true
}

// inEnum compares like kube-openapi for the scalar enums CRDs use; any
// other enum goes to the slow path.
func inEnum(x any, enum []structuralschema.JSON) bool {
	s, ok := x.(string)
	if !ok {
		return false
	}
	for _, e := range enum {
		if es, ok := e.Object.(string); ok && es == s {
			return true
		}
	}
	return false
}
