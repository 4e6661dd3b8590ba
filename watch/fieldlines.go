package watch

import (
	"strconv"

	yaml "go.yaml.in/yaml/v4"

	"github.com/gwdev/gwdev/engine"
)

// lineFields are the lists whose items findings and traces point at.
var lineFields = [...]string{"spec.listeners", "spec.parentRefs", "spec.rules"}

// fieldLines records the line and column of every item of the lists in
// lineFields (and of each rule's backendRefs), and of every annotation key,
// keyed by path such as "spec.rules[1]" or
// "metadata.annotations[example.com/key]". A list item's column is that of
// its first field (the node's, after "- "). It returns nil when the object
// has none of them.
func fieldLines(node *yaml.Node, offset int) map[string]engine.FieldPos {
	var out map[string]engine.FieldPos
	add := func(path string, n *yaml.Node) {
		if out == nil {
			out = map[string]engine.FieldPos{}
		}
		out[path] = fieldPos(n, offset)
	}
	if ann := mapNode(node, "metadata.annotations"); ann != nil {
		for i := 0; i+1 < len(ann.Content); i += 2 {
			add("metadata.annotations["+ann.Content[i].Value+"]", ann.Content[i])
		}
	}
	for li, list := range lineFields {
		seq := listNode(node, list)
		if seq == nil {
			continue
		}
		for i, item := range seq.Content {
			p := itemPath(li, i, -1)
			add(p, item)
			if list != "spec.rules" {
				continue
			}
			if refs := listNode(item, "backendRefs"); refs != nil {
				for j, r := range refs.Content {
					add(itemPath(li, i, j), r)
				}
			}
			if paths := listNode(item, "http.paths"); paths != nil { // an Ingress rule's paths
				for j, pn := range paths.Content {
					add(p+".http.paths["+strconv.Itoa(j)+"]", pn)
				}
			}
		}
	}
	return out
}

// fieldPos is where node n is written, offset lines after its chunk's start.
func fieldPos(n *yaml.Node, offset int) engine.FieldPos {
	return engine.FieldPos{Line: int32(n.Line + offset), Column: int32(n.Column)}
}

// mapNode returns the mapping node at path under n, or nil.
func mapNode(n *yaml.Node, path string) *yaml.Node {
	return nodeAt(n, path, yaml.MappingNode)
}

// fieldPaths holds the keys of fieldLines for the first items of each
// list, which nearly every object uses: every route kept its own copies of
// the same few strings.
var fieldPaths = func() (paths [len(lineFields)][8][9]string) {
	for li, list := range lineFields {
		for i := range 8 {
			for j := -1; j < 8; j++ {
				paths[li][i][j+1] = buildItemPath(list, i, j)
			}
		}
	}
	return paths
}()

// itemPath is the key of item i of lineFields[li], or of backendRef j of
// that item when j >= 0.
func itemPath(li, i, j int) string {
	if i < 8 && j < 8 {
		return fieldPaths[li][i][j+1]
	}
	return buildItemPath(lineFields[li], i, j)
}

func buildItemPath(list string, i, j int) string {
	p := list + "[" + strconv.Itoa(i) + "]"
	if j >= 0 {
		p += ".backendRefs[" + strconv.Itoa(j) + "]"
	}
	return p
}

// listNode returns the sequence node at path under n, or nil.
func listNode(n *yaml.Node, path string) *yaml.Node {
	return nodeAt(n, path, yaml.SequenceNode)
}

// nodeAt returns the node of the given kind at path under n, or nil.
func nodeAt(n *yaml.Node, path string, kind yaml.Kind) *yaml.Node {
	if n == nil {
		return nil
	}
	cur := deref(n)
	var buf [4]pathSegment
	for _, seg := range appendPath(buf[:0], path) {
		if cur.Kind != yaml.MappingNode {
			return nil
		}
		_, val := mappingField(cur, seg.name)
		if val == nil {
			return nil
		}
		cur = deref(val)
	}
	if cur.Kind != kind {
		return nil
	}
	return cur
}
