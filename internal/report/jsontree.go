package report

import (
	"bytes"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonKind is the kind of a jsonNode.
type jsonKind uint8

const (
	jsonScalar jsonKind = iota // number, boolean or null, as YAML writes it
	jsonString
	jsonObject
	jsonArray
)

// jsonNode is one value of a jsonTree. Objects and arrays list their
// children in jsonTree.kids[start:start+len]; an object's children are its
// keys (jsonString nodes) and each key's value is nodes[value].
type jsonNode struct {
	kind       jsonKind
	sorted     bool // an object whose keys are in yaml.v2's order (build)
	plain      bool // a key the emitter writes plain (build)
	s          string
	start, len int32
	value      int32
}

// jsonTree is JSON text (as encoding/json writes it) parsed into flat
// slices that are reused from one object to the next.
type jsonTree struct {
	data  []byte
	pos   int
	nodes []jsonNode
	kids  []int32
	stack []int32
}

var errBadJSON = errors.New("malformed JSON")

// parse parses data, which must hold one JSON value, and returns its node.
func (t *jsonTree) parse(data []byte) (int32, error) {
	t.nodes, t.kids, t.stack = t.nodes[:0], t.kids[:0], t.stack[:0]
	return t.parseMore(data)
}

// parseMore parses data into the tree beside what it holds (build's parts
// that encoding/json writes) and returns its node.
func (t *jsonTree) parseMore(data []byte) (int32, error) {
	t.data, t.pos = data, 0
	v, err := t.value(0)
	if err != nil {
		return 0, err
	}
	t.skipSpace()
	if t.pos != len(t.data) {
		return 0, errBadJSON
	}
	return v, nil
}

func (t *jsonTree) skipSpace() {
	for t.pos < len(t.data) {
		switch t.data[t.pos] {
		case ' ', '\n', '\t', '\r':
			t.pos++
		default:
			return
		}
	}
}

func (t *jsonTree) add(n jsonNode) int32 {
	t.nodes = append(t.nodes, n)
	return int32(len(t.nodes) - 1)
}

// maxJSONDepth bounds the recursion; encoding/json's own limit is 10,000.
const maxJSONDepth = 10000

func (t *jsonTree) value(depth int) (int32, error) {
	if depth > maxJSONDepth {
		return 0, errOutsideSubset
	}
	t.skipSpace()
	if t.pos >= len(t.data) {
		return 0, errBadJSON
	}
	switch c := t.data[t.pos]; {
	case c == '{':
		return t.collection(depth, jsonObject, '}')
	case c == '[':
		return t.collection(depth, jsonArray, ']')
	case c == '"':
		s, err := t.str()
		return t.add(jsonNode{kind: jsonString, s: s}), err
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(t.data[t.pos:], []byte(lit)) {
				t.pos += len(lit)
				return t.add(jsonNode{s: lit}), nil
			}
		}
		return 0, errBadJSON
	default:
		return t.number()
	}
}

// collection parses an object or an array; its children go on the stack
// while they are parsed, then to kids in one block.
func (t *jsonTree) collection(depth int, kind jsonKind, end byte) (int32, error) {
	t.pos++
	base := len(t.stack)
	t.skipSpace()
	if t.pos < len(t.data) && t.data[t.pos] == end {
		t.pos++
		return t.add(jsonNode{kind: kind}), nil
	}
	for {
		var child int32
		if kind == jsonObject {
			t.skipSpace()
			if t.pos >= len(t.data) || t.data[t.pos] != '"' {
				return 0, errBadJSON
			}
			k, err := t.str()
			if err != nil {
				return 0, err
			}
			t.skipSpace()
			if t.pos >= len(t.data) || t.data[t.pos] != ':' {
				return 0, errBadJSON
			}
			t.pos++
			child = t.add(jsonNode{kind: jsonString, s: k})
			v, err := t.value(depth + 1)
			if err != nil {
				return 0, err
			}
			t.nodes[child].value = v
		} else {
			v, err := t.value(depth + 1)
			if err != nil {
				return 0, err
			}
			child = v
		}
		t.stack = append(t.stack, child)
		t.skipSpace()
		if t.pos >= len(t.data) {
			return 0, errBadJSON
		}
		switch t.data[t.pos] {
		case ',':
			t.pos++
			continue
		case end:
			t.pos++
		default:
			return 0, errBadJSON
		}
		break
	}
	start := int32(len(t.kids))
	t.kids = append(t.kids, t.stack[base:]...)
	n := int32(len(t.stack) - base)
	t.stack = t.stack[:base]
	if kind == jsonObject && hasDuplicateKeys(t, t.kids[start:start+n]) {
		return 0, errOutsideSubset // encoding/json never writes these
	}
	return t.add(jsonNode{kind: kind, start: start, len: n}), nil
}

