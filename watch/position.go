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
func parsePath(path string) []pathSegment {
	var segs []pathSegment
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
	if path == "" || path == "<nil>" {
		return root
	}
	cur, mark := root, root
	segs := parsePath(path)
	for i := 0; i < len(segs); i++ {
		cur = deref(cur)
		seg := segs[i]
		switch cur.Kind {
		case yaml.MappingNode:
			key, val := mappingField(cur, seg.name)
			if key == nil {
				// Keys with dots (annotations) are split by the path syntax;
				// try joining the remaining segments.
				key, val, i = joinedField(cur, segs, i)
				if key == nil {
					return mark
				}
			}
			cur, mark = val, key
		case yaml.SequenceNode:
			if !seg.bracket {
				// Paths without indices (encoding/json type errors): use the
				// first item that has the field.
				item := firstItemWith(cur, seg.name)
				if item == nil {
					return mark
				}
				cur, mark = item, item
				i--
				continue
			}
			idx, err := strconv.Atoi(seg.name)
			if err != nil || idx < 0 || idx >= len(cur.Content) {
				return mark
			}
			cur, mark = cur.Content[idx], cur.Content[idx]
		default:
			return mark
		}
	}
	return mark
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
