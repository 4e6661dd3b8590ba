package report

import (
	"errors"
	"slices"
	"strings"
)

// `check -o yaml` prints each object as sigs.k8s.io/yaml.Marshal does:
// encoding/json, then go.yaml.in/yaml/v2 parsing the JSON into maps and
// emitting them again, keys sorted. The round trip was two thirds of the
// time of `check -o yaml` for 10,000 routes. yamlEmitter writes the same
// bytes straight from the JSON: it follows yaml.v2's emitter (libyaml's)
// for block mappings and sequences, its choice of scalar style and its
// line folding at 80 columns, for the text Kubernetes objects hold (ASCII
// scalars, keys of up to 128 bytes, multi-line strings that can be literal
// blocks). Anything else returns errOutsideSubset and the caller falls back
// to sigs.k8s.io/yaml for that object. TestYAMLEmitterMatchesSigsYAML
// checks the two agree.

// errOutsideSubset means the object needs the reference encoder.
var errOutsideSubset = errors.New("outside the fast YAML subset")

// yamlBestWidth is yaml.v2's line width: plain and quoted scalars are
// folded at a space once the column passes it.
const yamlBestWidth = 80

// maxSimpleKey is the longest key yaml.v2 writes as "key: value".
const maxSimpleKey = 128

// yamlEmitter holds the emitter state that decides spacing: the column,
// whether the last character written was whitespace, and whether only
// indentation has been written on the line.
type yamlEmitter struct {
	out        []byte
	col        int
	whitespace bool
	indention  bool
}

// document appends the YAML of the JSON value v (parsed by jsonTree).
func (e *yamlEmitter) document(t *jsonTree, v int32) error {
	e.col, e.whitespace, e.indention = 0, true, true
	if err := e.node(t, v, -1, false); err != nil {
		return err
	}
	e.writeIndent(-1)
	return nil
}

func (e *yamlEmitter) put(c byte) {
	e.out = append(e.out, c)
	e.col++
}

func (e *yamlEmitter) putBreak() {
	e.out = append(e.out, '\n')
	e.col = 0
}

func (e *yamlEmitter) writeIndent(indent int) {
	indent = max(indent, 0)
	if !e.indention || e.col > indent || (e.col == indent && !e.whitespace) {
		e.putBreak()
	}
	for e.col < indent {
		e.put(' ')
	}
	e.whitespace, e.indention = true, true
}

func (e *yamlEmitter) indicator(s string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.put(' ')
	}
	e.out = append(e.out, s...)
	e.col += len(s)
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

// node writes value v whose parent collection is indented by indent;
// inMapping is true for a mapping's value.
func (e *yamlEmitter) node(t *jsonTree, v int32, indent int, inMapping bool) error {
	n := &t.nodes[v]
	switch n.kind {
	case jsonObject:
		if n.len == 0 {
			e.indicator("{", true, true, false)
			e.indicator("}", false, false, false)
			return nil
		}
		return e.mapping(t, n, indent)
	case jsonArray:
		if n.len == 0 {
			e.indicator("[", true, true, false)
			e.indicator("]", false, false, false)
			return nil
		}
		return e.sequence(t, n, indent, inMapping)
	case jsonString:
		return e.str(n.s, scalarIndent(indent), false)
	default: // numbers, booleans and null are plain
		e.plain(n.s, scalarIndent(indent), true)
		return nil
	}
}

// scalarIndent is the indentation of a scalar's continuation lines.
func scalarIndent(indent int) int {
	if indent < 0 {
		return 2
	}
	return indent + 2
}

func (e *yamlEmitter) mapping(t *jsonTree, n *jsonNode, indent int) error {
	if indent < 0 {
		indent = 0
	} else {
		indent += 2
	}
	keys := t.kids[n.start : n.start+n.len]
	if !n.sorted {
		sortKeys(t, keys)
	}
	for _, k := range keys {
		key := &t.nodes[k]
		if len(key.s) > maxSimpleKey {
			return errOutsideSubset
		}
		e.writeIndent(indent)
		if key.plain {
			e.plain(key.s, indent+2, false)
		} else if err := e.str(key.s, indent+2, true); err != nil {
			return err
		}
		e.indicator(":", false, false, false)
		if err := e.node(t, key.value, indent, true); err != nil {
			return err
		}
	}
	return nil
}

// sortKeys puts an object's keys in yaml.v2's order.
func sortKeys(t *jsonTree, keys []int32) {
	slices.SortFunc(keys, func(a, b int32) int {
		switch ka, kb := t.nodes[a].s, t.nodes[b].s; {
		case yamlKeyLess(ka, kb):
			return -1
		case yamlKeyLess(kb, ka):
			return 1
		}
		return 0
	})
}

func (e *yamlEmitter) sequence(t *jsonTree, n *jsonNode, indent int, inMapping bool) error {
	switch {
	case indent < 0:
		indent = 0
	case !(inMapping && !e.indention):
		indent += 2
	}
	for _, item := range t.kids[n.start : n.start+n.len] {
		e.writeIndent(indent)
		e.indicator("-", true, false, true)
		if err := e.node(t, item, indent, false); err != nil {
			return err
		}
	}
	return nil
}

// str writes a string scalar in the style yaml.v2 picks for it.
func (e *yamlEmitter) str(s string, indent int, key bool) error {
	a, ok := analyzeScalar(s)
	if !ok {
		return errOutsideSubset
	}
	switch {
	case a.multiline:
		if key || !a.blockAllowed {
			return errOutsideSubset
		}
		e.literal(s, indent)
	case plainResolvesToString(s) && !isBase60Float(s):
		switch {
		case a.plainAllowed:
			e.plain(s, indent, !key)
		default:
			e.singleQuoted(s, indent, !key)
		}
	default:
		e.doubleQuoted(s, indent, !key)
	}
	return nil
}

