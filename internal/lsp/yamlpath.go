package lsp

import (
	"regexp"
	"strings"
)

// This file reads the YAML around a position by indentation alone, so
// that completion works in a buffer that does not parse (as it does while
// the user types).

// keyLine matches a line holding a key: its indentation, an optional
// list dash, the key and what follows the colon.
var keyLine = regexp.MustCompile(`^(\s*)(-\s+)?([A-Za-z][A-Za-z0-9_.-]*):(.*)$`)

// yamlSpot is where a position is in a YAML text.
type yamlSpot struct {
	// parents are the keys of the mappings around the line, outermost
	// first ("spec", "parentRefs").
	parents []string
	// key is the key of the line ("" : the line holds none yet); value
	// what is typed after its colon, up to the position; inValue whether
	// the position is after the colon.
	key, value string
	inValue    bool
	// siblings are the other keys of the same mapping (a list item's
	// fields) with their values.
	siblings map[string]string
	// kind and apiVersion are the document's ("" : not written yet).
	kind, apiVersion string
	// namespace is the document's metadata.namespace ("" : none).
	namespace string
}

// spotAt reads the YAML around line (0-based) and byte column col of ls.
func spotAt(ls []string, line, col int) yamlSpot {
	var s yamlSpot
	if line < 0 || line >= len(ls) {
		return s
	}
	cur := ls[line]
	col = min(col, len(cur))
	indent := len(cur) - len(strings.TrimLeft(cur, " "))
	if m := keyLine.FindStringSubmatch(cur); m != nil {
		s.key = m[3]
		keyEnd := len(m[1]) + len(m[2]) + len(m[3]) + 1
		indent = len(m[1]) + len(m[2])
		if col >= keyEnd {
			s.inValue = true
			s.value = strings.TrimSpace(cur[keyEnd:col])
		}
	}
	// The mapping's own lines: up and down while the indentation is the
	// key's, stopping at a list dash that starts another item.
	s.siblings = map[string]string{}
	start, end := docBounds(ls, line)
	itemStart := line
	for i := line; i >= start; i-- {
		m := keyLine.FindStringSubmatch(ls[i])
		if m == nil {
			continue
		}
		in := len(m[1]) + len(m[2])
		if in < indent {
			break
		}
		if in == indent {
			s.siblings[m[3]] = value(m[4])
			itemStart = i
			if m[2] != "" {
				break // the item's first line
			}
		}
	}
	for i := line + 1; i < end; i++ {
		m := keyLine.FindStringSubmatch(ls[i])
		if m == nil {
			continue
		}
		in := len(m[1]) + len(m[2])
		if in < indent || (in == indent && m[2] != "") {
			break
		}
		if in == indent {
			s.siblings[m[3]] = value(m[4])
		}
	}
	delete(s.siblings, s.key)
	// The parents: each line above with less indentation; a list item's
	// key may be written at its dash's column ("parentRefs:" then
	// "- name: …" under it).
	want, dash := indent, false
	if m := keyLine.FindStringSubmatch(ls[itemStart]); m != nil && m[2] != "" {
		want, dash = len(m[1]), true
	}
	for i := itemStart - 1; i >= start && want > 0; i-- {
		m := keyLine.FindStringSubmatch(ls[i])
		if m == nil {
			continue
		}
		in := len(m[1]) + len(m[2])
		if in < want || (dash && in == want) {
			s.parents = append([]string{m[3]}, s.parents...)
			want, dash = in, false
			if m[2] != "" {
				want, dash = len(m[1]), true
			}
		}
	}
	for i := start; i < end; i++ {
		if m := keyLine.FindStringSubmatch(ls[i]); m != nil && m[1] == "" && m[2] == "" {
			switch m[3] {
			case "kind":
				s.kind = value(m[4])
			case "apiVersion":
				s.apiVersion = value(m[4])
			}
		}
		if m := keyLine.FindStringSubmatch(ls[i]); m != nil && m[3] == "namespace" && len(m[1]) == 2 && s.namespace == "" {
			s.namespace = value(m[4])
		}
	}
	return s
}

// docBounds are the lines of the YAML document holding line: [start, end).
func docBounds(ls []string, line int) (start, end int) {
	start, end = 0, len(ls)
	for i := line; i >= 0; i-- {
		if strings.HasPrefix(ls[i], "---") {
			start = i + 1
			break
		}
	}
	for i := line + 1; i < len(ls); i++ {
		if strings.HasPrefix(ls[i], "---") {
			end = i
			break
		}
	}
	return start, end
}

// value is a scalar as written after a colon, without quotes and a
// comment.
func value(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		s = s[:i]
	}
	return strings.Trim(strings.TrimSpace(s), `"'`)
}

// under reports whether the spot is inside a mapping with key k.
func (s yamlSpot) under(k string) bool {
	for _, p := range s.parents {
		if p == k {
			return true
		}
	}
	return false
}
