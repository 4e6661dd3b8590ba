package watch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
)

// docResult is what one document produced.
type docResult struct {
	objs     []loaded
	problems []Problem
	skipped  []Skipped
}

// docPos maps node positions of a chunk to positions in its file.
type docPos struct {
	file   string
	offset int // lines before the chunk
}

func (d docPos) problem(n *yaml.Node, key engine.ObjectKey, is issue) Problem {
	return Problem{File: d.file, Line: n.Line + d.offset, Column: n.Column, Object: key, Field: is.field, Message: is.msg, Pruned: is.pruned, Kind: is.kind}
}

// docScratch is what a loader worker reuses from one document to the next
// (Loader.scratch holds them): the fast parser's nodes and the table of
// strings objects get.
type docScratch struct {
	nodes nodeArena
	strs  strTable
	// path is the converter's path stack (toUnstructuredPath).
	path []pathElem
}

// loadDocument parses one chunk (normally one YAML document) and loads the
// objects in it. A syntax error ends the chunk; other chunks are unaffected.
// Maps come from and go back to free (nil: none are reused).
func (l *Loader) loadDocument(file string, c chunk, free *mapFreeList) docResult {
	var r docResult
	pos := docPos{file: file, offset: c.line - 1}
	scratch, _ := l.scratch.Get().(*docScratch)
	if scratch == nil {
		scratch = &docScratch{}
	}
	defer func() {
		scratch.nodes.reset()
		l.scratch.Put(scratch)
	}()
	if doc, ok := fastParseInto(c.data, &scratch.nodes); ok {
		if doc != nil {
			l.loadNode(&r, pos, doc, scratch, free)
		}
		return r
	}
	dec, err := yaml.NewLoader(bytes.NewReader(c.data))
	if err != nil {
		r.problems = append(r.problems, Problem{File: file, Line: c.line, Message: "yaml: " + err.Error(), Kind: ProblemYAML})
		return r
	}
	for {
		var n yaml.Node
		err := dec.Load(&n)
		if errors.Is(err, io.EOF) {
			return r
		}
		if err != nil {
			r.problems = append(r.problems, syntaxProblem(pos, c, err))
			return r
		}
		l.loadNode(&r, pos, &n, scratch, free)
	}
}

// syntaxProblem places a YAML parser error.
func syntaxProblem(pos docPos, c chunk, err error) Problem {
	p := Problem{File: pos.file, Line: c.line, Message: "yaml: " + err.Error(), Kind: ProblemYAML}
	var le *yaml.LoadError
	if errors.As(err, &le) {
		p.Message = "yaml: " + le.Message
		if le.Mark.Line > 0 {
			p.Line, p.Column = le.Mark.Line+pos.offset, le.Mark.Column
		}
	}
	return p
}

// loadNode loads one parsed document.
func (l *Loader) loadNode(r *docResult, pos docPos, n *yaml.Node, scratch *docScratch, free *mapFreeList) {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 0 {
		return
	}
	root := deref(n)
	if root.Kind == yaml.ScalarNode && scalarValue(root) == nil {
		return // empty document
	}
	if bad, msg := checkAliases(n); bad != nil {
		r.problems = append(r.problems, pos.problem(bad, keyFromNode(root), issue{msg: msg, kind: ProblemYAML}))
		return
	}
	v, nerr := toUnstructuredPath(root, &scratch.strs, free, &scratch.path)
	if nerr != nil {
		r.problems = append(r.problems, pos.problem(nerr.node, keyFromNode(root), issue{field: nerr.path, msg: nerr.msg, kind: ProblemYAML}))
		return
	}
	u, ok := v.(map[string]any)
	if !ok {
		r.problems = append(r.problems, pos.problem(root, engine.ObjectKey{},
			issue{msg: fmt.Sprintf("a manifest must be an object with apiVersion and kind, found a %s", kindName(root)), kind: ProblemHeader}))
		return
	}
	l.loadObject(r, pos, root, u, free)
}

