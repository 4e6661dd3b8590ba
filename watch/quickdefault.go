package watch

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
)

// The apiserver's defaulting (defaulting.Default and
// PruneNonNullableNullsWithoutDefaults) and list-type validation
// (listtype.ValidateListSetsAndMaps) walk Structural.Properties, a map of
// values, and take the address of a copy of every property they visit (and
// the list-type check builds a field path for every field): 300 MB
// allocated for 10,000 HTTPRoutes. The functions here do the same walks over
// quickSchema.properties. TestQuickDefaultingMatchesAPIServer keeps them
// equal to the apiserver's.

// fieldSchema is the schema of field k of an object of schema s, as
// PruneNonNullableNullsWithoutDefaults finds it (nil: none).
func (q *quickSchema) fieldSchema(s *structuralschema.Structural, k string) *structuralschema.Structural {
	if s == nil {
		return nil
	}
	if p, ok := q.properties[s][k]; ok {
		return p
	}
	if s.AdditionalProperties != nil {
		return s.AdditionalProperties.Structural
	}
	return nil
}

// pruneNulls drops nulls of fields that are neither nullable nor defaulted,
// as defaulting.PruneNonNullableNullsWithoutDefaults does.
func (q *quickSchema) pruneNulls(x any, s *structuralschema.Structural) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			q.pruneNullField(x, k, v, s)
		}
	case []any:
		var items *structuralschema.Structural
		if s != nil {
			items = s.Items
		}
		for _, v := range x {
			q.pruneNulls(v, items)
		}
	}
}

// pruneNullField is pruneNulls for the field k of x (v: its value), an
// object of schema s.
func (q *quickSchema) pruneNullField(x map[string]any, k string, v any, s *structuralschema.Structural) {
	schema := q.fieldSchema(s, k)
	if dropsNull(v, schema) {
		delete(x, k)
	} else {
		q.pruneNulls(v, schema)
	}
}

// dropsNull reports whether pruneNulls drops a field of schema s whose
// value is v: a null of a field neither nullable nor defaulted.
func dropsNull(v any, s *structuralschema.Structural) bool {
	return v == nil && s != nil && !s.Nullable && s.Default.Object == nil
}

// isNonNullableNull is defaulting's test for a null to replace by the
// default.
func isNonNullableNull(x any, s *structuralschema.Structural) bool {
	return x == nil && s != nil && !s.Nullable
}

// applyDefaults fills in defaults as defaulting.Default does.
func (q *quickSchema) applyDefaults(x any, s *structuralschema.Structural) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		q.applyOwnDefaults(x, s)
		props := q.properties[s]
		for k := range x {
			if p, found := props[k]; found {
				q.applyDefaults(x[k], p)
			} else if s.AdditionalProperties != nil {
				ap := s.AdditionalProperties.Structural
				if isNonNullableNull(x[k], ap) {
					x[k] = runtime.DeepCopyJSONValue(ap.Default.Object)
				}
				q.applyDefaults(x[k], ap)
			}
		}
	case []any:
		for i := range x {
			if isNonNullableNull(x[i], s.Items) {
				x[i] = runtime.DeepCopyJSONValue(s.Items.Default.Object)
			}
			q.applyDefaults(x[i], s.Items)
		}
	}
}

// applyOwnDefaults fills in the defaults of x's own fields (x is an object
// of schema s), the first step of applyDefaults at x.
func (q *quickSchema) applyOwnDefaults(x map[string]any, s *structuralschema.Structural) {
	for _, d := range q.defaulted[s] {
		if v, found := x[d.name]; !found || isNonNullableNull(v, d.schema) {
			x[d.name] = runtime.DeepCopyJSONValue(d.schema.Default.Object)
		}
	}
}

