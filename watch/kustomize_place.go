package watch

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/gwdev/gwdev/engine"
)

// buildPlacer moves sources and problems from a build's output to the
// files the objects came from: the object's document in its origin file
// (kustomize's origin annotation), a field to its line there, and a field
// the origin does not have to the patch among the files read that sets it.
// What cannot be placed stays at the built object ("kustomize build DIR"
// and the line of kubectl kustomize's output).
type buildPlacer struct {
	b      *kustomizeBuild
	absDir string
	parsed map[string][]sourceDoc // by absolute path
	// built are the build's output documents, parsed when first needed.
	built []sourceDoc
}

// sourceDoc is one parsed document of a file a build read.
type sourceDoc struct {
	root *yaml.Node
	// offset is the number of lines before the document's chunk.
	offset int
	// line is the 1-based line of the document's first field.
	line       int
	kind, name string
}

func newBuildPlacer(b *kustomizeBuild) *buildPlacer {
	abs, _ := filepath.Abs(b.dir)
	return &buildPlacer{b: b, absDir: abs, parsed: map[string][]sourceDoc{}}
}

// doc returns the built object whose text holds line (nil: none).
func (pl *buildPlacer) doc(line int) *builtDoc {
	docs := pl.b.docs
	i := sort.Search(len(docs), func(i int) bool { return docs[i].line > line })
	if i == 0 {
		return nil
	}
	return &docs[i-1]
}

// docs parses a file the build read (by its root-joined path).
func (pl *buildPlacer) docs(path string) []sourceDoc {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	if d, ok := pl.parsed[abs]; ok {
		return d
	}
	out := parseDocs(pl.b.read[abs])
	pl.parsed[abs] = out
	return out
}

// parseDocs parses every document of a file's content.
func parseDocs(data []byte) []sourceDoc {
	var out []sourceDoc
	for _, c := range splitDocuments(data) {
		dec, err := yaml.NewLoader(bytes.NewReader(c.data))
		if err != nil {
			continue
		}
		var n yaml.Node
		if err := dec.Load(&n); err != nil {
			continue
		}
		root := deref(&n)
		if root.Kind != yaml.MappingNode {
			continue
		}
		d := sourceDoc{root: root, offset: c.line - 1, line: root.Line + c.line - 1}
		d.kind, _ = scalarAt(root, "kind")
		d.name, _ = scalarAt(root, "metadata.name")
		out = append(out, d)
	}
	return out
}

// scalarAt returns the scalar value at path under n.
func scalarAt(n *yaml.Node, path string) (string, bool) {
	v := nodeAt(n, path, yaml.ScalarNode)
	if v == nil {
		return "", false
	}
	return v.Value, true
}

// originDoc finds the document of kind and (built) name in d's origin
// file: the only one of that kind, else the one named so, else the one
// whose name the built name contains (namePrefix, nameSuffix).
func (pl *buildPlacer) originDoc(d *builtDoc, kind, name string) *sourceDoc {
	return matchDoc(pl.docs(d.origin), kind, name)
}

func matchDoc(docs []sourceDoc, kind, name string) *sourceDoc {
	var same []*sourceDoc
	for i := range docs {
		if docs[i].kind == kind {
			same = append(same, &docs[i])
		}
	}
	if len(same) == 1 {
		return same[0]
	}
	var best *sourceDoc
	for _, s := range same {
		switch {
		case s.name == name:
			return s
		case s.name != "" && strings.Contains(name, s.name) && (best == nil || len(s.name) > len(best.name)):
			best = s
		}
	}
	return best
}

// placeObject moves an object's source to its origin document, keeping
// the line of every field the origin has.
func (pl *buildPlacer) placeObject(o *loaded) {
	d := pl.doc(o.src.Line)
	if d == nil || d.origin == "" {
		return
	}
	od := pl.originDoc(d, o.key.Kind, o.key.Name)
	if od == nil {
		return
	}
	src := engine.Source{File: d.origin, Line: od.line, Column: deref(od.root).Column, APIVersion: o.src.APIVersion}
	for path := range o.src.Fields {
		if n, _, full := locatePath(od.root, path); full {
			if src.Fields == nil {
				src.Fields = map[string]engine.FieldPos{}
			}
			src.Fields[path] = fieldPos(n, od.offset)
		}
	}
	o.src = src
}

// placeProblem moves a problem about a built object to the file and line
// that wrote the field: the origin document, else a patch read by the
// build that has the field, else it stays at the built object and names
// its origin.
func (pl *buildPlacer) placeProblem(p *Problem) {
	if p.File != pl.b.name {
		return
	}
	d := pl.doc(p.Line)
	if d == nil || d.origin == "" {
		return
	}
	od := pl.originDoc(d, p.Object.Kind, p.Object.Name)
	if od == nil {
		return
	}
	if p.Field == "" {
		p.File, p.Line, p.Column = d.origin, od.line, 1
		return
	}
	built := pl.builtValue(d, p.Field)
	n, v, full := locatePath(od.root, p.Field)
	if full && (built == nil || sameValue(v, built)) {
		p.File, p.Line, p.Column = d.origin, n.Line+od.offset, n.Column
		return
	}
	if file, n, off := pl.patchWith(d.origin, p.Object.Kind, p.Object.Name, p.Field, built); n != nil {
		p.File, p.Line, p.Column = file, n.Line+off, n.Column
		return
	}
	if full {
		p.Message += fmt.Sprintf(" (the object comes from %s:%d, where this field has another value: the build changed it)", d.origin, n.Line+od.offset)
		return
	}
	p.Message += fmt.Sprintf(" (the object comes from %s:%d; the field is not written there)", d.origin, od.line)
}

// builtValue is the value at field in the built object d (nil: unknown).
func (pl *buildPlacer) builtValue(d *builtDoc, field string) *yaml.Node {
	if pl.built == nil {
		pl.built = parseDocs(pl.b.data)
	}
	i := slices.IndexFunc(pl.b.docs, func(x builtDoc) bool { return x.line == d.line })
	if i < 0 || i >= len(pl.built) {
		return nil
	}
	if _, v, full := locatePath(pl.built[i].root, field); full {
		return v
	}
	return nil
}

// patchWith looks through the other files the build read for a document
// of the object's kind and name that writes field: the patch that set it.
func (pl *buildPlacer) patchWith(origin, kind, name, field string, built *yaml.Node) (string, *yaml.Node, int) {
	originAbs, _ := filepath.Abs(origin)
	for _, abs := range pl.b.readFiles() {
		if abs == originAbs || pl.b.read[abs] == nil || isKustomizationName(filepath.Base(abs)) {
			continue
		}
		file := pl.display(abs)
		od := matchDoc(pl.docs(file), kind, name)
		if od == nil {
			continue
		}
		if n, v, full := locatePath(od.root, field); full && (built == nil || sameValue(v, built)) {
			return file, n, od.offset
		}
	}
	return "", nil, 0
}

// display words an absolute path the way the walk names files: joined to
// the folder built as given.
func (pl *buildPlacer) display(abs string) string {
	rel, err := filepath.Rel(pl.absDir, abs)
	if err != nil {
		return abs
	}
	return filepath.Join(pl.b.dir, rel)
}
