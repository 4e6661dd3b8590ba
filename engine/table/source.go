package table

import "strconv"

// Source is where an object was read from. The zero value means unknown.
type Source struct {
	// File is the path of the manifest, as given to the loader.
	File string `json:"file,omitempty"`
	// Line is the 1-based line where the object's document starts (0: unknown).
	Line int `json:"line,omitempty"`
	// Column is the 1-based column of the object's first field on Line, or,
	// narrowed by At, of the field's key or list item (0: unknown).
	Column int `json:"column,omitempty"`
	// APIVersion is the apiVersion the object was written with, when it was
	// converted on load (for example gateway.networking.k8s.io/v1beta1).
	APIVersion string `json:"apiVersion,omitempty"`
	// Fields maps the paths of list items that findings and traces point at
	// (spec.listeners[i], spec.parentRefs[i], spec.rules[i]) to where they
	// are written. nil: unknown (use Line and Column).
	Fields map[string]FieldPos `json:"-"`
}

// FieldPos is where a field is written: the 1-based line and column of its
// key, or of a list item's first field (0: unknown). Its int32s keep
// Source.Fields' values the size one int line took before columns.
type FieldPos struct {
	Line, Column int32
}

// At returns the source narrowed to a field path such as
// "spec.listeners[2]": the same file with that field's line and column
// when known.
func (s Source) At(path string) Source {
	if pos, ok := s.Fields[path]; ok {
		s.Line, s.Column = int(pos.Line), int(pos.Column)
	}
	s.Fields = nil
	return s
}

// String renders the source as file:line, or "" when unknown.
func (s Source) String() string {
	if s.File == "" {
		return ""
	}
	if s.Line == 0 {
		return s.File
	}
	return s.File + ":" + strconv.Itoa(s.Line)
}

// ObjectKey names one object: its Kind (as gwdev knows it, e.g. "HTTPRoute"),
// namespace and name.
type ObjectKey struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String renders the key as Kind/namespace/name (Kind/name when cluster scoped).
func (k ObjectKey) String() string {
	if k.Namespace == "" {
		return k.Kind + "/" + k.Name
	}
	return k.Kind + "/" + k.Namespace + "/" + k.Name
}