// defaultAndCheck is applyDefaults(x, s) followed by check(x, s) in one
// walk: it fills in defaults as applyDefaults does and reports what check
// would report of the result (the two walks were 13% of the load's CPU).
// own false takes x's own defaults as filled in already (admit fills them
// in at the root before it drops status). A node is checked after its
// fields and items are defaulted, so that it is checked as it ends up (a
// list-map's keys can be defaulted); the walk goes on where the check has
// failed, since the defaults are still to be filled in.
func (q *quickSchema) defaultAndCheck(x any, s *structuralschema.Structural, own bool) bool {
	if s == nil {
		return true
	}
	ok := true
	switch x := x.(type) {
	case map[string]any:
		if own {
			q.applyOwnDefaults(x, s)
		}
		props := q.properties[s]
		for k := range x {
			if p, found := props[k]; found {
				if !q.defaultAndCheck(x[k], p, true) {
					ok = false
				}
				// check's list-type check against additional properties
				// (a structural schema has not both).
				if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil && !q.listTypesValidValue(x[k], ap.Structural) {
					ok = false
				}
			} else if s.AdditionalProperties != nil {
				ap := s.AdditionalProperties.Structural
				if isNonNullableNull(x[k], ap) {
					x[k] = runtime.DeepCopyJSONValue(ap.Default.Object)
				}
				if !q.defaultAndCheck(x[k], ap, true) {
					ok = false
				}
			}
		}
	case []any:
		for i := range x {
			if isNonNullableNull(x[i], s.Items) {
				x[i] = runtime.DeepCopyJSONValue(s.Items.Default.Object)
			}
			if !q.defaultAndCheck(x[i], s.Items, true) {
				ok = false
			}
		}
	}
	return ok && q.checkNode(x, s)
}

// listTypesValid reports whether listtype.ValidateListSetsAndMaps certainly
// finds nothing wrong with obj: every list of type set or map has distinct
// scalar items or keys, and a map list only objects. When it returns false
// the caller runs the apiserver's check, which finds and words the
// problem (or finds none: false only means "not certain").
func (q *quickSchema) listTypesValid(obj map[string]any, s *structuralschema.Structural) bool {
	if s == nil || obj == nil {
		return true
	}
	props := q.properties[s]
	for k, v := range obj {
		if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil && !q.listTypesValidValue(v, ap.Structural) {
			return false
		}
		if p, ok := props[k]; ok && !q.listTypesValidValue(v, p) {
			return false
		}
	}
	return true
}

func (q *quickSchema) listTypesValidValue(x any, s *structuralschema.Structural) bool {
	switch x := x.(type) {
	case map[string]any:
		return q.listTypesValid(x, s)
	case []any:
		if s.XListType != nil && !listItemsDistinct(x, *s.XListType, s.XListMapKeys) {
			return false
		}
		if s.Items != nil {
			for _, item := range x {
				if !q.listTypesValidValue(item, s.Items) {
					return false
				}
			}
		}
	}
	return true
}

// listItemsDistinct reports whether the items of a list of listType are
// certainly unique: scalars for a set, objects with distinct scalar values
// of the one key for a map. Lists of other types have nothing to check.
func listItemsDistinct(list []any, listType string, mapKeys []string) bool {
	var keys []any
	switch listType {
	case "set":
		keys = list
	case "map":
		for _, item := range list {
			if _, ok := item.(map[string]any); item != nil && !ok {
				return false
			}
		}
		if len(list) <= 1 {
			return true
		}
		if len(mapKeys) != 1 {
			return false
		}
		keys = make([]any, len(list))
		for i, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				return false // null: let the apiserver's check say
			}
			key, ok := m[mapKeys[0]]
			if !ok {
				return false
			}
			keys[i] = key
		}
	default:
		return true
	}
	if len(keys) <= 1 {
		return true
	}
	for i, a := range keys {
		if !isScalar(a) {
			return false
		}
		for _, b := range keys[:i] {
			if a == b {
				return false
			}
		}
	}
	return true
}

// isScalar reports whether x is a JSON scalar, which the apiserver's
// list-type check compares with ==.
func isScalar(x any) bool {
	switch x.(type) {
	case string, int64, float64, bool:
		return true
	}
	return false
}
