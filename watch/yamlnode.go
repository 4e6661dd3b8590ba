package watch

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"
)

// maxNodes bounds the work converting one document, so that alias
// expansion ("billion laughs") cannot hang the loader.
const maxNodes = 10_000_000

// nodeError is a problem found while converting a YAML node tree.
type nodeError struct {
	node *yaml.Node
	path string
	msg  string
}

// pathElem is a lazily rendered field path (rendered only on errors). The
// converter keeps the elements of the path it is at on a stack of its own
// (push, pop), so that walking a document allocates none per field.
type pathElem struct {
	parent *pathElem
	key    string
	index  int
}

func (p *pathElem) String() string {
	if p == nil {
		return ""
	}
	parent := p.parent.String()
	if p.key == "" {
		return parent + "[" + strconv.Itoa(p.index) + "]"
	}
	if parent == "" {
		return p.key
	}
	return parent + "." + p.key
}

// converter turns a yaml.Node tree into the JSON-like values the apiserver
// works on (map[string]any, []any, string, int64, float64, bool, nil),
// resolving plain scalars the way kubectl does (YAML 1.1 through
// sigs.k8s.io/yaml: yes/no/on/off are booleans, 1.0 is the integer 1).
type converter struct {
	nodes int
	err   *nodeError
	// strs gives every field name and string value storage of its own
	// (strtable.go): the nodes' strings may share one with the whole text.
	strs *strTable
	// path holds the elements of the path being converted, the innermost
	// last. An element is only written when pushed, after the one that
	// was in its slot was popped, and a grown stack leaves the old array
	// as it was: the *pathElem an element's children and callers hold
	// stay valid. Converting 10,000 generated HTTPRoutes allocated 21 MB
	// of pathElems, one per field and list item, before it.
	path []pathElem
	// free gives the maps (nil: new ones).
	free *mapFreeList
}

// push puts the element key (index, when key is "") under parent on the
// path stack and returns it; pop takes it off again.
func (c *converter) push(parent *pathElem, key string, index int) *pathElem {
	c.path = append(c.path, pathElem{parent: parent, key: key, index: index})
	return &c.path[len(c.path)-1]
}

// pop takes the innermost element off the path stack.
func (c *converter) pop() { c.path = c.path[:len(c.path)-1] }

// toUnstructured converts n; the error names the first offending node.
// Strings in the result share no memory with n's: strs, when not nil,
// shares the repeated ones.
func toUnstructured(n *yaml.Node, strs *strTable) (any, *nodeError) {
	return toUnstructuredFrom(n, strs, nil)
}

// toUnstructuredFrom is toUnstructured taking its maps from free.
func toUnstructuredFrom(n *yaml.Node, strs *strTable, free *mapFreeList) (any, *nodeError) {
	path := make([]pathElem, 0, 16)
	return toUnstructuredPath(n, strs, free, &path)
}

// toUnstructuredPath is toUnstructuredFrom keeping the path stack in
// *path, which it leaves empty (and cleared) for the next document: a
// loader worker reuses one (docScratch), where a stack per document was
// 14 MB of the 265 MB check -o yaml allocated for bench/genroutes' 10,000
// HTTPRoutes and 20,000 Services.
func toUnstructuredPath(n *yaml.Node, strs *strTable, free *mapFreeList, path *[]pathElem) (any, *nodeError) {
	if strs == nil {
		strs = &strTable{}
	}
	c := converter{strs: strs, path: (*path)[:0], free: free}
	v := c.value(n, nil, 0)
	clear(c.path[:cap(c.path)]) // the keys and parents of this document
	*path = c.path[:0]
	return v, c.err
}

func (c *converter) fail(n *yaml.Node, path *pathElem, format string, args ...any) {
	if c.err == nil {
		c.err = &nodeError{node: n, path: path.String(), msg: fmt.Sprintf(format, args...)}
	}
}

func (c *converter) value(n *yaml.Node, path *pathElem, depth int) any {
	c.nodes++
	if c.err != nil {
		return nil
	}
	if c.nodes > maxNodes || depth > 1000 {
		c.fail(n, path, "document is too large or too deeply nested (alias expansion?)")
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return c.value(n.Content[0], path, depth+1)
	case yaml.AliasNode:
		if n.Alias == nil {
			c.fail(n, path, "unknown alias")
			return nil
		}
		return c.value(n.Alias, path, depth+1)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, item := range n.Content {
			out[i] = c.value(item, c.push(path, "", i), depth+1)
			c.pop()
		}
		return out
	case yaml.MappingNode:
		return c.mapping(n, path, depth)
	case yaml.ScalarNode:
		if v, isString := scalarResolve(n); !isString {
			return v
		}
		// The table's boxed string: putting the string into an interface
		// allocated, twice (the document's slice, then the copy).
		return c.strs.value(n.Value)
	}
	return nil
}

