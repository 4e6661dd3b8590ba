package watch

import (
	"strconv"

	yaml "go.yaml.in/yaml/v4"
)

// lineFields are the lists whose items findings and traces point at.
var lineFields = []string{"spec.listeners", "spec.parentRefs", "spec.rules"}

// fieldLines records the line of every item of the lists in lineFields (and
// of each rule's backendRefs), keyed by path such as "spec.rules[1]". It
// returns nil when the object has none of them.
func fieldLines(node *yaml.Node, offset int) map[string]int {
	var out map[string]int
	add := func(path string, n *yaml.Node) {
		if out == nil {
			out = map[string]int{}
		}
		out[path] = n.Line + offset
	}
	for _, list := range lineFields {
		seq := listNode(node, list)
		if seq == nil {
			continue
		}
		for i, item := range seq.Content {
			p := list + "[" + strconv.Itoa(i) + "]"
			add(p, item)
			if list != "spec.rules" {
				continue
			}
			if refs := listNode(item, "backendRefs"); refs != nil {
				for j, r := range refs.Content {
					add(p+".backendRefs["+strconv.Itoa(j)+"]", r)
				}
			}
		}
	}
	return out
}

// listNode returns the sequence node at path under n, or nil.
func listNode(n *yaml.Node, path string) *yaml.Node {
	if n == nil {
		return nil
	}
	cur := deref(n)
	for _, seg := range parsePath(path) {
		if cur.Kind != yaml.MappingNode {
			return nil
		}
		_, val := mappingField(cur, seg.name)
		if val == nil {
			return nil
		}
		cur = deref(val)
	}
	if cur.Kind != yaml.SequenceNode {
		return nil
	}
	return cur
}