// scalarAnalysis is what yaml.v2's analysis of a scalar decides, for an
// ASCII scalar in block context.
type scalarAnalysis struct {
	multiline    bool
	plainAllowed bool
	blockAllowed bool
}

// analyzeScalar follows yaml_emitter_analyze_scalar. ok is false for text
// outside the subset: non-ASCII or control characters other than '\n'.
func analyzeScalar(s string) (a scalarAnalysis, ok bool) {
	if s == "" {
		return scalarAnalysis{plainAllowed: true}, true
	}
	if isWord(s) {
		return scalarAnalysis{plainAllowed: true, blockAllowed: true}, true
	}
	indicators := strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...")
	var (
		leadingSpace, trailingSpace, leadingBreak, trailingBreak bool
		spaceBreak, previousSpace, breaks                        bool
	)
	precededByWhitespace := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != '\n') {
			return a, false
		}
		followedByWhitespace := i+1 >= len(s) || s[i+1] == ' '
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				indicators = true
			case '?', ':', '-':
				indicators = indicators || followedByWhitespace
			}
		} else if (c == ':' && followedByWhitespace) || (c == '#' && precededByWhitespace) {
			indicators = true
		}
		switch c {
		case ' ':
			leadingSpace = leadingSpace || i == 0
			trailingSpace = trailingSpace || i == len(s)-1
			previousSpace = true
		case '\n':
			breaks = true
			leadingBreak = leadingBreak || i == 0
			trailingBreak = trailingBreak || i == len(s)-1
			spaceBreak = spaceBreak || previousSpace
			previousSpace = false
		default:
			previousSpace = false
		}
		precededByWhitespace = c == ' ' || c == '\n'
	}
	a.multiline = breaks
	a.plainAllowed = !(leadingSpace || leadingBreak || trailingSpace || trailingBreak || breaks || spaceBreak || indicators)
	a.blockAllowed = !(trailingSpace || spaceBreak)
	return a, true
}

// plain writes s unquoted; folding is allowed except in keys.
func (e *yamlEmitter) plain(s string, indent int, allowBreaks bool) {
	if !e.whitespace {
		e.put(' ')
	}
	spaces := false
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			if allowBreaks && !spaces && e.col > yamlBestWidth && !(i+1 < len(s) && s[i+1] == ' ') {
				e.writeIndent(indent)
			} else {
				e.put(' ')
			}
			spaces = true
			i++
			continue
		}
		// The run of non-spaces up to the next space, at once.
		j := strings.IndexByte(s[i:], ' ')
		if j < 0 {
			j = len(s) - i
		}
		e.out = append(e.out, s[i:i+j]...)
		e.col += j
		e.indention, spaces = false, false
		i += j
	}
	e.whitespace, e.indention = false, false
}

func (e *yamlEmitter) singleQuoted(s string, indent int, allowBreaks bool) {
	e.indicator("'", true, false, false)
	spaces := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if allowBreaks && !spaces && e.col > yamlBestWidth && i > 0 && i < len(s)-1 && s[i+1] != ' ' {
				e.writeIndent(indent)
			} else {
				e.put(' ')
			}
			spaces = true
			continue
		}
		if s[i] == '\'' {
			e.put('\'')
		}
		e.put(s[i])
		e.indention, spaces = false, false
	}
	e.indicator("'", false, false, false)
	e.whitespace, e.indention = false, false
}

func (e *yamlEmitter) doubleQuoted(s string, indent int, allowBreaks bool) {
	e.indicator(`"`, true, false, false)
	spaces := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			e.put('\\')
			e.put(c)
			spaces = false
		case c == ' ':
			if allowBreaks && !spaces && e.col > yamlBestWidth && i > 0 && i < len(s)-1 {
				e.writeIndent(indent)
				if s[i+1] == ' ' {
					e.put('\\')
				}
			} else {
				e.put(' ')
			}
			spaces = true
		default:
			e.put(c)
			spaces = false
		}
	}
	e.indicator(`"`, false, false, false)
	e.whitespace, e.indention = false, false
}

// literal writes s, which has line breaks, as a "|" block scalar.
func (e *yamlEmitter) literal(s string, indent int) {
	e.indicator("|", true, false, false)
	if s[0] == ' ' || s[0] == '\n' {
		e.indicator("2", false, false, false)
	}
	switch last := len(s) - 1; {
	case s[last] != '\n':
		e.indicator("-", false, false, false)
	case last == 0 || s[last-1] == '\n':
		e.indicator("+", false, false, false)
	}
	e.putBreak()
	e.indention, e.whitespace = true, true
	breaks := true
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			e.putBreak()
			e.indention, breaks = true, true
			continue
		}
		if breaks {
			e.writeIndent(indent)
		}
		e.put(s[i])
		e.indention, breaks = false, false
	}
}

// wordChars are the characters that can never make an indicator, a break
// or a special character, wherever they are.
var wordChars = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '/' || c == '.' || c == '-'
	}
	return t
}()

// isWord reports whether s, made of letters, digits and "_/.-" and not
// starting with '-' or '.', passes analyzeScalar's every check: the common
// case (names, kinds, paths, hostnames), decided in one table lookup a
// byte.
func isWord(s string) bool {
	if s[0] == '-' || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !wordChars[s[i]] {
			return false
		}
	}
	return true
}
