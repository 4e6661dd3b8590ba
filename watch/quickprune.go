package watch

import (
	"slices"
	"strconv"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// pruning.PruneWithOptions, which drops the fields a CRD's schema does not
// know and names them, walks Structural.Properties, a map of values, and
// copies the Structural of every field it visits (232 bytes each): 66 MB
// allocated for 10,000 HTTPRoutes, 7% of the load's CPU. prune does the same
// walk over quickSchema.properties and builds a field path only for a field
// it drops. TestQuickPruneMatchesAPIServer and FuzzQuickPrune keep the two
// equal.

// metaField reports whether k is one of the fields pruning never drops at
// the root of a resource (pruning's metaFields).
func metaField(k string) bool { return k == "apiVersion" || k == "kind" || k == "metadata" }

// pruneWalk is one walk of prune: the path of the node it is at and the
// unknown fields found so far.
type pruneWalk struct {
	q       *quickSchema
	path    []byte
	unknown []string
	// nulls: drop nulls as pruneNulls does, in the same walk.
	nulls bool
}

// prune removes the fields of obj that s does not specify, as
// pruning.PruneWithOptions(obj, s, true, {TrackUnknownFieldPaths: true})
// does (obj is a resource: apiVersion, kind and metadata at its root, and
// at embedded resources, are left alone), and returns their paths, sorted
// ("spec.rules[0].matches[1].typo"). s must be q's root or one of its
// descendants.
func (q *quickSchema) prune(obj any, s *structuralschema.Structural) []string {
	if s == nil {
		s = &structuralschema.Structural{}
	}
	w := pruneWalk{q: q, path: make([]byte, 0, 64)}
	w.prune(obj, s, true)
	slices.Sort(w.unknown)
	return w.unknown
}

// pruneWithNulls is prune followed by pruneNulls (the apiserver's order:
// unknown fields are pruned when the object is decoded, nulls before it
// is defaulted) in one walk: the two walks were 7% of the load's CPU.
// Each drops fields the other keeps (unknown ones; known ones set to
// null), so one walk drops what the two did. s must be q's root.
func (q *quickSchema) pruneWithNulls(obj any, s *structuralschema.Structural) []string {
	w := pruneWalk{q: q, path: make([]byte, 0, 64), nulls: true}
	w.prune(obj, s, true)
	slices.Sort(w.unknown)
	return w.unknown
}

// record notes the field k of the node at w.path as unknown.
func (w *pruneWalk) record(k string) {
	l := len(w.path)
	w.appendKey(k)
	w.unknown = append(w.unknown, string(w.path))
	w.path = w.path[:l]
}

// appendKey extends the path by the field k, as
// UnknownFieldPathOptions.AppendKey does.
func (w *pruneWalk) appendKey(k string) {
	if len(w.path) > 0 {
		w.path = append(w.path, '.')
	}
	w.path = append(w.path, k...)
}

// appendIndex extends the path by the list index i.
func (w *pruneWalk) appendIndex(i int) {
	w.path = append(w.path, '[')
	w.path = strconv.AppendInt(w.path, int64(i), 10)
	w.path = append(w.path, ']')
}

// prune is pruning's prune; embedded is s.XEmbeddedResource, which
// PruneWithOptions forces to true at the root.
func (w *pruneWalk) prune(x any, s *structuralschema.Structural, embedded bool) {
	if s != nil && s.XPreserveUnknownFields {
		w.skipPrune(x, s, embedded)
		return
	}
	l := len(w.path)
	switch x := x.(type) {
	case map[string]any:
		if s == nil {
			for k := range x {
				w.record(k)
				delete(x, k)
			}
			return
		}
		props := w.q.propertiesOf(s)
		for k, v := range x {
			if embedded && metaField(k) {
				if w.nulls {
					w.q.pruneNullField(x, k, v, s)
				}
				continue
			}
			if !w.pruneKnown(x, k, v, s, props) {
				if !metaField(k) || l > 0 {
					w.record(k)
				}
				delete(x, k)
			}
		}
	case []any:
		var items *structuralschema.Structural
		if s != nil {
			items = s.Items
		}
		for i, v := range x {
			w.appendIndex(i)
			w.prune(v, items, items != nil && items.XEmbeddedResource)
			w.path = w.path[:l]
		}
	}
}

// pruneKnown prunes the value v of field k of x, an object of schema s
// (props: its properties), when s knows the field, by name or as an
// additional property, and reports whether it did. With w.nulls it drops
// the field when pruneNulls would.
func (w *pruneWalk) pruneKnown(x map[string]any, k string, v any, s *structuralschema.Structural, props map[string]*structuralschema.Structural) bool {
	var fs *structuralschema.Structural
	if p, ok := props[k]; ok {
		fs = p
	} else if s.AdditionalProperties != nil {
		fs = s.AdditionalProperties.Structural
	} else {
		return false
	}
	if w.nulls && dropsNull(v, fs) {
		delete(x, k)
		return true
	}
	l := len(w.path)
	w.appendKey(k)
	w.prune(v, fs, fs != nil && fs.XEmbeddedResource)
	w.path = w.path[:l]
	return true
}

// skipPrune is pruning's skipPrune, for a node that preserves unknown
// fields: its known fields are pruned, the others kept.
func (w *pruneWalk) skipPrune(x any, s *structuralschema.Structural, embedded bool) {
	if s == nil {
		return
	}
	l := len(w.path)
	switch x := x.(type) {
	case map[string]any:
		props := w.q.propertiesOf(s)
		for k, v := range x {
			if embedded && metaField(k) {
				if w.nulls {
					w.q.pruneNullField(x, k, v, s)
				}
				continue
			}
			w.pruneKnown(x, k, v, s, props)
		}
	case []any:
		for i, v := range x {
			w.appendIndex(i)
			w.skipPrune(v, s.Items, s.Items != nil && s.Items.XEmbeddedResource)
			w.path = w.path[:l]
		}
	}
}

// propertiesOf returns pointers to the properties of s: q.properties's,
// or, for a schema q did not prepare, pointers to copies.
func (q *quickSchema) propertiesOf(s *structuralschema.Structural) map[string]*structuralschema.Structural {
	props, ok := q.properties[s]
	if ok || len(s.Properties) == 0 {
		return props
	}
	props = make(map[string]*structuralschema.Structural, len(s.Properties))
	for k := range s.Properties {
		p := s.Properties[k]
		props[k] = &p
	}
	return props
}
