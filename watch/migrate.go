package watch

import "strings"

// v16Renames are the fields Gateway API v1.7.0 renamed or moved: a manifest
// written for v1.6 that still sets one is refused (an apiserver with the
// v1.7.0 CRDs prunes it as unknown and then fails the CEL rules that need
// the new field), and the problem names the field to use instead. Keyed by
// kind and the unknown field's path with list indexes removed ("" kind:
// every kind). to is the new key when renaming the key is the whole
// rewrite ("" : the rewrite needs more, as a choice between two fields).
var v16Renames = []struct {
	kind, suffix, hint, to string
}{
	{"XBackend", "spec.port.port", "Gateway API v1.7.0 renamed it to spec.port.number", "number"},
	{"", "sessionPersistence.sessionName", "Gateway API v1.7.0 moved it to sessionPersistence.cookie.name (type Cookie) or sessionPersistence.header.name (type Header)", ""},
	{"", "sessionPersistence.cookieConfig", "Gateway API v1.7.0 renamed it to sessionPersistence.cookie (with lifetimeType, name and path)", "cookie"},
}

// migrationHint returns the hint for an unknown field of kind that a v1.6
// manifest would set ("": none).
func migrationHint(kind, path string) string {
	hint, _ := v16Rename(kind, path)
	return hint
}

// RenamedKey returns the key Gateway API v1.7.0 gave the field of kind at
// path (as an unknown-field problem's Field names it) when renaming the
// key is the whole rewrite of the v1.6 shape ("" : none; `gwdev lsp`
// offers the rename as a quick fix).
func RenamedKey(kind, path string) string {
	_, to := v16Rename(kind, path)
	return to
}

// v16Rename finds the rename of the field of kind at path.
func v16Rename(kind, path string) (hint, to string) {
	bare := stripIndexes(path)
	for _, r := range v16Renames {
		if (r.kind == "" || r.kind == kind) && (bare == r.suffix || strings.HasSuffix(bare, "."+r.suffix)) {
			return r.hint, r.to
		}
	}
	return "", ""
}

// stripIndexes removes list indexes from a field path
// ("spec.rules[0].x" → "spec.rules.x").
func stripIndexes(path string) string {
	var b strings.Builder
	depth := 0
	for _, c := range path {
		switch {
		case c == '[':
			depth++
		case c == ']' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(c)
		}
	}
	return b.String()
}
