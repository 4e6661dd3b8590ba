package watch

import (
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"
)

// pathSegment is one step of a field path: a field name, or an index or map
// key in brackets.
type pathSegment struct {
	name    string
	bracket bool
}

// parsePath splits a field path as the apiserver writes it
// (spec.rules[0].matches[1], metadata.labels[app.kubernetes.io/name]).
func parsePath(path string) []pathSegment { return appendPath(nil, path) }

// appendPath is parsePath appending to segs: given a slice of an array on
// its caller's stack, a path of a few segments allocates nothing (the
// loader walks a few fixed paths of every object: 10 MB of segments for
// 10,000 HTTPRoutes before).
func appendPath(segs []pathSegment, path string) []pathSegment {
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				segs = append(segs, pathSegment{name: path[i+1:], bracket: true})
				return segs
			}
			segs = append(segs, pathSegment{name: path[i+1 : i+end], bracket: true})
			i += end + 1
		default:
			end := strings.IndexAny(path[i:], ".[")
			if end < 0 {
				end = len(path) - i
			}
			segs = append(segs, pathSegment{name: path[i : i+end]})
			i += end
		}
	}
	return segs
}

// locate finds the node that best marks path under root: the key of the
// deepest field that exists (or the list item), so that a missing required
// field points at its parent.
func locate(root *yaml.Node, path string) *yaml.Node {
	n, _, _ := locatePath(root, path)
	return n
}

// locatePath is locate, also returning the value at path and reporting
// whether the whole path exists (full) rather than only an ancestor of it.
func locatePath(root *yaml.Node, path string) (mark, val *yaml.Node, full bool) {
	if path == "" || path == "<nil>" {
		return root, root, true
	}
	cur := root
	mark = root
	segs := parsePath(path)
	for i := 0; i < len(segs); i++ {
		cur = deref(cur)
		seg := segs[i]
		switch cur.Kind {
		case yaml.MappingNode:
			key, v := mappingField(cur, seg.name)
			if key == nil {
				// Keys with dots (annotations) are split by the path syntax;
				// try joining the remaining segments.
				key, v, i = joinedField(cur, segs, i)
				if key == nil {
					return mark, nil, false
				}
			}
			cur, mark = v, key
		case yaml.SequenceNode:
			if !seg.bracket {
				// Paths without indices (encoding/json type errors): use the
				// first item that has the field.
				item := firstItemWith(cur, seg.name)
				if item == nil {
					return mark, nil, false
				}
				cur, mark = item, item
				i--
				continue
			}
			idx, err := strconv.Atoi(seg.name)
			if err != nil || idx < 0 || idx >= len(cur.Content) {
				return mark, nil, false
			}
			cur, mark = cur.Content[idx], cur.Content[idx]
		default:
			return mark, nil, false
		}
	}
	return mark, cur, true
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return n.Content[0]
	}
	return n
}

func mappingField(m *yaml.Node, name string) (key, val *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func joinedField(m *yaml.Node, segs []pathSegment, i int) (key, val *yaml.Node, last int) {
	name := segs[i].name
	for j := i + 1; j < len(segs) && !segs[j].bracket; j++ {
		name += "." + segs[j].name
		if k, v := mappingField(m, name); k != nil {
			return k, v, j
		}
	}
	return nil, nil, i
}

func firstItemWith(seq *yaml.Node, name string) *yaml.Node {
	for _, item := range seq.Content {
		item = deref(item)
		if item.Kind == yaml.MappingNode {
			if k, _ := mappingField(item, name); k != nil {
				return item
			}
		}
	}
	return nil
}

// sameValue reports whether two YAML values are equal as data: scalars by
// value, mappings whatever their key order, sequences item by item.
func sameValue(a, b *yaml.Node) bool {
	a, b = deref(a), deref(b)
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case yaml.ScalarNode:
		return a.Value == b.Value
	case yaml.SequenceNode:
		if len(a.Content) != len(b.Content) {
			return false
		}
		for i := range a.Content {
			if !sameValue(a.Content[i], b.Content[i]) {
				return false
			}
		}
		return true
	case yaml.MappingNode:
		if len(a.Content) != len(b.Content) {
			return false
		}
		for i := 0; i+1 < len(a.Content); i += 2 {
			_, bv := mappingField(b, a.Content[i].Value)
			if bv == nil || !sameValue(a.Content[i+1], bv) {
				return false
			}
		}
		return true
	}
	return false
}