// hasDuplicateKeys reports whether an object repeats a key, which the
// map-based reference encoder would collapse.
func hasDuplicateKeys(t *jsonTree, keys []int32) bool {
	if len(keys) > 64 {
		seen := make(map[string]bool, len(keys))
		for _, k := range keys {
			if seen[t.nodes[k].s] {
				return true
			}
			seen[t.nodes[k].s] = true
		}
		return false
	}
	for i, a := range keys {
		for _, b := range keys[:i] {
			if t.nodes[a].s == t.nodes[b].s {
				return true
			}
		}
	}
	return false
}

// str parses a string at pos, decoding escapes.
func (t *jsonTree) str() (string, error) {
	t.pos++ // opening quote
	start := t.pos
	for t.pos < len(t.data) {
		switch c := t.data[t.pos]; {
		case c == '"':
			s := string(t.data[start:t.pos])
			t.pos++
			return s, nil
		case c == '\\':
			return t.escapedStr(start)
		case c < 0x20:
			return "", errBadJSON
		default:
			t.pos++
		}
	}
	return "", errBadJSON
}

// escapedStr finishes a string with escapes that started at start.
func (t *jsonTree) escapedStr(start int) (string, error) {
	b := append([]byte(nil), t.data[start:t.pos]...)
	for t.pos < len(t.data) {
		c := t.data[t.pos]
		switch {
		case c == '"':
			t.pos++
			return string(b), nil
		case c != '\\':
			b = append(b, c)
			t.pos++
			continue
		}
		if t.pos+1 >= len(t.data) {
			return "", errBadJSON
		}
		e := t.data[t.pos+1]
		t.pos += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := t.hex4()
			if !ok {
				return "", errBadJSON
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if t.pos+1 < len(t.data) && t.data[t.pos] == '\\' && t.data[t.pos+1] == 'u' {
					save := t.pos
					t.pos += 2
					if r2, ok = t.hex4(); !ok {
						return "", errBadJSON
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
					} else {
						t.pos = save
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", errBadJSON
		}
	}
	return "", errBadJSON
}

func (t *jsonTree) hex4() (rune, bool) {
	if t.pos+4 > len(t.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(t.data[t.pos:t.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	t.pos += 4
	return rune(v), true
}

// number parses a number and formats it as yaml.v2 does after reading it
// back: an int, a uint64, or a float64 in the shortest 'g' form.
func (t *jsonTree) number() (int32, error) {
	start := t.pos
	for t.pos < len(t.data) {
		c := t.data[t.pos]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			t.pos++
			continue
		}
		break
	}
	text := string(t.data[start:t.pos])
	if text == "" {
		return 0, errBadJSON
	}
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return t.add(jsonNode{s: strconv.FormatInt(i, 10)}), nil
	}
	if u, err := strconv.ParseUint(text, 10, 64); err == nil {
		return t.add(jsonNode{s: strconv.FormatUint(u, 10)}), nil
	}
	if !yamlStyleFloat.MatchString(text) {
		return 0, errOutsideSubset
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, errOutsideSubset
	}
	return t.add(jsonNode{s: strconv.FormatFloat(f, 'g', -1, 64)}), nil
}
