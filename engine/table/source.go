package table

import "strconv"

// Source is where an object was read from. The zero value means unknown.
type Source struct {
	// File is the path of the manifest, as given to the loader.
	File string `json:"file,omitempty"`
	// Line is the 1-based line where the object's document starts (0: unknown).
	Line int `json:"line,omitempty"`
	// APIVersion is the apiVersion the object was written with, when it was
	// converted on load (for example gateway.networking.k8s.io/v1beta1).
	APIVersion string `json:"apiVersion,omitempty"`
	// Fields maps the paths of list items that findings and traces point at
	// (spec.listeners[i], spec.parentRefs[i], spec.rules[i]) to their
	// 1-based lines. nil: unknown (use Line).
	Fields map[string]int `json:"-"`
}

// At returns the source narrowed to a field path such as
// "spec.listeners[2]": the same file with that field's line when known.
func (s Source) At(path string) Source {
	if line, ok := s.Fields[path]; ok {
		s.Line = line
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