// loadObject loads one object (or the items of a List) from u, whose source
// is node. The maps of a Gateway API object loaded without issues go to
// free (mapfree.go).
func (l *Loader) loadObject(r *docResult, pos docPos, node *yaml.Node, u map[string]any, free *mapFreeList) {
	apiVersion, _ := u["apiVersion"].(string)
	kind, _ := u["kind"].(string)
	namespace, name := metaString(u, "namespace"), metaString(u, "name")
	var written engine.ObjectKey // zero unless the kind is known
	if kind != "" {
		written = engine.ObjectKey{Kind: kind, Namespace: namespace, Name: name}
	}

	if items, isList := u["items"]; isList && strings.HasSuffix(kind, "List") {
		l.loadList(r, pos, node, u, items, free)
		return
	}
	var missing []issue
	for _, f := range []string{"apiVersion", "kind"} {
		switch val := u[f].(type) {
		case string:
			if val == "" {
				missing = append(missing, newIssue(ProblemRequired, f, "Required value"))
			}
		case nil:
			missing = append(missing, newIssue(ProblemRequired, f, "Required value"))
		default:
			missing = append(missing, newIssue(ProblemInvalid, f, fmt.Sprintf("Invalid value: %v: must be a string", val)))
		}
	}
	if len(missing) > 0 {
		for _, is := range missing {
			r.problems = append(r.problems, pos.problem(locate(node, is.field), written, is))
		}
		return
	}

	g := parseGVK(apiVersion, kind)
	v, found := lookup(g)
	switch found {
	case lookupUnknownKind:
		r.skipped = append(r.skipped, Skipped{File: pos.file, Line: node.Line + pos.offset,
			APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name})
		return
	case lookupUnknownVersion:
		msg := fmt.Sprintf("no kind %q is registered for version %q", kind, apiVersion)
		if known := knownVersions(g); len(known) > 0 {
			msg += "; gwdev knows " + strings.Join(known, ", ")
		}
		r.problems = append(r.problems, pos.problem(locate(node, "apiVersion"), written, newIssue(ProblemHeader, "apiVersion", msg)))
		return
	}

	if l.bundle != nil {
		if msg := l.bundle.notServed(g, v); msg != "" {
			ns := namespace
			if ns == "" {
				ns = "default"
			}
			key := objectKey(v.spec, ns, name)
			r.problems = append(r.problems, pos.problem(locate(node, "apiVersion"), key, newIssue(ProblemNotServed, "apiVersion", msg)))
			return
		}
	}

	var (
		obj    metav1.Object
		issues []issue
		note   string
	)
	switch {
	case v.spec.crd != "" && l.bundle != nil:
		obj, issues = l.loadBundleObject(u, v, g)
	case v.spec.crd != "":
		note = channelNote(g, u) // before loading changes u
		obj, issues = l.loadCRDObject(u, v, g)
	default:
		obj, issues = loadCoreObject(u, v.spec)
	}
	key := objectKey(v.spec, metaString(u, "namespace"), name)
	for _, is := range issues {
		r.problems = append(r.problems, pos.problem(locate(node, is.field), key, is))
	}
	// The maps of an object decoded without issues go back to the free
	// list unless its type can hold them (decodeKeepsMaps): core objects'
	// too (20,000 Services' maps were 20 MB of check's allocations for
	// bench/genroutes' folder).
	if free != nil && obj != nil && len(issues) == 0 && !decodeKeepsMaps(v.spec) {
		free.recycle(u)
	}
	if obj == nil {
		return // issues say why; an object with issues but loaded is pruned (loadBundleObject)
	}
	src := engine.Source{File: pos.file, Line: node.Line + pos.offset, Column: node.Column, Fields: fieldLines(node, pos.offset)}
	if v.converted(g) {
		src.APIVersion = apiVersion
	}
	r.objs = append(r.objs, loaded{key: key, src: src, obj: obj, note: note})
}

// loadList loads the items of a List (kind: List, or HTTPRouteList and the
// like). As with kubectl, items of a typed list may leave out apiVersion
// and kind.
func (l *Loader) loadList(r *docResult, pos docPos, node *yaml.Node, u map[string]any, items any, free *mapFreeList) {
	apiVersion, _ := u["apiVersion"].(string)
	kind, _ := u["kind"].(string)
	list, ok := items.([]any)
	if items != nil && !ok {
		r.problems = append(r.problems, pos.problem(locate(node, "items"), engine.ObjectKey{}, newIssue(ProblemInvalid, "items", "Invalid value: must be a list")))
		return
	}
	var seq []*yaml.Node
	if _, n := mappingField(node, "items"); n != nil && deref(n).Kind == yaml.SequenceNode {
		seq = deref(n).Content
	}
	for i, item := range list {
		itemNode := node
		if i < len(seq) {
			itemNode = deref(seq[i])
		}
		m, ok := item.(map[string]any)
		if !ok {
			r.problems = append(r.problems, pos.problem(itemNode, engine.ObjectKey{},
				newIssue(ProblemInvalid, fmt.Sprintf("items[%d]", i), "Invalid value: must be an object")))
			continue
		}
		if kind != "List" {
			if _, set := m["apiVersion"]; !set {
				m["apiVersion"] = apiVersion
			}
			if _, set := m["kind"]; !set {
				m["kind"] = strings.TrimSuffix(kind, "List")
			}
		}
		l.loadObject(r, pos, itemNode, m, free)
	}
}

// knownVersions lists the apiVersions gwdev accepts for g's kind.
func knownVersions(g gvk) []string {
	var out []string
	for k := range registry {
		if k.kind == g.kind {
			out = append(out, parseGVKString(k))
		}
	}
	slices.Sort(out)
	return out
}

func parseGVKString(g gvk) string {
	if g.group == "" {
		return g.version
	}
	return g.group + "/" + g.version
}

// metaString returns metadata.<field> of u when it is a string.
func metaString(u map[string]any, field string) string {
	m, _ := u["metadata"].(map[string]any)
	s, _ := m[field].(string)
	return s
}

// keyFromNode identifies a document that could not be converted, as far as
// its nodes allow.
func keyFromNode(root *yaml.Node) engine.ObjectKey {
	if root.Kind != yaml.MappingNode {
		return engine.ObjectKey{}
	}
	var key engine.ObjectKey
	if _, k := mappingField(root, "kind"); k != nil {
		key.Kind = k.Value
	}
	if _, m := mappingField(root, "metadata"); m != nil && m.Kind == yaml.MappingNode {
		if _, n := mappingField(m, "name"); n != nil {
			key.Name = n.Value
		}
		if _, ns := mappingField(m, "namespace"); ns != nil {
			key.Namespace = ns.Value
		}
	}
	return key
}
