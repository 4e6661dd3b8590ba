package watch

import (
	"slices"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// Enum returns the values the CRD schema l judges objects of apiVersion
// and kind by allows for the field at path (mapping keys; the items of a
// list on the way are walked through: "spec", "rules", "matches", "path",
// "type"), sorted. nil: the field has no enum, or the kind is not a CRD
// kind l serves in that version. Editors complete with it (gwdev lsp), so
// the values are the bundle's that --crds or gwdev.yaml names.
func (l *Loader) Enum(apiVersion, kind string, path []string) []string {
	g := parseGVK(apiVersion, kind)
	v, res := lookup(g)
	if res != lookupServed || v.spec.crd == "" {
		return nil
	}
	var (
		s   *crdSchema
		err error
	)
	if l.bundle != nil {
		c := l.bundle.crd(g.group, g.kind)
		if c == nil || !c.serves(g.version) {
			return nil
		}
		s, err = l.bundle.set.schema(c.file, g.version)
	} else {
		s, err = l.crds.schema(v.spec.crd, v.schemaVersion)
	}
	if err != nil || s == nil || s.structural == nil {
		return nil
	}
	st := s.structural
	items := func(st *structuralschema.Structural) *structuralschema.Structural {
		for st.Items != nil {
			st = st.Items
		}
		return st
	}
	for _, k := range path {
		p, ok := items(st).Properties[k]
		if !ok {
			return nil
		}
		st = &p
	}
	st = items(st)
	if st.ValueValidation == nil {
		return nil
	}
	var out []string
	for _, e := range st.ValueValidation.Enum {
		if s, ok := e.Object.(string); ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}