func (c *converter) mapping(n *yaml.Node, path *pathElem, depth int) map[string]any {
	out := c.free.get(len(n.Content) / 2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if k.Kind != yaml.ScalarNode {
			c.fail(k, path, "%sfield names must be strings, not a %s", prefixOf(path), kindName(k))
			return out
		}
		if k.Value == "<<" && k.Style == 0 && (k.Tag == "" || k.Tag == "!!merge" || k.Tag == "tag:yaml.org,2002:merge") {
			merges = append(merges, v)
			continue
		}
		child := c.push(path, k.Value, 0)
		if _, dup := out[k.Value]; dup {
			c.fail(k, child, "duplicate field %q", child.String())
			c.pop()
			return out
		}
		out[c.strs.str(k.Value)] = c.value(v, child, depth+1)
		c.pop()
	}
	// Merge keys fill in fields not given explicitly, the first merged
	// mapping winning, as in YAML 1.1.
	for _, m := range merges {
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, src := range sources {
			v, ok := c.value(src, path, depth+1).(map[string]any)
			if !ok {
				c.fail(src, path, "%smerge key << needs a mapping or a list of mappings", prefixOf(path))
				return out
			}
			for key, val := range v {
				if _, set := out[key]; !set {
					out[key] = val
				}
			}
		}
	}
	return out
}

// prefixOf renders "path: " for messages, or "" at the document root.
func prefixOf(p *pathElem) string {
	if s := p.String(); s != "" {
		return s + ": "
	}
	return ""
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	}
	return "node"
}

// quotedStyles are the scalar styles that always mean a string.
const quotedStyles = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle

// scalarValue resolves a scalar like go.yaml.in/yaml/v2 (which kubectl uses
// through sigs.k8s.io/yaml) followed by a JSON round trip.
func scalarValue(n *yaml.Node) any {
	if v, isString := scalarResolve(n); !isString {
		return v
	}
	return n.Value
}

// scalarResolve is scalarValue without putting a string into an interface:
// isString reports that the value is n.Value (v is then nil).
func scalarResolve(n *yaml.Node) (v any, isString bool) {
	if n.Style&quotedStyles != 0 {
		return nil, true
	}
	switch tag := explicitTag(n); tag {
	case "":
		return plainScalar(n.Value)
	case "!!str", "!!binary", "!!timestamp":
		return nil, true
	case "!!null":
		return nil, false
	case "!!bool", "!!int", "!!float":
		if v, isString := plainScalar(n.Value); !isString && v != nil {
			return v, false
		}
		return nil, true
	default:
		return nil, true
	}
}

// explicitTag returns the tag the author wrote ("" when the scalar is plain
// and untagged).
func explicitTag(n *yaml.Node) string {
	if n.Style&yaml.TaggedStyle == 0 {
		return ""
	}
	if strings.HasPrefix(n.Tag, "tag:yaml.org,2002:") {
		return "!!" + strings.TrimPrefix(n.Tag, "tag:yaml.org,2002:")
	}
	return n.Tag
}

// plainScalar resolves an untagged plain scalar with YAML 1.1 rules,
// without putting a string into an interface: isString reports that the
// value is s (v is then nil).
func plainScalar(s string) (v any, isString bool) {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil, false
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return true, false
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return false, false
	}
	c := s[0]
	if c != '-' && c != '+' && c != '.' && (c < '0' || c > '9') {
		return nil, true
	}
	plain := strings.ReplaceAll(s, "_", "")
	if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return i, false
	}
	if isYAMLFloat(plain) {
		if f, err := strconv.ParseFloat(plain, 64); err == nil {
			// kubectl sends JSON: an integral float is written without a
			// fraction and read back by the apiserver as an integer.
			if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
				return int64(f), false
			}
			return f, false
		}
	}
	return nil, true
}

// isYAMLFloat matches YAML 1.1 floats: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
func isYAMLFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
