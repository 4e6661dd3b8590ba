package watch

import "strings"

// The fast parser's scalars are slices of one string holding the whole
// document, so a loaded object that kept any of them (a name, a path) kept
// its document's text alive: for 10,000 HTTPRoutes and 20,000 Services,
// 9 MB of text held until the process ended. The converter therefore
// gives every string it puts into an object storage of its own, through a
// strTable: field names and the values that repeat (kinds, match types,
// namespaces, port names) are shared, the others copied.

const (
	// maxTableString is the longest string a strTable shares; longer ones
	// are copied.
	maxTableString = 64
	// maxTableStrings bounds a table: when full it starts over, so that a
	// long-lived table costs at most about this many short strings.
	maxTableStrings = 4096
)

// strTable hands out strings that share no memory with the text they were
// read from, one copy per distinct short string. The zero value is ready.
// It is not safe for concurrent use (the loader keeps one per worker, in
// Loader.strs).
type strTable struct {
	// m holds each shared string in an interface (a string), so that a
	// value the converter puts into an object is boxed once.
	m map[string]any
	// recent holds strings of m by their length and end bytes, looked at
	// first: field names repeat in every object, and a lookup in m (up to
	// 4,096 strings, hashed) cost more than comparing with one candidate.
	recent [256]recentString
}

// recentString is a string of strTable.m and its boxed copy.
type recentString struct {
	s string
	v any
}

// recentSlot is the slot of recent that the non-empty s goes in.
func recentSlot(s string) int {
	return (len(s)*31 + int(s[0])*7 + int(s[len(s)-1])) & 255
}

// str returns s with storage of its own.
func (t *strTable) str(s string) string {
	if len(s) > maxTableString || s == "" {
		return strings.Clone(s)
	}
	return t.shared(s).(string)
}

// value is str(s) in an interface, the same one for the same string.
func (t *strTable) value(s string) any {
	if len(s) > maxTableString || s == "" {
		return strings.Clone(s)
	}
	return t.shared(s)
}

// shared returns the table's copy of the short string s.
func (t *strTable) shared(s string) any {
	r := &t.recent[recentSlot(s)]
	if r.s == s {
		return r.v
	}
	if v, ok := t.m[s]; ok {
		r.s, r.v = v.(string), v
		return v
	}
	if t.m == nil {
		t.m = make(map[string]any, 256)
	} else if len(t.m) >= maxTableStrings {
		clear(t.m)
	}
	v := strings.Clone(s)
	var boxed any = v
	t.m[v] = boxed
	r.s, r.v = v, boxed
	return boxed
}
